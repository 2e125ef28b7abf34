package chart

import (
	"fmt"
	"image/color"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
)

// MaxStepBars is the most bars the steps chart draws; beyond it
// consecutive steps are binned.
const MaxStepBars = 60

// StepBar is one bar of the steps chart: one step, or a bin of
// consecutive steps.
type StepBar struct {
	First, Last int // step indices covered (equal for one step)
	N           int // steps in the bin
	Kind        step.Kind
	// ByTop is the kernel time per top-level category, ns, summed over the
	// bin (in classify.Tops() order); KernelNS its sum; SpanNS the summed
	// GPU spans. The chart draws them divided by N: the mean per step.
	ByTop    TopSums
	KernelNS int64
	SpanNS   int64
}

// StepBars lays out rows (one series, see StepSeries) as at most
// maxBars bars: bins of ceil(len/maxBars) consecutive steps. A bin never
// holds two step kinds: it closes early where the kind changes, since a
// bar that averages a prefill with decodes matches no real step.
func StepBars(rows []analyze.StepRow, maxBars int) (bars []StepBar, binSize int) {
	if maxBars <= 0 {
		maxBars = MaxStepBars
	}
	binSize = (len(rows) + maxBars - 1) / maxBars
	binSize = max(binSize, 1)
	for i := 0; i < len(rows); {
		j := i + 1
		for j < min(i+binSize, len(rows)) && rows[j].Step.Kind == rows[i].Step.Kind {
			j++
		}
		b := StepBar{First: rows[i].Step.Index, Last: rows[j-1].Step.Index, N: j - i, Kind: rows[i].Step.Kind}
		for _, r := range rows[i:j] {
			for k, ns := range stepByTop(&r) {
				b.ByTop[k] += ns
			}
			b.KernelNS += r.KernelNS
			b.SpanNS += r.SpanNS
		}
		bars = append(bars, b)
		i = j
	}
	return bars, binSize
}

// oneKind keeps the rows of one step kind: rows' only kind, or else the
// most common one (DominantKind), and says what it left out.
func oneKind(rows []analyze.StepRow) ([]analyze.StepRow, step.Kind, string) {
	kind, ok := DominantKind(rows)
	if !ok {
		return rows, 0, ""
	}
	var out []analyze.StepRow
	for _, r := range rows {
		if r.Step.Kind == kind {
			out = append(out, r)
		}
	}
	if len(out) == len(rows) {
		return rows, kind, ""
	}
	return out, kind, fmt.Sprintf("the most common kind, %d of %d steps; not drawn: %s", len(out), len(rows), kindsNote(rows, kind))
}

// kindName names a kind for a title: "decode step", or "step" for plain
// ProfilerStep#N steps.
func kindName(k step.Kind) string {
	if k == 0 || k == step.Generic {
		return "step"
	}
	return k.String() + " step"
}

// Steps draws the per-step chart of rows, one series (one input on one
// device, see StepSeries) of one step kind (rows of several kinds
// draw the most common; the axis says which were left out): one stacked
// bar per step whose layers are the step's kernel time by top-level
// category (they sum to StepRow.KernelNS), and a black tick at the step's
// GPU span (first activity start to last end). With more than MaxStepBars
// steps each bar is a bin of consecutive steps and shows the mean per
// step; the x-axis label says so.
func Steps(w io.Writer, rows []analyze.StepRow, opt Options) error {
	f, err := stepsFigure(rows, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

func stepsFigure(rows []analyze.StepRow, opt Options) (*figure, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("steps chart: no steps (the trace has no step markers)")
	}
	rows, kind, left := oneKind(rows)
	bars, bin := StepBars(rows, MaxStepBars)
	title := "GPU time per " + kindName(kind) + " by category"
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	p.Y.Label.Text = "GPU kernel time per step (ms)"
	p.Y.Tick.Marker = niceTicks{}
	xl := "step index"
	if bin > 1 {
		xl = fmt.Sprintf("step index (%d steps in %d bars: each bar is the mean of %d consecutive steps)", len(rows), len(bars), bin)
	}
	p.X.Label.Text = withNote(xl, left)
	l := newLayer()
	var present presentTops
	tops := classify.Tops()
	for i, b := range bars {
		x0, x1 := float64(i)-0.4, float64(i)+0.4
		y := 0.0
		n := float64(b.N)
		for k := range tops {
			if b.ByTop[k] == 0 {
				continue
			}
			present[k] = true
			h := ms(b.ByTop[k]) / n
			l.addRect(rect{x0: x0, x1: x1, y0: y, y1: y + h, fill: palette[k]})
			y += h
		}
		l.marks = append(l.marks, hmark{x0: float64(i) - 0.48, x1: float64(i) + 0.48, y: ms(b.SpanNS) / n, colour: spanColour})
		l.grow(float64(i), ms(b.SpanNS)/n)
	}
	l.grow(-0.5, 0)
	l.grow(float64(len(bars))-0.5, 0)
	p.Add(l)
	p.X.Min, p.X.Max = -0.5, float64(len(bars))-0.5
	p.Y.Min = 0
	p.Y.Max *= 1.05
	p.X.Tick.Marker = barTicks(bars)
	f := &figure{p: p, width: 9 * vg.Inch, height: 4.5 * vg.Inch, data: l}
	f.legend = categoryLegend(&present)
	f.legend = append([]legendEntry{{text: "GPU span", fill: spanColour, line: true}}, f.legend...)
	return f, nil
}

// spanColour is near-black: no category uses it.
var spanColour = color.RGBA{0x20, 0x20, 0x20, 0xff}

// barTicks labels bar positions with the first step index of each bar,
// about every tenth bar.
func barTicks(bars []StepBar) plot.ConstantTicks {
	every := max(1, (len(bars)+11)/12)
	var ts []plot.Tick
	for i, b := range bars {
		label := ""
		if i%every == 0 {
			label = strconv.Itoa(b.First)
			if b.Last != b.First && every == 1 {
				label += "–" + strconv.Itoa(b.Last)
			}
		}
		ts = append(ts, plot.Tick{Value: float64(i), Label: label})
	}
	return plot.ConstantTicks(ts)
}

// kindsNote counts the steps of rows not of kind, by kind in order of
// appearance: "3 prefill + 1 mixed".
func kindsNote(rows []analyze.StepRow, kind step.Kind) string {
	var kinds []step.Kind
	n := map[step.Kind]int{}
	for _, r := range rows {
		if r.Step.Kind == kind {
			continue
		}
		if n[r.Step.Kind] == 0 {
			kinds = append(kinds, r.Step.Kind)
		}
		n[r.Step.Kind]++
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = strconv.Itoa(n[k]) + " " + k.String()
	}
	return strings.Join(parts, " + ")
}
