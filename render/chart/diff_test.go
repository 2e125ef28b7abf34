package chart

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/internal/golden"
	"github.com/traceq/traceq/step"
)

// The diff chart draws one bar per kind total and category, as long as the
// change in time per step, in the diff's order; its SVG is stable.
func TestDiffChart(t *testing.T) {
	d := analyze.Compare(tableOf(t, load(t, "hta_ns_resolution.json.gz")...), tableOf(t, load(t, "kineto2021_resnet50.json.gz")...), analyze.Options{})
	f, err := diffFigure(d, Options{Title: "hta → kineto2021"})
	if err != nil {
		t.Fatal(err)
	}
	k := d.Kinds[0]
	want := []analyze.CategoryDiff{k.Total}
	want = append(want, k.Categories...)
	rects := f.data.rects
	if len(rects) != len(want) {
		t.Fatalf("%d bars, want %d", len(rects), len(want))
	}
	for i, r := range rects {
		v := float64(want[i].DeltaNS) / 1e6
		if r.x0 != math.Min(0, v) || r.x1 != math.Max(0, v) {
			t.Errorf("bar %d (%s): [%v, %v], want 0 to %v", i, want[i].Category, r.x0, r.x1, v)
		}
		if i > 0 && r.y0 >= rects[i-1].y0 {
			t.Errorf("bar %d is not below bar %d", i, i-1)
		}
		if i > 0 && r.fill != Colour(want[i].Category.Top) {
			t.Errorf("bar %d (%s) has colour %v, want %v", i, want[i].Category, r.fill, Colour(want[i].Category.Top))
		}
	}
	if len(k.Categories) < 5 || k.Categories[0].Category.String() != "gemm/cudnn_conv" || k.Categories[0].DeltaNS <= 0 {
		t.Errorf("first category %+v: want cudnn convolutions to grow most", k.Categories[0])
	}
	var a, b bytes.Buffer
	if err := Diff(&a, d, Options{Title: "hta → kineto2021"}); err != nil {
		t.Fatal(err)
	}
	if err := Diff(&b, d, Options{Title: "hta → kineto2021"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two renderings differ")
	}
	golden.Check(t, filepath.Join("testdata", "diff.golden.svg"), a.Bytes())
	texts := checkXML(t, a.Bytes())
	for _, s := range []string{"+22.135 ms (+61.1%)", "gemm", "total"} {
		if !slices.Contains(texts, s) {
			t.Errorf("chart lacks text %q", s)
		}
	}
	if _, err := diffFigure(&analyze.Diff{}, Options{}); err == nil {
		t.Error("an empty diff draws a chart")
	}
}

// A change of nothing is drawn as nothing: the axis spans at least
// MinAxisShare of the largest total time per step, and changes the diff
// calls noise or unchanged are pale and say so.
func TestDiffChartNoise(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	cat := func(c string, delta int64, change string) analyze.CategoryDiff {
		return analyze.CategoryDiff{Category: classify.MustCategory(c), BeforePerStepNS: 1_000_000, AfterPerStepNS: 1_000_000 + delta,
			DeltaNS: delta, DeltaPct: pct(float64(delta) / 1e4), Verdict: analyze.Verdict{Change: change}}
	}
	total := cat("gemm/cublas", 300, "unchanged")
	total.BeforePerStepNS, total.AfterPerStepNS = 20_000_000, 20_000_300 // 20 ms per step
	d := &analyze.Diff{Kinds: []analyze.KindDiff{{Class: decode, Total: total, Categories: []analyze.CategoryDiff{
		cat("gemm/cublas", 0, "unchanged"), cat("attention/fa2", -40_000, "noise"), cat("communication/allreduce", 200_000, "grew"),
	}}}}
	f, err := diffFigure(d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 5 % of 20.0003 ms: the axis runs to ±1.0 ms (× 1.1 left, × 1.45 right
	// for the labels), though the largest change is 0.2 ms.
	lim := MinAxisShare * 20.0003
	if x := f.p.X; math.Abs(x.Min+lim*1.1) > 1e-9 || math.Abs(x.Max-lim*1.45) > 1e-9 {
		t.Errorf("axis [%v, %v], want ±%v", x.Min, x.Max, lim)
	}
	rects := f.data.rects
	if len(rects) != 4 {
		t.Fatalf("%d bars", len(rects))
	}
	for i, want := range []struct {
		pale bool
		text string
	}{{true, "0.000 ms (0.0%) · unchanged"}, {true, "0.000 ms (0.0%) · unchanged"}, {true, "-0.040 ms (-4.0%) · noise"}, {false, "+0.200 ms (+20.0%)"}} {
		r := rects[i]
		base := palette[classify.Other]
		if i > 0 {
			base = Colour(d.Kinds[0].Categories[i-1].Category.Top)
		}
		if want.pale != (r.fill == pale(base)) || !want.pale && r.fill != base {
			t.Errorf("bar %d: fill %v, pale %v", i, r.fill, want.pale)
		}
		if r.text != want.text {
			t.Errorf("bar %d: %q, want %q", i, r.text, want.text)
		}
	}
	if rects[1].x0 != 0 || rects[1].x1 != 0 {
		t.Errorf("a zero change draws [%v, %v]", rects[1].x0, rects[1].x1)
	}
}

// Chart titles keep both ends of a long run name: runs of one job differ
// at the end (…-before, …-after).
func TestDiffTitle(t *testing.T) {
	for _, tc := range []struct {
		before, after, want string
	}{
		{"nsys2026.2.1_torchrun-2gpu-nccl-before", "nsys2026.2.1_torchrun-2gpu-nccl-after",
			"nsys2026.2.…-nccl-before → nsys2026.2.…u-nccl-after"},
		{"dlrm8", "dlrm8-fix", "dlrm8 → dlrm8-fix"},
	} {
		got := DiffTitle(&analyze.Diff{BeforeRun: tc.before, AfterRun: tc.after})
		if got != tc.want {
			t.Errorf("DiffTitle(%q, %q) = %q, want %q", tc.before, tc.after, got, tc.want)
		}
	}
	if got := ClipMiddle("abcdef", 5); got != "ab…ef" {
		t.Errorf("ClipMiddle(abcdef, 5) = %q, want ab…ef", got)
	}
}

// Each step kind is a panel of its own, the kind in its title, with its
// own axis: a prefill step's milliseconds do not squash a decode step's
// microseconds.
func TestDiffChartPanels(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	kind := func(c step.Class, perStep, delta int64) analyze.KindDiff {
		total := analyze.CategoryDiff{BeforePerStepNS: perStep, AfterPerStepNS: perStep + delta, DeltaNS: delta,
			DeltaPct: pct(float64(delta) / float64(perStep) * 100), Verdict: analyze.Verdict{Change: "grew"}}
		cat := total
		cat.Category = classify.MustCategory("gemm/cublas")
		return analyze.KindDiff{Class: c, Total: total, Categories: []analyze.CategoryDiff{cat}}
	}
	d := &analyze.Diff{Kinds: []analyze.KindDiff{kind(decode, 1_000_000, 20_000), kind(step.ClassOf(step.Prefill), 80_000_000, 4_000_000)}}
	f, err := diffFigure(d, Options{Title: "a → b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.below) != 1 || !strings.HasPrefix(f.p.Title.Text, "Decode steps — ") || !strings.HasPrefix(f.below[0].p.Title.Text, "Prefill steps — ") ||
		!strings.HasSuffix(f.below[0].p.Title.Text, " — a → b") {
		t.Fatalf("panels: %q, %d more", f.p.Title.Text, len(f.below))
	}
	// Each axis is its own kind's: ±5 % of 1.02 ms and of 84 ms.
	if got := f.p.X.Max; math.Abs(got-0.020*1.45) > 1e-9 && math.Abs(got-MinAxisShare*1.02*1.45) > 1e-9 {
		t.Errorf("decode axis to %v", got)
	}
	if got := f.below[0].p.X.Max; math.Abs(got-4*1.45) > 1e-9 && math.Abs(got-MinAxisShare*84*1.45) > 1e-9 {
		t.Errorf("prefill axis to %v", got)
	}
	if len(f.data.rects) != 2 || len(f.below[0].data.rects) != 2 {
		t.Errorf("bars %d, %d", len(f.data.rects), len(f.below[0].data.rects))
	}
	var buf bytes.Buffer
	if err := f.write(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	texts := checkXML(t, buf.Bytes())
	for _, s := range []string{"+0.020 ms (+2.0%)", "+4.000 ms (+5.0%)"} {
		if !slices.Contains(texts, s) {
			t.Errorf("chart lacks %q", s)
		}
	}
}
