package window

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// cleanCuts returns every clean cut of acts: the indices i > 0 whose
// activity starts when every earlier one has ended.
func cleanCuts(acts []trace.Activity) []int {
	var out []int
	var end trace.Time
	for i := range acts {
		if i > 0 && acts[i].Start >= end {
			out = append(out, i)
		}
		if i == 0 || acts[i].End() > end {
			end = acts[i].End()
		}
	}
	return out
}

// manyDevices is a trace of two processes with two GPUs each, their
// kernels interleaved: collective kernels among them, a launch call per
// kernel or one per graph replay of several, kernels whose call is not in
// the trace, idle gaps of every length between bursts; and its steps,
// some kernels attributed to the step before theirs (so that windows
// cross the cuts between bursts) or to none.
func manyDevices(seed uint64) (*trace.Trace, *step.Steps) {
	tr := &trace.Trace{Meta: trace.Meta{Format: trace.FormatChrome, Rank: -1, WorldSize: -1},
		Procs: []trace.Proc{{PID: 10, Rank: 0}, {PID: 20, Rank: 1}},
		Names: []string{"", "sm90_xmma_gemm_bf16", "flash_fwd_kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
			"ncclDevKernel_AllGather_RING_LL", "Memcpy HtoD", "cudaLaunchKernel", "cudaGraphLaunch", "elementwise_kernel"}}
	x := seed
	next := func(n int) int {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x>>1) % n
	}
	st := &step.Steps{}
	var at trace.Time
	corr := [2]int64{1, 1}
	for s := range 60 {
		st.List = append(st.List, step.Step{Index: s, Kind: step.Kind(1 + s%2), Tokens: 1})
		for range 20 + next(40) { // a burst of the step's kernels
			proc := int32(next(2))
			a := trace.Activity{Start: at, Dur: int64(1 + next(40)), Name: trace.NameID(1 + next(4)), Device: proc*2 + int32(next(2)),
				Stream: int32(7 + next(2)), Proc: proc}
			if next(13) == 0 {
				a.Name, a.Kind = 5, trace.KindMemcpy
			} else if next(9) == 0 {
				a.Name = 8
			}
			// One launch call per kernel, or a graph replay's for a
			// run of them; some without any.
			switch r := next(10); {
			case r < 6:
				corr[proc]++
				tr.Launches = append(tr.Launches, trace.Launch{Start: a.Start - trace.Time(5+next(30)), Dur: 3, Corr: corr[proc], Thread: 1, Name: 6, Proc: proc})
			case r < 9 && corr[proc] > 1:
			default:
				corr[proc]++
				a.Corr = 0
			}
			if a.Kind == trace.KindKernel && a.Corr == 0 && next(3) > 0 {
				a.Corr = corr[proc]
			}
			a.Corr = max(a.Corr, 0)
			if a.Corr == 0 && next(2) == 0 {
				a.Corr = 1 << 40 // no such call
			}
			tr.Activities = append(tr.Activities, a)
			of := int32(s)
			switch next(17) {
			case 0:
				of = -1
			case 1:
				of = max(int32(s)-1, 0)
			}
			st.Of = append(st.Of, of)
			at += trace.Time(next(25)) // overlapping or not
		}
		at += trace.Time(next(3) * next(200)) // idle between bursts, or none
	}
	slices.SortStableFunc(tr.Launches, func(a, b trace.Launch) int { return trace.CompareLaunches(&a, &b) })
	// Activities by (start, device, stream, dur, ...): the steps follow.
	idx := make([]int, len(tr.Activities))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return trace.CompareActivities(&tr.Activities[i], &tr.Activities[j]) })
	acts, of := make([]trace.Activity, len(idx)), make([]int32, len(idx))
	for k, i := range idx {
		acts[k], of[k] = tr.Activities[i], st.Of[i]
	}
	tr.Activities, st.Of = acts, of
	return tr, st
}

// partInputs are traces whose pass the split tests cut: real ones (NCCL
// kernels on two GPUs of two processes, eight ranks' DLRM, vLLM graph
// replays, an nsys export without steps) and generated ones (collective
// args, an all-reduce stream overlapping compute, kernels without a
// correlation id), each with and without steps.
func partInputs(t *testing.T) map[string]*trace.Trace {
	out := map[string]*trace.Trace{}
	for _, name := range []string{"torch/vllm_mixed_piecewise.json.gz", "torch/dlrm8/rank1.json.gz", "torch/hta_ns_resolution.json.gz",
		"torch/sglang_decode.json.gz", "nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite", "nsys/nsys2022.2.1_saxpy-mpi-a100-nonlazy.sqlite"} {
		tr, err := parse.File(filepath.Join("..", "testdata", "traces", name), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out[name] = tr
	}
	for i, cfg := range []gen.Config{
		{Ranks: 2, Steps: 12, DecodeEvery: 4, MixedEvery: 3, Layers: 3, Shapes: true, Seed: 3},
		{Ranks: 2, Steps: 10, DecodeEvery: 3, Layers: 2, Streams: 2, DropCorrEvery: 7, Seed: 5},
	} {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, cfg, i); err != nil {
			t.Fatal(err)
		}
		tr, err := parse.Read(fmt.Sprintf("gen%d.json", i), &buf, parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("gen%d", i)] = tr
	}
	return out
}

// TestPassParts: a pass cut in parts at clean cuts (two parts at each of
// many cuts, and three or four at once) makes the table one pass makes:
// windows crossing the cut, gaps at it, collectives on either side, launch
// calls whose activities fall in both parts.
func TestPassParts(t *testing.T) {
	defer func(f func([]trace.Activity, int, bool, []trace.Time) []int) { passCutsOf = f }(passCutsOf)
	defer func(m, p int) { passSplitMin, passMaxParts = m, p }(passSplitMin, passMaxParts)
	inputs := partInputs(t)
	given := map[string]*step.Steps{}
	for _, seed := range []uint64{1, 2, 3} {
		tr, st := manyDevices(seed)
		if err := tr.CheckValid(); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("manyDevices(%d)", seed)
		inputs[name], given[name] = tr, st
		// It exercises the merge: windows on both sides of most cuts,
		// four devices, collective kernels, replays sharing a call.
		cuts, crossing := cleanCuts(tr.Activities), 0
		for _, c := range cuts {
			before := map[[3]int32]bool{}
			for i := range c {
				before[[3]int32{tr.Activities[i].Proc, tr.Activities[i].Device, st.Of[i]}] = true
			}
			for i := c; i < len(tr.Activities); i++ {
				if before[[3]int32{tr.Activities[i].Proc, tr.Activities[i].Device, st.Of[i]}] {
					crossing++
					break
				}
			}
		}
		shared := 0
		for i := 1; i < len(tr.Activities); i++ {
			if c := tr.Activities[i].Corr; c != 0 && c < 1<<40 && slices.ContainsFunc(tr.Activities[:i], func(a trace.Activity) bool {
				return a.Corr == c && a.Proc == tr.Activities[i].Proc
			}) {
				shared++
			}
		}
		if len(cuts) < 30 || crossing < len(cuts)/2 || len(tr.DeviceIDs()) != 4 || shared < 50 {
			t.Fatalf("%s: %d cuts, %d with a window across, devices %v, %d kernels sharing a call", name, len(cuts), crossing, tr.DeviceIDs(), shared)
		}
	}
	for name, tr := range inputs {
		// The survey in as many runs as there are cores, and the cuts
		// passCuts finds in them (at[0] nil) beside those chosen here.
		passSplitMin, passMaxParts = max(1, len(tr.Activities)/16), 8
		st, err := step.Find(tr, step.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if g := given[name]; g != nil {
			st = g
		}
		cuts := cleanCuts(tr.Activities)
		if len(cuts) < 4 {
			t.Fatalf("%s: %d clean cuts", name, len(cuts))
		}
		n := len(tr.Activities)
		splits := [][]int{{-1}}
		for j := 0; j < len(cuts); j += max(1, len(cuts)/25) {
			splits = append(splits, []int{0, cuts[j], n})
		}
		splits = append(splits, []int{0, cuts[len(cuts)/3], cuts[2*len(cuts)/3], n},
			[]int{0, cuts[0], cuts[len(cuts)/2], cuts[len(cuts)-1], n})
		for _, steps := range []*step.Steps{st, nil} {
			for _, opt := range []Options{{}, {ByTop: true}, {SkipDurations: true, SkipCollectives: true}} {
				build := func(at []int) *Table {
					passCutsOf = func(acts []trace.Activity, parts int, split bool, ends []trace.Time) []int {
						switch {
						case at == nil:
							return []int{0, len(acts)}
						case at[0] < 0:
							return passCuts(acts, parts, split, ends)
						}
						return at
					}
					tbl, err := Build([]Input{{Path: name, Trace: tr, Steps: steps}}, opt)
					if err != nil {
						t.Fatal(err)
					}
					return tbl
				}
				want := build(nil)
				for _, at := range splits {
					got := build(at)
					what := fmt.Sprintf("%s (steps %v, %+v) cut at %v", name, steps != nil, opt, at)
					sameTable(t, what, got, want)
				}
			}
		}
	}
}

// sameTable fails the test when got is not want, saying where.
func sameTable(t *testing.T, what string, got, want *Table) {
	t.Helper()
	if len(got.Windows) != len(want.Windows) {
		t.Errorf("%s: %d windows, want %d", what, len(got.Windows), len(want.Windows))
		return
	}
	for i := range got.Windows {
		if !reflect.DeepEqual(got.Windows[i], want.Windows[i]) {
			t.Errorf("%s: window %d\n got %+v\nwant %+v", what, i, got.Windows[i], want.Windows[i])
			return
		}
	}
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"empty launches", got.EmptyLaunches, want.EmptyLaunches},
		{"ranks", got.Ranks, want.Ranks},
		{"durations", got.Inputs[0].Durations, want.Inputs[0].Durations},
		{"collectives", got.Inputs[0].Collectives, want.Inputs[0].Collectives},
		{"inputs", got.Inputs, want.Inputs},
		{"activity categories", got.actCat, want.actCat},
		{"categories", got.cats, want.cats},
		{"names", got.names, want.names},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s: %s differ", what, f.name)
		}
	}
}

// TestPassCuts: each part starts at the first clean cut at or after its
// share of the activities that leaves passSplitMin activities or more in
// the part before and after it, found from the survey's runs.
func TestPassCuts(t *testing.T) {
	defer func(m int) { passSplitMin = m }(passSplitMin)
	tr, err := parse.File(filepath.Join("..", "testdata", "traces", "torch", "dlrm8", "rank1.json.gz"), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	acts := tr.Activities
	n := len(acts)
	clean := cleanCuts(acts)
	// want is where the parts start, found from every clean cut.
	want := func(parts int) []int {
		at := []int{0}
		for j := 1; j < parts; j++ {
			k := slices.IndexFunc(clean, func(c int) bool {
				return c >= j*n/parts && c-at[len(at)-1] >= passSplitMin && n-c > passSplitMin
			})
			if k < 0 {
				break
			}
			at = append(at, clean[k])
		}
		return append(at, n)
	}
	for _, tc := range []struct {
		min, parts int
		split      bool
	}{{100, 2, true}, {100, 4, true}, {1, 3, true}, {700, 4, true}, {100, 1, true}, {100, 4, false}, {n / 2, 2, true}, {n, 2, true}} {
		passSplitMin = tc.min
		ends := surveyOf(&Input{Trace: tr}, tc.parts).rangeEnds()
		got := passCuts(acts, tc.parts, tc.split, ends)
		w := []int{0, n}
		if tc.split {
			w = want(tc.parts)
		}
		if !slices.Equal(got, w) {
			t.Errorf("%+v: parts at %v, want %v", tc, got, w)
		}
	}
}

// TestCollectivesAbsorb: collective kernels gathered in two parts, then
// merged, are those gathered in one: kernels in order, keys, args and
// shapes numbered by first use, whichever part first used them.
func TestCollectivesAbsorb(t *testing.T) {
	defer func(n int) { collChunk = n }(collChunk)
	tr := &trace.Trace{Names: []string{"", "nccl_kernel", "allreduce", "broadcast", "Float", "BFloat16", "pg0", "[0, 1]"}}
	args := []*trace.Collective{nil,
		{Op: 2, DType: 4, Group: 6, GroupRanks: 7, InElems: 10, OutElems: 10, GroupSize: 2, InSplit: -1, OutSplit: -1},
		{Op: 3, DType: 5, Group: 6, GroupRanks: 7, InElems: 20, OutElems: 20, GroupSize: 2, InSplit: -1, OutSplit: -1},
		{Op: 2, DType: 5, Group: 6, GroupRanks: 7, InElems: 30, OutElems: 30, GroupSize: 2, InSplit: -1, OutSplit: -1}}
	// Each kernel: its stream and args (an index in args).
	type kernel struct{ stream, args int }
	for _, tc := range [][]kernel{
		{{1, 1}, {1, 2}, {2, 1}, {1, 0}, {2, 3}, {1, 2}, {1, 1}, {2, 2}},
		{{1, 0}, {1, 0}, {1, 3}, {2, 2}, {1, 1}, {2, 1}, {2, 3}},
		{{1, 3}, {2, 3}, {1, 3}, {2, 1}},
	} {
		var acts []trace.Activity
		for i, k := range tc {
			acts = append(acts, trace.Activity{Start: trace.Time(10 * i), Dur: int64(5 + i), Corr: int64(i + 1), Name: 1, Stream: int32(k.stream)})
		}
		gather := func(c *collectives, from, to int) {
			for i := from; i < to; i++ {
				c.add(tr, &acts[i], int32(i/3), 4, 9, args[tc[i].args])
			}
		}
		var want collectives
		gather(&want, 0, len(acts))
		for cut := range len(acts) + 1 {
			// Chunks of two kernels: chunks full and not.
			collChunk = 2 + cut%2*4096
			var got, second collectives
			gather(&got, 0, cut)
			gather(&second, cut, len(acts))
			got.absorb(&second)
			if g, w := got.done(), want.done(); !reflect.DeepEqual(g, w) {
				t.Errorf("%v cut at %d:\n got %+v\nwant %+v", tc, cut, g, w)
			}
		}
	}
}

// TestSurvey: an input's survey, in one run or several, says what a
// direct count over its activities does: devices, activities per
// process, the first activity of each name in order, the steps'
// summary, the latest end of each run.
func TestSurvey(t *testing.T) {
	defer func(m int) { passSplitMin = m }(passSplitMin)
	passSplitMin = 1
	for name, tr := range partInputs(t) {
		st, err := step.Find(tr, step.Options{})
		if err != nil {
			t.Fatal(err)
		}
		acts := tr.Activities
		wantProcs := make([]int64, max(len(tr.Procs), 1))
		var wantFirsts []int32
		seen := map[trace.NameID]bool{}
		var unattr, unattrNS int64
		var has []bool
		if st != nil {
			has = make([]bool, len(st.List))
		}
		for i, a := range acts {
			wantProcs[a.Proc]++
			if !seen[a.Name] {
				seen[a.Name] = true
				wantFirsts = append(wantFirsts, int32(i))
			}
			if st == nil {
				continue
			}
			if s := st.Of[i]; s < 0 {
				unattr++
				unattrNS += a.Dur
			} else {
				has[s] = true
			}
		}
		empty := 0
		for _, h := range has {
			if !h {
				empty++
			}
		}
		for parts := 1; parts <= 4; parts++ {
			in := Input{Path: name, Trace: tr, Steps: st}
			s := surveyOf(&in, parts)
			if len(s.ranges) != parts {
				t.Fatalf("%s: %d runs, want %d", name, len(s.ranges), parts)
			}
			if got := s.deviceIDs(); !slices.Equal(got, tr.DeviceIDs()) {
				t.Errorf("%s, %d runs: devices %v, want %v", name, parts, got, tr.DeviceIDs())
			}
			if got, _ := s.procActs(); !slices.Equal(got, wantProcs) {
				t.Errorf("%s, %d runs: activities per process %v, want %v", name, parts, got, wantProcs)
			}
			var firsts []int32
			seen := map[trace.NameID]bool{}
			for _, r := range s.ranges {
				for _, i := range r.firsts {
					if !seen[acts[i].Name] {
						seen[acts[i].Name] = true
						firsts = append(firsts, i)
					}
				}
			}
			if !slices.Equal(firsts, wantFirsts) {
				t.Errorf("%s, %d runs: first activities of the names differ", name, parts)
			}
			for j, end := range s.rangeEnds() {
				r := s.ranges[j]
				want := acts[r.from].End()
				for i := r.from; i < r.to; i++ {
					want = max(want, acts[i].End())
				}
				if end != want {
					t.Errorf("%s, %d runs: run %d ends at %d, want %d", name, parts, j, end, want)
				}
			}
			describe(&in, s)
			if st == nil {
				if in.Stepped != nil {
					t.Errorf("%s: a step summary without steps", name)
				}
				continue
			}
			if want := (StepSummary{Steps: len(st.List), Empty: empty, Unattributed: unattr, UnattributedNS: unattrNS}); *in.Stepped != want {
				t.Errorf("%s, %d runs: steps %+v, want %+v", name, parts, *in.Stepped, want)
			}
		}
	}
}
