//go:build !cgo

package nsyssqlite

// sqliteErrClass: without cgo, go-sqlite3 is a stub whose every call fails.
func sqliteErrClass(error) errClass { return errNoCgo }
