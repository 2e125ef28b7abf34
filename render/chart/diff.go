package chart

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
)

// Diff draws the comparison of two runs as diverging horizontal bars, one
// per step kind and category (analyze.CategoryDiff, in the diff's order:
// biggest change first): the bar runs from 0 to the change in time per
// step (DeltaNS, ms), right for more time after, left for less, coloured by
// the category's top level and labelled with the change and its percent.
// The kind's total comes first.
func Diff(w io.Writer, d *analyze.Diff, opt Options) error {
	f, err := diffFigure(d, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

func diffFigure(d *analyze.Diff, opt Options) (*figure, error) {
	type row struct {
		label string
		c     analyze.CategoryDiff
		total bool
	}
	var rows []row
	for _, k := range d.Kinds {
		prefix := ""
		if len(d.Kinds) > 1 {
			prefix = k.StepKind.String() + " · "
		}
		rows = append(rows, row{prefix + "total", k.Total, true})
		for _, c := range k.Categories {
			rows = append(rows, row{label: prefix + c.Category.String(), c: c})
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("diff chart: the runs share no step kind")
	}
	note := ""
	if len(rows) > MaxRows {
		note = fmt.Sprintf("showing the first %d of %d rows (each kind's biggest changes)", MaxRows, len(rows))
		rows = rows[:MaxRows]
	}
	title := "Change in GPU time per step (after − before)"
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	p.X.Label.Text = withNote("change in kernel time per step and device (ms)", note)
	p.X.Tick.Marker = niceTicks{}
	n := len(rows)
	l := newLayer()
	var present presentTops
	ticks := make([]plot.Tick, n)
	var lim float64
	for i, r := range rows {
		y := float64(n - 1 - i) // first row on top
		ticks[i] = plot.Tick{Value: y, Label: clip(r.label, 48)}
		v := ms(r.c.DeltaNS)
		lim = math.Max(lim, math.Abs(v))
		fill := Colour(r.c.Category.Top)
		if r.total {
			fill = palette[classify.Other] // grey: the total is no category
		} else {
			present[r.c.Category.Top] = true
		}
		text := deltaLabel(r.c)
		l.addRect(rect{x0: math.Min(0, v), x1: math.Max(0, v), y0: y - 0.38, y1: y + 0.38, fill: fill,
			text: text, textRight: true})
	}
	if lim == 0 {
		lim = 1
	}
	l.vlines = append(l.vlines, vline{x: 0, colour: palette[classify.Other]})
	p.Add(l)
	// Symmetric, with room right of the longest bar for its label.
	p.X.Min, p.X.Max = -lim*1.1, lim*1.45
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Tick.Label.Font = font.From(sans, 8)
	f := &figure{p: p, width: 10 * vg.Inch, height: vg.Inch*1.2 + vg.Length(n)*0.24*vg.Inch, data: l}
	f.legend = categoryLegend(&present)
	return f, nil
}

// deltaLabel is "+1.234 ms (+5.6%)", or "+1.234 ms (new)" when the
// category had no time before.
func deltaLabel(c analyze.CategoryDiff) string {
	v := ms(c.DeltaNS)
	s := strconv.FormatFloat(v, 'f', 3, 64) + " ms"
	if v > 0 {
		s = "+" + s
	}
	if c.DeltaPct == nil {
		return s + " (new)"
	}
	pct := strconv.FormatFloat(*c.DeltaPct, 'f', 1, 64) + "%"
	if *c.DeltaPct > 0 {
		pct = "+" + pct
	}
	return s + " (" + pct + ")"
}
