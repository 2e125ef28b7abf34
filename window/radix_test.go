package window

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortInts: the radix sort gives slices.Sort's order, for short and
// long inputs, sorted ones, one or many passes, negative values and the
// extremes of int64.
func TestSortInts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var scratch []int64
	for _, tc := range []struct {
		name string
		n    int
		gen  func() int64
	}{
		{"short", 100, func() int64 { return r.Int64N(1000) }},
		{"kernels", 5000, func() int64 { return 1000 + r.Int64N(1<<20) }},
		{"one pass", 3000, func() int64 { return 7 + r.Int64N(1<<10) }},
		{"three passes", 4000, func() int64 { return r.Int64N(1 << 30) }},
		{"negative", 4000, func() int64 { return r.Int64N(1<<40) - 1<<39 }},
		{"extremes", 4000, func() int64 {
			switch r.IntN(4) {
			case 0:
				return math.MinInt64
			case 1:
				return math.MaxInt64
			}
			return int64(r.Uint64())
		}},
		{"equal", 2000, func() int64 { return 42 }},
	} {
		v := make([]int64, tc.n)
		for i := range v {
			v[i] = tc.gen()
		}
		want := slices.Clone(v)
		slices.Sort(want)
		sortInts(v, &scratch)
		if !slices.Equal(v, want) {
			t.Errorf("%s: not in slices.Sort's order", tc.name)
		}
		sortInts(v, &scratch) // sorted already
		if !slices.Equal(v, want) {
			t.Errorf("%s, sorted: changed", tc.name)
		}
	}
}
