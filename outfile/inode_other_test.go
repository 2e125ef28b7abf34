//go:build !unix

package outfile

import "io/fs"

func inode(st fs.FileInfo) uint64 { return 0 }
