package slice

import (
	"io"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/traceq/traceq/internal/gen"
)

// genOpener streams a generated trace through a pipe: the input is never
// in memory, so the heap measured is slice's own.
func genOpener(cfg gen.Config) Opener {
	return func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() {
			_, err := gen.Write(pw, cfg, 0)
			pw.CloseWithError(err)
		}()
		return pr, nil
	}
}

// TestCopyStreams checks that memory does not grow with the input: a
// slice of the same window out of a 20× longer trace peaks at about the
// same heap.
func TestCopyStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("streams ~150 MB")
	}
	defer func(w int) { Workers = w }(Workers)
	Workers = 2 // the in-flight bound scales with the workers
	small, ns, big, nb := peakHeaps(t, 20, 400, func(open Opener) (*Stats, error) {
		start, err := Start(open)
		if err != nil {
			return nil, err
		}
		// The same 20 ms window, near the start, for both lengths.
		return Copy(open, Window(start+5_000_000, start+25_000_000), io.Discard)
	})
	t.Logf("%d events: peak heap %d MB; %d events: %d MB", ns, small>>20, nb, big>>20)
	if big > small+32<<20 {
		t.Errorf("peak heap grew from %d MB to %d MB with a %d× longer input", small>>20, big>>20, nb/ns)
	}
}

// TestStepsStreams checks the same for a step slice: finding the steps and
// the kernels they own (StepsStream) and copying them holds about the same
// heap for a 10× longer trace.
func TestStepsStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("streams ~200 MB seven times")
	}
	defer func(w int) { Workers = w }(Workers)
	Workers = 2
	// Each chunk of events parsed leaves garbage behind: a tighter GC
	// keeps the peak close to what is live, which is what must not grow.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	// The shorter trace is long enough for the pipeline to fill up.
	small, ns, big, nb := peakHeaps(t, 100, 1000, func(open Opener) (*Stats, error) {
		sel, steps, err := StepsStream(open, "", 5, 7, "")
		if err != nil {
			return nil, err
		}
		if len(steps) != 2 || len(sel.Corr) == 0 {
			t.Fatalf("steps 5:7: %d steps, %d kernels' correlation ids", len(steps), len(sel.Corr))
		}
		return Copy(open, sel, io.Discard)
	})
	t.Logf("--steps 5:7: %d events: peak heap %d MB; %d events: %d MB", ns, small>>20, nb, big>>20)
	// Parsing the whole trace into the model first, as --steps once did,
	// peaked at 23 MB and 88 MB here; streaming stays within a few MB, the
	// margin is for the collector's timing.
	if big > small+24<<20 {
		t.Errorf("peak heap grew from %d MB to %d MB with a %d× longer input", small>>20, big>>20, nb/ns)
	}
}

// peakHeaps runs f on generated traces of short and long steps and returns
// the peak heap in use and the events read for each.
func peakHeaps(t *testing.T, short, long int, f func(Opener) (*Stats, error)) (small uint64, ns int64, big uint64, nb int64) {
	t.Helper()
	peak := func(steps int) (uint64, int64) {
		cfg := gen.Config{Steps: steps, DecodeEvery: 10, Layers: 32, Seed: 2}
		open := genOpener(cfg)
		runtime.GC()
		var max atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > max.Load() {
					max.Store(ms.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		st, err := f(open)
		close(stop)
		<-done
		if err != nil {
			t.Fatal(err)
		}
		if st.Kept < 100 {
			t.Fatalf("the slice holds %d events", st.Kept)
		}
		return max.Load(), st.Read
	}
	small, ns = peak(short)
	big, nb = peak(long)
	if nb < int64(long/short*3/4)*ns {
		t.Fatalf("the long trace has %d events, the short %d", nb, ns)
	}
	return small, ns, big, nb
}
