package efficiency

import (
	"math"
	"testing"
)

func TestShareOf(t *testing.T) {
	for _, c := range []struct {
		x    int64
		durs []int64
		want []int64
	}{
		{10, []int64{5}, []int64{10}},
		// 10 over 1:1:1: ⌊10/3⌋ = 3, ⌊20/3⌋ − 3 = 3, 10 − 6 = 4.
		{10, []int64{7, 7, 7}, []int64{3, 3, 4}},
		// 1000 over 300 and 100: 750 and 250.
		{1000, []int64{300, 100}, []int64{750, 250}},
		// Kernels of no duration: the first carries it all.
		{9, []int64{0, 0}, []int64{9, 0}},
		{9, []int64{0, 3}, []int64{0, 9}},
		// Products beyond 64 bits: 2^62 FLOPs over an hour and a second.
		{1 << 62, []int64{3600e9, 1e9}, []int64{4610405350274533866, 1280668152854038}}, // by Python: x*3600e9//3601e9
		{math.MaxInt64, []int64{1, math.MaxInt64 - 1}, []int64{1, math.MaxInt64 - 1}},
	} {
		var total, cum, sum int64
		for _, d := range c.durs {
			total += d
		}
		for k, d := range c.durs {
			got := shareOf(c.x, cum, cum+d, total, k == 0)
			cum += d
			sum += got
			if got != c.want[k] {
				t.Errorf("x %d over %v: kernel %d gets %d, want %d", c.x, c.durs, k, got, c.want[k])
			}
		}
		if sum != c.x {
			t.Errorf("x %d over %v: shares add up to %d", c.x, c.durs, sum)
		}
	}
}
