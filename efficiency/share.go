package efficiency

import "math/bits"

// shareOf is the part of x a kernel carries when x is shared among an
// op's kernels in proportion to their durations
// (docs/definitions.md#an-ops-kernels): the k-th kernel gets
// ⌊x·c_k/d⌋ − ⌊x·c_{k−1}/d⌋, where c_k sums the durations of kernels 1…k
// (before and after are c_{k−1} and c_k) and d is their total, so the
// shares are integers that add up to x exactly. With d = 0 (kernels of no
// duration) the first kernel carries it all.
func shareOf(x, before, after, total int64, first bool) int64 {
	if total <= 0 {
		if first {
			return x
		}
		return 0
	}
	return scaled(x, after, total) - scaled(x, before, total)
}

// scaled is ⌊x·c/d⌋ for 0 ≤ c ≤ d, x ≥ 0, in 128 bits (the result is at
// most x).
func scaled(x, c, d int64) int64 {
	if c >= d {
		return x
	}
	hi, lo := bits.Mul64(uint64(x), uint64(c))
	q, _ := bits.Div64(hi, lo, uint64(d))
	return int64(q)
}
