package chart

import (
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

func TestByTop(t *testing.T) {
	cs := []analyze.CategoryStat{
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
	row := analyze.StepRow{}
	for _, c := range cs {
		row.Categories = append(row.Categories, analyze.StepCat{Category: c.Category, KernelNS: c.KernelNS})
	}
	if got := stepByTop(&row); got != want {
		t.Errorf("StepRow.ByTop = %v, want %v", got, want)
	}
}

func TestStepSeriesAndDominantKind(t *testing.T) {
	ranks := []window.Rank{{ID: 0, Input: 0, PID: 10}, {ID: 1, Input: 1, PID: 20}, {ID: 2, Input: 0, PID: 1}}
	row := func(input int, pid int64, dev int32, idx int, kind step.Kind) analyze.StepRow {
		rk := &ranks[2]
		for i := range ranks {
			if ranks[i].Input == input && ranks[i].PID == pid {
				rk = &ranks[i]
			}
		}
		return analyze.StepRow{Rank: rk, Device: dev, Step: step.Step{Index: idx, Kind: kind}}
	}
	rows := []analyze.StepRow{
		row(0, 10, 0, 0, step.Prefill), row(0, 10, 1, 0, step.Prefill),
		row(0, 10, 0, 1, step.Decode), row(0, 10, 1, 1, step.Decode),
		row(0, 10, 0, 2, step.Decode), row(1, 20, 0, 0, step.Decode),
	}
	got := StepSeries(rows, 0, step.Filter{})
	if len(got) != 3 || got[0].Device != 0 || got[2].Step.Index != 2 {
		t.Errorf("StepSeries(all) = %+v", got)
	}
	if got := StepSeries(rows, 0, step.Only(decode)); len(got) != 2 || got[0].Step.Index != 1 {
		t.Errorf("StepSeries(decode) = %+v", got)
	}
	if got := StepSeries(rows, 1, step.Only(prefill)); len(got) != 0 {
		t.Errorf("StepSeries(input 1, prefill) = %+v", got)
	}
	if k, ok := DominantKind(StepSeries(rows, 0, step.Filter{})); !ok || k != step.Decode {
		t.Errorf("DominantKind = %q, want decode", k)
	}
	// A tie goes to the earlier kind in report order: decode before prefill.
	if k, _ := DominantKind([]analyze.StepRow{row(0, 1, 0, 0, step.Prefill), row(0, 1, 0, 1, step.Decode)}); k != step.Decode {
		t.Errorf("DominantKind on a tie = %q, want decode", k)
	}
	if k, ok := DominantKind(nil); ok {
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
	in := window.Input{Path: "x", Trace: tr, Steps: &step.Steps{List: []step.Step{{Index: 0, Kind: step.Decode}, {Index: 1, Kind: step.Decode}}, Of: []int32{0, 0, 0, 1}}}
	tbl := tableOf(t, in)
	tl, err := StepTrack(tbl, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Start != 100 || tl.End != 230 || tl.Step == nil || tl.Step.Index != 0 {
		t.Errorf("timeline bounds %d..%d step %+v", tl.Start, tl.End, tl.Step)
	}
	wantLanes := []Lane{{PID: 7, Device: 0, Stream: 7}, {PID: 7, Device: 0, Stream: 9}, {PID: 7, Device: 0, Stream: 20}}
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
	if _, err := StepTrack(tbl, 0, 2); err == nil {
		t.Error("step 2 of 2 accepted")
	}
	flat := tableOf(t, window.Input{Path: "x", Trace: tr})
	all, err := StepTrack(flat, 0, 0)
	if err != nil || len(all.Spans) != 4 || all.Step != nil || all.End != 430 {
		t.Errorf("whole-trace timeline: %v %+v", err, all)
	}
	if _, err := StepTrack(flat, 0, 1); err == nil {
		t.Error("step 1 of a trace without steps accepted")
	}
}

// TestTimelineBetween cuts a window out of a three-lane timeline: spans
// that cross an edge are cut at it, a lane with nothing in the window is
// left out, and the origin stays the step's.
func TestTimelineBetween(t *testing.T) {
	gemm := classify.MustCategory("gemm/cublas")
	tl := &Track{Start: 1000, End: 2000, Origin: 1000,
		Lanes: []Lane{{Stream: 7}, {Stream: 9}, {Stream: 20}},
		Spans: []Span{
			{Lane: 0, Start: 1000, End: 1300, Category: gemm, Name: "a"},
			{Lane: 0, Start: 1400, End: 1500, Category: gemm, Name: "b"},
			{Lane: 1, Start: 1050, End: 1100, Category: gemm, Name: "c"}, // before the window
			{Lane: 2, Start: 1450, End: 2000, Category: gemm, Name: "d"},
			{Lane: 2, Start: 1600, End: 1600, Category: gemm, Name: "zero"}, // zero length at the end: out
		}}
	w, err := tl.Between(200, 600)
	if err != nil {
		t.Fatal(err)
	}
	if w.Start != 1200 || w.End != 1600 || w.Origin != 1000 || w.Window == nil || *w.Window != (Window{200, 600}) {
		t.Errorf("window bounds %d..%d origin %d %+v", w.Start, w.End, w.Origin, w.Window)
	}
	if !slices.Equal(w.Lanes, []Lane{{Stream: 7}, {Stream: 20}}) {
		t.Errorf("lanes %+v", w.Lanes)
	}
	want := []Span{
		{Lane: 0, Start: 1200, End: 1300, Category: gemm, Name: "a"},
		{Lane: 0, Start: 1400, End: 1500, Category: gemm, Name: "b"},
		{Lane: 1, Start: 1450, End: 1600, Category: gemm, Name: "d"},
	}
	if !slices.Equal(w.Spans, want) {
		t.Errorf("spans\n got %+v\nwant %+v", w.Spans, want)
	}
	// to 0: to the end; the original is left as it was.
	if w, err := tl.Between(900, 0); err != nil || w.End != 2000 || len(w.Spans) != 1 || tl.Spans[0].Start != 1000 {
		t.Errorf("Between(900, 0) = %+v, %v", w, err)
	}
	for _, bad := range [][2]int64{{-1, 100}, {500, 500}, {600, 200}, {1001, 5000}} {
		if _, err := tl.Between(bad[0], bad[1]); err == nil {
			t.Errorf("Between(%d, %d) accepted", bad[0], bad[1])
		}
	}
	if _, err := tl.Between(310, 390); err == nil || !strings.Contains(err.Error(), "no GPU activity between 0.000 and 0.000 ms: the timeline covers 0 to 0.001 ms") {
		t.Errorf("a window holding nothing: %v", err)
	}
}
