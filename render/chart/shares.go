package chart

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/render"
)

// Shares draws one horizontal 100% bar per group (input, device, step
// kind, as analyze.Breakdown makes them), side by side: each segment is a
// top-level category's share of the group's kernel time
// (sum of its CategoryStat.KernelNS over Group.KernelNS); segments of 7%
// or more print their percentage. Several inputs (ranks, or a
// before/after pair) give one bar per input and kind. At most MaxRows
// groups are drawn, those with the most kernel time; a note says what was
// left out.
func Shares(w io.Writer, groups []analyze.Group, opt Options) error {
	f, err := sharesFigure(groups, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

func sharesFigure(groups []analyze.Group, opt Options) (*figure, error) {
	var gs []analyze.Group
	for _, g := range groups {
		if g.KernelNS > 0 {
			gs = append(gs, g)
		}
	}
	if len(gs) == 0 {
		return nil, fmt.Errorf("shares chart: no GPU time")
	}
	gs, note := mostKernelTime(gs, MaxRows)
	title := "Kernel-time share by category"
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	p.X.Label.Text = withNote("share of the group's GPU kernel time (%)", note)
	p.X.Tick.Marker = niceTicks{}
	labels := render.GroupNames(gs)
	for i, g := range gs {
		// The 100% bar hides the group's kernel time: the label says it.
		labels[i] += " · " + fmtMS(ms(g.KernelNS)) + " ms"
	}
	n := len(gs)
	l := newLayer()
	var present presentTops
	ticks := make([]plot.Tick, n)
	for i, g := range gs {
		y := float64(n - 1 - i) // first group on top
		ticks[i] = plot.Tick{Value: y, Label: labels[i]}
		x := 0.0
		for k, ns := range analyze.CategoriesByTop(g.Categories) {
			if ns == 0 {
				continue
			}
			present[k] = true
			wd := 100 * float64(ns) / float64(g.KernelNS)
			r := rect{x0: x, x1: x + wd, y0: y - 0.35, y1: y + 0.35, fill: palette[k]}
			if wd >= 7 {
				r.text = strconv.FormatFloat(wd, 'f', 0, 64) + "%"
				r.textColour = textOn(palette[k])
			}
			l.addRect(r)
			x += wd
		}
	}
	p.Add(l)
	p.X.Min, p.X.Max = 0, 100
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Tick.Label.Font = font.From(sans, 9)
	f := &figure{p: p, width: 9 * vg.Inch, height: vg.Inch*1.3 + vg.Length(n)*0.32*vg.Inch, data: l}
	f.legend = categoryLegend(&present)
	return f, nil
}

// mostKernelTime keeps the n groups with the most kernel time (ties: the
// earlier), in their order, and says what it left out.
func mostKernelTime(gs []analyze.Group, n int) ([]analyze.Group, string) {
	if len(gs) <= n {
		return gs, ""
	}
	idx := make([]int, len(gs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(gs[b].KernelNS, gs[a].KernelNS) })
	keep := idx[:n]
	slices.Sort(keep)
	out := make([]analyze.Group, n)
	var kept int64
	var total int64
	for i, j := range keep {
		out[i] = gs[j]
		kept += gs[j].KernelNS
	}
	for _, g := range gs {
		total += g.KernelNS
	}
	return out, fmt.Sprintf("showing the %d of %d groups with the most kernel time; the other %d: %s ms of kernel time",
		n, len(gs), len(gs)-n, fmtMS(ms(total-kept)))
}
