//go:build cgo

package nsyssqlite

import (
	"errors"
	"testing"

	"github.com/mattn/go-sqlite3"
)

// TestDBError checks the sorting of driver errors by SQLite's result
// code.
func TestDBError(t *testing.T) {
	tests := []struct {
		in      error
		want    string
		corrupt bool
	}{
		{sqlite3.Error{Code: sqlite3.ErrBusy}, "file is locked by another process (is nsys still writing it?): database is locked", false},
		{sqlite3.Error{Code: sqlite3.ErrNotADB}, "corrupt or not an nsys export: corrupt or truncated SQLite file (file is not a database)", true},
		{sqlite3.Error{Code: sqlite3.ErrCorrupt}, "corrupt or not an nsys export: corrupt or truncated SQLite file (database disk image is malformed)", true},
		{sqlite3.Error{Code: sqlite3.ErrError}, "SQL logic error", false},
	}
	for _, tt := range tests {
		got := finalError(dbError(tt.in))
		if got.Error() != tt.want || errors.Is(got, ErrCorrupt) != tt.corrupt {
			t.Errorf("dbError(%v) = %q (ErrCorrupt: %v), want %q (%v)", tt.in, got, errors.Is(got, ErrCorrupt), tt.want, tt.corrupt)
		}
		var e sqlite3.Error
		if !errors.As(got, &e) || e.Code != tt.in.(sqlite3.Error).Code {
			t.Errorf("dbError(%v) = %v does not wrap the driver's error", tt.in, got)
		}
	}
}

// TestOneLine: SQLite quotes a damaged schema's SQL in its messages.
func TestOneLine(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"malformed database schema (T) - unrecognized token: \"x\n  y\t\x01z\"", 200, `malformed database schema (T) - unrecognized token: "x y z"`},
		{"  lead and trail \r\n", 200, "lead and trail"},
		{"abcdef", 3, "abc…"},
		{"ab cd", 3, "ab…"},
		{"ab cd", 4, "ab c…"},
		{"ab cd", 5, "ab cd"},
	}
	for _, tt := range tests {
		if got := oneLine(tt.in, tt.max); got != tt.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}
