// Package outfile writes output files so that a failed or interrupted run
// never leaves a partial file and never changes what it does not own:
//
//   - a Group is a set of files (a report and its charts, a chart, a
//     slice) written to temporary names beside their targets and renamed
//     into place together by Commit, which puts the old files back if any
//     step fails; it also appends to a log in place (Group.Append);
//   - a Tree is a directory tree of new files (a dataset's partitions)
//     staged in a hidden directory and moved into place a directory at a
//     time;
//   - a link is followed, never replaced, and nothing the run did not
//     create is removed;
//   - the temporary files and directories a run holds are registered, so
//     that a signal handler removes them all (RemoveTemps), after waiting
//     for a commit in progress to end.
//
// It imports only the standard library and sits beside package trace at
// the bottom of the house: parsers use it for their temporary copies,
// commands for every file they write.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unicode/utf8"
)

// reg is what this process holds that a signal handler must remove.
var reg struct {
	sync.Mutex
	temps  map[string]bool // temporary files
	stages map[string]bool // staging directories, removed with their content
	made   []string        // directories made for outputs, in order; removed innermost first, when empty
}

// commitMu is held while outputs are put in place. RemoveTemps takes it,
// so a signal waits for a commit in progress (renames: short) to end or
// roll back instead of cutting it in half.
var commitMu sync.Mutex

func track(name string) {
	reg.Lock()
	defer reg.Unlock()
	if reg.temps == nil {
		reg.temps = map[string]bool{}
	}
	reg.temps[name] = true
}

func untrack(name string) {
	reg.Lock()
	defer reg.Unlock()
	delete(reg.temps, name)
}

func trackStage(dir string) {
	reg.Lock()
	defer reg.Unlock()
	if reg.stages == nil {
		reg.stages = map[string]bool{}
	}
	reg.stages[dir] = true
}

func untrackStage(dir string) {
	reg.Lock()
	defer reg.Unlock()
	delete(reg.stages, dir)
}

func trackDir(dir string) {
	reg.Lock()
	defer reg.Unlock()
	reg.made = append(reg.made, dir)
}

func untrackDirs(dirs []string) {
	reg.Lock()
	defer reg.Unlock()
	for _, d := range dirs {
		for i := len(reg.made) - 1; i >= 0; i-- {
			if reg.made[i] == d {
				reg.made = append(reg.made[:i], reg.made[i+1:]...)
				break
			}
		}
	}
}

// RemoveTemps removes every temporary file and staging directory still
// alive, and every directory made for outputs that is still empty: what a
// signal handler calls before the process exits. It first waits for a
// commit in progress to end, and no commit starts after it: call it only
// on the way out.
func RemoveTemps() {
	commitMu.Lock() // never unlocked: the process exits
	removeAll()
}

func removeAll() {
	reg.Lock()
	defer reg.Unlock()
	for name := range reg.temps {
		os.Remove(name)
		delete(reg.temps, name)
	}
	for dir := range reg.stages {
		os.RemoveAll(dir)
		delete(reg.stages, dir)
	}
	for i := len(reg.made) - 1; i >= 0; i-- {
		os.Remove(reg.made[i]) // fails, and keeps it, when something else is inside
	}
	reg.made = nil
}

// Temps returns the number of temporary files and staging directories
// alive (for tests).
func Temps() int {
	reg.Lock()
	defer reg.Unlock()
	return len(reg.temps) + len(reg.stages)
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

// WriteWith writes what write writes to path atomically: nothing is put
// in place when write fails. A path naming a device or a FIFO is written
// directly; a symlink is followed.
func WriteWith(path string, write func(io.Writer) error) error {
	var g Group
	defer g.Abort()
	w, err := g.Create(path)
	if err != nil {
		return err
	}
	if err := write(w); err != nil {
		return pathError(path, err)
	}
	if err := w.Close(); err != nil {
		return err
	}
	return g.Commit()
}

// pathError is err naming path: an *os.PathError as it is (it names the
// target already: this package's writers wrap theirs), anything else
// wrapped in one.
func pathError(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &os.PathError{Op: "write", Path: path, Err: err}
}

// targetError is err from an operation on a temporary or staged file,
// reported as an error writing path, the file the user asked for.
func targetError(path string, err error) error {
	return &os.PathError{Op: "write", Path: path, Err: unwrap(err)}
}

// unwrap drops an *os.PathError's or *os.LinkError's own path (the
// temporary name), so the error names the file the user asked for.
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

// SameTarget reports whether a and b name the same file, whether or not
// it exists yet: the same file when both exist, else the same path once
// links are followed (so R/report.md and LINK/report.md, LINK a symlink
// to R, are the same target before either exists).
func SameTarget(a, b string) bool {
	sa, erra := os.Stat(a)
	sb, errb := os.Stat(b)
	if erra == nil && errb == nil {
		return os.SameFile(sa, sb)
	}
	return canonical(a) == canonical(b)
}

// canonical is path absolute, with every link followed, including links
// to what does not exist yet.
func canonical(path string) string {
	return canonicalLinks(path, 0)
}

func canonicalLinks(path string, links int) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	if r, err := resolve(abs); err == nil && r != abs && links < maxLinks {
		return canonicalLinks(r, links+1) // a link to nothing
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return abs
	}
	return filepath.Join(canonicalLinks(parent, links), filepath.Base(abs))
}

// Describe is fmt-friendly: "FILE (the same file as INPUT)".
func Describe(path, same string) string {
	if path == same {
		return path
	}
	return fmt.Sprintf("%s (the same file as %s)", path, same)
}

// MaxName is the longest name ClipName leaves: room, within the 255
// bytes most file systems allow, for a -N suffix, an extension and this
// package's temporary names (".NAME.tmp-" and ten digits).
const MaxName = 200

// ClipName clips a file name to MaxName bytes, on a UTF-8 boundary.
func ClipName(name string) string {
	if len(name) <= MaxName {
		return name
	}
	n := MaxName
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return name[:n]
}

// isNotExist is errors.Is(err, fs.ErrNotExist).
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// testHook, set by tests, runs at each step of a commit ("rename TARGET"
// before a group's file is renamed into place, "append PATH" before an
// append, "leaf LEAF" after a tree's leaf is in place, "absent DIR" when
// a tree found DIR missing and is about to move its own in); an error it
// returns fails the commit there, as a failing file system would.
var testHook func(step string) error

func hookAt(step string) error {
	if testHook == nil {
		return nil
	}
	return testHook(step)
}
