package analyze

import (
	"math"
	"slices"
)

// Dist summarises a sample of durations (ns) the way nsys stats does.
type Dist struct {
	N      int64   `json:"instances"`
	Total  int64   `json:"total_ns"`
	Mean   float64 `json:"avg_ns"`
	Median float64 `json:"med_ns"`
	Min    int64   `json:"min_ns"`
	Max    int64   `json:"max_ns"`
	StdDev float64 `json:"stddev_ns"` // sample standard deviation (n-1); 0 for n < 2
}

// summarize computes Dist of xs; it sorts xs in place.
func summarize(xs []int64) Dist {
	var d Dist
	if len(xs) == 0 {
		return d
	}
	slices.Sort(xs)
	d.N = int64(len(xs))
	for _, x := range xs {
		d.Total += x
	}
	d.Min, d.Max = xs[0], xs[len(xs)-1]
	d.Mean = float64(d.Total) / float64(d.N)
	if n := len(xs); n%2 == 1 {
		d.Median = float64(xs[n/2])
	} else {
		d.Median = (float64(xs[n/2-1]) + float64(xs[n/2])) / 2
	}
	if d.N > 1 {
		var ss float64
		for _, x := range xs {
			dx := float64(x) - d.Mean
			ss += dx * dx
		}
		d.StdDev = math.Sqrt(ss / float64(d.N-1))
	}
	return d
}

// Percentile returns the p-th percentile (0..100) of sorted xs by linear
// interpolation between closest ranks (numpy's default), or 0 when empty.
func Percentile(sorted []int64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n == 1 {
		return float64(sorted[0])
	}
	h := p / 100 * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return float64(sorted[n-1])
	}
	f := h - float64(lo)
	return float64(sorted[lo]) + f*float64(sorted[lo+1]-sorted[lo])
}
