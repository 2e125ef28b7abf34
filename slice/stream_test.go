package slice

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/trace"
)

// genTrace writes a generated vLLM-like trace of the given steps into
// memory, before anything is measured.
func genTrace(t *testing.T, steps int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Config{Steps: steps, DecodeEvery: 10, Layers: 32, Seed: 2}, 0); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// allocated returns the bytes f allocates. The input is already in memory
// and f runs on this goroutine alone, so the count is the code's own and
// the same from run to run: a deterministic measure, not a sampled heap.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestCopyStreams checks that copying a window allocates about as much
// from a 10× longer trace: the input streams through fixed buffers, and
// only what the window keeps is held.
func TestCopyStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("generates ~100 MB")
	}
	measure := func(data []byte) (uint64, int64) {
		open := opener(data)
		start, err := Start(open)
		if err != nil {
			t.Fatal(err)
		}
		var st *Stats
		n := allocated(func() {
			// The same 20 ms window, near the start, for both lengths.
			st, err = Copy(open, Window(start+5_000_000, start+25_000_000), io.Discard)
		})
		if err != nil || st.Kept < 100 {
			t.Fatalf("copy: %v, %+v", err, st)
		}
		return n, st.Read
	}
	small, ns := measure(genTrace(t, 40))
	big, nb := measure(genTrace(t, 400))
	t.Logf("%d events: %d KB allocated; %d events: %d KB", ns, small>>10, nb, big>>10)
	if nb < 8*ns || big > small+small/2 {
		t.Errorf("allocations grew from %d KB to %d KB with a %d× longer input", small>>10, big>>10, nb/ns)
	}
}

// TestStepsStreams checks what selecting steps costs: beyond fixed
// buffers, the table of launch calls (32 bytes each, grown by doubling)
// and the annotation ranges with their names, nothing per other event.
func TestStepsStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("generates ~100 MB")
	}
	measure := func(data []byte) (uint64, int, int) {
		open := opener(data)
		var sel *Selection
		var err error
		n := allocated(func() { sel, _, err = Steps(open, StepOptions{From: 5, To: 7}) })
		if err != nil || len(sel.Corr) == 0 {
			t.Fatalf("steps 5:7: %v", err)
		}
		launches, ranges := 0, 0
		each(open, func(ev *chrometrace.Event, _ func(trace.NameID) string) {
			switch ev.Kind {
			case chrometrace.KindLaunch:
				launches++
			case chrometrace.KindRange:
				ranges++
			}
		})
		return n, launches, ranges
	}
	small, ls, rs := measure(genTrace(t, 40))
	big, lb, rb := measure(genTrace(t, 400))
	t.Logf("%d launch calls, %d ranges: %d KB allocated; %d launch calls, %d ranges: %d KB", ls, rs, small>>10, lb, rb, big>>10)
	if lb < 8*ls {
		t.Fatalf("the long trace has %d launch calls, the short %d", lb, ls)
	}
	// A launch call holds 32 bytes, allocated as the table doubles (about
	// 4 times that in all); a range 1 KiB (the record, its name in each
	// pass's reader, the marker sets).
	if limit := 160*uint64(lb-ls) + 1024*uint64(rb-rs); big-small > limit {
		t.Errorf("%d KB more allocated for the longer input, want at most %d KB", (big-small)>>10, limit>>10)
	}
}
