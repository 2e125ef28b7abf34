package render

import (
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// table is a hand-made window table holding inputs and their ranks: one
// rank per input, input i's rank i, when ranks is nil.
func table(inputs []window.Input, ranks ...window.Rank) *window.Table {
	if ranks == nil {
		for i, in := range inputs {
			ranks = append(ranks, window.Rank{ID: window.RankID(i), Input: i, Path: in.Path, Run: in.Run, Number: in.Rank})
		}
	}
	return &window.Table{Inputs: inputs, Ranks: ranks, EmptyLaunches: []window.EmptyLaunch{}}
}

var (
	whole   = step.WholeTrace
	decode  = step.ClassOf(step.Decode)
	prefill = step.ClassOf(step.Prefill)
)
