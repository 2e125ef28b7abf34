// Package outfile writes output files so that a failed or interrupted run
// never leaves a partial file and never changes an existing one: a file
// is written to a temporary name in its own directory and renamed into
// place only when complete. It also keeps the list of temporary files a
// run holds, so that a signal handler can remove them all.
//
// It imports only the standard library and sits beside package trace at
// the bottom of the house: parsers use it for their temporary copies,
// commands for every file they write.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// temps is the set of temporary files alive in this process.
var temps struct {
	sync.Mutex
	names map[string]bool
}

func track(name string) {
	temps.Lock()
	defer temps.Unlock()
	if temps.names == nil {
		temps.names = map[string]bool{}
	}
	temps.names[name] = true
}

func untrack(name string) {
	temps.Lock()
	defer temps.Unlock()
	delete(temps.names, name)
}

// RemoveTemps removes every temporary file still alive, and every
// directory MkdirNew made and nobody kept: what a signal handler calls
// before the process exits.
func RemoveTemps() {
	temps.Lock()
	for name := range temps.names {
		os.Remove(name)
		delete(temps.names, name)
	}
	temps.Unlock()
	removeDirs()
}

// Temps returns the number of temporary files alive (for tests).
func Temps() int {
	temps.Lock()
	defer temps.Unlock()
	return len(temps.names)
}

// Temp creates a temporary file as os.CreateTemp does and tracks it until
// Remove: a signal removes it too.
func Temp(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	track(f.Name())
	return f, nil
}

// Remove removes a file made by Temp and stops tracking it.
func Remove(name string) error {
	err := os.Remove(name)
	untrack(name)
	return err
}

// File is an output being written. Write to it, then Commit to put it in
// place, or Abort (safe to call after Commit, so it can be deferred).
type File struct {
	*os.File
	path   string
	direct bool // the target is not a regular file (a device, a FIFO): written in place
	done   bool
}

// Create starts writing the file at path. When path names an existing
// non-regular file (/dev/null, a FIFO, a terminal) there is nothing to
// replace atomically, and it is written directly.
func Create(path string) (*File, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		if st.IsDir() {
			return nil, &os.PathError{Op: "write", Path: path, Err: errors.New("is a directory")}
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &File{File: f, path: path, direct: true}, nil
	}
	f, err := Temp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// Path returns the final path of the file.
func (f *File) Path() string { return f.path }

// Commit flushes the file to disk and renames it into place, keeping the
// mode of the file it replaces (0644 for a new one).
func (f *File) Commit() error {
	if f.done {
		return errors.New("outfile: commit after commit or abort")
	}
	f.done = true
	if f.direct {
		return f.File.Close()
	}
	tmp := f.File.Name()
	mode := os.FileMode(0o644)
	if st, err := os.Stat(f.path); err == nil {
		mode = st.Mode().Perm()
	}
	err := complete(f.File, mode)
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		Remove(tmp)
		return &os.PathError{Op: "write", Path: f.path, Err: unwrap(err)}
	}
	untrack(tmp)
	return nil
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

// Abort discards what was written. It does nothing after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	if !f.direct {
		Remove(f.File.Name())
	}
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	return WriteWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith writes what write writes to path atomically: nothing is put
// in place when write fails.
func WriteWith(path string, write func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return err
		}
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return f.Commit()
}

// unwrap drops an *os.PathError's own path (the temporary name), so the
// error names the file the user asked for.
func unwrap(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// SameFile reports whether path names the same file as any of others
// (same device and inode, so symlinks and hard links count), returning
// the one it matches. A path that does not exist matches nothing.
func SameFile(path string, others []string) (string, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	for _, o := range others {
		if ost, err := os.Stat(o); err == nil && os.SameFile(st, ost) {
			return o, true
		}
	}
	return "", false
}

// Describe is fmt-friendly: "FILE (the same file as INPUT)".
func Describe(path, same string) string {
	if path == same {
		return path
	}
	return fmt.Sprintf("%s (the same file as %s)", path, same)
}

// dirs are directories this run created and removes on a signal.
var dirs struct {
	sync.Mutex
	names map[string]bool
	tops  map[string]string // dir -> the topmost directory created for it
}

// MkdirNew creates dir (and its missing parents) and reports whether it
// created dir itself; a directory it created is removed, with what is in
// it, by RemoveTemps until Keep.
func MkdirNew(dir string) (created bool, err error) {
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return false, &os.PathError{Op: "mkdir", Path: dir, Err: errors.New("not a directory")}
		}
		return false, nil
	}
	// The topmost directory that does not exist yet is the one to remove.
	top := filepath.Clean(dir)
	for {
		parent := filepath.Dir(top)
		if _, err := os.Stat(parent); err == nil || parent == top {
			break
		}
		top = parent
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	dirs.Lock()
	defer dirs.Unlock()
	if dirs.names == nil {
		dirs.names, dirs.tops = map[string]bool{}, map[string]string{}
	}
	dirs.names[dir] = true
	dirs.tops[dir] = top
	return true, nil
}

// Keep stops tracking a directory made by MkdirNew: the run succeeded.
func Keep(dir string) {
	dirs.Lock()
	defer dirs.Unlock()
	delete(dirs.names, dir)
}

// RemoveDir removes a directory made by MkdirNew, with its content: the
// run failed.
func RemoveDir(dir string) {
	dirs.Lock()
	defer dirs.Unlock()
	if dirs.names[dir] {
		os.RemoveAll(dirs.tops[dir])
		delete(dirs.names, dir)
	}
}

func removeDirs() {
	dirs.Lock()
	defer dirs.Unlock()
	for d := range dirs.names {
		os.RemoveAll(dirs.tops[d])
		delete(dirs.names, d)
	}
}
