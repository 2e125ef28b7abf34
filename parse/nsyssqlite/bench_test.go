package nsyssqlite

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkOpen reads the largest committed fixture (3,587 kernels, 6,682
// runtime rows, 17,113 NVTX ranges). For a 5M-kernel export see
// bench/nsys/run.sh.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(fixtureDir, "nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite")
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Open(path, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
