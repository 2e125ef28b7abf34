package parquet

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// heldWriter discards what it is given, first measuring what the heap
// retains: at each write the exporter holds a row group's pages, its
// dictionary and the rows not yet written, its peak.
type heldWriter struct{ peak *uint64 }

func (w heldWriter) Write(p []byte) (int, error) {
	*w.peak = max(*w.peak, retained())
	return len(p), nil
}

func (heldWriter) Close() error { return nil }

// retained is the live heap: what a collection leaves.
func retained() uint64 {
	runtime.GC()
	runtime.GC() // and what sync.Pools held at the first
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestNamesHeldOnce: what an export holds beyond its input does not grow
// with the input's distinct names. Issue 19: 100k distinct 2 KB kernel
// names (205 MB, held once by the model) made the parquet writer hold a
// 205 MB dictionary twice over, and then, bounded per row group at 16
// MiB, ~40 MB more, which with the heap's growth passed the 400 MB budget
// of one file. The writer now holds one row group's names (maxDictBytes)
// and a row refers to the model's name, never a copy of it. Measured as
// the bytes the heap retains (after a collection) at every write to a
// part file, against what it retained before: deterministic, as this
// test's goroutine is the only one allocating; a copy of the names per
// table, per row or per window would be 16 MiB.
func TestNamesHeldOnce(t *testing.T) {
	defer func(b int) { maxDictBytes = b }(maxDictBytes)
	maxDictBytes = 256 << 10
	const n, size, perStep = 8000, 2048, 250
	var held int64
	tr := &trace.Trace{Meta: trace.Meta{Format: trace.FormatChrome, Rank: 0, WorldSize: 1},
		Names: []string{""}, Procs: []trace.Proc{{PID: 1, Rank: -1}}, Activities: make([]trace.Activity, n)}
	for i := range n {
		tr.Names = append(tr.Names, fmt.Sprintf("kernel_%0*d", size-7, i))
		tr.Activities[i] = trace.Activity{Start: trace.Time(i * 1000), Dur: 500, Corr: int64(i + 1), Name: trace.NameID(i + 1), Stream: 7}
	}
	tbl, err := window.Build([]window.Input{{Path: "in", Trace: tr}}, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	create := func(string) (io.WriteCloser, error) { return heldWriter{&peak}, nil }
	// Once to warm the codec's pools and the package's tables, then
	// measured.
	for range 2 {
		before := retained()
		peak = 0
		if err := New(create, Options{Version: "v"}).Add("r", tbl); err != nil {
			t.Fatal(err)
		}
		held = int64(peak) - int64(before)
	}
	runtime.KeepAlive(tbl)
	names := uint64(n * size)
	t.Logf("%d names of %d bytes (%d in all): the export held %d bytes beyond its input (%.2f of the names)", n, size, names, held, float64(held)/float64(names))
	// A row group's dictionary (a sixty-fourth of the names), the
	// writer's copy of it and its encoded page, and a few bytes per
	// activity: 2.7 MB. The writer held the whole dictionary, 41 MB;
	// any copy of the names is 16 MB.
	if limit := int64(names / 4); held > limit {
		t.Errorf("the export held %d bytes beyond its input, more than %d: a copy of the names (%d bytes; the dictionary bound is %d)", held, limit, names, maxDictBytes)
	}
}
