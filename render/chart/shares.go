package chart

import (
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
)

// Shares draws one horizontal 100% bar per group (input, device, step
// kind, as analyze.Breakdown makes them), side by side: each segment is a
// top-level category's share of the group's kernel time
// (sum of its CategoryStat.KernelNS over Group.KernelNS); segments of 7%
// or more print their percentage. Several inputs (ranks, or a before/after
// pair) give one bar per input and kind.
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
	title := "Kernel-time share by category"
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	p.X.Label.Text = "share of the group's GPU kernel time (%)"
	p.X.Tick.Marker = niceTicks{}
	labels := GroupLabels(gs)
	n := len(gs)
	l := newLayer()
	present := make([]bool, len(classify.Tops()))
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
	f.legend = categoryLegend(present)
	return f, nil
}

// GroupLabels names each group as briefly as tells them apart: the input
// (its path less the directory all inputs share) when there are several,
// the device when an input has several, the step kind with its step
// count, and the group's kernel time, which the 100% bar hides.
func GroupLabels(gs []analyze.Group) []string {
	inputs := map[string]bool{}
	devs := map[string]map[int64]bool{}
	for _, g := range gs {
		inputs[g.Path] = true
		if devs[g.Path] == nil {
			devs[g.Path] = map[int64]bool{}
		}
		devs[g.Path][g.PID<<32|int64(uint32(g.Device))] = true
	}
	var paths []string
	for _, g := range gs {
		paths = append(paths, g.Path)
	}
	short := shortPaths(paths)
	out := make([]string, len(gs))
	for i, g := range gs {
		var parts []string
		if len(inputs) > 1 {
			parts = append(parts, clipLeft(short[i], 32))
		}
		if len(devs[g.Path]) > 1 {
			parts = append(parts, "dev "+strconv.Itoa(int(g.Device)))
		}
		parts = append(parts, kindLabel(g), fmtMS(ms(g.KernelNS))+" ms")
		out[i] = strings.Join(parts, " · ")
	}
	return out
}

func kindLabel(g analyze.Group) string {
	switch {
	case g.StepKind == analyze.KindAll:
		return "whole trace"
	case g.StepKind == analyze.KindNone:
		return "outside steps"
	case g.Steps > 0:
		return fmt.Sprintf("%s ×%d", g.StepKind, g.Steps)
	}
	return g.StepKind
}

// shortPaths names inputs by base name when those differ, else by the
// path less the directory all share.
func shortPaths(paths []string) []string {
	bases := map[string]string{}
	for _, p := range paths {
		b := path.Base(p)
		if q, ok := bases[b]; ok && q != p {
			return trimCommonDir(paths)
		}
		bases[b] = p
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = path.Base(p)
	}
	return out
}

// clipLeft shortens s to n runes keeping its end, where paths differ.
func clipLeft(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// trimCommonDir drops the directory prefix that all paths share.
func trimCommonDir(paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	common := path.Dir(paths[0]) + "/"
	for _, p := range paths[1:] {
		for !strings.HasPrefix(p, common) && common != "" {
			d := path.Dir(strings.TrimSuffix(common, "/"))
			if d == "." || d == "/" || d+"/" == common {
				common = ""
				break
			}
			common = d + "/"
		}
	}
	if common == "./" {
		common = ""
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.TrimPrefix(p, common)
	}
	return out
}
