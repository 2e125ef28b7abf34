//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package outfile

import (
	"errors"
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on f (flock), waiting for it.
// flock locks conflict between open files, in one process as between
// processes; the lock goes with the file's close.
func lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
