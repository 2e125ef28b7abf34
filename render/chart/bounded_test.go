package chart

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/trace"
)

// maxFigureHeight bounds every figure: MaxRows rows of the tallest chart
// (shares, 0.32 in a row) and its title and axes: 20.5 in, 2952 px at
// 144 dpi.
const maxFigureHeight = 22 * vg.Inch

// maxDrawBytes bounds the bytes one PNG draw of a huge input allocates:
// the canvas (9 × 20.5 in at 144 dpi, 4 bytes a pixel, about 15 MB) a few
// times over, never the gigabytes an uncapped canvas takes.
const maxDrawBytes = 128 << 20

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc
// around one call: a count of this goroutine's allocations, not a sample of
// the process heap).
func allocated(t *testing.T, f func() error) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := f(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHugeInputsBounded draws the inputs of issue 11 that took 9–24 GB:
// a timeline of 10^5 streams, shares of 2·10^4 devices and a top chart of
// 10^5 kernels. Each draws at most MaxRows rows (MaxLanes lanes), keeps
// the figure under maxFigureHeight, says in a note what it left out, and
// allocates less than maxDrawBytes for a PNG.
func TestHugeInputsBounded(t *testing.T) {
	gemm := classify.MustCategory("gemm/cublas")
	var ks []analyze.KernelStat
	for i := range 100_000 {
		ks = append(ks, analyze.KernelStat{Name: fmt.Sprintf("kernel_%06d", i), Category: gemm,
			Dist: stats.Dist{N: 1, Total: int64(200_000 - i)}, Share: 1e-5})
	}
	var gs []analyze.Group
	one := rank(0, "", "t.json", nil, 0)
	for i := range 20_000 {
		gs = append(gs, analyze.Group{Rank: one, Device: int32(i), KernelNS: int64(1000 + i%7),
			Categories: []analyze.CategoryStat{{Category: gemm, KernelNS: int64(1000 + i%7)}}})
	}
	tl := &Track{Start: 0, End: 100_000}
	for i := range 100_000 {
		tl.Lanes = append(tl.Lanes, Lane{Stream: int32(i)})
		// Lane i is busy i%97+1 ns: the busiest lanes are those with
		// i%97 == 96.
		tl.Spans = append(tl.Spans, Span{Lane: i, Start: trace.Time(i), End: trace.Time(i + i%97 + 1), Category: gemm})
	}
	for _, tc := range []struct {
		name  string
		fig   func() (*figure, error)
		draw  func(io.Writer) error
		rows  int // rectangles drawn: one per row
		note  string
		label func(*figure) string
	}{
		{"top", func() (*figure, error) { return topFigure(ks, nil, Options{}) },
			func(w io.Writer) error { return Top(w, ks, nil, Options{Format: "png"}) },
			MaxRows, "showing 60 of 100000 kernels; the other 99940: ", func(f *figure) string { return f.p.X.Label.Text }},
		{"shares", func() (*figure, error) { return sharesFigure(gs, SharesOptions{}) },
			func(w io.Writer) error { return Shares(w, gs, SharesOptions{Options: Options{Format: "png"}}) },
			MaxRows, "showing the 60 of 20000 groups with the most kernel time; the other 19940: ", func(f *figure) string { return f.p.X.Label.Text }},
		{"timeline", func() (*figure, error) { return timelineFigure(tl, Options{}) },
			func(w io.Writer) error { return Timeline(w, tl, Options{Format: "png"}) },
			MaxLanes, "showing the 40 busiest of 100000 streams; the other 99960: 99960 activities", func(f *figure) string { return f.p.X.Label.Text }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.fig()
			if err != nil {
				t.Fatal(err)
			}
			if len(f.data.rects) != tc.rows {
				t.Errorf("%d rectangles drawn, want %d", len(f.data.rects), tc.rows)
			}
			if f.height > maxFigureHeight {
				t.Errorf("figure %.1f in tall, want at most %.1f", f.height/vg.Inch, maxFigureHeight/vg.Inch)
			}
			if l := tc.label(f); !strings.Contains(l, tc.note) {
				t.Errorf("label %q does not say %q", l, tc.note)
			}
			n := allocated(t, func() error { return tc.draw(io.Discard) })
			t.Logf("%s: PNG draw allocated %d MB, figure %.1f in tall", tc.name, n>>20, f.height/vg.Inch)
			if n > maxDrawBytes {
				t.Errorf("PNG draw allocated %d MB, want at most %d MB", n>>20, maxDrawBytes>>20)
			}
		})
	}
	// The timeline keeps the busiest lanes: every kept lane is busy 97 ns.
	f, _ := timelineFigure(tl, Options{})
	for _, r := range f.data.rects {
		if w := (r.x1 - r.x0) * 1e6; w < 96.5 || w > 97.5 {
			t.Errorf("timeline kept a lane busy %.0f ns, want only the busiest (97 ns)", w)
			break
		}
	}
}
