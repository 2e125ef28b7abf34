//go:build cgo

package nsyssqlite

// This file reads the big tables through SQLite's C API directly, on a
// connection of its own: go-sqlite3 (whose bundled SQLite this links
// against) returns each value as a driver.Value, an interface that boxes
// every integer above 255, and converts them one row per cgo call. Here
// one cgo call steps a batch of rows and copies their integers into Go
// memory: on the 5M-kernel export of bench/nsys the kernel and runtime
// tables read in 2.4 and 1.0-1.3 CPU-s instead of 3.3-3.6 and 2.0
// (docs/performance.md).

/*
#include <stdlib.h>

// The few declarations of sqlite3.h used here: the functions are those of
// the SQLite that go-sqlite3 compiles in (or links, with its libsqlite3
// tag), so that the headers of another SQLite need not be installed.
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef struct sqlite3_value sqlite3_value;
int sqlite3_open_v2(const char*, sqlite3**, int, const char*);
int sqlite3_close_v2(sqlite3*);
int sqlite3_prepare_v2(sqlite3*, const char*, int, sqlite3_stmt**, const char**);
int sqlite3_step(sqlite3_stmt*);
int sqlite3_finalize(sqlite3_stmt*);
int sqlite3_column_count(sqlite3_stmt*);
sqlite3_value *sqlite3_column_value(sqlite3_stmt*, int);
int sqlite3_value_type(sqlite3_value*);
long long sqlite3_value_int64(sqlite3_value*);
double sqlite3_column_double(sqlite3_stmt*, int);
const void* sqlite3_column_blob(sqlite3_stmt*, int);
const unsigned char* sqlite3_column_text(sqlite3_stmt*, int);
int sqlite3_column_bytes(sqlite3_stmt*, int);
int sqlite3_errcode(sqlite3*);
int sqlite3_extended_errcode(sqlite3*);
const char* sqlite3_errmsg(sqlite3*);
int sqlite3_system_errno(sqlite3*);

// tq_step_rows steps stmt up to max times, writing each row's ncol
// integers (0 where a value is not one) and fundamental types into vals
// and types, row after row. It stops after a row holding a value that is
// neither INTEGER nor NULL, which the caller reads before the next step.
// It returns the rows written; *rc is SQLITE_ROW (100) while rows may
// remain, else what sqlite3_step returned. Each value is fetched once
// (sqlite3_column_value) and read as a value: sqlite3_column_type and
// _int64 would each find the column again (the kernels of bench/nsys's
// 5M-kernel export read in 2.2 CPU-s that way, 1.8 this way). The value is "unprotected", which only matters to a
// connection shared between threads; this one is not.
static int tq_step_rows(sqlite3_stmt *s, int ncol, long long *vals, unsigned char *types, int max, int *rc) {
	int n = 0;
	*rc = 100;
	while (n < max) {
		int r = sqlite3_step(s);
		if (r != 100) {
			*rc = r;
			return n;
		}
		long long *v = vals + (long)n * ncol;
		unsigned char *t = types + (long)n * ncol;
		int other = 0;
		for (int i = 0; i < ncol; i++) {
			sqlite3_value *x = sqlite3_column_value(s, i);
			int ty = sqlite3_value_type(x);
			t[i] = (unsigned char)ty;
			v[i] = 0;
			if (ty == 1) {
				v[i] = sqlite3_value_int64(x);
			} else if (ty != 5) {
				other = 1;
			}
		}
		n++;
		if (other) {
			return n;
		}
	}
	return n;
}
*/
import "C"

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"github.com/mattn/go-sqlite3"
)

// sqliteErrClass sorts a driver error by SQLite's result code.
func sqliteErrClass(err error) errClass {
	code := 0
	var e sqlite3.Error
	var r *rawError
	switch {
	case errors.As(err, &e):
		code = int(e.Code)
	case errors.As(err, &r):
		code = r.Code & 0xff
	default:
		return errOther
	}
	switch sqlite3.ErrNo(code) {
	case sqlite3.ErrCorrupt, sqlite3.ErrNotADB:
		return errDamaged
	case sqlite3.ErrBusy, sqlite3.ErrLocked:
		return errLocked
	}
	return errOther
}

// rawError is an error of the raw connection, worded as go-sqlite3 words
// its own: SQLite's message, and the OS's error where SQLite says it
// matters.
type rawError struct {
	Code  int // the extended result code
	msg   string
	errno syscall.Errno
}

func (e *rawError) Error() string {
	if e.errno != 0 {
		return e.msg + ": " + e.errno.Error()
	}
	return e.msg
}

// SQLite's result and type codes used here.
const (
	sqliteOK         = 0
	sqliteCantOpen   = 14
	sqliteIOErr      = 10
	sqliteIOErrNoMem = 10 | 12<<8
	sqliteRow        = 100
	sqliteDone       = 101

	openReadOnly = 0x1
	openURI      = 0x40
	openNoMutex  = 0x8000
)

func lastRawError(db *C.sqlite3, rc C.int) error {
	e := &rawError{Code: int(C.sqlite3_extended_errcode(db)), msg: C.GoString(C.sqlite3_errmsg(db))}
	if db == nil || e.Code&0xff != int(rc)&0xff {
		e.Code = int(rc)
	}
	if base := e.Code & 0xff; base == sqliteCantOpen || base == sqliteIOErr && e.Code != sqliteIOErrNoMem {
		e.errno = syscall.Errno(C.sqlite3_system_errno(db))
	}
	return e
}

// rawDB is a read-only connection of SQLite's C API, used by one
// goroutine.
type rawDB struct{ db *C.sqlite3 }

// openRaw opens uri (a "file:" URI, as openDB builds it) read-only.
func openRaw(uri string) (*rawDB, error) {
	curi := C.CString(uri)
	defer C.free(unsafe.Pointer(curi))
	var db *C.sqlite3
	if rc := C.sqlite3_open_v2(curi, &db, openReadOnly|openURI|openNoMutex, nil); rc != sqliteOK {
		err := lastRawError(db, rc)
		C.sqlite3_close_v2(db)
		return nil, err
	}
	return &rawDB{db}, nil
}

func (r *rawDB) close() {
	if r != nil && r.db != nil {
		C.sqlite3_close_v2(r.db)
		r.db = nil
	}
}

// scanBatch is the number of rows one cgo call steps.
const scanBatch = 256

// scan runs query, which must return ncol columns, and calls fn for each
// row in turn. The row's values are valid until fn returns.
func (r *rawDB) scan(query string, ncol int, fn func(*rowVals) error) error {
	cq := C.CString(query)
	defer C.free(unsafe.Pointer(cq))
	var st *C.sqlite3_stmt
	if rc := C.sqlite3_prepare_v2(r.db, cq, -1, &st, nil); rc != sqliteOK {
		return lastRawError(r.db, rc)
	}
	defer C.sqlite3_finalize(st)
	if got := int(C.sqlite3_column_count(st)); got != ncol {
		return fmt.Errorf("query returns %d columns, want %d", got, ncol)
	}
	ints := make([]int64, ncol*scanBatch)
	kinds := make([]uint8, ncol*scanBatch)
	row := rowVals{other: make([]driver.Value, ncol)}
	for {
		var rc C.int
		n := int(C.tq_step_rows(st, C.int(ncol), (*C.longlong)(unsafe.Pointer(&ints[0])), (*C.uchar)(unsafe.Pointer(&kinds[0])),
			scanBatch, &rc))
		for i := range n {
			row.ints, row.kinds = ints[i*ncol:(i+1)*ncol], kinds[i*ncol:(i+1)*ncol]
			if i == n-1 && rc == sqliteRow {
				// The batch may have stopped at a row with values other
				// than integers: read them before the next step.
				for c, k := range row.kinds {
					row.other[c] = nil
					switch k {
					case colFloat:
						row.other[c] = float64(C.sqlite3_column_double(st, C.int(c)))
					case colText:
						p := C.sqlite3_column_text(st, C.int(c))
						row.other[c] = C.GoStringN((*C.char)(unsafe.Pointer(p)), C.sqlite3_column_bytes(st, C.int(c)))
					case colBlob:
						p := C.sqlite3_column_blob(st, C.int(c))
						row.other[c] = C.GoBytes(p, C.sqlite3_column_bytes(st, C.int(c)))
					}
				}
			}
			if err := fn(&row); err != nil {
				return err
			}
		}
		switch rc {
		case sqliteRow:
		case sqliteDone:
			return nil
		default:
			return lastRawError(r.db, rc)
		}
	}
}
