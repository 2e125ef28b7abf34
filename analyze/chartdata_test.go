package analyze

import (
	"slices"
	"strings"
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

// TestTimelineBetween cuts a window out of a three-lane timeline: spans
// that cross an edge are cut at it, a lane with nothing in the window is
// left out, and the origin stays the step's.
func TestTimelineBetween(t *testing.T) {
	gemm := classify.MustCategory("gemm/cublas")
	tl := &Timeline{Start: 1000, End: 2000, Origin: 1000,
		Lanes: []TimelineLane{{Stream: 7}, {Stream: 9}, {Stream: 20}},
		Spans: []TimelineSpan{
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
	if w.Start != 1200 || w.End != 1600 || w.Origin != 1000 || w.Window == nil || *w.Window != (TimelineWindow{200, 600}) {
		t.Errorf("window bounds %d..%d origin %d %+v", w.Start, w.End, w.Origin, w.Window)
	}
	if !slices.Equal(w.Lanes, []TimelineLane{{Stream: 7}, {Stream: 20}}) {
		t.Errorf("lanes %+v", w.Lanes)
	}
	want := []TimelineSpan{
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
