package gen

import (
	"io"
	"runtime"
	"testing"
)

// BenchmarkWrite measures the generator's throughput (bytes of trace per
// second) on a decode-heavy 32-layer config.
func BenchmarkWrite(b *testing.B) {
	cfg := Config{Ranks: 8, Steps: 200, DecodeEvery: 20, MixedEvery: 7, Layers: 32, Seed: 1}
	var n int64
	for b.Loop() {
		exp, err := Write(io.Discard, cfg, 3)
		if err != nil {
			b.Fatal(err)
		}
		n = exp.Bytes
	}
	b.SetBytes(n)
}

// TestWriteStreams checks that memory does not grow with the trace: a
// 20× longer trace must not need more than a small fixed extra heap.
func TestWriteStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes ~100 MB")
	}
	peak := func(steps int) (uint64, int64) {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		exp, err := Write(io.Discard, Config{Steps: steps, DecodeEvery: 10, Layers: 32, Seed: 2}, 0)
		if err != nil {
			t.Fatal(err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		// TotalAlloc grows with garbage too; what must stay flat is the
		// live heap, read right after the write.
		return after.HeapAlloc, exp.Bytes
	}
	small, sb := peak(20)
	big, bb := peak(400)
	t.Logf("%d MB -> heap %d KB; %d MB -> heap %d KB", sb>>20, small>>10, bb>>20, big>>10)
	if big > small+16<<20 {
		t.Errorf("heap after %d MB: %d KB, after %d MB: %d KB", bb>>20, big>>10, sb>>20, small>>10)
	}
}
