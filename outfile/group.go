package outfile

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Group is a set of output files that appear together or not at all (a
// report, its charts and the log it is appended to): each file is written
// to a temporary name beside its target and closed, and Commit renames
// them all into place, then makes the appends. If any step of Commit
// fails, what it did is undone: every replaced file is put back as it
// was (the same file: its content, mode, owner and links), every new one
// removed, every append cut off. Abort (deferred) removes the temporary
// files and the directories the group made. A Group is used by one
// goroutine.
type Group struct {
	files   []*file
	appends []*appendTo
	made    []string // directories made, outermost first
	ended   bool
}

// file is an output being written under a temporary (or staged) name; its
// errors name its target.
type file struct {
	f      *os.File
	path   string // as the caller named it, for errors
	target string // where it goes: path with symlinks followed
	mode   os.FileMode
	direct bool // the target is a device or a FIFO, written in place
	closed bool
}

// Write names the target, not the temporary file, in its errors.
func (f *file) Write(b []byte) (int, error) {
	n, err := f.f.Write(b)
	if err != nil {
		err = targetError(f.path, err)
	}
	return n, err
}

// Close completes the file: its mode set, synced and closed, left under
// its temporary name until Commit.
func (f *file) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	if f.direct {
		if err := f.f.Close(); err != nil {
			return targetError(f.path, err)
		}
		return nil
	}
	if err := complete(f.f, f.mode); err != nil {
		return targetError(f.path, err)
	}
	return nil
}

// discard closes a file not completed.
func (f *file) discard() {
	if !f.closed {
		f.closed = true
		f.f.Close()
	}
}

// complete gives a temporary file its final mode, flushes it to disk and
// closes it, ready to be renamed into place.
func complete(f *os.File, mode os.FileMode) error {
	err := f.Chmod(mode)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Create starts the file path, in a directory that exists (see MkdirAll).
// A symlink is followed: the file it points at is replaced, the link
// stays. A file replaced keeps its mode (0644 for a new one). A device or
// a FIFO has nothing to replace atomically and is written directly. Write
// to what Create returns and Close it before Commit.
func (g *Group) Create(path string) (io.WriteCloser, error) {
	if g.ended {
		return nil, errors.New("outfile: create after commit or abort")
	}
	target, err := resolve(path)
	if err != nil {
		return nil, targetError(path, err)
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(target); err == nil {
		switch {
		case st.IsDir():
			return nil, &os.PathError{Op: "write", Path: path, Err: errors.New("is a directory")}
		case !st.Mode().IsRegular():
			f, err := os.OpenFile(target, os.O_WRONLY, 0)
			if err != nil {
				return nil, targetError(path, err)
			}
			gf := &file{f: f, path: path, target: target, direct: true}
			g.files = append(g.files, gf)
			return gf, nil
		}
		mode = st.Mode().Perm()
	}
	f, err := Temp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return nil, targetError(path, err)
	}
	gf := &file{f: f, path: path, target: target, mode: mode}
	g.files = append(g.files, gf)
	return gf, nil
}

// MkdirAll makes dir and its missing parents (following a symlink to a
// directory that does not exist yet); Abort removes what it made.
func (g *Group) MkdirAll(dir string) error {
	if err := mkdirAll(dir, &g.made); err != nil {
		return targetError(dir, err)
	}
	return nil
}

// MkdirNew makes a new directory named dir, or dir-2, dir-3… the first
// that does not exist, and returns its name: two runs at once never share
// one. Its name is clipped to ClipName. Abort removes it.
func (g *Group) MkdirNew(dir string) (string, error) {
	d, err := mkdirNew(dir, &g.made)
	if err != nil {
		return "", targetError(dir, err)
	}
	return d, nil
}

// appendTo is an append Commit makes.
type appendTo struct {
	path string
	add  func(tail []byte) []byte
	log  *lockedLog
}

// Append registers an append to the file at path (a symlink is followed;
// made if missing), which Commit makes in place after the renames: add is
// given the file's last bytes (up to 2, none for an empty or new file)
// and returns what to append. Appends to one file from several processes
// are serialised (an advisory lock held from before the file is read
// until the group's commit ends), and an append that fails is cut off, so
// the file holds what it held. The file keeps its mode, owner and links.
func (g *Group) Append(path string, add func(tail []byte) []byte) error {
	if g.ended {
		return errors.New("outfile: append after commit or abort")
	}
	g.appends = append(g.appends, &appendTo{path: path, add: add})
	return nil
}

// done is a file put in place by Commit, with what undoes it.
type done struct {
	f      *file
	backup string // the replaced file, linked or moved aside; "" for a new file
}

// Commit puts every file in place (in the order they were created), then
// makes the appends. A file not closed is an error. On failure, every
// step done is undone before Commit returns; the caller's Abort removes
// the rest.
func (g *Group) Commit() error {
	if g.ended {
		return errors.New("outfile: commit after commit or abort")
	}
	for _, f := range g.files {
		if !f.closed {
			return &os.PathError{Op: "write", Path: f.path, Err: errors.New("committed before it was closed")}
		}
	}
	for _, a := range g.appends {
		for _, f := range g.files {
			if SameTarget(a.path, f.target) {
				return &os.PathError{Op: "append", Path: a.path, Err: fmt.Errorf("is also written whole, as %s", f.path)}
			}
		}
	}
	// The logs are locked before the commit starts (waiting for another
	// process's append), in one order (no deadlock between two groups),
	// and unlocked when it ends.
	slices.SortFunc(g.appends, func(a, b *appendTo) int { return strings.Compare(a.path, b.path) })
	defer func() {
		for _, a := range g.appends {
			if a.log != nil {
				a.log.unlock()
			}
		}
	}()
	for _, a := range g.appends {
		l, err := lockLog(a.path)
		if err != nil {
			for _, a := range g.appends {
				a.log.undo()
			}
			return err
		}
		a.log = l
	}
	commitMu.Lock()
	defer commitMu.Unlock()
	var put []done
	undo := func(err error) error {
		for i := len(g.appends) - 1; i >= 0; i-- {
			g.appends[i].log.undo()
		}
		for i := len(put) - 1; i >= 0; i-- {
			if uerr := put[i].undo(); uerr != nil {
				err = fmt.Errorf("%w; putting the previous %s back failed too (%v): it is kept as %s", err, put[i].f.path, uerr, put[i].backup)
			}
		}
		return err
	}
	for _, f := range g.files {
		if f.direct {
			continue
		}
		d := done{f: f}
		if st, err := os.Lstat(f.target); err == nil {
			if !st.Mode().IsRegular() {
				// It was a regular file or nothing at Create.
				return undo(&os.PathError{Op: "write", Path: f.path, Err: errors.New("is no longer a regular file")})
			}
			b, err := backup(f.target)
			if err != nil {
				return undo(targetError(f.path, err))
			}
			d.backup = b
		}
		err := hookAt("rename " + f.target)
		if err == nil {
			err = os.Rename(f.f.Name(), f.target)
		}
		if err != nil {
			if d.backup != "" {
				d.restore()
			}
			return undo(targetError(f.path, err))
		}
		untrack(f.f.Name())
		put = append(put, d)
	}
	for _, a := range g.appends {
		err := hookAt("append " + a.path)
		if err == nil {
			err = a.log.append(a.add)
		}
		if err != nil {
			return undo(err)
		}
	}
	for _, d := range put {
		if d.backup != "" {
			os.Remove(d.backup)
		}
	}
	for _, a := range g.appends {
		a.log.keep()
	}
	g.ended = true
	untrackDirs(g.made)
	return nil
}

// undo takes a file Commit put in place back out.
func (d done) undo() error {
	if d.backup == "" {
		return os.Remove(d.f.target)
	}
	return os.Rename(d.backup, d.f.target)
}

// restore puts back a backup taken for a file whose rename failed: the
// target is still the old file when the backup is a link.
func (d done) restore() {
	if _, err := os.Lstat(d.f.target); err == nil {
		os.Remove(d.backup)
		return
	}
	os.Rename(d.backup, d.f.target)
}

// backup keeps the file at target under a hidden name beside it, so that
// a failed commit can put it back: a hard link (the target stays in place
// for readers), or, where the file system has none, a rename.
func backup(target string) (string, error) {
	dir, base := filepath.Split(target)
	for range 100 {
		b := filepath.Join(dir, "."+base+".old-"+strconv.FormatUint(uint64(rand.Uint32()), 10))
		err := os.Link(target, b)
		if err == nil {
			return b, nil
		}
		if _, serr := os.Lstat(b); serr == nil {
			continue // the name is taken: another
		}
		if err := renameNoReplace(target, b); err != nil {
			if _, serr := os.Lstat(b); serr == nil {
				continue
			}
			return "", err
		}
		return b, nil
	}
	return "", errors.New("no free name for a backup")
}

// Abort removes what the group made: temporary files and the directories
// it made that are empty. After a successful Commit it does nothing, so
// it can be deferred.
func (g *Group) Abort() {
	if g.ended {
		return
	}
	g.ended = true
	for _, f := range g.files {
		f.discard()
		if !f.direct {
			Remove(f.f.Name())
		}
	}
	removeMade(g.made)
}
