package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// maxLinks bounds the symlinks followed from one path, as the kernel's
// ELOOP does.
const maxLinks = 40

var errLoop = errors.New("too many levels of symbolic links")

// resolve follows path while it is a symlink, to the file it points at,
// whether that exists or not: an output goes where a link leads, and the
// link stays.
func resolve(path string) (string, error) {
	for range maxLinks {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", &os.PathError{Op: "open", Path: path, Err: errLoop}
}

// mkdirAll is os.MkdirAll recording in made the directories it makes
// (and registering them, so that a signal removes them). A symlink to a
// directory that does not exist yet is followed: the directory it names
// is made, the link stays. A directory that exists, or that another
// process makes meanwhile, is not recorded: only what this run made is
// ever removed.
func mkdirAll(dir string, made *[]string) error {
	return mkdirLinks(dir, made, 0)
}

func mkdirLinks(dir string, made *[]string, links int) error {
	st, err := os.Stat(dir)
	if err == nil {
		if !st.IsDir() {
			return &os.PathError{Op: "mkdir", Path: dir, Err: errors.New("not a directory")}
		}
		return nil
	}
	if !isNotExist(err) {
		return err
	}
	if lst, err := os.Lstat(dir); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		// A link to nothing: make what it names.
		if links == maxLinks {
			return &os.PathError{Op: "mkdir", Path: dir, Err: errLoop}
		}
		target, err := os.Readlink(dir)
		if err != nil {
			return err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(dir), target)
		}
		return mkdirLinks(target, made, links+1)
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirLinks(parent, made, links); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			return nil // made by someone else meanwhile: not ours
		}
		return err
	}
	*made = append(*made, dir)
	trackDir(dir)
	return nil
}

// mkdirNew makes a new directory named dir, or dir-2, dir-3… the first
// name free, so that two runs never share one; its last element is
// clipped to ClipName first. It stops at any error but "exists".
func mkdirNew(dir string, made *[]string) (string, error) {
	parent, base := filepath.Split(dir)
	if parent == "" {
		parent = "."
	}
	base = ClipName(base)
	if err := mkdirAll(parent, made); err != nil {
		return "", err
	}
	for i := 1; i <= 10000; i++ {
		p := filepath.Join(parent, base)
		if i > 1 {
			p += "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(p, 0o755)
		if err == nil {
			*made = append(*made, p)
			trackDir(p)
			return p, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", &os.PathError{Op: "mkdir", Path: filepath.Join(parent, base), Err: errors.New("10000 directories of this name exist already")}
}

// removeMade removes the directories in made that are empty, innermost
// first, and stops tracking them all.
func removeMade(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		os.Remove(made[i]) // fails, and keeps it, when something else is inside
	}
	untrackDirs(made)
}
