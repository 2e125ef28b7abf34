// Package stats describes samples of integer nanoseconds: one
// distribution type (Dist) for every sample traceq summarises (kernel
// durations, step spans, launch latencies), the percentile rule, and the
// two divisions every share and per-step figure goes through (Ratio,
// PerStep). Definitions: docs/definitions.md#percentiles.
package stats

import (
	"math"
	"slices"
)

// Dist describes a sample of integer nanosecond figures.
type Dist struct {
	N     int64
	Total int64
	Min   int64
	Max   int64
	Mean  float64
	// P50, P90 and P99 are percentiles by linear interpolation between
	// closest ranks (Percentile).
	P50, P90, P99 float64
	StdDev        float64 // sample standard deviation (n−1); 0 for n < 2
}

// Of describes xs; it sorts xs in place. The zero Dist describes an
// empty sample.
func Of[T int32 | int64](xs []T) Dist {
	var d Dist
	if len(xs) == 0 {
		return d
	}
	if !slices.IsSorted(xs) { // often they come sorted (window.AppendTo)
		slices.Sort(xs)
	}
	d.N = int64(len(xs))
	for _, x := range xs {
		d.Total += int64(x)
	}
	d.Min, d.Max = int64(xs[0]), int64(xs[len(xs)-1])
	d.Mean = float64(d.Total) / float64(d.N)
	d.P50, d.P90, d.P99 = Percentile(xs, 50), Percentile(xs, 90), Percentile(xs, 99)
	d.StdDev = stdDev(xs, d.Mean)
	return d
}

func stdDev[T int32 | int64](xs []T, mean float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		dx := float64(x) - mean
		ss += dx * dx
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// Select describes xs as Of would, finding the percentiles by selection
// instead of a sort: O(n) expected, for samples described once and never
// shown whole (launch latencies: one per launch call). It reorders xs.
func Select(xs []int64) Dist {
	var d Dist
	if len(xs) == 0 {
		return d
	}
	d.N = int64(len(xs))
	d.Min = slices.Min(xs)
	for _, x := range xs {
		d.Total += x
	}
	d.Mean = float64(d.Total) / float64(d.N)
	d.StdDev = stdDev(xs, d.Mean)
	// rank returns the k-th smallest of xs[from:], which selection leaves
	// partitioned around it, so that later ranks are found to its right.
	from := 0
	rank := func(k int) int64 {
		selectRank(xs[from:], k-from)
		from = k
		return xs[k]
	}
	pct := func(p float64) float64 {
		h := p / 100 * float64(len(xs)-1)
		lo := int(math.Floor(h))
		x := rank(lo)
		if lo+1 >= len(xs) {
			return float64(x)
		}
		next := slices.Min(xs[lo+1:])
		return float64(x) + (h-float64(lo))*float64(next-x)
	}
	d.P50, d.P90, d.P99 = pct(50), pct(90), pct(99)
	d.Max = slices.Max(xs[from:])
	return d
}

// selectRank reorders xs so that xs[k] is its k-th smallest element, with
// nothing larger before it and nothing smaller after (Hoare's selection,
// median-of-three pivots).
func selectRank(xs []int64, k int) {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		m := lo + (hi-lo)/2
		// Median of three into xs[m].
		if xs[m] < xs[lo] {
			xs[m], xs[lo] = xs[lo], xs[m]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[m] {
			xs[hi], xs[m] = xs[m], xs[hi]
		}
		pivot := xs[m]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

// Percentile returns the p-th percentile (0..100) of sorted xs by linear
// interpolation between closest ranks (numpy's default), or 0 when empty.
func Percentile[T int32 | int64](sorted []T, p float64) float64 {
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

// Ratio is a/b, or 0 when b is 0: every share traceq prints.
func Ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// PerStep divides ns by a count of windows (steps × devices) with
// rounding half away from zero: every "per step" figure.
func PerStep(ns int64, windows int) int64 {
	if windows <= 0 {
		return 0
	}
	w := int64(windows)
	if ns < 0 {
		return -((-ns + w/2) / w)
	}
	return (ns + w/2) / w
}
