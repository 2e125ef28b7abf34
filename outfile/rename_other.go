//go:build !linux

package outfile

const (
	renameNoReplaceFlag = 1 << 0
	renameExchangeFlag  = 1 << 1
)

func renameat2(oldpath, newpath string, flags uintptr) error { return errUnsupported }
