package merge

import (
	"slices"
	"testing"
)

// TestCollectivesShift: two communicators of four ranks on hosts whose
// clocks are off by known amounts, joined by an all-to-all over every
// rank; one odd instance per communicator (ends 40 µs apart) the median
// leaves out. The shifts recover the clocks exactly; a rank no
// collective reaches is not joined.
func TestCollectivesShift(t *testing.T) {
	skew := []int64{0, 0, 0, 0, 7_500, 7_500, 7_500, 7_500, 0}
	var insts []matched
	add := func(ranks []int, end int64, odd int) {
		m := matched{ranks: ranks}
		for j, r := range ranks {
			e := end + skew[r]
			if j == odd {
				e += 40_000
			}
			m.ends = append(m.ends, e)
		}
		insts = append(insts, m)
	}
	tp0, tp1, all := []int{0, 1, 2, 3}, []int{4, 5, 6, 7}, []int{0, 1, 2, 3, 4, 5, 6, 7}
	for i := range 5 {
		odd := -1
		if i == 2 {
			odd = 1
		}
		add(tp0, int64(1_000_000*i), odd)
		add(tp1, int64(1_000_000*i+300), odd)
		add(all, int64(1_000_000*i+500_000), odd)
	}
	al := collectivesShift(9, insts)
	want := []int64{0, 0, 0, 0, -7_500, -7_500, -7_500, -7_500, 0}
	if !slices.Equal(al.shift, want) {
		t.Errorf("shifts %v, want %v", al.shift, want)
	}
	if !slices.Equal(al.joined, []bool{true, true, true, true, true, true, true, true, false}) {
		t.Errorf("joined %v", al.joined)
	}
	if al.spreadP50 != 0 || al.spreadMax != 40_000 || al.instances != 15 {
		t.Errorf("spread p50 %d max %d over %d", al.spreadP50, al.spreadMax, al.instances)
	}
	// Without the all-to-all, host 1 is joined to nothing.
	al = collectivesShift(8, insts[:0:0])
	if !al.joined[0] || al.joined[4] {
		t.Errorf("no instances: joined %v", al.joined)
	}
}
