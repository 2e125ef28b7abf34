package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
)

// DiffTitle names a diff's two runs for a chart title, "before → after",
// each clipped in the middle to fit.
func DiffTitle(d *analyze.Diff) string {
	return ClipMiddle(d.BeforeRun, RunLabelRunes) + " → " + ClipMiddle(d.AfterRun, RunLabelRunes)
}

// Diff draws the comparison of two runs as diverging horizontal bars, one
// panel per step kind, the kind in its title, and one bar per category
// (analyze.CategoryDiff, in the diff's order: biggest change first): the
// bar runs from 0 to the change in time per step (DeltaNS, ms), right for
// more time after, left for less, coloured by the category's top level and
// labelled with the change and its percent. The kind's total comes first.
// A change the diff calls noise or unchanged is drawn pale and says so;
// each panel's axis spans at least ±MinAxisShare of its kind's total time
// per step, so that a change of nothing looks like nothing.
func Diff(w io.Writer, d *analyze.Diff, opt Options) error {
	f, err := diffFigure(d, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

// diffRow is one bar of the diff chart.
type diffRow struct {
	label string
	c     analyze.CategoryDiff
	total bool
}

func diffFigure(d *analyze.Diff, opt Options) (*figure, error) {
	var rows [][]diffRow // per kind
	n := 0
	for _, k := range d.Kinds {
		rs := []diffRow{{"total", k.Total, true}}
		for _, c := range k.Categories {
			rs = append(rs, diffRow{label: c.Category.String(), c: c})
		}
		rows = append(rows, rs)
		n += len(rs)
	}
	if n == 0 {
		return nil, fmt.Errorf("diff chart: the runs share no step kind")
	}
	note := ""
	if n > MaxRows {
		note = fmt.Sprintf("showing the first %d of %d rows (each kind's biggest changes)", MaxRows, n)
		left := MaxRows
		for i := range rows {
			rows[i] = rows[i][:min(len(rows[i]), left)]
			left -= len(rows[i])
		}
	}
	var present presentTops
	f := &figure{width: 10 * vg.Inch}
	for i, k := range d.Kinds {
		if len(rows[i]) == 0 {
			break
		}
		p, l, pales := diffPanel(&d.Kinds[i], rows[i], &present)
		p.Title.Text = diffPanelTitle(k) + " — change in GPU time per step (after − before)"
		if opt.Title != "" {
			p.Title.Text += " — " + opt.Title
		}
		axis := "change in kernel time per step and device (ms)"
		if k.Class.Scope != step.InStep {
			axis = "change in kernel time per device (ms)"
		}
		if pales > 0 {
			axis += "; pale: noise or unchanged"
		}
		if i == len(d.Kinds)-1 || len(rows[i+1]) == 0 {
			axis = withNote(axis, note)
		}
		p.X.Label.Text = axis
		h := vg.Inch*1.2 + vg.Length(len(rows[i]))*0.24*vg.Inch
		if i == 0 {
			f.p, f.data = p, l
		} else {
			f.below = append(f.below, panel{p: p, data: l, height: h})
		}
		f.height += h
	}
	f.legend = categoryLegend(&present)
	return f, nil
}

// diffPanelTitle names a panel's step kind: "decode steps", "steps",
// "whole trace".
func diffPanelTitle(k analyze.KindDiff) string {
	switch {
	case k.Class.Scope == step.Whole:
		return "Whole trace"
	case k.Class.Scope == step.Outside:
		return "Outside steps"
	case k.Class.Kind == step.Generic:
		return "Steps"
	}
	s := k.Class.String() + " steps"
	return strings.ToUpper(s[:1]) + s[1:]
}

// diffPanel draws one step kind's bars; it returns its plot, its layer
// and how many bars are pale.
func diffPanel(k *analyze.KindDiff, rows []diffRow, present *presentTops) (*plot.Plot, *layer, int) {
	p := newPlot("")
	p.X.Tick.Marker = niceTicks{}
	n := len(rows)
	l := newLayer()
	ticks := make([]plot.Tick, n)
	// The floor of the axis: a share of the kind's time per step.
	lim := MinAxisShare * ms(max(k.Total.BeforePerStepNS, k.Total.AfterPerStepNS))
	pales := 0
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
		re := rect{x0: math.Min(0, v), x1: math.Max(0, v), y0: y - 0.38, y1: y + 0.38, fill: fill,
			text: deltaLabel(r.c), textRight: true}
		if !r.c.Changed() {
			re.fill, re.textColour = pale(fill), paleText
			re.text += " · " + r.c.Change
			pales++
		}
		l.addRect(re)
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
	return p, l, pales
}

// MinAxisShare is the least half-width of the diff chart's axis, as a
// share of the largest total kernel time per step of the kinds drawn: a
// change of 0.1 % of the step is a sliver, not the full axis.
const MinAxisShare = 0.05

// paleText is the label colour of a change that is noise or none.
var paleText = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}

// pale mixes c with white, two parts white to one.
func pale(c color.RGBA) color.RGBA {
	mix := func(v uint8) uint8 { return uint8((int(v) + 2*255) / 3) }
	return color.RGBA{R: mix(c.R), G: mix(c.G), B: mix(c.B), A: 0xff}
}

// deltaLabel is "+1.234 ms (+5.6%)", or "+1.234 ms (new)" when the
// category had no time before.
func deltaLabel(c analyze.CategoryDiff) string {
	s := signed(ms(c.DeltaNS), 3) + " ms"
	if c.DeltaPct == nil {
		return s + " (new)"
	}
	return s + " (" + signed(*c.DeltaPct, 1) + "%)"
}

// signed formats v with prec decimals and its sign, "+" included; a value
// that rounds to zero has none.
func signed(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	if v > 0 {
		s = "+" + s
	}
	return s
}
