package outfile

import (
	"errors"
	"io/fs"
	"os"
)

// lockedLog is a file being appended to, locked against the appends of
// other processes (and of other groups in this one).
type lockedLog struct {
	f       *os.File
	path    string // as the caller named it, for errors
	target  string // path with symlinks followed
	created bool   // made by this append: removed if it fails
	size    int64  // before the append: what a failed one is cut back to
	wrote   bool
}

// lockLog opens the file at path for appending, made if missing, and
// locks it. An append is made in place, never by replacing the file, so
// that the file keeps its mode, its owner and its hard links, and what it
// held is never rewritten.
func lockLog(path string) (*lockedLog, error) {
	target, err := resolve(path)
	if err != nil {
		return nil, targetError(path, err)
	}
	for range 100 {
		created := false
		f, err := os.OpenFile(target, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
		switch {
		case err == nil:
			created = true
			track(target) // a signal before the commit removes it
		case errors.Is(err, fs.ErrExist):
			f, err = os.OpenFile(target, os.O_RDWR|os.O_APPEND, 0)
			if isNotExist(err) {
				continue // removed meanwhile: make it
			}
		}
		if err != nil {
			return nil, targetError(path, err)
		}
		if err := lock(f); err != nil {
			f.Close()
			if created {
				Remove(target)
			}
			return nil, targetError(path, err)
		}
		// While this process waited for the lock, another may have
		// replaced or removed the file: lock what the name holds now.
		fst, ferr := f.Stat()
		pst, perr := os.Stat(target)
		if ferr == nil && perr == nil && os.SameFile(fst, pst) {
			if !fst.Mode().IsRegular() {
				f.Close()
				return nil, &os.PathError{Op: "append", Path: path, Err: errors.New("not a regular file")}
			}
			return &lockedLog{f: f, path: path, target: target, created: created, size: fst.Size()}, nil
		}
		f.Close()
		if created {
			untrack(target)
		}
	}
	return nil, &os.PathError{Op: "append", Path: path, Err: errors.New("the file keeps being replaced")}
}

// append writes what add returns at the end of the file, in one write,
// and flushes it to disk.
func (l *lockedLog) append(add func(tail []byte) []byte) error {
	var tail []byte
	if l.size > 0 {
		n := min(2, l.size)
		tail = make([]byte, n)
		if _, err := l.f.ReadAt(tail, l.size-n); err != nil {
			return targetError(l.path, err)
		}
	}
	data := add(tail)
	l.wrote = true
	_, err := l.f.Write(data)
	if err == nil {
		err = hookAt("appended " + l.path)
	}
	if err != nil {
		return targetError(l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return targetError(l.path, err)
	}
	return nil
}

// undo cuts off what append wrote, or removes the file it made. The lock
// is still held: no other append can have followed.
func (l *lockedLog) undo() {
	if l == nil {
		return
	}
	if l.created {
		os.Remove(l.target)
		untrack(l.target)
		l.created = false
	} else if l.wrote {
		l.f.Truncate(l.size)
		l.f.Sync()
	}
	l.wrote = false
}

// keep ends an append that succeeded.
func (l *lockedLog) keep() {
	if l.created {
		untrack(l.target)
	}
}

// unlock releases the lock (closing the file does).
func (l *lockedLog) unlock() { l.f.Close() }
