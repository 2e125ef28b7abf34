package nsyssqlite

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/traceq/traceq/trace"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver; needs cgo
)

// Options controls Open.
type Options struct {
	// Names selects the kernel-name column: "demangled" (the default, what
	// nsys stats groups by: full signature with template arguments) or
	// "short" (the base function name, nsys stats' ":base").
	Names string
	// Progress, when set, is called now and then with the number of rows
	// read so far and an estimate of the total.
	Progress func(done, total int64)
}

// ErrNoKernels says the export holds no CUDA kernel activity: CUDA tracing
// was off, or the kernels of a worker subprocess were not captured.
var ErrNoKernels = errors.New("nsyssqlite: no CUDA kernel activity")

// ErrWholeGraphs says the export recorded CUDA graphs as whole-graph
// executions (CUPTI_ACTIVITY_KIND_GRAPH_TRACE) instead of their kernels, and
// those graphs hold most of the GPU time.
var ErrWholeGraphs = errors.New("nsyssqlite: CUDA graphs traced as whole graphs")

const captureHint = "capture with `nsys profile --trace=cuda,nvtx` and, for worker subprocesses, `--trace-fork-before-exec=true`"

// noKernelsError is the error for exports without kernels; it matches
// ErrNoKernels with errors.Is and says how to capture them.
type noKernelsError struct {
	path, detail string
}

func (e *noKernelsError) Error() string {
	return fmt.Sprintf("%s: no CUDA kernel activity (%s): CUDA tracing was off or lost; %s", e.path, e.detail, captureHint)
}

func (e *noKernelsError) Unwrap() error { return ErrNoKernels }

var sqliteMagic = []byte("SQLite format 3\x00")

// Sniff reports whether header (the first bytes of a file) starts like a
// SQLite database.
func Sniff(header []byte) bool { return bytes.HasPrefix(header, sqliteMagic) }

// Open reads the nsys SQLite export at path. The file is opened read-only
// and immutable: it is never written, and no lock is taken, so it can be
// read while another process holds it open.
func Open(path string, opt Options) (*trace.Trace, error) {
	t, err := open(path, opt)
	if err != nil {
		var nk *noKernelsError
		if errors.As(err, &nk) {
			return nil, err // already names the file
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func open(path string, opt Options) (*trace.Trace, error) {
	nameCol := "demangledName"
	switch opt.Names {
	case "", "demangled":
	case "short":
		nameCol = "shortName"
	default:
		return nil, fmt.Errorf("nsyssqlite: unknown Names option %q (want \"demangled\" or \"short\")", opt.Names)
	}
	if err := checkHeader(path); err != nil {
		return nil, err
	}
	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &reader{path: path, db: db, opt: opt, nameCol: nameCol}
	return r.read()
}

// checkHeader rejects what is not a SQLite file before SQLite sees it, so
// that the message is about the file, not about SQLite's view of it.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.IsDir() {
		return errors.New("is a directory, not an nsys SQLite export")
	}
	hdr := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, hdr)
	if n == 0 {
		return errors.New("empty file, not an nsys SQLite export")
	}
	if err != nil || !Sniff(hdr) {
		return errors.New("not a SQLite file (export a .nsys-rep report with `nsys export --type sqlite`)")
	}
	return nil
}

// openDB opens path read-only. Without the "file:" prefix go-sqlite3 drops
// the URI parameters and mode=ro is silently ignored; immutable=1 makes
// SQLite skip locking and change detection, so the open works while nsys or
// anything else holds the file. The path is made absolute (a relative
// "//x" would parse as a URI authority) and escaped ('?', '#', '%', ' ').
func openDB(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Path: filepath.ToSlash(abs)}
	db, err := sql.Open("sqlite3", "file:"+u.EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		return nil, dbError(err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, dbError(err)
	}
	return db, nil
}

// dbError re-words driver errors whose own text would puzzle a user.
func dbError(err error) error {
	s := err.Error()
	switch {
	case strings.Contains(s, "CGO_ENABLED=0"), strings.Contains(s, "requires cgo"):
		// go-sqlite3's !cgo stub.
		return errors.New("traceq was built without cgo; reading nsys SQLite needs CGO_ENABLED=1")
	case strings.Contains(s, "database is locked"), strings.Contains(s, "database table is locked"):
		return fmt.Errorf("file is locked by another process (is nsys still writing it?): %w", err)
	case strings.Contains(s, "file is not a database"), strings.Contains(s, "database disk image is malformed"):
		return fmt.Errorf("corrupt or truncated SQLite file: %w", err)
	}
	return err
}
