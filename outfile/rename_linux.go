//go:build linux

package outfile

import (
	"os"
	"syscall"
	"unsafe"
)

// renameat2's flags (linux/fs.h).
const (
	renameNoReplaceFlag = 1 << 0
	renameExchangeFlag  = 1 << 1
)

// renameat2 is the Linux system call (3.15 and later), which the
// standard library's syscall package does not wrap.
func renameat2(oldpath, newpath string, flags uintptr) error {
	if sysRenameat2 == 0 {
		return errUnsupported
	}
	o, err := syscall.BytePtrFromString(oldpath)
	if err != nil {
		return err
	}
	n, err := syscall.BytePtrFromString(newpath)
	if err != nil {
		return err
	}
	for {
		_, _, e := syscall.Syscall6(sysRenameat2, fdcwd(), uintptr(unsafe.Pointer(o)), fdcwd(), uintptr(unsafe.Pointer(n)), flags, 0)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		case syscall.ENOSYS, syscall.EINVAL:
			return errUnsupported // an old kernel, or a file system without the flag
		}
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: e}
	}
}

// fdcwd is AT_FDCWD (-100 on every Linux architecture): paths relative
// to the working directory.
func fdcwd() uintptr {
	fd := -100
	return uintptr(fd)
}
