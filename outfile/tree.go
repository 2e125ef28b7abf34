package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// StagePrefix starts the name of the hidden directory a Tree stages its
// files in, inside its root. Readers skip it: a dataset's tables are the
// directories beside it, and engines skip names starting with '.'.
const StagePrefix = ".traceq-stage-"

// Tree is a tree of new files under root (the parts of a dataset), put in
// place together: each file is written, with its final name, in a hidden
// staging directory inside root, and Commit moves the staged directories
// into place, each with one rename where its place is free (so a reader
// sees all its files or none). Files live in leaf directories (a
// directory holds files or directories, not both); Commit works leaf by
// leaf, grouped by the top directory (the table), in the order the first
// file of each was created. A failed or interrupted Commit puts back what
// it moved; Abort (deferred) removes the staging directory and the
// directories made for root. A Tree is used by one goroutine.
type Tree struct {
	root   string
	stage  string
	made   []string // directories made for root, outermost first
	files  []*file
	leaves []string            // slash-separated leaf directories, in order of their first file
	tops   map[string][]string // top directory -> its leaves
	order  []string            // top directories in order
	keep   bool                // the stage holds what was there before: never removed
	ended  bool
}

// NewTree starts a tree for root, made if missing (a symlink to a missing
// directory is followed).
func NewTree(root string) (*Tree, error) {
	t := &Tree{root: root, tops: map[string][]string{}}
	if err := mkdirAll(root, &t.made); err != nil {
		return nil, targetError(root, err)
	}
	stage, err := os.MkdirTemp(root, StagePrefix+"*")
	if err != nil {
		removeMade(t.made)
		return nil, targetError(root, err)
	}
	t.stage = stage
	trackStage(stage)
	return t, nil
}

// Create starts the file rel (slash-separated, relative to root). Write
// to what it returns and Close it before Commit; errors name the file's
// final path.
func (t *Tree) Create(rel string) (io.WriteCloser, error) {
	if t.ended {
		return nil, errors.New("outfile: create after commit or abort")
	}
	target := filepath.Join(t.root, filepath.FromSlash(rel))
	if !fs.ValidPath(rel) || !strings.Contains(rel, "/") {
		return nil, &os.PathError{Op: "write", Path: target, Err: errors.New("not a file in a directory of the tree")}
	}
	staged := filepath.Join(t.stage, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(staged), 0o755); err != nil {
		return nil, targetError(target, err)
	}
	f, err := os.OpenFile(staged, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, targetError(target, err)
	}
	leaf := path.Dir(rel)
	top, _, _ := strings.Cut(rel, "/")
	if !slices.Contains(t.tops[top], leaf) {
		if _, ok := t.tops[top]; !ok {
			t.order = append(t.order, top)
		}
		t.tops[top] = append(t.tops[top], leaf)
	}
	tf := &file{f: f, path: target, target: target, mode: 0o644}
	t.files = append(t.files, tf)
	return tf, nil
}

// Existing decides what Commit does where a leaf directory exists in
// root already: replace it whole with the staged one (true), or add the
// staged files beside what it holds (false: a file of the same name is
// an error, never replaced). An error stops the commit, which is undone.
type Existing func(dir string) (replace bool, err error)

// Commit moves the staged tree into place: for each leaf, the shallowest
// of its directories that root does not have yet is renamed into place
// whole (never onto something that appeared meanwhile); a leaf that
// exists is replaced or added to, as existing decides. A replaced leaf
// is swapped with the staged one (atomically on Linux), and removed once
// everything is in place. On failure every step is undone, the previous
// files back where they were, before Commit returns.
func (t *Tree) Commit(existing Existing) error {
	if t.ended {
		return errors.New("outfile: commit after commit or abort")
	}
	for _, f := range t.files {
		if !f.closed {
			return &os.PathError{Op: "write", Path: f.path, Err: errors.New("committed before it was closed")}
		}
	}
	commitMu.Lock()
	defer commitMu.Unlock()
	var undo []func() error
	fail := func(err error) error {
		for i := len(undo) - 1; i >= 0; i-- {
			if uerr := undo[i](); uerr != nil && !t.keep {
				t.keep = true
				untrackStage(t.stage)
				err = fmt.Errorf("%w; putting the previous files back failed too (%v): they are kept in %s", err, uerr, t.stage)
			}
		}
		return err
	}
	moved := map[string]bool{}
	for _, top := range t.order {
		for _, leaf := range t.tops[top] {
			if coveredBy(moved, leaf) {
				continue
			}
			u, err := t.place(leaf, moved, existing)
			undo = append(undo, u...)
			if err != nil {
				return fail(err)
			}
			if err := hookAt("leaf " + leaf); err != nil {
				return fail(err)
			}
		}
	}
	t.ended = true
	untrackStage(t.stage)
	os.RemoveAll(t.stage) // the replaced leaves, and the staged directories emptied
	untrackDirs(t.made)
	return nil
}

// place puts one leaf in place and returns what undoes it.
func (t *Tree) place(leaf string, moved map[string]bool, existing Existing) ([]func() error, error) {
	parts := strings.Split(leaf, "/")
	for i := 1; i <= len(parts); i++ {
		rel := strings.Join(parts[:i], "/")
		src := filepath.Join(t.stage, filepath.FromSlash(rel))
		dst := filepath.Join(t.root, filepath.FromSlash(rel))
		st, err := os.Stat(dst)
		if isNotExist(err) {
			if err := hookAt("absent " + dst); err != nil {
				return nil, err
			}
			if lst, lerr := os.Lstat(dst); lerr == nil {
				// Something is there now. A link to nothing stays an
				// error; a directory another process moved into place
				// since the Stat (a concurrent export of another rank)
				// is looked at again.
				if lst.Mode()&fs.ModeSymlink != 0 {
					if _, err := os.Stat(dst); isNotExist(err) {
						return nil, &os.PathError{Op: "write", Path: dst, Err: errors.New("a symbolic link to nothing where a directory was expected")}
					}
				}
				i--
				continue
			}
			err := renameNoReplace(src, dst)
			if errors.Is(err, fs.ErrExist) {
				i-- // made by another process meanwhile: look again
				continue
			}
			if err != nil {
				return nil, targetError(dst, err)
			}
			moved[rel] = true
			return []func() error{func() error { return t.unmove(rel) }}, nil
		}
		if err != nil {
			return nil, targetError(dst, err)
		}
		if !st.IsDir() {
			return nil, &os.PathError{Op: "write", Path: dst, Err: errors.New("not a directory")}
		}
		if i < len(parts) {
			continue
		}
		replace, err := existing(dst)
		if err != nil {
			return nil, err
		}
		if replace {
			if err := exchange(src, dst); err != nil {
				return nil, targetError(dst, err)
			}
			return []func() error{func() error { return exchange(src, dst) }}, nil
		}
		return t.addBeside(src, dst)
	}
	return nil, nil
}

// addBeside moves the staged files of a leaf into a directory that
// exists, never over a file there.
func (t *Tree) addBeside(src, dst string) ([]func() error, error) {
	ents, err := os.ReadDir(src)
	if err != nil {
		return nil, targetError(dst, err)
	}
	var undo []func() error
	for _, e := range ents {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if err := renameNoReplace(from, to); err != nil {
			if errors.Is(err, fs.ErrExist) {
				err = errors.New("exists already")
			}
			return undo, targetError(to, err)
		}
		undo = append(undo, func() error { return os.Rename(to, from) })
	}
	return undo, nil
}

// unmove takes a directory Commit moved into place back to the stage:
// only the files this tree staged (another process may have added its
// own since), then the directories it made, where they are empty.
func (t *Tree) unmove(rel string) error {
	var first error
	var dirs []string
	for _, f := range t.files {
		frel, _ := filepath.Rel(t.root, f.target)
		frel = filepath.ToSlash(frel)
		if !strings.HasPrefix(frel, rel+"/") {
			continue
		}
		staged := filepath.Join(t.stage, filepath.FromSlash(frel))
		os.MkdirAll(filepath.Dir(staged), 0o755)
		if err := os.Rename(f.target, staged); err != nil && first == nil {
			first = err
		}
		for d := path.Dir(frel); d != rel && d != "."; d = path.Dir(d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range byDepth(dirs) {
		os.Remove(filepath.Join(t.root, filepath.FromSlash(d)))
	}
	os.Remove(filepath.Join(t.root, filepath.FromSlash(rel)))
	return first
}

// byDepth returns slash paths without repeats, deepest first.
func byDepth(dirs []string) []string {
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	slices.SortStableFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return dirs
}

// coveredBy reports whether leaf or one of its directories was moved
// into place whole.
func coveredBy(moved map[string]bool, leaf string) bool {
	for d := leaf; d != "." && d != "/"; d = path.Dir(d) {
		if moved[d] {
			return true
		}
	}
	return false
}

// Abort removes what the tree made: the staging directory (unless a
// failed commit could not put the previous files back: then they are
// there) and the directories made for root, where empty. After a
// successful Commit it does nothing, so it can be deferred.
func (t *Tree) Abort() {
	if t.ended {
		return
	}
	t.ended = true
	for _, f := range t.files {
		f.discard()
	}
	if !t.keep {
		untrackStage(t.stage)
		os.RemoveAll(t.stage)
	}
	removeMade(t.made)
}
