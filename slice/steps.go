package slice

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// ErrNoSteps is Steps' error for a trace without step markers.
var ErrNoSteps = errors.New("no step markers")

// StepOptions selects the steps of a slice.
type StepOptions struct {
	step.Options
	// From and To are the step indices [From, To) ('traceq steps' prints
	// them); To < 0 runs to the last step.
	From, To int
	// Filter keeps only steps of one class (its zero value: all).
	Filter step.Filter
}

// Steps selects the chosen steps of a Chrome trace and the GPU work they
// own, as step.Find attributes it on the parsed trace, without building
// the model: each pass streams the records of the input
// (chrometrace.Reader) through the one attribution rule (step's
// Attributor).
//
//  1. the annotation ranges: the step markers, hence the steps;
//  2. the launch calls: each one's step (a table of correlation id and
//     step, 16 bytes a call);
//  3. the GPU activities: those of the chosen steps' launches, and what
//     the markers' GPU mirrors need to know;
//  4. only when some activity has no launch call and the trace has GPU
//     mirrors of its markers: those activities, by the mirrors.
//
// The chosen steps are returned with the selection.
func Steps(open Opener, opt StepOptions) (*Selection, []step.Step, error) {
	// Pass 1: the ranges.
	rt := &trace.Trace{}
	names := trace.NewInterner()
	hasGPU := false
	err := each(open, func(ev *chrometrace.Event, name func(trace.NameID) string) {
		switch ev.Kind {
		case chrometrace.KindRange:
			r := ev.Range
			r.Name, r.Domain = names.ID(name(r.Name)), names.ID(name(r.Domain))
			rt.Ranges = append(rt.Ranges, r)
		case chrometrace.KindActivity:
			hasGPU = true
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if !hasGPU {
		return nil, nil, parse.ErrNoGPU
	}
	rt.Names = names.Names()
	att, err := step.NewAttributor(rt, opt.Options)
	if err != nil {
		return nil, nil, err
	}
	if att == nil {
		return nil, nil, ErrNoSteps
	}

	// Pass 2: the launch calls' steps, by correlation id; the earliest
	// call of an id decides, as in the model.
	var launches []launchStep
	if att.HasCPUMarkers() {
		err = each(open, func(ev *chrometrace.Event, _ func(trace.NameID) string) {
			if ev.Kind == chrometrace.KindLaunch && ev.Launch.Corr != 0 {
				l := ev.Launch
				launches = append(launches, launchStep{corr: l.Corr, start: l.Start, thread: l.Thread, step: att.LaunchStep(&l)})
			}
		})
		if err != nil {
			return nil, nil, err
		}
		slices.SortFunc(launches, func(a, b launchStep) int {
			if c := cmp.Compare(a.corr, b.corr); c != 0 {
				return c
			}
			if c := cmp.Compare(a.start, b.start); c != 0 {
				return c
			}
			return cmp.Compare(a.thread, b.thread)
		})
		launches = slices.CompactFunc(launches, func(a, b launchStep) bool { return a.corr == b.corr })
	} else {
		att.Resolve() // mirrors only: they are the steps
	}

	chosen, steps, err := choose(att.Steps(), opt)
	if err != nil {
		return nil, nil, err
	}
	sel := &Selection{Corr: map[int64]bool{}}
	for _, s := range steps {
		sel.CPU = append(sel.CPU, Interval{int64(s.Start), int64(s.End)})
	}
	sel.CPU = merge(sel.CPU)
	gpu := false
	take := func(a *trace.Activity) {
		if a.Corr != 0 {
			sel.Corr[a.Corr] = true
		}
		if !gpu || int64(a.Start) < sel.GPU.Start {
			sel.GPU.Start = int64(a.Start)
		}
		if !gpu || int64(a.End()) > sel.GPU.End {
			sel.GPU.End = int64(a.End())
		}
		gpu = true
	}

	// Pass 3: the activities placed by their launch call; those without
	// one wait for the mirrors.
	pending := 0
	err = each(open, func(ev *chrometrace.Event, _ func(trace.NameID) string) {
		if ev.Kind != chrometrace.KindActivity {
			return
		}
		a := &ev.Activity
		s, ok := findLaunch(launches, a.Corr)
		if !ok || !att.HasCPUMarkers() {
			pending++
			if !att.HasCPUMarkers() && chosen[att.MirrorStep(a)] {
				take(a)
			}
			return
		}
		if s >= 0 && chosen[s] {
			take(a)
		}
		if att.HasMirrors() {
			att.Observe(a, s)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	// Pass 4: the activities without a launch call, by the mirrors.
	if att.HasCPUMarkers() && pending > 0 && att.HasMirrors() {
		att.Resolve()
		err = each(open, func(ev *chrometrace.Event, _ func(trace.NameID) string) {
			if ev.Kind != chrometrace.KindActivity {
				return
			}
			a := &ev.Activity
			if _, ok := findLaunch(launches, a.Corr); !ok && chosen[att.MirrorStep(a)] {
				take(a)
			}
		})
		if err != nil {
			return nil, nil, err
		}
	}
	if !gpu {
		// Steps without GPU work: GPU-side events come from the CPU window.
		sel.GPU = Interval{sel.CPU[0].Start, sel.CPU[len(sel.CPU)-1].End}
	}
	return sel, steps, nil
}

// FromModel selects the chosen steps of a parsed trace and the GPU work
// step.Find attributed to them (st): the selection Steps makes by
// streaming, for a caller that holds the model anyway (a merge reads each
// rank's model for its alignment and annotations). The chosen steps are
// returned with it.
func FromModel(t *trace.Trace, st *step.Steps, opt StepOptions) (*Selection, []step.Step, error) {
	if st == nil || len(st.List) == 0 {
		return nil, nil, ErrNoSteps
	}
	chosen, steps, err := choose(st.List, opt)
	if err != nil {
		return nil, nil, err
	}
	sel := &Selection{Corr: map[int64]bool{}}
	for _, s := range steps {
		sel.CPU = append(sel.CPU, Interval{int64(s.Start), int64(s.End)})
	}
	sel.CPU = merge(sel.CPU)
	gpu := false
	for i := range t.Activities {
		if !chosen[st.Of[i]] {
			continue
		}
		a := &t.Activities[i]
		if a.Corr != 0 {
			sel.Corr[a.Corr] = true
		}
		if !gpu || int64(a.Start) < sel.GPU.Start {
			sel.GPU.Start = int64(a.Start)
		}
		if !gpu || int64(a.End()) > sel.GPU.End {
			sel.GPU.End = int64(a.End())
		}
		gpu = true
	}
	if !gpu {
		sel.GPU = Interval{sel.CPU[0].Start, sel.CPU[len(sel.CPU)-1].End}
	}
	return sel, steps, nil
}

// launchStep is one launch call's step, by correlation id.
type launchStep struct {
	corr   int64
	start  trace.Time
	thread int64
	step   int32
}

// findLaunch returns the step of the launch call with correlation id corr,
// and whether there is one.
func findLaunch(launches []launchStep, corr int64) (int32, bool) {
	if corr == 0 {
		return -1, false
	}
	i, ok := slices.BinarySearchFunc(launches, corr, func(l launchStep, c int64) int { return cmp.Compare(l.corr, c) })
	if !ok {
		return -1, false
	}
	return launches[i].step, true
}

// choose picks the steps with index in [From, To) (To < 0: to the last)
// and of Kind, by their index in list.
func choose(list []step.Step, opt StepOptions) (map[int32]bool, []step.Step, error) {
	to := opt.To
	if to < 0 {
		to = len(list)
	}
	chosen := map[int32]bool{}
	var steps []step.Step
	for i, s := range list {
		if s.Index < opt.From || s.Index >= to || !opt.Filter.Keeps(step.ClassOf(s.Kind)) {
			continue
		}
		chosen[int32(i)] = true
		steps = append(steps, s)
	}
	if len(steps) == 0 {
		what := "steps"
		if c, on := opt.Filter.Class(); on {
			what = c.String() + " steps"
		}
		return nil, nil, fmt.Errorf("no %s with index in [%d, %d): the trace has %d steps (indices %d to %d)",
			what, opt.From, to, len(list), list[0].Index, list[len(list)-1].Index)
	}
	return chosen, steps, nil
}

// each reads the input once and calls f with each event, in file order;
// name resolves the event's name ids. A truncated input is read up to the
// cut.
func each(open Opener, f func(ev *chrometrace.Event, name func(trace.NameID) string)) error {
	in, err := open()
	if err != nil {
		return err
	}
	defer in.Close()
	r, err := chrometrace.NewReader(in)
	if err != nil {
		return err
	}
	defer r.Close()
	// One event for the whole pass: f takes its address, which would
	// otherwise move every event to the heap.
	var ev chrometrace.Event
	name := r.Name
	for {
		var err error
		ev, err = r.ReadEvent()
		if err == io.EOF || errors.Is(err, chrometrace.ErrTruncated) {
			return nil
		}
		if err != nil {
			return err
		}
		f(&ev, name)
	}
}
