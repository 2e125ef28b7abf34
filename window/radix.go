package window

import (
	"math/bits"
	"slices"
)

// radixDigit is the width of one pass of sortInts: 2^11 counters fit the
// L1 cache, and kernel durations (under 2^22 ns) take two passes.
const radixDigit = 11

// radixMin is the length below which sortInts leaves v to slices.Sort.
const radixMin = 1024

// sortInts sorts v in increasing order, as slices.Sort does (the result is
// the same: ints have one order), by least-significant-digit radix passes
// over v's values less its minimum: the durations of an input are sorted
// after its pass, while a core may idle, and a comparison sort of a GB of
// trace's took a tenth of a second. scratch is reused between calls.
func sortInts(v []int64, scratch *[]int64) {
	if len(v) < radixMin {
		slices.Sort(v)
		return
	}
	lo, hi := v[0], v[0]
	sorted := true
	for i, x := range v {
		lo, hi = min(lo, x), max(hi, x)
		if i > 0 && x < v[i-1] {
			sorted = false
		}
	}
	if sorted {
		return
	}
	span := uint64(hi) - uint64(lo) // the values less lo fit in bits.Len64(span) bits
	passes := (bits.Len64(span) + radixDigit - 1) / radixDigit
	if cap(*scratch) < len(v) {
		*scratch = make([]int64, len(v))
	}
	src, dst := v, (*scratch)[:len(v)]
	var count [1 << radixDigit]int
	for p := range passes {
		shift := uint(p * radixDigit)
		clear(count[:])
		for _, x := range src {
			count[(uint64(x)-uint64(lo))>>shift&(1<<radixDigit-1)]++
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, x := range src {
			d := (uint64(x) - uint64(lo)) >> shift & (1<<radixDigit - 1)
			dst[count[d]] = x
			count[d]++
		}
		src, dst = dst, src
	}
	if passes%2 == 1 {
		copy(v, src)
	}
}
