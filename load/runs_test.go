package load

import (
	"slices"
	"testing"

	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

func TestAssignRuns(t *testing.T) {
	in := func(path string, rank, world int) window.Input {
		return window.Input{Path: path, Trace: &trace.Trace{Meta: trace.Meta{Rank: rank, WorldSize: world}}}
	}
	inputs := []window.Input{
		in("runA/r0.json", 0, 2), in("runA/r1.json", 1, 2), // directory runA
		in("x/runA/r0.json", 0, 2), in("x/runA/r1.json", 1, 2), // another runA
		in("loose/rank0.json.gz", 0, 2), in("loose/rank1.json.gz", 1, 2), // two rank files
		in("before.json", -1, -1), in("after.json.gz", -1, -1), // unrelated files
		in("a/r0.json", 0, 2), in("b/r0.json", 0, 2), // same rank twice: not one run
	}
	sources := []source{
		{Arg: "runA/", Dir: true, Inputs: []int{0, 1}},
		{Arg: "x/runA", Dir: true, Inputs: []int{2, 3}},
		{Arg: "loose/rank0.json.gz", Inputs: []int{4}},
		{Arg: "loose/rank1.json.gz", Inputs: []int{5}},
		{Arg: "before.json", Inputs: []int{6}},
		{Arg: "after.json.gz", Inputs: []int{7}},
		{Arg: "a/r0.json", Inputs: []int{8}},
		{Arg: "b/r0.json", Inputs: []int{9}},
	}
	// The table keeps what the traces say of their rank and world.
	tbl, err := window.Build(inputs, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	assignRuns(tbl, sources)
	var got []string
	for _, x := range tbl.Inputs {
		got = append(got, x.Run)
	}
	want := []string{"runA", "runA", "runA-2", "runA-2", "loose", "loose", "before", "after", "r0", "r0-2"}
	if !slices.Equal(got, want) {
		t.Errorf("runs %q\nwant %q", got, want)
	}
}
