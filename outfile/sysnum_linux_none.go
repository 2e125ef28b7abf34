//go:build linux && !(amd64 || 386 || arm || arm64 || loong64 || mips64 || mips64le || riscv64 || s390x)

package outfile

const sysRenameat2 = 0 // not looked up for this architecture: the fallbacks serve
