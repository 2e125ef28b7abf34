//go:build cgo

package nsyssqlite

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// sqliteErrClass sorts a driver error by SQLite's result code.
func sqliteErrClass(err error) errClass {
	var e sqlite3.Error
	if !errors.As(err, &e) {
		return errOther
	}
	switch e.Code {
	case sqlite3.ErrCorrupt, sqlite3.ErrNotADB:
		return errDamaged
	case sqlite3.ErrBusy, sqlite3.ErrLocked:
		return errLocked
	}
	return errOther
}
