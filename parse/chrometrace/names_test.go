package chrometrace

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/traceq/traceq/trace"
)

// kernelNamed is a trace of one kernel whose name is the JSON text name.
func kernelNamed(name string) []byte {
	return []byte(`{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "` + name + `", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"correlation": 1}}]}`)
}

// TestLongNames: a name is cut to 64 KiB, on a UTF-8 boundary, and counted
// (issue 11: a 400 MB kernel name cost about 7 times its size in memory).
func TestLongNames(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"plain", strings.Repeat("k", 1<<20), strings.Repeat("k", maxName)},
		{"escaped", strings.Repeat(`\u0041`, 1<<17), strings.Repeat("A", maxName)},
		{"escapes across the cut", "a" + strings.Repeat(`\n`, 4<<16), "a" + strings.Repeat("\n", maxName-1)},
		{"multi-byte runes", strings.Repeat("€", 30000), strings.Repeat("€", maxName/3)},
		{"exactly 64 KiB", strings.Repeat("k", maxName), strings.Repeat("k", maxName)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := parseBoth(t, kernelNamed(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			got := tr.Name(tr.Activities[0].Name)
			if got != tc.want || !utf8.ValidString(got) {
				t.Errorf("name of %d bytes (%q…), want %d bytes", len(got), got[:min(len(got), 10)], len(tc.want))
			}
			cut := int64(0)
			for _, a := range tr.Anomalies {
				if a.What == trace.AnomLongName {
					cut = a.Count
				}
			}
			if wantCut := tc.name != "exactly 64 KiB"; (cut == 1) != wantCut {
				t.Errorf("%d names counted as cut, want cut %v", cut, wantCut)
			}
		})
	}
}

// TestLongNameMemory: the bytes Parse allocates do not grow with the
// length of a name beyond the cap (they did by twice the name: one copy in
// the decoder's table of names, one in the model's).
func TestLongNameMemory(t *testing.T) {
	alloc := func(n int) uint64 {
		data := kernelNamed(strings.Repeat("k", n))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Parse(bytes.NewReader(data), Options{Workers: 1, BlockSize: 8 << 20}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	alloc(1 << 20) // warm up: first uses of the runtime's and packages' caches
	small, large := alloc(1<<20), alloc(3<<20)
	if large > small+256<<10 {
		t.Errorf("Parse allocated %d bytes for a 1 MiB name, %d for a 3 MiB name: more than the cap's worth", small, large)
	}
}

// TestDistinctNamesStoredOnce: a trace of many distinct long kernel names
// (issue 19: 100k names of 2 KB took 1.07 GB in breakdown) holds each
// name once while it is parsed: what Parse allocates is about one copy of
// the names, not one per worker's table and one for the trace's.
func TestDistinctNamesStoredOnce(t *testing.T) {
	const n, size = 2000, 4096
	var b strings.Builder
	b.WriteString(`{"traceEvents": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		name := strings.Repeat("k", size-8) + strconv.Itoa(10_000_000+i)
		fmt.Fprintf(&b, `{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %d, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": %d}}`, name, i*10, i+1)
	}
	b.WriteString("]}")
	data := []byte(b.String())
	for _, workers := range []int{1, 2} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr, err := Parse(bytes.NewReader(data), Options{Workers: workers, BlockSize: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if len(tr.Names) != n+1 {
			t.Fatalf("%d names", len(tr.Names))
		}
		names := float64(n * size)
		copies := float64(after.TotalAlloc-before.TotalAlloc) / names
		t.Logf("%d workers: Parse allocated %.2f times the bytes of the names", workers, copies)
		if copies > 1.5 {
			t.Errorf("%d workers: Parse allocated %.2f times the bytes of the names: they are copied more than once", workers, copies)
		}
		runtime.KeepAlive(tr)
	}
}
