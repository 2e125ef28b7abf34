package chart

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/golden"
)

// The diff chart draws one bar per kind total and category, as long as the
// change in time per step, in the diff's order; its SVG is stable.
func TestDiffChart(t *testing.T) {
	d := analyze.Compare(load(t, "hta_ns_resolution.json.gz"), load(t, "kineto2021_resnet50.json.gz"), analyze.Options{})
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
