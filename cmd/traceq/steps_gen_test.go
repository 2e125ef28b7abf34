package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/traceq/traceq/internal/gen"
)

// TestBreakdownGeneratedRanks runs breakdown on a directory of generated
// rank files: one group per (rank, step kind), each equal to the sums of
// the generator's exact per-step figures, and step_stats matching the
// per-step spans (an odd number of decode steps: p50 is the middle one).
func TestBreakdownGeneratedRanks(t *testing.T) {
	dir := t.TempDir()
	cfg := gen.Config{Ranks: 2, Steps: 12, DecodeEvery: 4, MixedEvery: 5, Layers: 2, DropCorrEvery: 9, Seed: 11}
	exps := make([]*gen.Expected, cfg.Ranks)
	for r := range exps {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("rank%d.json", r)))
		if err != nil {
			t.Fatal(err)
		}
		if exps[r], err = gen.Write(f, cfg, r); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := stepsRun(t, "breakdown", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Groups []struct {
			Rank      *int   `json:"rank"`
			Device    int32  `json:"device"`
			StepKind  string `json:"step_kind"`
			Steps     int    `json:"steps"`
			KernelNS  int64  `json:"kernel_ns"`
			BusyNS    int64  `json:"busy_ns"`
			SpanNS    int64  `json:"span_ns"`
			StepStats struct {
				Count  int `json:"count"`
				SpanNS struct {
					Min int64   `json:"min"`
					P50 float64 `json:"p50"`
					Max int64   `json:"max"`
				} `json:"span_ns"`
			} `json:"step_stats"`
			Categories []struct {
				Category string `json:"category"`
				KernelNS int64  `json:"kernel_ns"`
			} `json:"categories"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, g := range doc.Groups {
		if g.Rank == nil {
			t.Fatalf("group without rank: %+v", g)
		}
		e := exps[*g.Rank]
		var kernel, busy, span int64
		var spans []int64
		cats := map[string]int64{}
		for _, s := range e.Steps {
			if s.Kind != g.StepKind {
				continue
			}
			kernel += s.KernelNS
			busy += s.BusyNS
			span += s.SpanNS
			spans = append(spans, s.SpanNS)
			for c, ns := range s.ByCat {
				cats[c] += ns
			}
		}
		slices.Sort(spans)
		if g.Device != e.Device || g.Steps != len(spans) || g.KernelNS != kernel || g.BusyNS != busy || g.SpanNS != span {
			t.Errorf("rank %d %s: device %d steps %d kernel %d busy %d span %d; want %d %d %d %d %d", *g.Rank, g.StepKind,
				g.Device, g.Steps, g.KernelNS, g.BusyNS, g.SpanNS, e.Device, len(spans), kernel, busy, span)
		}
		for _, c := range g.Categories {
			if cats[c.Category] != c.KernelNS {
				t.Errorf("rank %d %s %s: %d ns, want %d", *g.Rank, g.StepKind, c.Category, c.KernelNS, cats[c.Category])
			}
			delete(cats, c.Category)
		}
		if len(cats) != 0 {
			t.Errorf("rank %d %s: categories missing: %v", *g.Rank, g.StepKind, cats)
		}
		ss := g.StepStats
		if ss.Count != len(spans) || ss.SpanNS.Min != spans[0] || ss.SpanNS.Max != spans[len(spans)-1] {
			t.Errorf("rank %d %s: step_stats %+v, spans %v", *g.Rank, g.StepKind, ss, spans)
		}
		if len(spans)%2 == 1 && ss.SpanNS.P50 != float64(spans[len(spans)/2]) {
			t.Errorf("rank %d %s: p50 %v, want %d", *g.Rank, g.StepKind, ss.SpanNS.P50, spans[len(spans)/2])
		}
		seen++
	}
	// Steps 0, 4, 8 prefill; 9 mixed (4 is prefill); the other 8 decode.
	if seen != 6 {
		t.Errorf("%d groups, want 3 kinds × 2 ranks", seen)
	}
	code, out, _ = stepsRun(t, "breakdown", "--format", "json", "--kind", "decode", dir)
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Groups) != 2 || doc.Groups[0].Steps != 8 {
		t.Errorf("--kind decode: exit %d, %v, %+v", code, err, doc.Groups)
	}
}
