package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/internal/golden"
	"github.com/traceq/traceq/labels"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// charts draws every chart kind from small real traces: hta_ns_resolution
// (5 ProfilerStep steps, one stream) and the 8-rank dlrm8 set (one step
// per rank, NCCL on its own stream).
func charts(t *testing.T) map[string]func(io.Writer, string) error {
	hta := load(t, "hta_ns_resolution.json.gz")
	dlrm := load(t, "dlrm8/rank0.json.gz", "dlrm8/rank1.json.gz", "dlrm8/rank2.json.gz", "dlrm8/rank3.json.gz",
		"dlrm8/rank4.json.gz", "dlrm8/rank5.json.gz", "dlrm8/rank6.json.gz", "dlrm8/rank7.json.gz")
	htaTable := tableOf(t, hta...)
	st := analyze.Breakdown(htaTable, analyze.Options{}).Steps
	dlrmTable := tableOf(t, dlrm...)
	rd := analyze.Breakdown(dlrmTable, analyze.Options{})
	ks := analyze.Kernels(htaTable, analyze.KernelOptions{MemOps: true, Limit: 12})
	names := render.LabelsOf(htaTable.Names())
	tl, err := StepTrack(tableOf(t, dlrm[0]), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := StepSeries(st, 0, step.Filter{})
	return map[string]func(io.Writer, string) error{
		"steps": func(w io.Writer, f string) error {
			return Steps(w, rows, Options{Format: f, Title: "hta_ns_resolution"})
		},
		"hist": func(w io.Writer, f string) error {
			return Hist(w, rows, Options{Format: f, Title: "hta_ns_resolution"})
		},
		"top": func(w io.Writer, f string) error {
			return Top(w, ks, names, Options{Format: f, Title: "hta_ns_resolution"})
		},
		"shares": func(w io.Writer, f string) error {
			return Shares(w, rd.Groups, SharesOptions{Options: Options{Format: f, Title: "dlrm8"}})
		},
		"timeline": func(w io.Writer, f string) error { return Timeline(w, tl, Options{Format: f, Title: "dlrm8 rank 0"}) },
		"collectives": func(w io.Writer, f string) error {
			return Collectives(w, collectives.Match(dlrmTable, collectives.Options{}), Options{Format: f, Title: "dlrm8"})
		},
	}
}

// TestGolden checks each chart's SVG against its golden file, draws it a
// second time to check the bytes do not change, and parses it as XML.
func TestGolden(t *testing.T) {
	cs := charts(t)
	for _, kind := range []string{"steps", "shares", "top", "hist", "timeline", "collectives"} {
		t.Run(kind, func(t *testing.T) {
			var a, b bytes.Buffer
			if err := cs[kind](&a, "svg"); err != nil {
				t.Fatal(err)
			}
			if err := cs[kind](&b, "svg"); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("two renderings differ")
			}
			golden.Check(t, filepath.Join("testdata", kind+".golden.svg"), a.Bytes())
			texts := checkXML(t, a.Bytes())
			if !slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, " — ") }) {
				t.Errorf("no title naming the trace among %q", texts)
			}
			if kind == "collectives" {
				if !slices.Contains(texts, "waiting") || !slices.Contains(texts, "rank 7 (straggler)") {
					t.Errorf("no waiting legend or straggler label: %q", texts)
				}
			} else if kind != "hist" && !slices.Contains(texts, "elementwise") {
				t.Errorf("legend lacks the elementwise category: %q", texts)
			}
		})
	}
}

// checkXML parses svg with encoding/xml and returns its text elements.
func checkXML(t *testing.T, svg []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var texts []string
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("svg is not well-formed XML: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			inText = x.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(x))
			}
		}
	}
	if len(texts) == 0 {
		t.Fatal("svg has no text")
	}
	return texts
}

// TestPNG smoke-tests PNG output: it decodes and has the figure's size
// at 144 dpi (raster bytes are not golden: they vary by architecture).
func TestPNG(t *testing.T) {
	cs := charts(t)
	var buf bytes.Buffer
	if err := cs["top"](&buf, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w != 10*144 {
		t.Errorf("png width %d, want %d (10 in at 144 dpi)", w, 10*144)
	}
	if err := cs["top"](io.Discard, "pdf"); err == nil {
		t.Error("format pdf accepted")
	}
}

// barTotals sums the heights of the rectangles of each bar position (x
// centre), in ms.
func barTotals(l *layer) map[float64]float64 {
	out := map[float64]float64{}
	for _, r := range l.rects {
		out[math.Round((r.x0+r.x1)/2*1000)/1000] += r.y1 - r.y0
	}
	return out
}

// TestStepBarsMatchAnalyze checks that each stacked bar of the steps chart
// is as tall as the step's kernel time, summed independently here from the
// trace's activities and the step assignment.
func TestStepBarsMatchAnalyze(t *testing.T) {
	in := load(t, "hta_ns_resolution.json.gz")[0]
	want := map[int32]int64{}
	for i, a := range in.Trace.Activities {
		if s := in.Steps.Of[i]; s >= 0 {
			want[s] += a.Dur
		}
	}
	rows := StepSeries(breakdownOf(t, in).Steps, 0, step.Filter{})
	if len(rows) != 5 {
		t.Fatalf("%d step rows, want 5", len(rows))
	}
	f, err := stepsFigure(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := barTotals(f.data)
	for i, row := range rows {
		w := float64(want[int32(row.Step.Index)]) / 1e6
		if math.Abs(got[float64(i)]-w) > 1e-9 {
			t.Errorf("bar %d: %.6f ms, want %.6f ms", i, got[float64(i)], w)
		}
		if math.Abs(f.data.marks[i].y-float64(row.SpanNS)/1e6) > 1e-9 {
			t.Errorf("bar %d: span mark at %.6f ms, want %.6f", i, f.data.marks[i].y, float64(row.SpanNS)/1e6)
		}
	}
}

// TestStepBarsBinning builds 130 steps by hand: 60 bars at most means
// bins of 3 (44 bars, the last of one step), each the mean of its steps.
func TestStepBarsBinning(t *testing.T) {
	var rows []analyze.StepRow
	for i := range 130 {
		rows = append(rows, analyze.StepRow{Step: step.Step{Index: i, Kind: step.Decode},
			KernelNS: int64(1000 * (i + 1)), SpanNS: int64(2000 * (i + 1)),
			Categories: []analyze.StepCat{{Category: classify.MustCategory("gemm/cublas"), KernelNS: int64(600 * (i + 1))},
				{Category: classify.MustCategory("communication/allreduce"), KernelNS: int64(400 * (i + 1))}}})
	}
	bars, bin := StepBars(rows, MaxStepBars)
	if bin != 3 || len(bars) != 44 {
		t.Fatalf("bin %d, %d bars; want 3, 44", bin, len(bars))
	}
	// bar 10 covers steps 30, 31, 32: kernel 1000*(31+32+33)
	b := bars[10]
	if b.First != 30 || b.Last != 32 || b.N != 3 || b.KernelNS != 96000 || b.SpanNS != 192000 {
		t.Errorf("bar 10 = %+v", b)
	}
	if b.ByTop[classify.GEMM] != 57600 || b.ByTop[classify.Communication] != 38400 {
		t.Errorf("bar 10 by top: gemm %d comm %d", b.ByTop[classify.GEMM], b.ByTop[classify.Communication])
	}
	if last := bars[43]; last.N != 1 || last.First != 129 {
		t.Errorf("last bar %+v", last)
	}
	f, err := stepsFigure(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Drawn as the mean per step: 96000 ns / 3 = 0.032 ms.
	if got := barTotals(f.data)[10]; math.Abs(got-0.032) > 1e-12 {
		t.Errorf("bar 10 drawn %.6f ms, want 0.032", got)
	}
	if !strings.Contains(f.p.X.Label.Text, "130 steps in 44 bars") {
		t.Errorf("x label does not say the steps are binned: %q", f.p.X.Label.Text)
	}
}

// TestSharesMatchAnalyze checks the shares chart's segments: each bar
// sums to 100% and the communication segment of rank 0 is its share of
// kernel time, summed here from the classified activities.
func TestSharesMatchAnalyze(t *testing.T) {
	in := load(t, "dlrm8/rank0.json.gz")[0]
	cl := classify.Default()
	var comm, total int64
	for i, a := range in.Trace.Activities {
		if in.Steps.Of[i] < 0 {
			continue
		}
		total += a.Dur
		if a.Kind == trace.KindKernel && cl.Classify(in.Trace.Names[a.Name]).Top == classify.Communication {
			comm += a.Dur
		}
	}
	r := breakdownOf(t, in)
	var gs []analyze.Group
	for _, g := range r.Groups {
		if g.Class == generic {
			gs = append(gs, g)
		}
	}
	f, err := sharesFigure(gs, SharesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sum, red float64
	for _, rc := range f.data.rects {
		sum += rc.x1 - rc.x0
		if rc.fill == Colour(classify.Communication) {
			red += rc.x1 - rc.x0
		}
	}
	if math.Abs(sum-100) > 1e-9 {
		t.Errorf("segments sum to %.9f%%", sum)
	}
	if want := 100 * float64(comm) / float64(total); comm == 0 || math.Abs(red-want) > 1e-9 {
		t.Errorf("communication %.6f%%, want %.6f%%", red, want)
	}
}

// TestTopLabels checks the top chart's labels: those made over every
// kernel name of the input, clipped to labels.Width; rows without labels
// are labelled among themselves.
func TestTopLabels(t *testing.T) {
	ks := []analyze.KernelStat{
		{Name: "void k<Add>(int)", Dist: stats.Dist{Total: 3}},
		{Name: strings.Repeat("x", 100), Dist: stats.Dist{Total: 2}},
	}
	names := render.Labels{ks[0].Name: "k<Add>", ks[1].Name: strings.Repeat("x", 30) + "…NTA4"}
	f, err := topFigure(ks, names, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range f.p.Y.Tick.Marker.Ticks(0, 0) {
		got = append(got, tk.Label)
	}
	if want := []string{"k<Add>", strings.Repeat("x", 30) + "…NTA4"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
	ks = append(ks, analyze.KernelStat{Name: "void k<Mul>(int)", Dist: stats.Dist{Total: 1}})
	f, _ = topFigure(ks, nil, Options{})
	got = nil
	for _, tk := range f.p.Y.Tick.Marker.Ticks(0, 0) {
		got = append(got, tk.Label)
	}
	if want := []string{"k<Add>", strings.Repeat("x", labels.Width-1) + "…", "k<Mul>"}; !slices.Equal(got, want) {
		t.Errorf("labels without analysis %q, want %q", got, want)
	}
}

// TestHistBins checks the histogram's bins and percentile marks on spans
// chosen by hand.
func TestHistBins(t *testing.T) {
	spans := []int64{10e6, 11e6, 12e6, 13e6, 14e6, 15e6, 16e6, 17e6, 18e6, 40e6}
	var rows []analyze.StepRow
	for i, s := range spans {
		rows = append(rows, analyze.StepRow{Step: step.Step{Index: i, Kind: step.Decode}, SpanNS: s})
	}
	bins, _ := StepHist(rows)
	// ceil(sqrt(10)) = 4, raised to the minimum of 5 bins of 6 ms.
	if len(bins) != 5 || bins[0].Lo != 10e6 || bins[4].Hi != 40e6 {
		t.Fatalf("bins %+v", bins)
	}
	counts := []int{}
	for _, b := range bins {
		counts = append(counts, b.Count)
	}
	if !slices.Equal(counts, []int{6, 3, 0, 0, 1}) {
		t.Errorf("counts %v, want [6 3 0 0 1]", counts)
	}
	f, err := histFigure(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// p50 of 10..18,40 (numpy linear): 14.5; p90: 18 + 0.1*22 = 20.2;
	// p99: 18 + 0.91*22 = 38.02.
	want := []float64{14.5, 20.2, 38.02}
	for i, v := range f.data.vlines {
		if math.Abs(v.x-want[i]) > 1e-9 {
			t.Errorf("%s at %v ms, want %v", v.label, v.x, want[i])
		}
	}
	if !strings.Contains(f.p.Title.Text, "decode step time (10 steps)") {
		t.Errorf("title %q", f.p.Title.Text)
	}
}

// TestTimelineLanes checks the timeline of dlrm8 rank 0's step: one lane
// per stream the step used, NCCL kernels on their own lane, and every
// activity inside a drawn rectangle.
func TestTimelineLanes(t *testing.T) {
	in := load(t, "dlrm8/rank0.json.gz")[0]
	streams := map[int32]bool{}
	var ncclStream int32 = -2
	for i, a := range in.Trace.Activities {
		if in.Steps.Of[i] != 0 {
			continue
		}
		streams[a.Stream] = true
		if strings.Contains(in.Trace.Names[a.Name], "nccl") {
			ncclStream = a.Stream
		}
	}
	tl, err := StepTrack(tableOf(t, in), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Lanes) != len(streams) {
		t.Fatalf("%d lanes, want %d streams", len(tl.Lanes), len(streams))
	}
	f, err := timelineFigure(tl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ticks := f.p.Y.Tick.Marker.Ticks(0, 0)
	found := false
	for _, tk := range ticks {
		if tk.Label == "dev 0 · stream "+strconv.Itoa(int(ncclStream)) {
			found = true
		}
	}
	if !found {
		t.Errorf("no lane for the NCCL stream %d: %v", ncclStream, ticks)
	}
	for _, s := range tl.Spans {
		y := float64(len(tl.Lanes) - 1 - s.Lane)
		x0, x1 := float64(s.Start-tl.Start)/1e6, float64(s.End-tl.Start)/1e6
		if !slices.ContainsFunc(f.data.rects, func(r rect) bool {
			return r.y0 < y && y < r.y1 && r.x0 <= x0+1e-12 && x1 <= r.x1+1e-12
		}) {
			t.Errorf("activity %s [%v, %v] ms on lane %d is not drawn", s.Name, x0, x1, s.Lane)
			break
		}
	}
	if _, err := StepTrack(tableOf(t, in), 0, 1); err == nil {
		t.Error("step index 1 of a one-step trace accepted")
	}
}

// TestColoursFixed checks that every top-level category has its own
// colour.
func TestColoursFixed(t *testing.T) {
	seen := map[string]classify.Top{}
	for _, top := range classify.Tops() {
		c := Colour(top)
		k := strconv.Itoa(int(c.R)) + "," + strconv.Itoa(int(c.G)) + "," + strconv.Itoa(int(c.B))
		if prev, ok := seen[k]; ok {
			t.Errorf("%s and %s share colour %s", prev, top, k)
		}
		seen[k] = top
	}
}

func TestEmpty(t *testing.T) {
	if err := Steps(io.Discard, nil, Options{}); err == nil {
		t.Error("steps: no error without steps")
	}
	if err := Hist(io.Discard, nil, Options{}); err == nil {
		t.Error("hist: no error without steps")
	}
	if err := Top(io.Discard, nil, nil, Options{}); err == nil {
		t.Error("top: no error without kernels")
	}
	if err := Shares(io.Discard, nil, SharesOptions{}); err == nil {
		t.Error("shares: no error without groups")
	}
	if err := Timeline(io.Discard, &Track{}, Options{}); err == nil {
		t.Error("timeline: no error without activities")
	}
}

// TestTimelineCoverage builds a lane too busy to draw kernel by kernel:
// 1600 kernels of 250 ns, two per 1 µs column, gemm in the first half of
// the 800 µs span and communication in the second. Coverage mode draws
// two merged runs of columns, half the lane tall (busy 500 of 1000 ns).
func TestTimelineCoverage(t *testing.T) {
	tl := &Track{Start: 0, End: 800_000, Lanes: []Lane{{Device: 0, Stream: 7}}}
	for i := range 800 {
		cat := classify.MustCategory("gemm/cublas")
		if i >= 400 {
			cat = classify.MustCategory("communication/allreduce")
		}
		for _, off := range []trace.Time{0, 500} {
			s := trace.Time(i)*1000 + off
			tl.Spans = append(tl.Spans, Span{Lane: 0, Start: s, End: s + 250, Category: cat})
		}
	}
	rects, coverage := timelineRects(tl, 1)
	if !coverage {
		t.Fatalf("exact mode with %d rectangles", len(rects))
	}
	want := []rect{
		{x0: 0, x1: 0.4, y0: -0.4, y1: 0, fill: Colour(classify.GEMM)},
		{x0: 0.4, x1: 0.8, y0: -0.4, y1: 0, fill: Colour(classify.Communication)},
	}
	if len(rects) != len(want) {
		t.Fatalf("%d rectangles, want %d: %+v", len(rects), len(want), rects[:min(len(rects), 4)])
	}
	for i, r := range rects {
		w := want[i]
		if math.Abs(r.x0-w.x0) > 1e-12 || math.Abs(r.x1-w.x1) > 1e-12 || math.Abs(r.y0-w.y0) > 1e-12 || math.Abs(r.y1-w.y1) > 1e-12 || r.fill != w.fill {
			t.Errorf("rect %d = %+v, want %+v", i, r, w)
		}
	}
	// Fewer kernels: one rectangle each, exactly where they ran.
	tl.Spans = tl.Spans[:10]
	rects, coverage = timelineRects(tl, 1)
	if coverage || len(rects) != 10 || rects[1].x0 != 0.0005 || rects[1].x1 != 0.00075 {
		t.Errorf("exact mode: coverage %v, %d rects, second %+v", coverage, len(rects), rects[1])
	}
}

// TestCollectivesBars checks that each rank's bar is its transfer then its
// wait, as the analysis has them, the straggler's label says so, and a
// trace without collectives is refused.
func TestCollectivesBars(t *testing.T) {
	dlrm := load(t, "dlrm8/rank0.json.gz", "dlrm8/rank1.json.gz", "dlrm8/rank2.json.gz", "dlrm8/rank3.json.gz",
		"dlrm8/rank4.json.gz", "dlrm8/rank5.json.gz", "dlrm8/rank6.json.gz", "dlrm8/rank7.json.gz")
	ct := collectives.Match(tableOf(t, dlrm...), collectives.Options{})
	k := ct.PerClass()
	if len(k) != 1 || len(k[0].Ranks) != 8 || k[0].Straggler == nil {
		t.Fatalf("kinds = %+v", k)
	}
	f, err := collectivesFigure(ct, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.data.rects) != 16 {
		t.Fatalf("%d rects, want 16", len(f.data.rects))
	}
	for i, r := range k[0].Ranks {
		tr, wt := f.data.rects[2*i], f.data.rects[2*i+1]
		var transfer, wait int64
		for _, o := range ct.Ops {
			transfer += o.Ranks[i].TransferNS
			wait += o.Ranks[i].WaitNS
		}
		if math.Abs(tr.x1-float64(transfer)/1e6) > 1e-12 || tr.x0 != 0 || math.Abs(wt.x1-wt.x0-float64(wait)/1e6) > 1e-12 ||
			wt.x0 != tr.x1 || tr.y0 != float64(7-i)-0.36 {
			t.Errorf("rank %d: bars %+v %+v, want transfer %d wait %d", r.Index, tr, wt, transfer, wait)
		}
	}
	if _, err := collectivesFigure(collectives.Match(tableOf(t, load(t, "hta_ns_resolution.json.gz")...), collectives.Options{}), Options{}); err == nil {
		t.Error("no collectives: no error")
	}
}
