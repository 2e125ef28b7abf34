package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/stats"
)

// HistBin is one bar of the step-time histogram: steps whose span is in
// [Lo, Hi) ns (the last bin includes Hi).
type HistBin struct {
	Lo, Hi float64
	Count  int
}

// StepHist bins the GPU spans of rows into between 5 and 40 equal bins
// (about √n) from the shortest to the longest, and returns the sorted
// spans too.
func StepHist(rows []analyze.StepRow) (bins []HistBin, sorted []int64) {
	sorted = make([]int64, len(rows))
	for i, r := range rows {
		sorted[i] = r.SpanNS
	}
	slices.Sort(sorted)
	if len(sorted) == 0 {
		return nil, sorted
	}
	nb := int(math.Ceil(math.Sqrt(float64(len(sorted)))))
	nb = min(40, max(5, nb))
	lo, hi := float64(sorted[0]), float64(sorted[len(sorted)-1])
	if hi == lo {
		// One value: centre it in one bin 4% of it wide (at least 1 µs),
		// so that the axis reads in round numbers.
		half := max(500, math.Round(lo*0.02))
		lo, hi, nb = lo-half, hi+half, 1
	}
	w := (hi - lo) / float64(nb)
	bins = make([]HistBin, nb)
	for i := range bins {
		bins[i].Lo = lo + float64(i)*w
		bins[i].Hi = lo + float64(i+1)*w
	}
	for _, v := range sorted {
		i := int((float64(v) - lo) / w)
		i = min(max(i, 0), nb-1)
		bins[i].Count++
	}
	return bins, sorted
}

// minBarFrac is the least height of a bar with steps, as a fraction of
// the tallest; bars under smallBarFrac print their count above them.
const (
	minBarFrac   = 0.03
	smallBarFrac = 0.10
)

var (
	histColour = color.RGBA{0x5b, 0x7a, 0x99, 0xff}
	p50Colour  = color.RGBA{0x00, 0x00, 0x00, 0xff}
	p90Colour  = color.RGBA{0xe0, 0x8a, 0x00, 0xff}
	p99Colour  = color.RGBA{0xc0, 0x00, 0x00, 0xff}
)

// Hist draws the distribution of the steps' GPU spans (StepRow.SpanNS,
// first activity start to last end on the device) as a histogram with
// vertical lines at p50, p90 and p99 (stats.Percentile: linear
// interpolation between closest ranks), their labels on separate rows
// where the lines are close. A bin with steps is never thinner than
// minBarFrac of the tallest, and a small one prints its count. rows is one
// series (see StepSeries) of one step kind: rows of several kinds
// draw the most common, and the axis says which were left out.
func Hist(w io.Writer, rows []analyze.StepRow, opt Options) error {
	f, err := histFigure(rows, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

func histFigure(rows []analyze.StepRow, opt Options) (*figure, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("hist chart: no steps (the trace has no step markers)")
	}
	rows, kind, left := oneKind(rows)
	bins, sorted := StepHist(rows)
	steps := "steps"
	if len(rows) == 1 {
		steps = "step"
	}
	title := fmt.Sprintf("Distribution of %s time (%d %s)", kindName(kind), len(rows), steps)
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	p.X.Label.Text = withNote("step GPU span: first kernel start to last kernel end (ms)", left)
	p.Y.Label.Text = "steps"
	p.X.Tick.Marker = niceTicks{}
	p.Y.Tick.Marker = countTicks{}
	l := newLayer()
	most := 0
	for _, b := range bins {
		most = max(most, b.Count)
	}
	for _, b := range bins {
		// A hairline gap between bars keeps neighbours apart.
		gap := (b.Hi - b.Lo) * 0.04
		r := rect{x0: (b.Lo + gap) / 1e6, x1: (b.Hi - gap) / 1e6, y0: 0, y1: float64(b.Count), fill: histColour}
		if b.Count > 0 && float64(b.Count) < minBarFrac*float64(most) {
			// One outlier among thousands of steps would be a bar
			// thinner than a pixel: draw a stub and print its count.
			r.y1 = minBarFrac * float64(most)
		}
		if b.Count > 0 && float64(b.Count) < smallBarFrac*float64(most) {
			r.text, r.textAbove = strconv.Itoa(b.Count), true
		}
		l.addRect(r)
	}
	f := &figure{p: p, width: 9 * vg.Inch, height: 4 * vg.Inch, data: l}
	for _, q := range []struct {
		p float64
		c color.Color
		d bool
	}{{50, p50Colour, false}, {90, p90Colour, true}, {99, p99Colour, true}} {
		v := stats.Percentile(sorted, q.p) / 1e6
		name := fmt.Sprintf("p%.0f", q.p)
		l.vlines = append(l.vlines, vline{x: v, colour: q.c, dashed: q.d, label: name})
		f.legend = append(f.legend, legendEntry{text: name + " = " + fmtMS(v) + " ms", fill: q.c, line: true})
		l.grow(v, 0)
	}
	f.legend = append(f.legend,
		legendEntry{text: "min = " + fmtMS(ms(sorted[0])) + " ms", fill: color.Transparent},
		legendEntry{text: "max = " + fmtMS(ms(sorted[len(sorted)-1])) + " ms", fill: color.Transparent})
	p.Add(l)
	p.Y.Min = 0
	// Room above the bars for three rows of percentile labels and the
	// counts of small bars.
	p.Y.Max = math.Ceil(p.Y.Max * 1.25)
	pad := (p.X.Max - p.X.Min) * 0.03
	p.X.Min, p.X.Max = p.X.Min-pad, p.X.Max+pad
	return f, nil
}
