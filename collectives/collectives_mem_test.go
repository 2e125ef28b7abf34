package collectives_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// TestCollectivesAllocations bounds what Collectives allocates on a
// generated 8-rank run: two int32 per collective kernel, per rank an
// offset per (step, op, stream), and an index of the collective args,
// whatever the other kernels. The
// bytes are counted by the runtime (TotalAlloc) around the call alone:
// deterministic for this single-goroutine code.
func TestCollectivesAllocations(t *testing.T) {
	cfg := gen.RunConfig{Ranks: 8, Steps: 200, DecodeEvery: 20, Layers: 16, Straggler: 3, SlowdownPct: 20, Seed: 5}
	var inputs []window.Input
	var comm, acts, args int
	for r := range cfg.Ranks {
		var buf bytes.Buffer
		if _, err := gen.WriteRank(&buf, cfg, r); err != nil {
			t.Fatal(err)
		}
		tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := step.Find(tr, step.Options{})
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, window.Input{Path: "r", Trace: tr, Steps: st})
		acts += len(tr.Activities)
		args += len(tr.Collectives)
	}
	comm = cfg.Ranks * cfg.Steps * cfg.Layers * 2
	tbl, err := window.Build(inputs, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opt := collectives.Options{BytesPerToken: cfg.BytesPerToken()}
	collectives.Match(tbl, opt) // warm: lazily built tables
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ct := collectives.Match(tbl, opt)
	runtime.ReadMemStats(&after)
	if len(ct.Ops) != 2 || ct.Ops[0].Instances+ct.Ops[1].Instances != int64(comm/cfg.Ranks) {
		t.Fatalf("ops %+v", ct.Ops)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	lanes := cfg.Ranks * cfg.Steps // one lane per step here: one op and stream a step
	// 8 bytes per collective kernel; the args' index (an interval set of
	// the record_param_comms ops) grows with the args, not the kernels.
	limit := uint64(8*comm + 128*args + 8*lanes*cfg.Ranks + 96<<10)
	t.Logf("%d activities, %d collective kernels, %d collective args: %d bytes allocated (%.1f per collective kernel)",
		acts, comm, args, alloc, float64(alloc)/float64(comm))
	if alloc > limit {
		t.Errorf("Collectives allocated %d bytes for %d collective kernels, more than %d", alloc, comm, limit)
	}
}
