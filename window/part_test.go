package window

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
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
	defer func(f func([]trace.Activity, int, bool) []int) { passCutsOf = f }(passCutsOf)
	for name, tr := range partInputs(t) {
		st, err := step.Find(tr, step.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cuts := cleanCuts(tr.Activities)
		if len(cuts) < 4 {
			t.Fatalf("%s: %d clean cuts", name, len(cuts))
		}
		n := len(tr.Activities)
		var splits [][]int
		for j := 0; j < len(cuts); j += max(1, len(cuts)/25) {
			splits = append(splits, []int{0, cuts[j], n})
		}
		splits = append(splits, []int{0, cuts[len(cuts)/3], cuts[2*len(cuts)/3], n},
			[]int{0, cuts[0], cuts[len(cuts)/2], cuts[len(cuts)-1], n})
		for _, steps := range []*step.Steps{st, nil} {
			for _, opt := range []Options{{}, {ByTop: true}} {
				build := func(at []int) *Table {
					passCutsOf = func(acts []trace.Activity, parts int, split bool) []int {
						if at == nil {
							return []int{0, len(acts)}
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
					what := fmt.Sprintf("%s (steps %v, %+v) cut at %v", name, steps != nil, opt, at[1:len(at)-1])
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

// TestPassCuts: the parts start at clean cuts, at or after their share of
// the activities, each of passSplitMin activities or more.
func TestPassCuts(t *testing.T) {
	defer func(m int) { passSplitMin = m }(passSplitMin)
	tr, err := parse.File(filepath.Join("..", "testdata", "traces", "torch", "dlrm8", "rank1.json.gz"), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	acts := tr.Activities
	clean := map[int]bool{}
	for _, c := range cleanCuts(acts) {
		clean[c] = true
	}
	for _, tc := range []struct {
		min, parts int
		split      bool
	}{{100, 2, true}, {100, 4, true}, {1, 3, true}, {100, 1, true}, {100, 4, false}, {len(acts), 2, true}} {
		passSplitMin = tc.min
		at := passCuts(acts, tc.parts, tc.split)
		if at[0] != 0 || at[len(at)-1] != len(acts) || len(at)-1 > tc.parts || (!tc.split || tc.parts < 2) && len(at) != 2 {
			t.Errorf("%+v: parts at %v", tc, at)
			continue
		}
		if tc.split && tc.parts >= 2 && tc.min < len(acts)/8 && len(at)-1 != tc.parts {
			t.Errorf("%+v: %d parts at %v, want %d", tc, len(at)-1, at, tc.parts)
		}
		for j := 1; j < len(at)-1; j++ {
			if !clean[at[j]] || at[j]-at[j-1] < tc.min || at[j] < j*len(acts)/tc.parts {
				t.Errorf("%+v: part %d starts at %d (clean %v)", tc, j, at[j], clean[at[j]])
			}
		}
	}
}

// TestCollectivesAbsorb: collective kernels gathered in two parts, then
// merged, are those gathered in one: kernels in order, keys, args and
// shapes numbered by first use, whichever part first used them.
func TestCollectivesAbsorb(t *testing.T) {
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
