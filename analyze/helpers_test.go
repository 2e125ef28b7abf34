package analyze

import (
	"testing"

	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// tableOf reduces inputs to their table, as the loader does after
// reading them.
func tableOf(t testing.TB, inputs ...window.Input) *window.Table {
	t.Helper()
	tbl, err := window.Build(inputs, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// breakdownOf is the breakdown of inputs.
func breakdownOf(t testing.TB, opt Options, inputs ...window.Input) *GroupTable {
	t.Helper()
	return Breakdown(tableOf(t, inputs...), opt)
}

// The classes the tests group by.
var (
	whole    = step.WholeTrace
	outside  = step.Unattributed
	decode   = step.ClassOf(step.Decode)
	prefill  = step.ClassOf(step.Prefill)
	mixed    = step.ClassOf(step.Mixed)
	stepOnly = step.ClassOf(step.Generic)
)

// builder makes small traces by hand.
type builder struct {
	in *trace.Interner
	t  *trace.Trace
}

func newBuilder() *builder {
	return &builder{in: trace.NewInterner(), t: &trace.Trace{Procs: []trace.Proc{{PID: 1, Rank: -1}, {PID: 2, Rank: -1}}}}
}

func (b *builder) cpu(name string, thread int64, start, end trace.Time) {
	b.t.Ranges = append(b.t.Ranges, trace.Range{Start: start, Dur: int64(end - start), Thread: thread,
		Name: b.in.ID(name), Device: -1, Stream: -1, Kind: trace.RangeCPU})
}

func (b *builder) launch(proc int32, corr, thread int64, at trace.Time) {
	b.t.Launches = append(b.t.Launches, trace.Launch{Start: at, Dur: 1, Corr: corr, Thread: thread,
		Name: b.in.ID("cudaLaunchKernel"), Proc: proc})
}

func (b *builder) done(t *testing.T) *trace.Trace {
	b.t.Names = b.in.Names()
	b.t.Sort()
	if err := b.t.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return b.t
}
