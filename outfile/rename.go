package outfile

import (
	"errors"
	"io/fs"
	"os"
)

// errUnsupported is what renameat2 returns where it cannot help: another
// system, an old kernel, a file system without the flag.
var errUnsupported = errors.New("not supported")

// renameNoReplace renames oldpath to newpath unless newpath exists (an
// *os.LinkError wrapping fs.ErrExist then). Where the system cannot
// refuse atomically, newpath is looked at first: a race with another
// process creating it in that instant is possible there.
func renameNoReplace(oldpath, newpath string) error {
	err := renameat2(oldpath, newpath, renameNoReplaceFlag)
	if !errors.Is(err, errUnsupported) {
		return err
	}
	if _, err := os.Lstat(newpath); err == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	return os.Rename(oldpath, newpath)
}

// exchange swaps two paths (two directories here): atomically where the
// system can (Linux's renameat2 RENAME_EXCHANGE: a reader sees one or
// the other, never neither), else with three renames through a hidden
// name beside a, undone if the second or third fails.
func exchange(a, b string) error {
	err := renameat2(a, b, renameExchangeFlag)
	if !errors.Is(err, errUnsupported) {
		return err
	}
	tmp := a + ".swap"
	if err := renameNoReplace(b, tmp); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		os.Rename(tmp, b)
		return err
	}
	if err := os.Rename(tmp, a); err != nil {
		os.Rename(b, a)
		os.Rename(tmp, b)
		return err
	}
	return nil
}
