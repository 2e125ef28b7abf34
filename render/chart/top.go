package chart

import (
	"fmt"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/labels"
	"github.com/traceq/traceq/render"
)

// Top draws ks (analyze.Kernels rows, most expensive first; pass only the
// rows to draw; past MaxRows the rest is summed in a note) as horizontal
// bars, the largest on top: bar length is the kernel's total time
// (KernelStat.Total), coloured by its category's top level, labelled with
// its label in names (made over every kernel name of the inputs; nil:
// the rows are labelled among themselves) clipped to labels.Width runes
// and, right of the bar, its total ms and share of all kernel time.
func Top(w io.Writer, ks []analyze.KernelStat, names render.Labels, opt Options) error {
	f, err := topFigure(ks, names, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

func topFigure(ks []analyze.KernelStat, names render.Labels, opt Options) (*figure, error) {
	if len(ks) == 0 {
		return nil, fmt.Errorf("top chart: no kernels")
	}
	note := ""
	if len(ks) > MaxRows {
		var ns int64
		var share float64
		for _, k := range ks[MaxRows:] {
			ns += k.Total
			share += k.Share
		}
		note = fmt.Sprintf("showing %d of %d kernels; the other %d: %s ms (%.1f%% of kernel time)",
			MaxRows, len(ks), len(ks)-MaxRows, fmtMS(ms(ns)), 100*share)
		ks = ks[:MaxRows]
	}
	title := fmt.Sprintf("Top %d kernels by total GPU time", len(ks))
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	p.X.Label.Text = withNote("total GPU time (ms)", note)
	p.X.Tick.Marker = niceTicks{}
	n := len(ks)
	l := newLayer()
	var present presentTops
	ticks := make([]plot.Tick, n)
	var xmax float64
	rows := make([]string, len(ks))
	for i, k := range ks {
		rows[i] = k.Name
	}
	shown := names.List(rows, labels.Width)
	for i, k := range ks {
		y := float64(n - 1 - i)
		ticks[i] = plot.Tick{Value: y, Label: shown[i]}
		c := Colour(k.Category.Top)
		present[k.Category.Top] = true
		v := ms(k.Total)
		xmax = max(xmax, v)
		l.addRect(rect{x0: 0, x1: v, y0: y - 0.38, y1: y + 0.38, fill: c,
			text: fmtMS(v) + " ms · " + fmt.Sprintf("%.1f%%", 100*k.Share), textRight: true})
	}
	p.Add(l)
	// Room right of the longest bar for its value label.
	p.X.Min, p.X.Max = 0, xmax*1.28
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Tick.Label.Font = font.From(sans, 8)
	f := &figure{p: p, width: 10 * vg.Inch, height: vg.Inch*1.1 + vg.Length(n)*0.24*vg.Inch, data: l}
	f.legend = categoryLegend(&present)
	return f, nil
}
