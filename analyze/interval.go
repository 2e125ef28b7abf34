package analyze

import "github.com/traceq/traceq/trace"

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
