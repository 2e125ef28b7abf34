package slice

import (
	"errors"
	"fmt"

	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// modelSteps builds the selection of the steps with index in [from, to) (to < 0:
// to the last) and, when kind is not "", of that kind, from the parsed
// trace t and its step segmentation st. It returns the chosen steps too.
//
// The kept kernels are exactly those st assigns to the chosen steps, so a
// slice reparsed and segmented the same way gives the same per-step
// figures; their correlation ids carry the launch calls and flows along.
func modelSteps(t *trace.Trace, st *step.Steps, from, to int, kind string) (*Selection, []step.Step, error) {
	if st == nil || len(st.List) == 0 {
		return nil, nil, errors.New("the trace has no step markers: use --time")
	}
	if to < 0 {
		to = len(st.List)
	}
	chosen := map[int32]bool{}
	var steps []step.Step
	sel := &Selection{Corr: map[int64]bool{}}
	for i, s := range st.List {
		if s.Index < from || s.Index >= to || (kind != "" && s.Kind.String() != kind) {
			continue
		}
		chosen[int32(i)] = true
		steps = append(steps, s)
		sel.CPU = append(sel.CPU, Interval{int64(s.Start), int64(s.End)})
	}
	if len(steps) == 0 {
		what := "steps"
		if kind != "" {
			what = kind + " steps"
		}
		return nil, nil, fmt.Errorf("no %s with index in [%d, %d): the trace has %d steps (indices %d to %d)",
			what, from, to, len(st.List), st.List[0].Index, st.List[len(st.List)-1].Index)
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
		// Steps without GPU work: GPU-side events come from the CPU window.
		sel.GPU = Interval{sel.CPU[0].Start, sel.CPU[len(sel.CPU)-1].End}
	}
	return sel, steps, nil
}

// The oracle of Steps: the selection made from the parsed model.
