package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestPercentile(t *testing.T) {
	xs := []int64{10, 20, 30, 40, 50}
	for _, tc := range []struct {
		p    float64
		want float64
	}{{0, 10}, {50, 30}, {90, 46}, {99, 49.6}, {100, 50}, {25, 20}} {
		if got := Percentile(xs, tc.p); got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("Percentile(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if Percentile([]int64(nil), 50) != 0 || Percentile([]int64{7}, 90) != 7 {
		t.Error("Percentile of empty/singleton")
	}
}

// TestOf checks a distribution by hand: nsys stats' columns (sample
// standard deviation, n − 1) and the percentiles.
func TestOf(t *testing.T) {
	d := Of([]int32{40, 10, 30, 20, 50})
	want := Dist{N: 5, Total: 150, Min: 10, Max: 50, Mean: 30, P50: 30, P90: 46, P99: 49.6, StdDev: math.Sqrt(250)}
	if d.N != want.N || d.Total != want.Total || d.Min != want.Min || d.Max != want.Max || !near(d.Mean, want.Mean) ||
		!near(d.P50, want.P50) || !near(d.P90, want.P90) || !near(d.P99, want.P99) || !near(d.StdDev, want.StdDev) {
		t.Errorf("Of = %+v, want %+v", d, want)
	}
	if d := Of([]int64{7}); d.StdDev != 0 || d.P99 != 7 || d.Mean != 7 {
		t.Errorf("Of one value = %+v", d)
	}
	if d := Of([]int64(nil)); d != (Dist{}) {
		t.Errorf("Of nothing = %+v", d)
	}
}

// TestSelect checks the selection-based distribution against Of on the
// sorted sample: every field but the standard deviation (summed in
// another order) exactly.
func TestSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n < 300; n++ {
		for _, spread := range []int64{1, 3, 1000, 1 << 40} {
			xs := make([]int64, n)
			for i := range xs {
				xs[i] = rng.Int64N(spread) - spread/3
			}
			sorted := slices.Clone(xs)
			want := Of(sorted)
			got := Select(xs)
			if got.P50 != want.P50 || got.P90 != want.P90 || got.P99 != want.P99 || got.Max != want.Max || got.Min != want.Min ||
				got.N != want.N || got.Total != want.Total || got.Mean != want.Mean || math.Abs(got.StdDev-want.StdDev) > 1e-6*want.StdDev {
				t.Fatalf("n %d spread %d: %+v, want %+v", n, spread, got, want)
			}
			slices.Sort(xs)
			if !slices.Equal(xs, sorted) {
				t.Fatalf("n %d: the sample changed", n)
			}
		}
	}
}

func TestPerStep(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		w    int
		want int64
	}{{10, 4, 3}, {9, 4, 2}, {-10, 4, -3}, {7, 0, 0}, {1 << 62, 3, 1537228672809129301}} {
		if got := PerStep(tc.ns, tc.w); got != tc.want {
			t.Errorf("PerStep(%d, %d) = %d, want %d", tc.ns, tc.w, got, tc.want)
		}
	}
	if Ratio(1, 0) != 0 || Ratio(1, 4) != 0.25 {
		t.Error("Ratio")
	}
}
