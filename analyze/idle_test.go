package analyze

import (
	"testing"

	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// ia is one activity of a hand-built idle test: written in the trace's
// order (start, device, stream, …), with its step (-1: none).
type ia struct {
	name        string
	dev, stream int32
	start, end  int64
	corr        int64
	step        int32
	proc        int32
	kind        trace.Kind
}

// il is one launch call.
type il struct {
	api        string
	corr       int64
	start, dur int64
	proc       int32
}

// idleInput builds an input from activities already in canonical order and
// launch calls; steps gives the kinds of the steps (nil: no steps).
func idleInput(t *testing.T, acts []ia, calls []il, steps []step.Kind) window.Input {
	t.Helper()
	in := trace.NewInterner()
	tr := &trace.Trace{Procs: []trace.Proc{{PID: 10, Rank: -1}, {PID: 11, Rank: -1}}, Meta: trace.Meta{Rank: -1, WorldSize: -1}}
	var of []int32
	for _, a := range acts {
		name := a.name
		if name == "" {
			name = gemmName
		}
		tr.Activities = append(tr.Activities, trace.Activity{Start: trace.Time(a.start), Dur: a.end - a.start, Corr: a.corr,
			Name: in.ID(name), Device: a.dev, Stream: a.stream, Proc: a.proc, Kind: a.kind})
		of = append(of, a.step)
	}
	for _, c := range calls {
		tr.Launches = append(tr.Launches, trace.Launch{Start: trace.Time(c.start), Dur: c.dur, Corr: c.corr, Name: in.ID(c.api), Proc: c.proc})
	}
	tr.Names = in.Names()
	sortLaunches(tr)
	if err := tr.CheckValid(); err != nil {
		t.Fatalf("test trace: %v", err)
	}
	input := window.Input{Path: "idle", Trace: tr}
	if steps != nil {
		st := &step.Steps{Of: of}
		for i, k := range steps {
			st.List = append(st.List, step.Step{Index: i, Kind: k, Marker: k.String()})
		}
		input.Steps = st
	}
	return input
}

func sortLaunches(t *trace.Trace) {
	acts := t.Activities
	t.Activities = nil
	t.Sort()
	t.Activities = acts
}

// groupOf returns the group of (device, kind).
func groupOf(t *testing.T, r *GroupTable, dev int32, kind step.Class) *Group {
	t.Helper()
	for i := range r.Groups {
		if g := &r.Groups[i]; g.Device == dev && g.Class == kind {
			return g
		}
	}
	t.Fatalf("no group device %d kind %s in %+v", dev, kind, r.Groups)
	return nil
}

func TestIdleCauses(t *testing.T) {
	const launch = "cudaLaunchKernel"
	for _, c := range []struct {
		name  string
		acts  []ia
		calls []il
		want  window.IdleSplit
	}{
		{
			// Gaps 150-200 ended by a kernel launched at 170 (after the
			// device ran dry), 260-300 by one launched at 120 (before),
			// 320-400 by one without a correlation id.
			name: "one each",
			acts: []ia{
				{start: 100, end: 150, corr: 1}, {start: 200, end: 260, corr: 2},
				{start: 300, end: 320, corr: 3}, {start: 400, end: 410, corr: 0},
			},
			calls: []il{{launch, 1, 90, 5, 0}, {launch, 2, 170, 5, 0}, {launch, 3, 120, 5, 0}},
			want:  window.IdleSplit{LaunchBoundNS: 50, DeviceSideNS: 40, UnknownNS: 80},
		},
		{
			// A launch call starting exactly when the device ran dry is
			// launch-bound; one whose correlation id has no call is unknown.
			name: "edges",
			acts: []ia{
				{start: 100, end: 150, corr: 1}, {start: 170, end: 180, corr: 2}, {start: 190, end: 200, corr: 9},
			},
			calls: []il{{launch, 1, 90, 5, 0}, {launch, 2, 150, 5, 0}},
			want:  window.IdleSplit{LaunchBoundNS: 20, UnknownNS: 10},
		},
		{
			// Three activities start at the gap's end: one without a call,
			// one launched after the gap began (160), one before (140):
			// the earliest call decides.
			name: "same start, earliest call",
			acts: []ia{
				{start: 100, end: 150, corr: 1},
				{stream: 1, start: 200, end: 210, corr: 0}, {stream: 2, start: 200, end: 220, corr: 2},
				{stream: 3, start: 200, end: 205, corr: 3},
			},
			calls: []il{{launch, 1, 50, 5, 0}, {launch, 2, 160, 5, 0}, {launch, 3, 140, 5, 0}},
			want:  window.IdleSplit{DeviceSideNS: 50},
		},
		{
			name: "same start, only a late call",
			acts: []ia{
				{start: 100, end: 150, corr: 1},
				{stream: 1, start: 200, end: 210, corr: 0}, {stream: 2, start: 200, end: 220, corr: 2},
			},
			calls: []il{{launch, 1, 50, 5, 0}, {launch, 2, 160, 5, 0}},
			want:  window.IdleSplit{LaunchBoundNS: 50},
		},
		{
			// A graph replay: every kernel shares the cudaGraphLaunch's
			// correlation id, so every gap inside it is device-side.
			name: "graph replay",
			acts: []ia{
				{start: 100, end: 120, corr: 5}, {start: 130, end: 150, corr: 5},
				{start: 150, end: 170, corr: 5}, {start: 200, end: 210, corr: 5},
			},
			calls: []il{{"cudaGraphLaunch", 5, 10, 20, 0}},
			want:  window.IdleSplit{DeviceSideNS: 40},
		},
		{
			// Another process's kernel on the device does not end the
			// gap of this process's whole-trace window.
			name: "other process",
			acts: []ia{
				{start: 100, end: 150, corr: 1}, {start: 160, end: 170, corr: 7, proc: 1}, {start: 200, end: 210, corr: 2},
			},
			calls: []il{{launch, 1, 50, 5, 0}, {launch, 2, 180, 5, 0}, {launch, 7, 10, 5, 1}},
			want:  window.IdleSplit{LaunchBoundNS: 50},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := idleInput(t, c.acts, c.calls, nil)
			r := breakdownOf(t, Options{}, in)
			var g *Group
			for i := range r.Groups {
				if r.Groups[i].Rank.Proc == 0 {
					g = &r.Groups[i]
				}
			}
			if g.Idle != c.want || g.IdleNS != c.want.Total() {
				t.Errorf("idle %d split %+v, want %d %+v", g.IdleNS, g.Idle, c.want.Total(), c.want)
			}
		})
	}
}

func TestLaunchStats(t *testing.T) {
	acts := []ia{
		{start: 100, end: 150, corr: 1}, {start: 200, end: 260, corr: 2}, {start: 300, end: 320, corr: 3},
		{start: 330, end: 340, corr: 4}, {start: 345, end: 350, corr: 4},
		{start: 360, end: 370, corr: 5, kind: trace.KindMemcpy, name: "Memcpy HtoD (Pageable -> Device)"},
	}
	calls := []il{
		{"cudaLaunchKernel", 1, 90, 5, 0}, {"cudaLaunchKernel", 2, 170, 6, 0}, {"cudaLaunchKernel", 3, 120, 7, 0},
		{"cudaGraphLaunch", 4, 300, 20, 0}, {"cudaMemcpyAsync", 5, 350, 4, 0},
		// Launched nothing recorded.
		{"cudaMemcpyAsync", 6, 400, 3, 0}, {"cudaLaunchKernel", 7, 410, 2, 0}, {"cudaLaunchKernel", 8, 420, 2, 0},
	}
	r := breakdownOf(t, Options{}, idleInput(t, acts, calls, nil))
	g := r.Groups[0]
	// Latencies 10, 30, 180: p50 30, p90 30 + 0.8 × 150.
	want := []LaunchStat{
		{API: "cudaGraphLaunch", Calls: 1, CPUNS: 20, LaunchToStart: latency(30, 30, 30)},
		{API: "cudaLaunchKernel", Calls: 3, CPUNS: 18, LaunchToStart: latency(30, 150, 180)},
		{API: "cudaMemcpyAsync", Calls: 1, CPUNS: 4, LaunchToStart: latency(10, 10, 10)},
	}
	if len(g.Launches) != len(want) {
		t.Fatalf("launches %+v, want %+v", g.Launches, want)
	}
	for i := range want {
		l := g.Launches[i]
		if l.API != want[i].API || l.Calls != want[i].Calls || l.CPUNS != want[i].CPUNS || l.LaunchToStart.P50 != want[i].LaunchToStart.P50 ||
			l.LaunchToStart.P90 != want[i].LaunchToStart.P90 || l.LaunchToStart.Max != want[i].LaunchToStart.Max {
			t.Errorf("launch %d = %+v, want %+v", i, g.Launches[i], want[i])
		}
	}
	if g.LaunchCPUNS != 42 {
		t.Errorf("launch CPU %d, want 42", g.LaunchCPUNS)
	}
	wantEmpty := []window.EmptyLaunch{
		{Rank: 0, API: "cudaLaunchKernel", Calls: 2, CPUNS: 4},
		{Rank: 0, API: "cudaMemcpyAsync", Calls: 1, CPUNS: 3},
	}
	e := r.Table.EmptyLaunches
	if len(e) != 2 || e[0] != wantEmpty[0] || e[1] != wantEmpty[1] || r.Table.Ranks[0].PID != 10 {
		t.Errorf("empty launches %+v, want %+v", e, wantEmpty)
	}
}

func TestIdleStepsDeviceWide(t *testing.T) {
	const launch = "cudaLaunchKernel"
	// Step 0 (prefill) spans [100,400); step 1 (decode) ran [250,260)
	// inside it and [500,520); step 2 (decode) [600,650); an activity of
	// no step at [700,710).
	acts := []ia{
		{start: 100, end: 200, corr: 1, step: 0},
		{start: 250, end: 260, corr: 3, step: 1},
		{start: 300, end: 400, corr: 2, step: 0},
		{start: 500, end: 520, corr: 4, step: 1},
		{start: 600, end: 650, corr: 5, step: 2},
		{start: 700, end: 710, corr: 0, step: -1},
	}
	calls := []il{{launch, 1, 50, 5, 0}, {launch, 2, 250, 5, 0}, {launch, 3, 240, 5, 0}, {launch, 4, 450, 5, 0}, {launch, 5, 560, 5, 0}}
	in := idleInput(t, acts, calls, []step.Kind{step.Prefill, step.Decode, step.Decode})
	r := breakdownOf(t, Options{}, in)
	st := r.Steps
	// Step 0: gaps 200-250 (ended by step 1's kernel, launched at 240:
	// launch-bound) and 260-300 (ended by a kernel launched at 250:
	// device-side). Step 1: 260-300 and 400-500 (launched at 450).
	wantRows := []window.IdleSplit{
		{LaunchBoundNS: 50, DeviceSideNS: 40},
		{LaunchBoundNS: 100, DeviceSideNS: 40},
		{},
	}
	for i, row := range st {
		if row.Idle != wantRows[i] || row.IdleNS != wantRows[i].Total() {
			t.Errorf("step %d: idle %d split %+v, want %+v", row.Step.Index, row.IdleNS, row.Idle, wantRows[i])
		}
	}
	pre, dec, none := groupOf(t, r, 0, prefill), groupOf(t, r, 0, decode), groupOf(t, r, 0, outside)
	if dec.Idle != (window.IdleSplit{LaunchBoundNS: 100, DeviceSideNS: 40}) || none.Idle != (window.IdleSplit{}) {
		t.Errorf("decode idle %+v, unattributed %+v", dec.Idle, none.Idle)
	}
	// Step 1 starts inside step 0's span (0 between them); step 2 starts
	// 80 ns after step 1's span ends.
	if pre.BetweenStepGaps != 0 || dec.BetweenStepsNS != 80 || dec.BetweenStepGaps != 2 ||
		len(dec.BetweenFrom) != 2 || dec.BetweenFrom[0] != (StepGapStat{From: step.Decode, Gaps: 1, TotalNS: 80}) ||
		dec.BetweenFrom[1] != (StepGapStat{From: step.Prefill, Gaps: 1, TotalNS: 0}) || none.BetweenStepGaps != 0 {
		t.Errorf("between: prefill %d/%d, decode %d/%d %+v, none %d", pre.BetweenStepsNS, pre.BetweenStepGaps,
			dec.BetweenStepsNS, dec.BetweenStepGaps, dec.BetweenFrom, none.BetweenStepGaps)
	}
}

func TestExposedCommunication(t *testing.T) {
	// Stepped: step 0 runs a GEMM [100,200) and all-reduces [150,260) and
	// [300,320); step 1's GEMM [220,240) on another stream and step 0's
	// GEMM [310,400) hide parts of them: hidden 50 + 20 + 10 of 130.
	acts := []ia{
		{start: 100, end: 200, corr: 1, step: 0},
		{name: arName, stream: 1, start: 150, end: 260, corr: 2, step: 0},
		{stream: 2, start: 220, end: 240, corr: 5, step: 1},
		{name: arName, stream: 1, start: 300, end: 320, corr: 3, step: 0},
		{start: 310, end: 400, corr: 4, step: 0},
		{name: arName, stream: 1, start: 500, end: 510, corr: 6, step: 1},
	}
	calls := []il{{"cudaLaunchKernel", 1, 0, 1, 0}, {"cudaLaunchKernel", 2, 0, 1, 0}, {"cudaLaunchKernel", 3, 0, 1, 0},
		{"cudaLaunchKernel", 4, 0, 1, 0}, {"cudaLaunchKernel", 5, 0, 1, 0}, {"cudaLaunchKernel", 6, 0, 1, 0}}
	r := breakdownOf(t, Options{}, idleInput(t, acts, calls, []step.Kind{step.Prefill, step.Decode}))
	if g := groupOf(t, r, 0, prefill); g.Comm != (window.CommStat{BusyNS: 130, ExposedNS: 50}) {
		t.Errorf("prefill comm %+v", g.Comm)
	}
	if g := groupOf(t, r, 0, decode); g.Comm != (window.CommStat{BusyNS: 10, ExposedNS: 10}) {
		t.Errorf("decode comm %+v", g.Comm)
	}
	// Without steps: step 1's GEMM is the same process's; same figures
	// summed.
	in := idleInput(t, acts, calls, nil)
	r = breakdownOf(t, Options{}, in)
	if g := r.Groups[0]; g.Comm != (window.CommStat{BusyNS: 140, ExposedNS: 60}) {
		t.Errorf("whole trace comm %+v", g.Comm)
	}
}

// TestCompareIdle checks diff's idle split per step: sums over a side's
// windows, divided by its windows.
func TestCompareIdle(t *testing.T) {
	const launch = "cudaLaunchKernel"
	// Before: two decode steps; step 0 has a 50 ns launch-bound gap and a
	// 40 ns device-side one, step 1 an unknown 25 ns one.
	before := idleInput(t, []ia{
		{start: 100, end: 150, corr: 1}, {start: 200, end: 260, corr: 2}, {start: 300, end: 320, corr: 3},
		{start: 400, end: 410, corr: 4, step: 1}, {start: 435, end: 440, corr: 0, step: 1},
	}, []il{{launch, 1, 90, 5, 0}, {launch, 2, 170, 5, 0}, {launch, 3, 120, 5, 0}, {launch, 4, 390, 5, 0}},
		[]step.Kind{step.Decode, step.Decode})
	// After: one decode step with a 31 ns device-side gap.
	after := idleInput(t, []ia{{start: 100, end: 150, corr: 1}, {start: 181, end: 200, corr: 2}},
		[]il{{launch, 1, 90, 5, 0}, {launch, 2, 100, 5, 0}}, []step.Kind{step.Decode})
	d := Compare(tableOf(t, before), tableOf(t, after), Options{})
	if len(d.Kinds) != 1 {
		t.Fatalf("kinds %+v", d.Kinds)
	}
	id := d.Kinds[0].Idle
	for _, c := range []struct {
		name                   string
		got                    CategoryDiff
		before, after, perStep int64 // perStep: before's
	}{
		{"total", id.Total, 115, 31, 58},
		{"launch-bound", id.LaunchBound, 50, 0, 25},
		{"device-side", id.DeviceSide, 40, 31, 20},
		{"unknown", id.Unknown, 25, 0, 13},
	} {
		if c.got.BeforeNS != c.before || c.got.AfterNS != c.after || c.got.BeforePerStepNS != c.perStep ||
			c.got.AfterPerStepNS != c.after || c.got.DeltaNS != c.after-c.perStep {
			t.Errorf("%s: %+v, want %d → %d (%d per step before)", c.name, c.got, c.before, c.after, c.perStep)
		}
	}
}

// latency is a launch-to-start distribution as the tests state it.
func latency(p50, p90 float64, max int64) stats.Dist { return stats.Dist{P50: p50, P90: p90, Max: max} }
