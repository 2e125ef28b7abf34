package window

import (
	"errors"
	"math"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// TestBuildOverflow: Build refuses inputs whose summed durations, an
// activity's end, a span, the launch calls' summed durations or the time
// from a call to an activity do not fit 64 bits, and accepts the largest
// that do; the sum runs over every input of the set.
func TestBuildOverflow(t *testing.T) {
	const max = int64(math.MaxInt64)
	in := func(acts ...trace.Activity) Input {
		return Input{Path: "x", Trace: &trace.Trace{Names: []string{"k"}, Activities: acts}}
	}
	calls := func(in Input, ls ...trace.Launch) Input {
		in.Trace.Launches = ls
		return in
	}
	for _, tc := range []struct {
		name   string
		inputs []Input
		ok     bool
	}{
		{"fits", []Input{in(trace.Activity{Start: 0, Dur: max / 2}, trace.Activity{Start: 1, Dur: max / 2})}, true},
		{"sum overflows", []Input{in(trace.Activity{Start: 0, Dur: max/2 + 1}, trace.Activity{Start: 1, Dur: max/2 + 1})}, false},
		{"sum over inputs", []Input{in(trace.Activity{Dur: max/2 + 1}), in(trace.Activity{Dur: max/2 + 1})}, false},
		{"end overflows", []Input{in(trace.Activity{Start: trace.Time(max - 5), Dur: 10})}, false},
		{"span overflows", []Input{in(trace.Activity{Start: trace.Time(-max), Dur: 1}, trace.Activity{Start: trace.Time(max - 10), Dur: 1})}, false},
		{"launch durations", []Input{calls(in(trace.Activity{Start: 100, Dur: 50, Corr: 1}),
			trace.Launch{Start: 90, Dur: 1 << 62, Corr: 1}, trace.Launch{Start: 91, Dur: 1 << 62, Corr: 2})}, false},
		{"launch distance", []Input{calls(in(trace.Activity{Start: 100, Dur: 50, Corr: 1}),
			trace.Launch{Start: -1<<62 - 1<<61, Dur: 5, Corr: 1}, trace.Launch{Start: 1<<62 + 1<<61, Dur: 5, Corr: 2})}, false},
	} {
		_, err := Build(tc.inputs, Options{})
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrOverflow)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestTable checks the rank table, the names and categories, the
// windows' classes and sums, and Select on a two-input set: an nsys
// export with two ranked processes and one that only launched, and a
// stepped Kineto trace.
func TestTable(t *testing.T) {
	const (
		gemm = "nvjet_tst_128x64_64x8_1x2_h_bz_coopA_TNT"
		ar   = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	)
	nsys := &trace.Trace{
		Meta:  trace.Meta{Format: trace.FormatNsys, Rank: -1, WorldSize: 2},
		Names: []string{"", gemm, ar, "cudaLaunchKernel", "Memcpy HtoD"},
		Procs: []trace.Proc{{PID: 100, Rank: 1}, {PID: 200, Rank: 0}, {PID: 300, Rank: -1}},
		Activities: []trace.Activity{
			{Start: 10, Dur: 10, Corr: 1, Name: 1, Device: 0, Proc: 0},
			{Start: 15, Dur: 10, Corr: 2, Name: 2, Device: 0, Stream: 1, Proc: 0},
			{Start: 30, Dur: 5, Name: 4, Device: 1, Proc: 1, Kind: trace.KindMemcpy},
		},
		Launches: []trace.Launch{{Start: 5, Dur: 1, Corr: 1, Name: 3}, {Start: 6, Dur: 1, Corr: 2, Name: 3}, {Start: 7, Dur: 2, Corr: 9, Name: 3, Proc: 2}},
	}
	kineto := &trace.Trace{
		Meta:       trace.Meta{Format: trace.FormatChrome, Rank: 3, WorldSize: 4},
		Names:      []string{gemm},
		Procs:      []trace.Proc{{PID: 7, Rank: 3}},
		Activities: []trace.Activity{{Start: 100, Dur: 10}, {Start: 120, Dur: 10}, {Start: 200, Dur: 1}},
	}
	st := &step.Steps{List: []step.Step{{Index: 0, Kind: step.Decode, Tokens: 4}}, Of: []int32{0, 0, -1}}
	tbl, err := Build([]Input{{Path: "a.sqlite", Run: "a", Trace: nsys}, {Path: "b.json", Run: "b", Host: "node1", Trace: kineto, Steps: st}},
		Options{ByTop: true})
	if err != nil {
		t.Fatal(err)
	}
	type rk struct {
		in     int
		proc   int32
		pid    int64
		number int
		acts   int64
	}
	var got []rk
	for i, r := range tbl.Ranks {
		n := -1
		if r.Number != nil {
			n = *r.Number
		}
		if r.ID != RankID(i) {
			t.Errorf("rank %d has ID %d", i, r.ID)
		}
		got = append(got, rk{r.Input, r.Proc, r.PID, n, r.Activities})
	}
	want := []rk{{0, 0, 100, 1, 2}, {0, 1, 200, 0, 1}, {0, 2, 300, -1, 0}, {1, 0, 7, 3, 3}}
	if len(got) != len(want) {
		t.Fatalf("ranks %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rank %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if r := tbl.Ranks[3]; r.Host != "node1" || r.Run != "b" || r.Path != "b.json" || r.WorldSize != 4 {
		t.Errorf("rank 3: %+v", r)
	}
	if in := tbl.Inputs[1]; in.Origin != 100 || in.Activities != 3 || *in.Rank != 3 || in.Stepped == nil ||
		*in.Stepped != (StepSummary{Steps: 1, Unattributed: 1, UnattributedNS: 1}) {
		t.Errorf("input b: %+v %+v", in, in.Stepped)
	}
	// The one launch-only call of pid 300 launched nothing recorded.
	if e := tbl.EmptyLaunches; len(e) != 1 || e[0] != (EmptyLaunch{Rank: 2, API: "cudaLaunchKernel", Calls: 1, CPUNS: 2}) {
		t.Errorf("empty launches %+v", e)
	}
	if got := tbl.Names(); len(got) != 3 || got[0] != "Memcpy HtoD" {
		t.Errorf("names %q", got)
	}
	// Activities keep their full category; windows sum the folded one.
	if c := tbl.Category(tbl.ActivityCategory(0, 1)); c != classify.MustCategory("communication/allreduce") {
		t.Errorf("allreduce: %s", c)
	}
	var classes []string
	for _, w := range tbl.Windows {
		classes = append(classes, w.Class.String())
		for _, c := range w.Cats {
			if tbl.Category(c.Cat).Sub != "" {
				t.Errorf("window %+v sums an unfolded category %s", w, tbl.Category(c.Cat))
			}
		}
	}
	if want := "all all decode unattributed"; join(classes) != want {
		t.Errorf("classes %s, want %s", join(classes), want)
	}
	w := tbl.Windows[0]
	if w.KernelNS != 20 || w.BusyNS != 15 || w.SpanNS() != 15 || w.IdleNS != 0 || len(w.Cats) != 2 ||
		w.Name(0).TotalNS != 10 || w.Name(1).TotalNS != 10 || w.Name(2).N != 0 || tbl.Name(1) != ar {
		t.Errorf("window 0: %+v", w)
	}
	b := tbl.Select([]int{1})
	if len(b.Inputs) != 1 || len(b.Ranks) != 1 || b.Ranks[0].ID != 0 || b.Ranks[0].Input != 0 || len(b.Windows) != 2 || b.Windows[0].Rank != 0 ||
		len(b.EmptyLaunches) != 0 || b.Inputs[0].Path != "b.json" {
		t.Errorf("Select: %+v", b)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// TestArgsCategory (issue 19 item 26): a generic collective kernel takes
// the category of the op its args name, from the kernel's own args or the
// record_param_comms op that launched it; a named one keeps its name's;
// a window's sums of the name add its categories.
func TestArgsCategory(t *testing.T) {
	const (
		generic = "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"
		ag      = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	)
	tr := &trace.Trace{
		Names: []string{generic, ag, "cudaLaunchKernel", "allreduce", "broadcast", "barrier", "Float"},
		Procs: []trace.Proc{{PID: 1, Rank: -1}},
		Activities: []trace.Activity{
			{Start: 100, Dur: 10, Corr: 1, Name: 0}, // args on the kernel: allreduce
			{Start: 200, Dur: 20, Corr: 2, Name: 0}, // args of the launching op: broadcast
			{Start: 300, Dur: 30, Corr: 3, Name: 0}, // no args
			{Start: 400, Dur: 40, Corr: 4, Name: 1}, // named: its args do not matter
			{Start: 500, Dur: 50, Corr: 5, Name: 0}, // args name barrier: other
		},
		Launches: []trace.Launch{
			{Start: 90, Dur: 1, Corr: 1, Thread: 1, Name: 2}, {Start: 190, Dur: 1, Corr: 2, Thread: 1, Name: 2},
			{Start: 290, Dur: 1, Corr: 3, Thread: 1, Name: 2}, {Start: 390, Dur: 1, Corr: 4, Thread: 1, Name: 2},
			{Start: 490, Dur: 1, Corr: 5, Thread: 1, Name: 2},
		},
		Collectives: []trace.Collective{
			{Source: trace.CollectiveOnKernel, Corr: 1, Op: 3, DType: 6},
			{Source: trace.CollectiveOnKernel, Corr: 4, Op: 3, DType: 6},
			{Source: trace.CollectiveOnKernel, Corr: 5, Op: 5, DType: 6},
			{Source: trace.CollectiveOnCPUOp, Start: 185, Dur: 10, Thread: 1, Op: 4, DType: 6},
		},
	}
	tbl, err := Build([]Input{{Path: "x.json", Trace: tr}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range tr.Activities {
		got = append(got, tbl.Category(tbl.ActivityCategory(0, i)).String())
	}
	if want := "communication/allreduce communication/broadcast communication/other communication/allgather communication/other"; join(got) != want {
		t.Errorf("categories %s, want %s", join(got), want)
	}
	w := tbl.Windows[0]
	if n := w.Name(0); n.N != 4 || n.TotalNS != 110 || len(w.Names) != 4 {
		t.Errorf("name sums %+v of %+v", n, w.Names)
	}
	if s := tbl.Select([]int{0}); s.Category(s.ActivityCategory(0, 1)).Sub != "broadcast" {
		t.Errorf("Select drops the activities' categories")
	}
}
