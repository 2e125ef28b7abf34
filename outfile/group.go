package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Group is a set of output files that appear together or not at all (the
// parts of a dataset): each is written to a temporary name beside its
// target and closed, and Commit renames them all into place once every
// one is complete. Abort removes what the group made: temporary files,
// files already renamed (when Commit failed half way) and the directories
// Create made. A Group is used by one goroutine.
type Group struct {
	files []*groupFile
	done  []string // targets renamed into place
	dirs  []string // directories made, outermost first
	ended bool
}

// groupFile wraps the temporary file rather than embedding it, so that no
// promoted method (WriteString, ReadFrom) writes around Write's errors.
type groupFile struct {
	file   *os.File
	path   string
	closed bool
}

// Write names the target, not the temporary file, in its errors.
func (f *groupFile) Write(b []byte) (int, error) {
	n, err := f.file.Write(b)
	if err != nil {
		err = &os.PathError{Op: "write", Path: f.path, Err: unwrap(err)}
	}
	return n, err
}

// Close completes the file: synced, closed, mode 0644, and left under its
// temporary name until the group's Commit.
func (f *groupFile) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	if err := complete(f.file, 0o644); err != nil {
		return &os.PathError{Op: "write", Path: f.path, Err: unwrap(err)}
	}
	return nil
}

// Create starts the file path, making its directory (and remembering the
// levels it made). Write to it and Close it before Commit.
func (g *Group) Create(path string) (io.WriteCloser, error) {
	if g.ended {
		return nil, errors.New("outfile: create after commit or abort")
	}
	if err := g.mkdirAll(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, &os.PathError{Op: "write", Path: path, Err: errors.New("is a directory")}
	}
	f, err := Temp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	gf := &groupFile{file: f, path: path}
	g.files = append(g.files, gf)
	return gf, nil
}

// mkdirAll is os.MkdirAll recording each directory it makes.
func (g *Group) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return &os.PathError{Op: "mkdir", Path: d, Err: errors.New("not a directory")}
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		g.dirs = append(g.dirs, missing[i])
	}
	return nil
}

// Created reports whether path is a target of the group.
func (g *Group) Created(path string) bool {
	for _, f := range g.files {
		if f.path == path {
			return true
		}
	}
	return false
}

// Commit renames every file into place, in the order they were created.
// A file not closed yet is an error. On failure the caller's Abort removes
// what was put in place so far.
func (g *Group) Commit() error {
	if g.ended {
		return errors.New("outfile: commit after commit or abort")
	}
	for _, f := range g.files {
		if !f.closed {
			return &os.PathError{Op: "write", Path: f.path, Err: errors.New("committed before it was closed")}
		}
	}
	for _, f := range g.files {
		if err := os.Rename(f.file.Name(), f.path); err != nil {
			return &os.PathError{Op: "write", Path: f.path, Err: unwrap(err)}
		}
		untrack(f.file.Name())
		g.done = append(g.done, f.path)
	}
	g.ended = true
	return nil
}

// Abort removes what the group made; after a successful Commit it does
// nothing, so it can be deferred.
func (g *Group) Abort() {
	if g.ended {
		return
	}
	g.ended = true
	for _, f := range g.files {
		if !f.closed {
			f.closed = true
			f.file.Close()
		}
		Remove(f.file.Name())
	}
	for _, p := range g.done {
		os.Remove(p)
	}
	// Innermost first; a directory something else wrote into stays.
	for i := len(g.dirs) - 1; i >= 0; i-- {
		os.Remove(g.dirs[i])
	}
}
