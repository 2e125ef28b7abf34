//go:build !cgo

package nsyssqlite

import "errors"

// sqliteErrClass: without cgo, go-sqlite3 is a stub whose every call fails.
func sqliteErrClass(error) errClass { return errNoCgo }

// rawDB: without cgo there is no SQLite to call (openDB fails first).
type rawDB struct{}

var errRawNoCgo = errors.New("nsyssqlite: built without cgo")

func openRaw(string) (*rawDB, error) { return nil, errRawNoCgo }

func (*rawDB) close() {}

func (*rawDB) scan(string, int, func(*rowVals) error) error { return errRawNoCgo }
