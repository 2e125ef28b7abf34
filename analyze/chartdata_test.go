package analyze

import (
	"slices"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
)

func TestByTop(t *testing.T) {
	cs := []CategoryStat{
		{Category: classify.MustCategory("gemm/cublas"), KernelNS: 5},
		{Category: classify.MustCategory("gemm/marlin"), KernelNS: 7},
		{Category: classify.MustCategory("communication/allreduce"), KernelNS: 3},
		{Category: classify.Unknown, KernelNS: 1},
	}
	var want TopSums
	want[classify.GEMM] = 12
	want[classify.Communication] = 3
	want[classify.Other] = 1
	if got := CategoriesByTop(cs); got != want {
		t.Errorf("CategoriesByTop = %v, want %v", got, want)
	}
	row := StepRow{}
	for _, c := range cs {
		row.Categories = append(row.Categories, StepCat{Category: c.Category, KernelNS: c.KernelNS})
	}
	if got := row.ByTop(); got != want {
		t.Errorf("StepRow.ByTop = %v, want %v", got, want)
	}
}

func TestStepSeriesAndDominantKind(t *testing.T) {
	row := func(input int, pid int64, dev int32, idx int, kind StepKind) StepRow {
		return StepRow{Input: input, PID: pid, Device: dev, Step: Step{Index: idx, Kind: kind}}
	}
	rows := []StepRow{
		row(0, 10, 0, 0, KindPrefill), row(0, 10, 1, 0, KindPrefill),
		row(0, 10, 0, 1, KindDecode), row(0, 10, 1, 1, KindDecode),
		row(0, 10, 0, 2, KindDecode), row(1, 20, 0, 0, KindDecode),
	}
	got := StepSeries(rows, 0, KindAny)
	if len(got) != 3 || got[0].Device != 0 || got[2].Step.Index != 2 {
		t.Errorf("StepSeries(all) = %+v", got)
	}
	if got := StepSeries(rows, 0, KindDecode); len(got) != 2 || got[0].Step.Index != 1 {
		t.Errorf("StepSeries(decode) = %+v", got)
	}
	if got := StepSeries(rows, 1, KindPrefill); len(got) != 0 {
		t.Errorf("StepSeries(input 1, prefill) = %+v", got)
	}
	if k := DominantKind(StepSeries(rows, 0, KindAny)); k != KindDecode {
		t.Errorf("DominantKind = %q, want decode", k)
	}
	// A tie goes to the earlier kind in report order: decode before prefill.
	if k := DominantKind([]StepRow{row(0, 1, 0, 0, KindPrefill), row(0, 1, 0, 1, KindDecode)}); k != KindDecode {
		t.Errorf("DominantKind on a tie = %q, want decode", k)
	}
	if k := DominantKind(nil); k != KindAny {
		t.Errorf("DominantKind(nil) = %q", k)
	}
}

func TestStepTimeline(t *testing.T) {
	tr := &trace.Trace{
		Names: []string{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "Memcpy DtoD", "volta_sgemm_128x64_nn"},
		Procs: []trace.Proc{{PID: 7, Rank: 0}},
		Activities: []trace.Activity{
			{Start: 100, Dur: 50, Name: 2, Device: 0, Stream: 7},
			{Start: 120, Dur: 10, Name: 1, Device: 0, Stream: 9, Kind: trace.KindMemcpy},
			{Start: 200, Dur: 30, Name: 0, Device: 0, Stream: 20},
			{Start: 400, Dur: 30, Name: 2, Device: 0, Stream: 7},
		},
	}
	in := Input{Path: "x", Trace: tr, Steps: &Steps{List: []Step{{Index: 0, Kind: KindDecode}, {Index: 1, Kind: KindDecode}}, Of: []int32{0, 0, 0, 1}}}
	tl, err := StepTimeline(in, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Start != 100 || tl.End != 230 || tl.Step == nil || tl.Step.Index != 0 {
		t.Errorf("timeline bounds %d..%d step %+v", tl.Start, tl.End, tl.Step)
	}
	wantLanes := []TimelineLane{{PID: 7, Device: 0, Stream: 7}, {PID: 7, Device: 0, Stream: 9}, {PID: 7, Device: 0, Stream: 20}}
	if !slices.Equal(tl.Lanes, wantLanes) {
		t.Errorf("lanes %+v", tl.Lanes)
	}
	cats := []string{}
	for _, s := range tl.Spans {
		cats = append(cats, s.Category.Top.String())
	}
	if !slices.Equal(cats, []string{"gemm", "memcpy", "communication"}) {
		t.Errorf("span categories %v", cats)
	}
	if _, err := StepTimeline(in, 2, nil); err == nil {
		t.Error("step 2 of 2 accepted")
	}
	whole, err := StepTimeline(Input{Path: "x", Trace: tr}, 0, nil)
	if err != nil || len(whole.Spans) != 4 || whole.Step != nil || whole.End != 430 {
		t.Errorf("whole-trace timeline: %v %+v", err, whole)
	}
	if _, err := StepTimeline(Input{Path: "x", Trace: tr}, 1, nil); err == nil {
		t.Error("step 1 of a trace without steps accepted")
	}
}
