package step

import (
	"slices"

	"github.com/traceq/traceq/trace"
)

// Steps segments one input into steps and assigns activities to them.
type Steps struct {
	List []Step
	// Of holds, for each activity (by index in Trace.Activities), the
	// index in List of the step it belongs to, or -1 for none.
	Of []int32
	// Anomalies are the odd markers, as trace.Trace.Anomalies lists odd
	// events: token counts beyond belief.
	Anomalies []trace.Anomaly

	// lean marks steps without Of (Lean); hasOutside then says whether
	// some activity belonged to no step.
	lean, hasOutside bool
}

// Lean returns the steps without Of, the one part that grows with the
// activities: what a table keeps of an input once its model is dropped.
// Class works on it; ActivityClass needs Of and must not be called.
func (st *Steps) Lean() *Steps {
	if st == nil {
		return nil
	}
	return &Steps{List: st.List, Anomalies: st.Anomalies, lean: true, hasOutside: st.outside()}
}

// Step is one step window found from a marker range.
type Step struct {
	Index  int // position among the input's steps, from 0
	Kind   Kind
	Marker string
	// Tokens is the number of tokens the step computed, from its marker
	// (its marker's tokens); -1 when the marker does not say.
	Tokens int64
	// Start and End bound the marker range (CPU side, or the GPU mirror
	// for a trace without CPU markers).
	Start trace.Time
	End   trace.Time
	Proc  int32
}

// Class is the class of the window of step s (an index in List; -1 for
// the activities outside any step). Without steps (nil) every activity is
// in the whole trace.
func (st *Steps) Class(s int32) Class {
	switch {
	case st == nil:
		return WholeTrace
	case s < 0:
		return Unattributed
	}
	return ClassOf(st.List[s].Kind)
}

// ActivityClass is the class of activity i's window.
func (st *Steps) ActivityClass(i int) Class {
	if st == nil {
		return WholeTrace
	}
	return st.Class(st.Of[i])
}

// outside reports whether some activity belongs to no step.
func (st *Steps) outside() bool {
	if st != nil && st.lean {
		return st.hasOutside
	}
	return st != nil && slices.Contains(st.Of, -1)
}

// PatternError reports a step pattern (Options.Pattern) that is not a
// regular expression.
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string { return "step pattern " + e.Pattern + ": " + e.Err.Error() }
func (e *PatternError) Unwrap() error { return e.Err }

// Options configures Find and NewAttributor.
type Options struct {
	// Pattern, when set, is a regular expression naming the step marker
	// ranges; it replaces the built-in markers. A matching range whose text
	// is also a built-in marker keeps that marker's kind; others are
	// Generic.
	Pattern string
}

type threadKey struct {
	proc   int32
	thread int64
}

type streamKey struct{ device, stream int32 }

// Innermost answers "which interval open at time x started last" (the
// innermost one, for nested intervals) in O(log M + depth). The zero value
// is empty; Add intervals, Build once, then Find. Intervals are
// half-open [start, end) and added in start order, enclosing first at
// equal starts (trace.CompareRanges' order).
type Innermost struct {
	start, end []trace.Time
	label      []int32
	// parent[i] is the latest-started interval before i still open at
	// start[i], or -1: the chain to walk when i has closed.
	parent []int32
}

// Add appends [s, e) labelled label; intervals come in start order.
func (v *Innermost) Add(s, e trace.Time, label int32) {
	v.start = append(v.start, s)
	v.end = append(v.end, e)
	v.label = append(v.label, label)
}

// Build links each interval to the one enclosing it.
func (v *Innermost) Build() {
	v.parent = make([]int32, len(v.start))
	for i := range v.start {
		c := int32(i) - 1
		for c >= 0 && v.end[c] <= v.start[i] {
			c = v.parent[c]
		}
		v.parent[i] = c
	}
}

// Find returns the label of the latest-started interval containing x, or
// -1. A nil set holds nothing.
func (v *Innermost) Find(x trace.Time) int32 {
	if v == nil {
		return -1
	}
	// The last interval with start <= x.
	i, _ := slices.BinarySearch(v.start, x+1)
	c := int32(i) - 1
	// Every interval containing x is open at start[c] (it started no later
	// and ends after x >= start[c]), so the parent chain visits it.
	for c >= 0 && v.end[c] <= x {
		c = v.parent[c]
	}
	if c < 0 {
		return -1
	}
	return v.label[c]
}
