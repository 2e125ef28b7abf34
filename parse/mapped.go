//go:build linux || darwin || freebsd

package parse

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// A plain JSON trace is read where the page cache holds it, mapped,
// instead of copied into buffers by read(2) (a tenth of the CPU of a
// parse of a 1 GB file: docs/performance.md). Its pages are dropped from
// the process as the parser finishes with them (drop), so that the
// process holds a few windows of the file, not all of it.

// mapping is a regular file mapped read-only.
type mapping struct{ data []byte }

var errNoMap = errors.New("not mapped")

// mapFile maps the first size bytes of f, or returns an error when the
// file cannot be (then it is read instead).
func mapFile(f *os.File, size int64) (*mapping, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, errNoMap
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &mapping{data: b}, nil
}

// drop lets the pages that lie wholly within data[from:to] go from the
// process: they are read from the file again if touched.
func (m *mapping) drop(from, to int64) {
	page := int64(os.Getpagesize())
	lo := (from + page - 1) / page * page
	hi := to / page * page
	if lo < hi {
		_ = unix.Madvise(m.data[lo:hi], unix.MADV_DONTNEED)
	}
}

// close unmaps the file; nothing may refer to its bytes after.
func (m *mapping) close() { _ = unix.Munmap(m.data) }
