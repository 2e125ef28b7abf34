package report

import (
	"slices"
	"strconv"
	"testing"

	"github.com/traceq/traceq/window"
)

// inputsOf makes inputs of runs: each run name with its number of ranks
// (0: one input without a rank).
func inputsOf(runs ...any) []window.Input {
	var out []window.Input
	for i := 0; i < len(runs); i += 2 {
		name, n := runs[i].(string), runs[i+1].(int)
		if n == 0 {
			out = append(out, window.Input{Path: "/t/" + name + ".json.gz", Run: name})
			continue
		}
		for r := range n {
			out = append(out, window.Input{Path: "/t/" + name + "/rank" + strconv.Itoa(r) + ".json", Run: name, Rank: &r, WorldSize: &n})
		}
	}
	return out
}

func TestNames(t *testing.T) {
	long := "nsys2026.2.1_torchrun-2gpu-nccl-before"
	for _, tc := range []struct {
		inputs              []window.Input
		title, chart, dir   string
		slugs               []string
		input0, chartInput0 string
		chartInputs         []int
	}{
		{inputsOf("dlrm8", 8), "dlrm8", "dlrm8", "dlrm8",
			[]string{"dlrm8-rank0", "dlrm8-rank1", "dlrm8-rank2", "dlrm8-rank3", "dlrm8-rank4", "dlrm8-rank5", "dlrm8-rank6", "dlrm8-rank7"},
			"dlrm8 · rank 0", "dlrm8 · rank 0", []int{0, 1, 2, 3}},
		{inputsOf("runA", 3, "runFix", 3), "runA → runFix", "runA → runFix", "runA-vs-runFix",
			[]string{"runA-rank0", "runA-rank1", "runA-rank2", "runFix-rank0", "runFix-rank1", "runFix-rank2"},
			"runA · rank 0", "runA · rank 0", []int{0, 1, 3, 4}},
		{inputsOf(long, 0, "b", 0, "c", 1), long + ", b, c", "nsys2026.2.…-nccl-before, b, c", long + "-and-2-more",
			[]string{long, "b", "c"}, long, "nsys2026.2.…-nccl-before", []int{0, 1, 2}},
		{inputsOf("v", 0), "v", "v", "v", []string{"v"}, "v", "v", []int{0}},
	} {
		in := tc.inputs
		if got := Title(in); got != tc.title {
			t.Errorf("Title %q, want %q", got, tc.title)
		}
		if got := chartTitle(in); got != tc.chart {
			t.Errorf("chartTitle %q, want %q", got, tc.chart)
		}
		if got := DirName(in); got != tc.dir {
			t.Errorf("DirName %q, want %q", got, tc.dir)
		}
		if got := inputSlugs(in); !slices.Equal(got, tc.slugs) {
			t.Errorf("inputSlugs %q, want %q", got, tc.slugs)
		}
		if got, gotChart := InputTitle(in, 0), chartInputTitle(in, 0); got != tc.input0 || gotChart != tc.chartInput0 {
			t.Errorf("InputTitle %q and %q, want %q and %q", got, gotChart, tc.input0, tc.chartInput0)
		}
		w := &writer{Report: &Report{inputs: in, runs: runsOf(in)}}
		if got := w.chartInputs(); !slices.Equal(got, tc.chartInputs) {
			t.Errorf("%s: chartInputs %v, want %v", tc.title, got, tc.chartInputs)
		}
	}
	// Inputs no run was assigned to are runs of their own, named by file.
	bare := []window.Input{{Path: "x/a.json"}, {Path: "y/b.json.gz"}}
	if got := Title(bare); got != "a → b" {
		t.Errorf("Title without runs %q", got)
	}
	if got := Slug("."); got != "input" {
		t.Errorf("Slug(.) = %q", got)
	}
}
