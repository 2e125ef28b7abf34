package chart

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
)

// stepRows makes steps of the given kinds, in order, step i taking
// (i+1) µs of gemm.
func stepRows(kinds ...step.Kind) []analyze.StepRow {
	var rows []analyze.StepRow
	for i, k := range kinds {
		ns := int64(1000 * (i + 1))
		rows = append(rows, analyze.StepRow{Step: step.Step{Index: i, Kind: k}, KernelNS: ns, SpanNS: 2 * ns,
			Categories: []analyze.StepCat{{Category: classify.MustCategory("gemm/cublas"), KernelNS: ns}}})
	}
	return rows
}

// TestStepBarsOneKindPerBin: with bins of 4, prefill and decode steps
// interleaved never share a bar.
func TestStepBarsOneKindPerBin(t *testing.T) {
	var kinds []step.Kind
	for i := range 200 {
		k := step.Decode
		if i%9 == 0 {
			k = step.Prefill
		}
		kinds = append(kinds, k)
	}
	rows := stepRows(kinds...)
	bars, bin := StepBars(rows, 50)
	if bin != 4 {
		t.Fatalf("bin %d, want 4", bin)
	}
	steps := 0
	for _, b := range bars {
		for _, r := range rows[b.First : b.Last+1] {
			if r.Step.Kind != b.Kind {
				t.Fatalf("bar %d–%d (%s) holds step %d (%s)", b.First, b.Last, b.Kind, r.Step.Index, r.Step.Kind)
			}
		}
		if b.N != b.Last-b.First+1 || b.N > bin {
			t.Errorf("bar %+v", b)
		}
		steps += b.N
	}
	if steps != len(rows) {
		t.Errorf("bars cover %d steps, want %d", steps, len(rows))
	}
}

// TestStepsChartDrawsOneKind: 3 prefill and 40 decode steps draw the 40
// decode steps, and the chart says so.
func TestStepsChartDrawsOneKind(t *testing.T) {
	kinds := []step.Kind{step.Prefill}
	for range 20 {
		kinds = append(kinds, step.Decode)
	}
	kinds = append(kinds, step.Prefill, step.Prefill)
	for range 20 {
		kinds = append(kinds, step.Decode)
	}
	rows := stepRows(kinds...)
	for name, fig := range map[string]func([]analyze.StepRow, Options) (*figure, error){"steps": stepsFigure, "hist": histFigure} {
		f, err := fig(rows, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(f.p.Title.Text, "decode step") {
			t.Errorf("%s: title %q does not name the kind", name, f.p.Title.Text)
		}
		if want := "the most common kind, 40 of 43 steps; not drawn: 3 prefill"; !strings.Contains(f.p.X.Label.Text, want) {
			t.Errorf("%s: axis %q lacks %q", name, f.p.X.Label.Text, want)
		}
	}
	f, _ := stepsFigure(rows, Options{})
	if len(f.data.marks) != 40 {
		t.Errorf("%d bars, want the 40 decode steps", len(f.data.marks))
	}
	// Bar 20 is step 23, the first decode after the two prefills (21,
	// 22): a span of 2 × 24 µs.
	if got := f.data.marks[20].y; math.Abs(got-0.048) > 1e-12 {
		t.Errorf("bar 20 span %.6f ms, want 0.048 (step 23)", got)
	}
}

// TestHistOutlierVisible: one step of 50 ms among 1000 of about 10 ms is a
// bar at least minBarFrac of the tallest, with its count printed.
func TestHistOutlierVisible(t *testing.T) {
	var rows []analyze.StepRow
	for i := range 1000 {
		rows = append(rows, analyze.StepRow{Step: step.Step{Index: i, Kind: step.Decode}, SpanNS: 10_000_000 + int64(i%10)*1000})
	}
	rows = append(rows, analyze.StepRow{Step: step.Step{Index: 1000, Kind: step.Decode}, SpanNS: 50_000_000})
	f, err := histFigure(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tallest float64
	for _, r := range f.data.rects {
		tallest = max(tallest, r.y1)
	}
	last := f.data.rects[len(f.data.rects)-1]
	if tallest != 1000 || last.y1 < minBarFrac*tallest || last.text != "1" || !last.textAbove {
		t.Errorf("outlier bar %+v (tallest %v): want at least %v tall, count 1 above", last, tallest, minBarFrac*tallest)
	}
	for _, r := range f.data.rects[1 : len(f.data.rects)-1] {
		if r.y1 != 0 || r.text != "" {
			t.Errorf("empty bin drawn %+v", r)
		}
	}
}

// TestLabelRows: labels of lines at one x stack on rows 0, 1, 2; far
// apart they share row 0; at the right edge they turn left; and on many
// lines no two labels of a row overlap or leave [min, max].
func TestLabelRows(t *testing.T) {
	w := []vg.Length{15, 15, 15}
	if rows, _ := labelRows([]vg.Length{100, 100, 100}, w, 0, 500, 2); !slices.Equal(rows, []int{0, 1, 2}) {
		t.Errorf("same x: rows %v", rows)
	}
	if rows, _ := labelRows([]vg.Length{100, 200, 300}, w, 0, 500, 2); !slices.Equal(rows, []int{0, 0, 0}) {
		t.Errorf("far apart: rows %v", rows)
	}
	if rows, left := labelRows([]vg.Length{100, 495}, w[:2], 0, 500, 2); !slices.Equal(left, []bool{false, true}) || rows[1] != 0 {
		t.Errorf("at the edge: rows %v left %v", rows, left)
	}
	// Centred marks of close kernels: the 2nd and 3rd overlap the 1st,
	// the 4th is clear of all.
	if rows := packRows([][2]vg.Length{{100, 106}, {103, 109}, {104, 110}, {120, 126}}, 2); !slices.Equal(rows, []int{0, 1, 2, 0}) {
		t.Errorf("packRows: %v", rows)
	}
	var xs, ws []vg.Length
	for i := range 200 {
		xs = append(xs, vg.Length((i*7919)%480+10))
		ws = append(ws, vg.Length(10+(i*31)%40))
	}
	rows, left := labelRows(xs, ws, 0, 500, 2)
	type ext struct{ x0, x1 vg.Length }
	byRow := map[int][]ext{}
	for i := range xs {
		e := ext{xs[i] + 2, xs[i] + 2 + ws[i]}
		if left[i] {
			e = ext{xs[i] - 2 - ws[i], xs[i] - 2}
		}
		if e.x0 < 0 || e.x1 > 500 {
			t.Errorf("label %d at %v leaves the plot", i, e)
		}
		for _, o := range byRow[rows[i]] {
			if e.x0 < o.x1 && o.x0 < e.x1 {
				t.Fatalf("label %d %v overlaps %v on row %d", i, e, o, rows[i])
			}
		}
		byRow[rows[i]] = append(byRow[rows[i]], e)
	}
}

// TestTimelineWindow draws 5 to 7 ms of dlrm8 rank 0's step: the axis
// keeps the step's zero, the title says the window, and every rectangle
// lies inside it.
func TestTimelineWindow(t *testing.T) {
	in := load(t, "dlrm8/rank0.json.gz")[0]
	whole, err := StepTrack(tableOf(t, in), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := whole.Between(5_000_000, 7_000_000)
	if err != nil {
		t.Fatal(err)
	}
	f, err := timelineFigure(tl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.p.X.Min != 5 || f.p.X.Max != 7 {
		t.Errorf("axis %v to %v ms, want 5 to 7", f.p.X.Min, f.p.X.Max)
	}
	if !strings.Contains(f.p.Title.Text, ", 5.000–7.000 ms") || !strings.Contains(f.p.X.Label.Text, "window 5.000 to 7.000 ms") {
		t.Errorf("title %q, axis %q: the window is not named", f.p.Title.Text, f.p.X.Label.Text)
	}
	for _, r := range f.data.rects {
		if r.x0 < 5-1e-9 || r.x1 > 7+1e-9 {
			t.Errorf("rectangle %v–%v ms outside the window", r.x0, r.x1)
		}
	}
}

// TestTimelineLongest: the key names the longest instance of each of the
// k names with the longest instances, and the chart numbers each at its
// middle.
func TestTimelineLongest(t *testing.T) {
	gemm, comm := classify.MustCategory("gemm/cublas"), classify.MustCategory("communication/allreduce")
	tl := &Track{Start: 1000, End: 2_001_000, Origin: 1000,
		Lanes: []Lane{{Stream: 7}, {Stream: 9}},
		Spans: []Span{
			{Lane: 0, Start: 1000, End: 301_000, Category: gemm, Name: "void g<1>(int)", Label: "g<1>"},
			{Lane: 0, Start: 400_000, End: 900_000, Category: gemm, Name: "void g<1>(int)", Label: "g<1>"}, // g's longest: 500 µs
			{Lane: 0, Start: 1_000_000, End: 1_100_000, Category: gemm, Name: "void g<2>(int)", Label: "g<2>"},
			{Lane: 1, Start: 1000, End: 2_001_000, Category: comm, Name: "nccl", Label: "nccl"},
		}}
	f, err := timelineFigure(tl, Options{Longest: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"longest GPU activities (numbered on the chart, each name once):", "1   2.000 ms   nccl", "2   0.500 ms   g<1>"}
	if !slices.Equal(f.caption, want) {
		t.Errorf("key %q, want %q", f.caption, want)
	}
	if len(f.data.texts) != 2 || f.data.texts[0].x != 1 || f.data.texts[0].y != 0 || f.data.texts[1].x != 0.649 || f.data.texts[1].y != 1 {
		t.Errorf("numbers %+v: want 1 at 1 ms on lane 1 (y 0), 2 at 0.649 ms on lane 0 (y 1)", f.data.texts)
	}
	if f, _ := timelineFigure(tl, Options{Longest: -1}); len(f.caption) != 0 || len(f.data.texts) != 0 {
		t.Errorf("Longest -1 still numbers kernels: %q", f.caption)
	}
}
