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
	// Label is the activity's short label, unique over every activity
	// name of the input (KernelLabels).
	Label string
}

// Timeline is the activities of one step (or of a whole trace without
// steps), by lane, in start order within each lane.
type Timeline struct {
	Path string
	// Step is the step drawn; nil when the input has no steps and the
	// whole trace is drawn.
	Step *Step
	// Start and End bound what is drawn: the first start and last end of
	// the activities, or the window (Between).
	Start, End trace.Time
	// Origin is the zero of the time axis: the first start of the step's
	// activities, for a window of it too, so that times read the same in
	// the whole step and in any window.
	Origin trace.Time
	// Window is the window drawn, nil for the whole step.
	Window *TimelineWindow
	Lanes  []TimelineLane
	Spans  []TimelineSpan
}

// TimelineWindow is a part of a timeline: [From, To) ns since its Origin.
type TimelineWindow struct {
	From, To int64
}

// Between returns the part of tl from offset from to offset to, in ns since
// tl.Origin (the chart's zero: the step's first kernel start); to <= 0
// means to the end. Activities that cross an edge are cut at it; lanes
// with no activity in the window are left out. A window that holds no
// activity is an error naming what the timeline covers.
func (tl *Timeline) Between(from, to int64) (*Timeline, error) {
	whole := fmt.Sprintf("the timeline covers 0 to %s ms", msText(int64(tl.End-tl.Origin)))
	if to <= 0 {
		to = int64(tl.End - tl.Origin)
	}
	if from < 0 || to <= from {
		return nil, fmt.Errorf("window %s to %s ms is empty or negative: %s", msText(from), msText(to), whole)
	}
	lo, hi := max(tl.Origin+trace.Time(from), tl.Start), min(tl.Origin+trace.Time(to), tl.End)
	out := &Timeline{Path: tl.Path, Step: tl.Step, Start: lo, End: hi, Origin: tl.Origin,
		Window: &TimelineWindow{From: from, To: to}}
	lane := make([]int, len(tl.Lanes))
	for i := range lane {
		lane[i] = -1
	}
	for _, sp := range tl.Spans {
		// A zero-length activity at lo counts; otherwise [Start, End)
		// must meet [lo, hi).
		if sp.End < lo || sp.Start >= hi || (sp.End == lo && sp.Start < lo) {
			continue
		}
		if lane[sp.Lane] < 0 {
			lane[sp.Lane] = 0 // numbered below, in lane order
		}
		out.Spans = append(out.Spans, sp)
	}
	if len(out.Spans) == 0 {
		return nil, fmt.Errorf("no GPU activity between %s and %s ms: %s", msText(from), msText(to), whole)
	}
	for i, l := range tl.Lanes {
		if lane[i] == 0 {
			lane[i] = len(out.Lanes)
			out.Lanes = append(out.Lanes, l)
		}
	}
	for i := range out.Spans {
		sp := &out.Spans[i]
		sp.Lane = lane[sp.Lane]
		sp.Start, sp.End = max(sp.Start, lo), min(sp.End, hi)
	}
	return out, nil
}

// msText formats ns as ms with three decimals, from the integer.
func msText(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	us := (ns + 500) / 1000
	return fmt.Sprintf("%s%d.%03d", sign, us/1000, us%1000)
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
	byName := cats.byName(t, (&Options{Classifier: cl}).categorize)
	labels := KernelLabels(ActivityNames([]Input{in}), LabelRunes)
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
			Category: cats.cats[byName[a.Name]], Name: t.Names[a.Name], Label: labels[t.Names[a.Name]]})
		if k == 0 || a.Start < tl.Start {
			tl.Start = a.Start
		}
		if k == 0 || a.End() > tl.End {
			tl.End = a.End()
		}
	}
	tl.Origin = tl.Start
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
