package merge

import (
	"slices"
	"strings"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// project is a rank's collective kernels in the window, as a trace of
// their own: what the collectives analysis needs to match them with the
// other ranks' (their launch calls and the collective args on them or
// on the CPU ops around their launches, the rank's process, its
// distributed rank, world and process groups, the steps, so that a
// kernel's step ordinal stays), a few hundred bytes a kernel, so that
// every rank's is held at once while the models go one by one.
type project struct {
	Trace *trace.Trace
	Steps *step.Steps
	// index maps the projection's activities to the model's.
	index []int32
}

// projectCollectives keeps, from input in of tbl (its model still there),
// the collective kernels (category communication/*) that keep says to.
func projectCollectives(tbl *window.Table, in int, keep func(i int) bool) *project {
	src := tbl.Inputs[in].Trace
	st := tbl.Inputs[in].Steps
	t := &trace.Trace{Meta: src.Meta, Names: src.Names, Procs: src.Procs}
	p := &project{Trace: t}
	corrs := map[[2]int64]bool{} // (proc, corr) of the kernels kept
	var of []int32
	for i := range src.Activities {
		a := src.Activities[i]
		if a.Kind != trace.KindKernel || tbl.Category(tbl.ActivityCategory(in, i)).Top != classify.Communication || !keep(i) {
			continue
		}
		a.Attr = 0
		t.Activities = append(t.Activities, a)
		p.index = append(p.index, int32(i))
		if st != nil {
			of = append(of, st.Of[i])
		}
		if a.Corr != 0 {
			corrs[[2]int64{int64(a.Proc), a.Corr}] = true
		}
	}
	if st != nil {
		p.Steps = &step.Steps{List: st.List, Of: of}
	}
	// Their launch calls: the CPU op around a call holds the args a
	// kernel may lack.
	starts := map[[2]int64][]trace.Time{} // per (proc, thread): the kept calls' starts
	for _, l := range src.Launches {
		if corrs[[2]int64{int64(l.Proc), l.Corr}] {
			l.Attr = 0
			t.Launches = append(t.Launches, l)
			k := [2]int64{int64(l.Proc), l.Thread}
			starts[k] = append(starts[k], l.Start)
		}
	}
	for _, s := range starts {
		slices.Sort(s)
	}
	// The nccl:OP ranges around the launches: they name the collective
	// of kernels without args (window.Args.OpName).
	for _, r := range src.Ranges {
		if r.Kind == trace.RangeCPU && strings.HasPrefix(src.Names[r.Name], "nccl:") &&
			opHolds(trace.Collective{Start: r.Start, Dur: r.Dur}, starts[[2]int64{int64(r.Proc), r.Thread}]) {
			t.Ranges = append(t.Ranges, r)
		}
	}
	for _, c := range src.Collectives {
		switch c.Source {
		case trace.CollectiveOnKernel:
			if corrs[[2]int64{int64(c.Proc), c.Corr}] {
				t.Collectives = append(t.Collectives, c)
			}
		case trace.CollectiveOnCPUOp:
			if opHolds(c, starts[[2]int64{int64(c.Proc), c.Thread}]) {
				t.Collectives = append(t.Collectives, c)
			}
		}
	}
	return p
}

// opHolds reports whether CPU op c was open when one of the launch calls
// of its thread started (starts, sorted).
func opHolds(c trace.Collective, starts []trace.Time) bool {
	i, _ := slices.BinarySearch(starts, c.Start)
	return i < len(starts) && starts[i] < c.Start+trace.Time(c.Dur)
}
