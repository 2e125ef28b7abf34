package slice

import (
	"io"
	"runtime"
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
		start, err := Start(open)
		if err != nil {
			t.Fatal(err)
		}
		// The same 20 ms window, near the start, for both lengths.
		st, err := Copy(open, Window(start+5_000_000, start+25_000_000), io.Discard)
		close(stop)
		<-done
		if err != nil {
			t.Fatal(err)
		}
		if st.Kept < 100 {
			t.Fatalf("window holds %d events", st.Kept)
		}
		return max.Load(), st.Read
	}
	small, ns := peak(20)
	big, nb := peak(400)
	t.Logf("%d events: peak heap %d MB; %d events: %d MB", ns, small>>20, nb, big>>20)
	if nb < 15*ns {
		t.Fatalf("the long trace has %d events, the short %d", nb, ns)
	}
	if big > small+32<<20 {
		t.Errorf("peak heap grew from %d MB to %d MB with a %d× longer input", small>>20, big>>20, nb/ns)
	}
}
