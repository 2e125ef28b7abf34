package analyze

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
)

// This file prepares the data the charts draw (package render/chart lays
// it out and computes nothing itself).

// TopSums holds nanoseconds per top-level category, indexed by
// classify.Top.
type TopSums [classify.NumTops]int64

// CategoriesByTop sums a group's categories by top level.
func CategoriesByTop(cs []CategoryStat) TopSums {
	var out TopSums
	for _, c := range cs {
		out[c.Category.Top] += c.KernelNS
	}
	return out
}

// ByTop sums a step's categories by top level.
func (r *StepRow) ByTop() TopSums {
	var out TopSums
	for _, c := range r.Categories {
		out[c.Category.Top] += c.KernelNS
	}
	return out
}

// StepSeries returns the step rows of one input on one device: the first
// (pid, device) of the input in row order that has steps of kind (all
// kinds when kind is ""). Rows keep their order (by step index).
func StepSeries(rows []StepRow, input int, kind StepKind) []StepRow {
	var out []StepRow
	var pid int64
	var dev int32
	found := false
	for _, r := range rows {
		if r.Input != input || (kind != KindAny && r.Step.Kind != kind) {
			continue
		}
		if !found {
			pid, dev, found = r.PID, r.Device, true
		}
		if r.PID == pid && r.Device == dev {
			out = append(out, r)
		}
	}
	return out
}

// DominantKind returns the step kind with the most rows in rows (ties
// broken by the kinds' order), or KindAny when rows is empty.
func DominantKind(rows []StepRow) StepKind {
	var n [numKinds]int
	for _, r := range rows {
		n[r.Step.Kind]++
	}
	best := KindAny
	for k := range n {
		if n[k] > n[best] {
			best = StepKind(k)
		}
	}
	return best
}

// TimelineLane is one row of a timeline: a stream of a device of a process.
type TimelineLane struct {
	PID    int64
	Device int32
	Stream int32 // -1 when unknown
}

// TimelineSpan is one activity on a timeline.
type TimelineSpan struct {
	Lane       int        // index in Timeline.Lanes
	Start, End trace.Time // absolute, as in the trace
	Category   classify.Category
	Name       string
}

// Timeline is the activities of one step (or of a whole trace without
// steps), by lane, in start order within each lane.
type Timeline struct {
	Path string
	// Step is the step drawn; nil when the input has no steps and the
	// whole trace is drawn.
	Step *Step
	// Start and End bound the activities: first start to last end.
	Start, End trace.Time
	Lanes      []TimelineLane
	Spans      []TimelineSpan
}

// StepActivities returns the indices (in Trace.Activities) of the
// activities attributed to the step at position index of in.Steps.List.
// Without steps, index 0 stands for the whole trace.
func StepActivities(in Input, index int) ([]int, error) {
	t := in.Trace
	if in.Steps == nil || len(in.Steps.List) == 0 {
		if index != 0 {
			return nil, fmt.Errorf("%s: no step markers, so the only step index is 0 (the whole trace), not %d", in.Path, index)
		}
		out := make([]int, len(t.Activities))
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	if index < 0 || index >= len(in.Steps.List) {
		return nil, fmt.Errorf("%s: step index %d out of range: the input has %d steps (0..%d)", in.Path, index, len(in.Steps.List), len(in.Steps.List)-1)
	}
	var out []int
	for i, s := range in.Steps.Of {
		if int(s) == index {
			out = append(out, i)
		}
	}
	return out, nil
}

// StepTimeline returns the timeline of step index of in (see
// StepActivities); activities are categorised as in Breakdown.
func StepTimeline(in Input, index int, cl *classify.Classifier) (*Timeline, error) {
	idx, err := StepActivities(in, index)
	if err != nil {
		return nil, err
	}
	if cl == nil {
		cl = classify.Default()
	}
	t := in.Trace
	tl := &Timeline{Path: in.Path}
	if in.Steps != nil && len(in.Steps.List) > 0 {
		s := in.Steps.List[index]
		tl.Step = &s
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("%s: step %d has no GPU activity", in.Path, index)
	}
	cats := newCatTable()
	byName := cats.byName(t, cl)
	lanes := map[TimelineLane]int{}
	for _, i := range idx {
		a := &t.Activities[i]
		l := TimelineLane{PID: procPID(t, a.Proc), Device: a.Device, Stream: a.Stream}
		if _, ok := lanes[l]; !ok {
			lanes[l] = 0
			tl.Lanes = append(tl.Lanes, l)
		}
	}
	slices.SortFunc(tl.Lanes, func(a, b TimelineLane) int {
		if c := cmp.Compare(a.PID, b.PID); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Device, b.Device); c != 0 {
			return c
		}
		return cmp.Compare(a.Stream, b.Stream)
	})
	for i, l := range tl.Lanes {
		lanes[l] = i
	}
	for k, i := range idx {
		a := &t.Activities[i]
		l := lanes[TimelineLane{PID: procPID(t, a.Proc), Device: a.Device, Stream: a.Stream}]
		tl.Spans = append(tl.Spans, TimelineSpan{Lane: l, Start: a.Start, End: a.End(),
			Category: cats.cats[byName[a.Name]], Name: t.Names[a.Name]})
		if k == 0 || a.Start < tl.Start {
			tl.Start = a.Start
		}
		if k == 0 || a.End() > tl.End {
			tl.End = a.End()
		}
	}
	slices.SortFunc(tl.Spans, func(a, b TimelineSpan) int {
		if c := cmp.Compare(a.Lane, b.Lane); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(a.End, b.End); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return tl, nil
}
