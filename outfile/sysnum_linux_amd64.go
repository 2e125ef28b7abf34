package outfile

const sysRenameat2 = 316 // arch/x86/entry/syscalls/syscall_64.tbl
