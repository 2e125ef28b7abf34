package window

import (
	"fmt"
	"slices"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// TestNamePass: the name pass runs on its own goroutine, fed in batches
// (side.go), and the durations are sorted in two halves; the windows'
// name sums, the durations and the collective kernels it gathers are
// those counted here directly, over many batches and a last partial one.
func TestNamePass(t *testing.T) {
	const steps, perStep = 40, 1800 // 72k activities: many batches, both halves sorted
	tr := &trace.Trace{Meta: trace.Meta{Format: trace.FormatChrome, Rank: -1, WorldSize: -1},
		Procs: []trace.Proc{{PID: 1, Rank: 0}}}
	for i := range 30 {
		tr.Names = append(tr.Names, fmt.Sprintf("kernel_%d_gemm", i))
	}
	comm := trace.NameID(len(tr.Names))
	tr.Names = append(tr.Names, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "Memcpy HtoD")
	st := &step.Steps{}
	x := uint64(7)
	next := func() int {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x >> 1)
	}
	var at trace.Time
	for s := range steps {
		st.List = append(st.List, step.Step{Index: s, Kind: step.Kind(1 + s%2), Tokens: 1})
		for range perStep + s { // not a multiple of the batch
			a := trace.Activity{Start: at, Dur: int64(1 + next()%1000), Name: trace.NameID(next() % len(tr.Names)), Device: int32(next() % 2)}
			if a.Name == comm+1 {
				a.Kind = trace.KindMemcpy
			}
			tr.Activities = append(tr.Activities, a)
			st.Of = append(st.Of, int32(s))
			at += 3
		}
	}
	if err := tr.CheckValid(); err != nil {
		t.Fatal(err)
	}
	tbl, err := Build([]Input{{Path: "r.json", Trace: tr, Steps: st}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type wkey struct {
		device, step int32
		name         string
	}
	type sum struct{ n, total int64 }
	wantNames := map[wkey]sum{}
	type dkey struct {
		name   string
		device int32
		class  step.Class
	}
	wantDurs := map[dkey][]int64{}
	var wantColl []CollectiveKernel
	for i, a := range tr.Activities {
		k := wkey{a.Device, st.Of[i], tr.Names[a.Name]}
		s := wantNames[k]
		wantNames[k] = sum{s.n + 1, s.total + a.Dur}
		dk := dkey{tr.Names[a.Name], a.Device, st.Class(st.Of[i])}
		wantDurs[dk] = append(wantDurs[dk], a.Dur)
		if a.Name == comm {
			wantColl = append(wantColl, CollectiveKernel{Start: a.Start, Dur: a.Dur, Step: st.Of[i]})
		}
	}
	gotNames := map[wkey]sum{}
	for _, w := range tbl.Windows {
		for _, n := range w.Names {
			gotNames[wkey{w.Device, w.Step, tbl.Name(n.Name)}] = sum{n.N, n.TotalNS}
		}
	}
	if len(gotNames) != len(wantNames) {
		t.Errorf("%d window names, want %d", len(gotNames), len(wantNames))
	}
	for k, w := range wantNames {
		if g := gotNames[k]; g != w {
			t.Errorf("%+v: %+v, want %+v", k, g, w)
		}
	}
	durs := tbl.Inputs[0].Durations
	if len(durs) != len(wantDurs) {
		t.Errorf("%d duration records, want %d", len(durs), len(wantDurs))
	}
	for i := range durs {
		d := &durs[i]
		want := wantDurs[dkey{tbl.Name(d.Name), d.Device, d.Class}]
		slices.Sort(want)
		if got := AppendTo([]int64(nil), d); !slices.Equal(got, want) {
			t.Errorf("%s device %d %v: %d durations differ from the %d counted", tbl.Name(d.Name), d.Device, d.Class, len(got), len(want))
		}
	}
	if tbl.Category(tbl.ActivityCategory(0, slices.IndexFunc(tr.Activities, func(a trace.Activity) bool { return a.Name == comm }))).Top != classify.Communication {
		t.Fatal("the collective kernel's name is not classified as communication: the test does not exercise collectives")
	}
	got := tbl.Inputs[0].Collectives.Kernels
	for i := range got {
		got[i].Key = 0
	}
	if !slices.Equal(got, wantColl) {
		t.Errorf("%d collective kernels, want %d in activity order", len(got), len(wantColl))
	}
}
