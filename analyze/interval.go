package analyze

import (
	"slices"

	"github.com/traceq/traceq/trace"
)

// union accumulates the length of a union of intervals fed in order of
// start. It is the busy-time counter: overlaps count once.
type union struct {
	total      int64
	start, end trace.Time
	open       bool
}

func (u *union) add(s, e trace.Time) {
	if !u.open {
		u.start, u.end, u.open = s, e, true
		return
	}
	if s > u.end {
		u.total += int64(u.end - u.start)
		u.start, u.end = s, e
		return
	}
	if e > u.end {
		u.end = e
	}
}

// sum returns the union's length so far.
func (u *union) sum() int64 {
	if !u.open {
		return u.total
	}
	return u.total + int64(u.end-u.start)
}

// intervals is a union of intervals as a sorted list of disjoint
// [start, end) pieces, with the running total of their lengths, to
// measure the union inside any window in O(log n).
type intervals struct {
	start, end []trace.Time
	before     []int64 // before[i]: summed length of pieces 0..i-1
}

// deviceBusy returns the union of the activities of device dev of t.
func deviceBusy(t *trace.Trace, dev int32) *intervals {
	iv := &intervals{}
	var total int64
	for i := range t.Activities {
		a := &t.Activities[i]
		if a.Device != dev {
			continue
		}
		s, e := a.Start, a.End()
		if n := len(iv.end); n > 0 && s <= iv.end[n-1] {
			if e > iv.end[n-1] {
				total += int64(e - iv.end[n-1])
				iv.end[n-1] = e
			}
			continue
		}
		iv.start = append(iv.start, s)
		iv.end = append(iv.end, e)
		iv.before = append(iv.before, total)
		total += int64(e - s)
	}
	return iv
}

// within returns the length of the union inside [from, to).
func (iv *intervals) within(from, to trace.Time) int64 {
	// Pieces that end after from, up to those that start before to.
	i, _ := slices.BinarySearch(iv.end, from+1)
	j, _ := slices.BinarySearch(iv.start, to)
	if i >= j {
		return 0
	}
	sum := iv.before[j-1] + int64(iv.end[j-1]-iv.start[j-1]) - iv.before[i]
	if iv.start[i] < from {
		sum -= int64(from - iv.start[i])
	}
	if iv.end[j-1] > to {
		sum -= int64(iv.end[j-1] - to)
	}
	return sum
}
