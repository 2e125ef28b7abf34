//go:build unix

package outfile

import (
	"io/fs"
	"syscall"
)

func inode(st fs.FileInfo) uint64 { return uint64(st.Sys().(*syscall.Stat_t).Ino) }
