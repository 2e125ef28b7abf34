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

var sqliteMagic = []byte("SQLite format 3\x00")

// Sniff reports whether header (the first bytes of a file) starts like a
// SQLite database.
func Sniff(header []byte) bool { return bytes.HasPrefix(header, sqliteMagic) }

// Open reads the nsys SQLite export at path. The file is opened read-only
// and immutable: it is never written, nothing is created next to it, and
// no lock is taken, so it can be read while another process holds it open.
// A file with a write in progress or cut short is refused
// (ErrUnfinishedWrite); see checkSideFiles.
//
// Errors do not name the file (the caller does) and wrap their cause:
// ErrCorrupt, ErrNoKernels, ErrWholeGraphs, ErrUnfinishedWrite, or the
// OS's error.
func Open(path string, opt Options) (*trace.Trace, error) {
	t, err := open(path, opt)
	if err != nil {
		return nil, finalError(err)
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
	// SQLite looks for the -wal and -journal files next to the file a
	// symbolic link points to.
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if real, err = filepath.Abs(real); err != nil {
		return nil, err
	}
	before, err := statFile(real)
	if err != nil {
		return nil, err
	}
	if err := checkSideFiles(real); err != nil {
		return nil, err
	}
	t, err := read(real, opt, nameCol)
	// A write during the read explains any error the read met.
	if after, serr := statFile(real); serr != nil || !after.same(before) {
		return nil, errChanged
	}
	if serr := checkSideFiles(real); serr != nil {
		return nil, serr
	}
	return t, err
}

func read(path string, opt Options, nameCol string) (*trace.Trace, error) {
	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &reader{db: db, uri: dbURI(path), opt: opt, nameCol: nameCol}
	defer func() { r.raw.close() }()
	return r.read()
}

// checkHeader rejects what is not a SQLite file before SQLite sees it, so
// that the message is about the file, not about SQLite's view of it.
func checkHeader(path string) error {
	// Stat first: opening a FIFO would wait for a writer.
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return errors.New("is a directory, not an nsys SQLite export")
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file: SQLite reads nsys exports from files (copy it to one first)")
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
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
// anything else holds the file, and never writes a -shm file or rolls a
// journal back. The path is absolute (a relative "//x" would parse as a
// URI authority) and escaped ('?', '#', '%', ' ').
func openDB(abs string) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", dbURI(abs)+"&_mutex=no")
	if err != nil {
		return nil, dbError(err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, dbError(err)
	}
	return db, nil
}

// dbURI is the URI openDB and openRaw open abs by.
func dbURI(abs string) string {
	u := url.URL{Path: filepath.ToSlash(abs)}
	return "file:" + u.EscapedPath() + "?mode=ro&immutable=1"
}

type errClass uint8

const (
	errOther   errClass = iota
	errDamaged          // SQLITE_CORRUPT, SQLITE_NOTADB
	errLocked           // SQLITE_BUSY, SQLITE_LOCKED
	errNoCgo            // go-sqlite3's stub, built without cgo
)

// noCgoError replaces the text of go-sqlite3's stub.
type noCgoError struct{ err error }

func (e *noCgoError) Error() string {
	return "traceq was built without cgo; reading nsys SQLite needs CGO_ENABLED=1"
}
func (e *noCgoError) Unwrap() error { return e.err }

// dbError sorts driver errors by SQLite's result code, re-wording those
// whose own text would puzzle a user, and puts their text on one line.
func dbError(err error) error {
	class := sqliteErrClass(err)
	if class == errNoCgo {
		return &noCgoError{err}
	}
	err = &driverError{err}
	switch class {
	case errLocked:
		return fmt.Errorf("file is locked by another process (is nsys still writing it?): %w", err)
	case errDamaged:
		return &damagedError{err}
	}
	return err
}
