package chart

import (
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

const torch = "../../testdata/traces/torch/"

// load parses paths and finds their steps as the CLI does.
func load(t *testing.T, paths ...string) []window.Input {
	t.Helper()
	var out []window.Input
	for _, p := range paths {
		tr, err := parse.File(torch+p, parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := step.Find(tr, step.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, window.Input{Path: p, Trace: tr, Steps: st})
	}
	return out
}

// tableOf is the window table of inputs.
func tableOf(t *testing.T, inputs ...window.Input) *window.Table {
	t.Helper()
	tbl, err := window.Build(inputs, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// breakdownOf is the breakdown of inputs.
func breakdownOf(t *testing.T, inputs ...window.Input) *analyze.GroupTable {
	t.Helper()
	return analyze.Breakdown(tableOf(t, inputs...), analyze.Options{})
}

// rank is a hand-made rank of the tests' groups: its own, so the caller
// can tell processes apart by id.
func rank(id int, run, path string, number *int, pid int64) *window.Rank {
	return &window.Rank{ID: window.RankID(id), Proc: int32(id), Run: run, Path: path, Number: number, PID: pid}
}

var (
	whole   = step.WholeTrace
	outside = step.Unattributed
	decode  = step.ClassOf(step.Decode)
	prefill = step.ClassOf(step.Prefill)
	generic = step.ClassOf(step.Generic)
)
