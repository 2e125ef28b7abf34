//go:build linux && (arm64 || loong64 || mips64 || mips64le || riscv64 || s390x)

package outfile

import "syscall"

const sysRenameat2 = syscall.SYS_RENAMEAT2
