package efficiency

import (
	"math"
	"testing"

	"github.com/traceq/traceq/gpuspec"
	"github.com/traceq/traceq/opcost"
)

func gpu(t *testing.T, name string) *gpuspec.GPU {
	t.Helper()
	g, err := gpuspec.Default().Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRoofOf(t *testing.T) {
	for _, c := range []struct {
		what         string
		gpu          string
		cost         opcost.Cost
		compute, mem int64
		bound        Bound
		ok           bool
	}{
		// The B200 trace's first addmm: 3,273,523,200 FLOPs at 2,250 TFLOP/s
		// is 1454.9 ns → 1455; 9,939,200 bytes at 7.7 TB/s 1290.8 → 1291.
		{"addmm on B200", "B200", opcost.Cost{Model: opcost.GEMM, FLOPs: 3_273_523_200, Bytes: 9_939_200, DType: gpuspec.BF16},
			1455, 1291, ComputeBound, true},
		// 3.35 MB at 3.35 TB/s is exactly 1 µs: no rounding up.
		{"exact", "H100 SXM", opcost.Cost{Model: opcost.Memory, Bytes: 3_350_000}, 0, 1000, MemoryBound, true},
		// One byte takes a nanosecond (rounded up from 0.0003).
		{"tiny", "H100 SXM", opcost.Cost{Model: opcost.Memory, Bytes: 1}, 0, 1, MemoryBound, true},
		// A decode-sized GEMM is memory-bound: 2·16·4096·4096 FLOPs at
		// 989.5 TFLOP/s is 542.6 → 543 ns; 33,816,576 bytes at 3.35 TB/s
		// 10094.5 → 10095 ns.
		{"decode gemm", "H100 SXM", opcost.Cost{Model: opcost.GEMM, FLOPs: 536_870_912, Bytes: 33_816_576, DType: gpuspec.BF16},
			543, 10095, MemoryBound, true},
		// A tie is memory-bound.
		{"tie", "H100 SXM", opcost.Cost{Model: opcost.GEMM, FLOPs: 989_500, Bytes: 3_350, DType: gpuspec.BF16}, 1, 1, MemoryBound, true},
		// No FP8 on an A100: not modelled there.
		{"fp8 on A100", "A100 SXM 80GB", opcost.Cost{Model: opcost.GEMM, FLOPs: 100, Bytes: 100, DType: gpuspec.FP8}, 0, 0, MemoryBound, false},
	} {
		r, ok := RoofOf(c.cost, gpu(t, c.gpu))
		if ok != c.ok || r.ComputeNS != c.compute || r.MemoryNS != c.mem || (ok && r.Bound() != c.bound) {
			t.Errorf("%s: %+v %v bound %v, want compute %d memory %d %v %v", c.what, r, ok, r.Bound(), c.compute, c.mem, c.bound, c.ok)
		}
		if ok && r.NS() != max(c.compute, c.mem) {
			t.Errorf("%s: NS %d", c.what, r.NS())
		}
	}
}

func TestCeilNS(t *testing.T) {
	for _, c := range []struct{ work, rate, want int64 }{
		{0, 5, 0}, {5, 0, 0}, {1e12, 1e12, 1e9}, {1e12 + 1, 1e12, 1e9 + 1}, {math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64, 1e18, 9_223_372_037}, // 2^63-1 · 1e9 / 1e18 = 9223372036.85 → up
	} {
		if got := ceilNS(c.work, c.rate); got != c.want {
			t.Errorf("ceilNS(%d, %d) = %d, want %d", c.work, c.rate, got, c.want)
		}
	}
}

func TestRatios(t *testing.T) {
	// 2e12 FLOPs in 1 s is 2 TFLOP/s; 1.5e9 bytes in 1 ms is 1.5 TB/s.
	if r := Rate(2e12, 1e9); r != 2 {
		t.Errorf("Rate = %v", r)
	}
	if r := Rate(15e8, 1e6); r != 1.5 {
		t.Errorf("Rate = %v", r)
	}
	if Rate(5, 0) != 0 || Efficiency(5, 0) != 0 || Intensity(5, 0) != 0 {
		t.Error("zero denominators")
	}
	if e := Efficiency(1455, 2000); e != 0.7275 {
		t.Errorf("Efficiency = %v", e)
	}
	if i := Intensity(3_273_523_200, 9_939_200); math.Abs(i-329.3548) > 1e-4 {
		t.Errorf("Intensity = %v", i)
	}
}
