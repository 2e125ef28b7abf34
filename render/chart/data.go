package chart

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/labels"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// This file prepares the data the charts draw from the analysis: sums by
// top-level category, the step series of one device, and the timeline of
// one step.

// TopSums holds nanoseconds per top-level category, indexed by
// classify.Top.
type TopSums [classify.NumTops]int64

// CategoriesByTop sums a group's categories by top level.
func CategoriesByTop(cs []analyze.CategoryStat) TopSums {
	var out TopSums
	for _, c := range cs {
		out[c.Category.Top] += c.KernelNS
	}
	return out
}

// stepByTop sums a step's categories by top level.
func stepByTop(r *analyze.StepRow) TopSums {
	var out TopSums
	for _, c := range r.Categories {
		out[c.Category.Top] += c.KernelNS
	}
	return out
}

// StepSeries returns the step rows of one input on one device: the first
// (pid, device) of the input in row order that has steps f keeps. Rows
// keep their order (by step index).
func StepSeries(rows []analyze.StepRow, input int, f step.Filter) []analyze.StepRow {
	var out []analyze.StepRow
	var pid int64
	var dev int32
	found := false
	for _, r := range rows {
		if r.Rank.Input != input || !f.Keeps(step.ClassOf(r.Step.Kind)) {
			continue
		}
		if !found {
			pid, dev, found = r.Rank.PID, r.Device, true
		}
		if r.Rank.PID == pid && r.Device == dev {
			out = append(out, r)
		}
	}
	return out
}

// DominantKind returns the step kind with the most rows in rows (ties
// broken by the kinds' order); ok is false when rows is empty.
func DominantKind(rows []analyze.StepRow) (kind step.Kind, ok bool) {
	n := map[step.Kind]int{}
	for _, r := range rows {
		n[r.Step.Kind]++
	}
	for _, k := range []step.Kind{step.Decode, step.Prefill, step.Mixed, step.Generic} {
		if n[k] > n[kind] {
			kind, ok = k, true
		}
	}
	return kind, ok
}

// Lane is one row of a timeline: a stream of a device of a process.
type Lane struct {
	PID    int64
	Device int32
	Stream int32 // -1 when unknown
}

// Span is one activity on a timeline.
type Span struct {
	Lane       int        // index in Track.Lanes
	Start, End trace.Time // absolute, as in the trace
	Category   classify.Category
	Name       string
	// Label is the activity's short label, unique over every activity
	// name of the input (labels.Of).
	Label string
}

// Track is the activities of one step (or of a whole trace without
// steps), by lane, in start order within each lane.
type Track struct {
	Path string
	// Step is the step drawn; nil when the input has no steps and the
	// whole trace is drawn.
	Step *step.Step
	// Start and End bound what is drawn: the first start and last end of
	// the activities, or the window (Between).
	Start, End trace.Time
	// Origin is the zero of the time axis: the first start of the step's
	// activities, for a window of it too, so that times read the same in
	// the whole step and in any window.
	Origin trace.Time
	// Window is the window drawn, nil for the whole step.
	Window *Window
	Lanes  []Lane
	Spans  []Span
}

// Window is a part of a timeline: [From, To) ns since its Origin.
type Window struct {
	From, To int64
}

// Between returns the part of tl from offset from to offset to, in ns since
// tl.Origin (the chart's zero: the step's first kernel start); to <= 0
// means to the end. Activities that cross an edge are cut at it; lanes
// with no activity in the window are left out. A window that holds no
// activity is an error naming what the timeline covers.
func (tl *Track) Between(from, to int64) (*Track, error) {
	whole := fmt.Sprintf("the timeline covers 0 to %s ms", render.MS(int64(tl.End-tl.Origin)))
	if to <= 0 {
		to = int64(tl.End - tl.Origin)
	}
	if from < 0 || to <= from {
		return nil, fmt.Errorf("window %s to %s ms is empty or negative: %s", render.MS(from), render.MS(to), whole)
	}
	lo, hi := max(tl.Origin+trace.Time(from), tl.Start), min(tl.Origin+trace.Time(to), tl.End)
	out := &Track{Path: tl.Path, Step: tl.Step, Start: lo, End: hi, Origin: tl.Origin,
		Window: &Window{From: from, To: to}}
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
		return nil, fmt.Errorf("no GPU activity between %s and %s ms: %s", render.MS(from), render.MS(to), whole)
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

// stepActivities returns the indices (in Trace.Activities) of the
// activities attributed to the step at position index of in.Steps.List.
// Without steps, index 0 stands for the whole trace.
func stepActivities(in *window.Input, index int) ([]int, error) {
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

// StepTrack returns the timeline of step index (a position in
// Steps.List; 0 for the whole trace of an input without steps) of input
// input of tbl, each activity in its full category.
func StepTrack(tbl *window.Table, input, index int) (*Track, error) {
	in := &tbl.Inputs[input]
	idx, err := stepActivities(in, index)
	if err != nil {
		return nil, err
	}
	t := in.Trace
	tl := &Track{Path: in.Path}
	if in.Steps != nil && len(in.Steps.List) > 0 {
		s := in.Steps.List[index]
		tl.Step = &s
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("%s: step %d has no GPU activity", in.Path, index)
	}
	used := make([]bool, len(t.Names))
	var names []string
	for i := range t.Activities {
		if id := t.Activities[i].Name; !used[id] {
			used[id] = true
			names = append(names, t.Names[id])
		}
	}
	label := labels.Of(names, labels.Width)
	pids := make([]int64, max(len(t.Procs), 1))
	for _, r := range tbl.Ranks {
		if r.Input == input {
			pids[r.Proc] = r.PID
		}
	}
	lanes := map[Lane]int{}
	for _, i := range idx {
		a := &t.Activities[i]
		l := Lane{PID: pids[a.Proc], Device: a.Device, Stream: a.Stream}
		if _, ok := lanes[l]; !ok {
			lanes[l] = 0
			tl.Lanes = append(tl.Lanes, l)
		}
	}
	slices.SortFunc(tl.Lanes, func(a, b Lane) int {
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
		l := lanes[Lane{PID: pids[a.Proc], Device: a.Device, Stream: a.Stream}]
		tl.Spans = append(tl.Spans, Span{Lane: l, Start: a.Start, End: a.End(),
			Category: tbl.Category(tbl.ActivityCategory(input, i)), Name: t.Names[a.Name], Label: label[t.Names[a.Name]]})
		if k == 0 || a.Start < tl.Start {
			tl.Start = a.Start
		}
		if k == 0 || a.End() > tl.End {
			tl.End = a.End()
		}
	}
	tl.Origin = tl.Start
	slices.SortFunc(tl.Spans, func(a, b Span) int {
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
