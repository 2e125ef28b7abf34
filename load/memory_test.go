package load

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"weak"

	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/render/report"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// TestModelsDropped checks, deterministically, that Load holds no more
// models than the files it parses at once (issue 21): when the parse of
// file k starts, the model of every file before k-inFlight+1 has been
// collected (a weak pointer to it is nil after a collection), however
// many files precede it. With one file in flight: the second rank's model
// is gone when the third is parsed. A reducer that needs the model sees
// it (Options.Reduce) and keeps none: the efficiency analysis's and the
// report's timelines, run here, take their rows and drop the model; the
// table keeps what every analysis reads.
func TestModelsDropped(t *testing.T) {
	dir := t.TempDir()
	const ranks = 5
	cfg := gen.Config{Ranks: ranks, Steps: 30, DecodeEvery: 10, Layers: 4, Seed: 3}
	for r := range ranks {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, cfg, r); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank%d.json", r)), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, inFlight := range []int{1, 2} {
		t.Run(fmt.Sprint("inFlight=", inFlight), func(t *testing.T) {
			var mu sync.Mutex
			models := map[int]weak.Pointer[trace.Trace]{}
			var failures []string
			filesInFlight = inFlight
			testParsed = func(i int, tr *trace.Trace) {
				mu.Lock()
				defer mu.Unlock()
				models[i] = weak.Make(tr)
			}
			testParse = func(k int) {
				runtime.GC()
				runtime.GC()
				mu.Lock()
				defer mu.Unlock()
				for i, w := range models {
					if i <= k-inFlight && w.Value() != nil {
						failures = append(failures, fmt.Sprintf("file %d's model alive while file %d is parsed", i, k))
					}
				}
			}
			defer func() { filesInFlight, testParse, testParsed = maxParallelFiles, nil, nil }()
			reduced := 0
			eff := efficiency.NewReducer(efficiency.Options{})
			tls := report.NewTimelines(step.Filter{})
			tbl, err := Load([]string{dir}, Options{Steps: true, Reduce: func(tbl *window.Table, i int) error {
				if !tbl.Inputs[i].Held() || len(tbl.Inputs[i].Trace.Activities) == 0 {
					t.Errorf("input %d: no model to reduce", i)
				}
				reduced++
				eff.Reduce(tbl, i)
				return tls.Reduce(tbl, i)
			}})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range failures {
				t.Error(f)
			}
			if len(models) != ranks || reduced != ranks {
				t.Fatalf("%d models made, %d reduced, want %d", len(models), reduced, ranks)
			}
			// Once loaded, no model is alive, and the table has what the
			// analyses read.
			runtime.GC()
			runtime.GC()
			for i, w := range models {
				if w.Value() != nil {
					t.Errorf("file %d's model alive after Load", i)
				}
			}
			for i, in := range tbl.Inputs {
				if in.Held() || in.Steps == nil || len(in.Steps.List) != cfg.Steps || len(in.Durations) == 0 || len(in.Collectives.Kernels) == 0 {
					t.Errorf("input %d: held %v, steps %v, %d duration records, %d collective kernels", i, in.Held(), in.Steps != nil, len(in.Durations), len(in.Collectives.Kernels))
				}
			}
			if r := eff.Result(tbl); len(r.Categories) == 0 || len(r.Graphs) != ranks {
				t.Errorf("efficiency: %d category rows, %d graph rows", len(r.Categories), len(r.Graphs))
			}
			runtime.KeepAlive(tbl)
			runtime.KeepAlive(tls)
		})
	}
}

// TestMemoryLimit: the soft limit on the heap is one file's budget while
// a command holds one input (Load of one file, OneOn: each input of
// export), a run's while it holds several (Load of several, both sides
// of Pair), and GOMEMLIMIT's when set.
func TestMemoryLimit(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: the loader leaves the limit alone")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	dir := t.TempDir()
	cfg := gen.Config{Ranks: 2, Steps: 4, Layers: 2, Seed: 1}
	var files []string
	for r := range cfg.Ranks {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, cfg, r); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("rank%d.json", r))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	for _, tc := range []struct {
		name string
		load func() error
		want int64
	}{
		{"Load of one file", func() error { _, err := Load(files[:1], Options{}); return err }, fileLimit},
		{"Load of a directory of two", func() error { _, err := Load([]string{dir}, Options{}); return err }, runLimit},
		{"OneOn", func() error { _, err := OneOn(files[0], "", Options{}); return err }, fileLimit},
		{"Pair of one file each", func() error { _, _, err := Pair(files[:1], files[1:], Options{}); return err }, runLimit},
	} {
		debug.SetMemoryLimit(1 << 40)
		if err := tc.load(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("%s: soft memory limit %d MiB, want %d MiB", tc.name, got>>20, tc.want>>20)
		}
	}
}

// TestLimitFor: the limit is the budget while what is live fits in it,
// and a quarter above what is live once that passes it (never under what
// is live, where the collector would run back to back).
func TestLimitFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct{ live, budget, want int64 }{
		{0, 350 * mib, 350 * mib},
		{240 * mib, 350 * mib, 350 * mib},
		{350 * mib, 350 * mib, 350 * mib},
		{400 * mib, 350 * mib, 500 * mib},
		{600 * mib, 400 * mib, 750 * mib},
	} {
		if got := limitFor(tc.live, tc.budget); got != tc.want {
			t.Errorf("limitFor(%d MiB live, %d MiB budget) = %d MiB, want %d MiB", tc.live/mib, tc.budget/mib, got/mib, tc.want/mib)
		}
	}
}

// TestGCPercentFor: GOGC 400 while five times what is live stays under
// four fifths of the budget, 100 once what is live nears it, and in
// between the percent that makes the next collection's goal four fifths
// of the budget.
func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live, budget int64
		want         int
	}{
		{0, 200 * mib, 400},
		{10 * mib, 200 * mib, 400},
		{32 * mib, 200 * mib, 400},  // 5 × 32 = 160 = 4/5 of 200
		{40 * mib, 200 * mib, 300},  // 160 / 40 = 4×
		{64 * mib, 200 * mib, 150},  // 160 / 64 = 2.5×
		{80 * mib, 200 * mib, 100},  // 160 / 80 = 2×
		{150 * mib, 200 * mib, 100}, // near the budget: Go's default
		{600 * mib, 380 * mib, 100}, // past it
	} {
		if got := gcPercentFor(tc.live, tc.budget); got != tc.want {
			t.Errorf("gcPercentFor(%d MiB live, %d MiB budget) = %d, want %d", tc.live/mib, tc.budget/mib, got, tc.want)
		}
	}
}
