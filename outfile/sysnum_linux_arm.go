package outfile

const sysRenameat2 = 382 // arch/arm/tools/syscall.tbl
