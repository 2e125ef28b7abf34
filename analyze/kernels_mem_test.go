package analyze_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/window"
)

// TestKernelsAllocations bounds what Kernels allocates: one int32 per
// activity for the durations (summarized as they are, not widened to
// int64 one key at a time: the peak of a many-rank breakdown runs Kernels
// alongside Breakdown), plus tables per name. TotalAlloc around the call
// alone is deterministic for this single-goroutine code.
func TestKernelsAllocations(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Config{Steps: 300, DecodeEvery: 10, Layers: 8, Seed: 2}, 0); err != nil {
		t.Fatal(err)
	}
	tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := window.Build([]window.Input{{Path: "r", Trace: tr}}, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opt := analyze.KernelOptions{MemOps: true}
	analyze.Kernels(tbl, opt) // warm
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ks := analyze.Kernels(tbl, opt)
	runtime.ReadMemStats(&after)
	var n int64
	for _, k := range ks {
		n += k.N
	}
	acts := len(tr.Activities)
	if n != int64(acts) {
		t.Fatalf("kernels count %d activities, the trace has %d", n, acts)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	limit := uint64(5*acts + 2048*len(ks) + 64<<10)
	t.Logf("%d activities, %d names: %d bytes allocated (%.1f per activity)", acts, len(ks), alloc, float64(alloc)/float64(acts))
	if alloc > limit {
		t.Errorf("Kernels allocated %d bytes for %d activities, more than %d", alloc, acts, limit)
	}
}
