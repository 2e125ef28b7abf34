package chart

import (
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
)

// sharesGroup is a group of run, rank and kind holding ns of gemm.
func sharesGroup(run, path string, number *int, pid int64, dev int32, kind step.Class, steps int, ns int64) analyze.Group {
	return analyze.Group{Rank: rank(0, run, path, number, pid), Device: dev, Class: kind, Steps: steps, KernelNS: ns,
		Categories: []analyze.CategoryStat{{Category: classify.MustCategory("gemm/cublas"), KernelNS: ns}}}
}

func TestGroupLabels(t *testing.T) {
	r0, r1 := 0, 1
	for _, tc := range []struct {
		name string
		gs   []analyze.Group
		want []string
	}{
		{"two runs of two ranks", []analyze.Group{
			sharesGroup("runA", "runA/rank0.json", &r0, 10, 0, decode, 40, 1),
			sharesGroup("runA", "runA/rank1.json", &r1, 11, 1, decode, 40, 1),
			sharesGroup("runB", "runB/rank0.json", &r0, 20, 0, decode, 38, 1),
			sharesGroup("runB", "runB/rank1.json", &r1, 21, 1, prefill, 2, 1),
		}, []string{"runA · rank 0 · decode ×40", "runA · rank 1 · decode ×40", "runB · rank 0 · decode ×38", "runB · rank 1 · prefill ×2"}},
		{"one rank, two devices", []analyze.Group{
			sharesGroup("a", "a.json", nil, 1, 0, whole, 0, 1),
			sharesGroup("a", "a.json", nil, 1, 1, whole, 0, 1),
		}, []string{"dev 0 · whole trace", "dev 1 · whole trace"}},
		{"two files without ranks", []analyze.Group{
			sharesGroup("d", "d/x.json", nil, 1, 0, generic, 3, 1),
			sharesGroup("d", "d/y.json", nil, 1, 0, generic, 3, 1),
			sharesGroup("d", "d/y.json", nil, 1, 0, outside, 0, 1),
		}, []string{"x.json · step ×3", "y.json · step ×3", "y.json · outside steps"}},
		{"two processes of one export", []analyze.Group{
			func() analyze.Group {
				g := sharesGroup("e", "e.sqlite", nil, 7, 0, whole, 0, 1)
				g.Rank.Proc = 0
				return g
			}(),
			func() analyze.Group {
				g := sharesGroup("e", "e.sqlite", nil, 8, 1, whole, 0, 1)
				g.Rank.Proc = 1
				return g
			}(),
		}, []string{"pid 7 · whole trace", "pid 8 · whole trace"}},
		{"no runs: the paths", []analyze.Group{
			sharesGroup("", "p/a.json", nil, 1, 0, whole, 0, 1),
			sharesGroup("", "q/a.json", nil, 1, 0, whole, 0, 1),
		}, []string{"p/a.json · whole trace", "q/a.json · whole trace"}},
	} {
		if got := GroupLabels(tc.gs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestLeaveOutUnattributed: a run's groups outside any step go when they
// hold under 5% of its kernel time together, and stay otherwise; the chart
// says what went.
func TestLeaveOutUnattributed(t *testing.T) {
	r0, r1 := 0, 1
	gs := []analyze.Group{
		sharesGroup("a", "a/rank0.json", &r0, 1, 0, decode, 10, 4_800_000),
		sharesGroup("a", "a/rank0.json", &r0, 1, 0, outside, 0, 100_000),
		sharesGroup("a", "a/rank1.json", &r1, 2, 1, decode, 10, 4_800_000),
		sharesGroup("a", "a/rank1.json", &r1, 2, 1, outside, 0, 300_000), // a: 0.4 of 10 ms, 4%
		sharesGroup("b", "b.json", nil, 3, 0, decode, 10, 9_500_000),
		sharesGroup("b", "b.json", nil, 3, 0, outside, 0, 500_000), // b: exactly 5%: kept
	}
	kept, note := LeaveOutUnattributed(gs)
	if want := []analyze.Group{gs[0], gs[2], gs[4], gs[5]}; len(kept) != len(want) || kept[1].Rank.Path != "a/rank1.json" || kept[3].Class != outside {
		t.Errorf("kept %d groups: %+v", len(kept), kept)
	}
	if want := "2 groups outside any step, 0.400 ms of kernel time (4.0% of the run's)"; note != want {
		t.Errorf("note %q, want %q", note, want)
	}
	if _, note := LeaveOutUnattributed(gs[4:]); note != "" {
		t.Errorf("5%% left out: %q", note)
	}
	f, err := sharesFigure(gs, SharesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.data.rects) != 4 || !strings.Contains(f.p.X.Label.Text, "not drawn: "+note+"; --unattributed draws them") {
		t.Errorf("%d bars, axis %q", len(f.data.rects), f.p.X.Label.Text)
	}
	if f, _ := sharesFigure(gs, SharesOptions{Unattributed: true}); len(f.data.rects) != 6 || strings.Contains(f.p.X.Label.Text, "not drawn") {
		t.Errorf("--unattributed: %d bars, axis %q", len(f.data.rects), f.p.X.Label.Text)
	}
}
