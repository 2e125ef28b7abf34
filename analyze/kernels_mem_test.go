package analyze_test

import (
	"bytes"
	"runtime"
	"testing"
	"unsafe"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/trace"
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
	tr, tbl := tableOf(t, buf.Bytes())
	ks, alloc := allocated(func() []analyze.KernelStat { return analyze.Kernels(tbl, analyze.KernelOptions{MemOps: true}) })
	var n int64
	for _, k := range ks {
		n += k.N
	}
	acts := len(tr.Activities)
	if n != int64(acts) {
		t.Fatalf("kernels count %d activities, the trace has %d", n, acts)
	}
	limit := uint64(5*acts + 2048*len(ks) + 64<<10)
	t.Logf("%d activities, %d names: %d bytes allocated (%.1f per activity)", acts, len(ks), alloc, float64(alloc)/float64(acts))
	if alloc > limit {
		t.Errorf("Kernels allocated %d bytes for %d activities, more than %d", alloc, acts, limit)
	}
}

// TestKernelsManyNames bounds what Kernels allocates per row on a trace
// of many distinct names, each run once (issue 19: 100k names of 2 KB):
// the row itself and a record, not a map entry, a key and a list per row
// (540 bytes a row before, 193 since).
func TestKernelsManyNames(t *testing.T) {
	const n = 20_000
	var buf bytes.Buffer
	if err := gen.WriteNames(&buf, gen.NamesConfig{Names: n, Size: 200, Groups: 10, PerStep: 250}); err != nil {
		t.Fatal(err)
	}
	_, tbl := tableOf(t, buf.Bytes())
	ks, alloc := allocated(func() []analyze.KernelStat { return analyze.Kernels(tbl, analyze.KernelOptions{MemOps: true}) })
	if len(ks) != n {
		t.Fatalf("%d rows, want %d", len(ks), n)
	}
	row := uint64(unsafe.Sizeof(analyze.KernelStat{}))
	limit := n*(row+48) + 64<<10
	t.Logf("%d names: %d bytes allocated, %.0f a row of %d bytes", n, alloc, float64(alloc)/n, row)
	if alloc > limit {
		t.Errorf("Kernels allocated %d bytes for %d rows of %d bytes, more than %d", alloc, n, row, limit)
	}
}

// TestBreakdownManyNames bounds what Breakdown allocates per distinct
// name of a group (its sum and its place in the top list's sort): the
// sort spelled out two categories per comparison before: 486 bytes a
// name on this trace, 92 since.
func TestBreakdownManyNames(t *testing.T) {
	const n = 20_000
	var buf bytes.Buffer
	if err := gen.WriteNames(&buf, gen.NamesConfig{Names: n, Size: 200, Groups: 10, PerStep: n}); err != nil {
		t.Fatal(err)
	}
	_, tbl := tableOf(t, buf.Bytes())
	r, alloc := allocated(func() *analyze.GroupTable { return analyze.Breakdown(tbl, analyze.Options{}) })
	if len(r.Groups) != 1 || len(r.Groups[0].Top) != 10 {
		t.Fatalf("%d groups", len(r.Groups))
	}
	t.Logf("%d names: %d bytes allocated, %.0f a name", n, alloc, float64(alloc)/n)
	if limit := uint64(n*256 + 256<<10); alloc > limit {
		t.Errorf("Breakdown allocated %d bytes for %d names, more than %d", alloc, n, limit)
	}
}

// tableOf parses raw as one input and builds its window table.
func tableOf(t *testing.T, raw []byte) (*trace.Trace, *window.Table) {
	t.Helper()
	tr, err := chrometrace.Parse(bytes.NewReader(raw), chrometrace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := window.Build([]window.Input{{Path: "r", Trace: tr}}, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr, tbl
}

// allocated runs f once to warm it, then again, and returns its result
// and the bytes the second run allocated (TotalAlloc around the call:
// deterministic for this single-goroutine code).
func allocated[R any](f func() R) (R, uint64) {
	f()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := f()
	runtime.ReadMemStats(&after)
	return r, after.TotalAlloc - before.TotalAlloc
}
