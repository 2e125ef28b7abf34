package outfile

const sysRenameat2 = 353 // arch/x86/entry/syscalls/syscall_32.tbl
