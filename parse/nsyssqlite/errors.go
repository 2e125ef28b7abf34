package nsyssqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
)

// Open's errors never name the file: the caller does (package parse wraps
// every error with its path). Each wraps its cause, so that errors.Is finds
// the sentinels below and the driver's or the OS's error.

// ErrCorrupt says the file is a damaged SQLite database (SQLite found a
// malformed page, or it is truncated), or a SQLite database that is not an
// nsys export (tables or columns missing, no readable kernel row). The
// message starts "corrupt or not an nsys export: ".
var ErrCorrupt = errors.New("corrupt or not an nsys export")

// ErrNoKernels says the export holds no CUDA kernel activity: CUDA tracing
// was off, or the kernels of a worker subprocess were not captured. The
// file itself is sound: the kernel table is absent or empty.
var ErrNoKernels = errors.New("nsyssqlite: no CUDA kernel activity")

// ErrWholeGraphs says the export recorded CUDA graphs as whole-graph
// executions (CUPTI_ACTIVITY_KIND_GRAPH_TRACE) instead of their kernels, and
// those graphs hold most of the GPU time.
var ErrWholeGraphs = errors.New("nsyssqlite: CUDA graphs traced as whole graphs")

// ErrUnfinishedWrite says a write to the export is under way or was cut
// short: a -wal file holds changes not yet in the database file, a
// rollback journal lies next to it, or the file changed while it was read.
// The file on disk may then hold half a transaction, so Open refuses
// rather than guess.
var ErrUnfinishedWrite = errors.New("unfinished write")

const captureHint = "capture with `nsys profile --trace=cuda,nvtx` and, for worker subprocesses, `--trace-fork-before-exec=true`"

// noKernelsError is the error for exports without kernels; it matches
// ErrNoKernels with errors.Is and says how to capture them.
type noKernelsError struct {
	detail string
}

func (e *noKernelsError) Error() string {
	return fmt.Sprintf("no CUDA kernel activity (%s): CUDA tracing was off or lost; %s", e.detail, captureHint)
}

func (e *noKernelsError) Unwrap() error { return ErrNoKernels }

// damagedError is SQLite reporting a malformed or truncated file.
type damagedError struct{ err error }

func (e *damagedError) Error() string {
	return "corrupt or truncated SQLite file (" + e.err.Error() + ")"
}
func (e *damagedError) Unwrap() error { return e.err }

// driverError is an error of the SQLite driver, on one line: SQLite quotes
// what it read in some messages (a damaged schema's SQL, newlines and
// all).
type driverError struct{ err error }

func (e *driverError) Error() string { return oneLine(e.err.Error(), 200) }
func (e *driverError) Unwrap() error { return e.err }

// oneLine turns control characters and runs of spaces into one space and
// cuts s to max runes.
func oneLine(s string, max int) string {
	var b strings.Builder
	space, n := false, 0
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		sep := space && b.Len() > 0
		if sep {
			n++
		}
		if n++; n > max {
			b.WriteString("…")
			break
		}
		if sep {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// notNsysError is a sound SQLite file that does not hold what an nsys
// export holds.
type notNsysError struct{ msg string }

func (e *notNsysError) Error() string { return e.msg }

func notNsys(format string, a ...any) error { return &notNsysError{fmt.Sprintf(format, a...)} }

// corruptError puts "corrupt or not an nsys export: " in front of an error
// whose chain holds a damagedError or a notNsysError, wherever in the
// chain (a table name may come first).
type corruptError struct{ err error }

func (e *corruptError) Error() string   { return ErrCorrupt.Error() + ": " + e.err.Error() }
func (e *corruptError) Unwrap() []error { return []error{ErrCorrupt, e.err} }

// unfinishedError is an ErrUnfinishedWrite with its reason.
type unfinishedError struct{ msg string }

func (e *unfinishedError) Error() string { return ErrUnfinishedWrite.Error() + ": " + e.msg }
func (e *unfinishedError) Unwrap() error { return ErrUnfinishedWrite }

// finalError gives err the form Open promises.
func finalError(err error) error {
	var d *damagedError
	var n *notNsysError
	if errors.As(err, &d) || errors.As(err, &n) {
		return &corruptError{err}
	}
	// The OS names the file in *fs.PathError; the caller names it too.
	var pe *fs.PathError
	if errors.As(err, &pe) && err == error(pe) {
		return pe.Err
	}
	return err
}
