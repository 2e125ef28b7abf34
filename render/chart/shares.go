package chart

import (
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
)

// UnattributedFloor is the share of a run's kernel time under which its
// groups outside any step are left out of the shares chart (and of the
// report's group tables) unless asked for: leftovers around the steps
// (optimizer tails, warm-up kernels) that would take a bar per device and
// say nothing.
const UnattributedFloor = 0.05

// SharesOptions tunes the shares chart.
type SharesOptions struct {
	Options
	// Unattributed draws every group outside any step, even those
	// LeaveOutUnattributed would leave out.
	Unattributed bool
}

// Shares draws one horizontal 100% bar per group (run, rank, device, step
// kind, as analyze.Breakdown makes them), side by side: each segment is a
// top-level category's share of the group's kernel time (sum of its
// CategoryStat.KernelNS over Group.KernelNS); segments of 7% or more print
// their percentage. Bars are labelled by GroupLabels. Groups outside any
// step that hold almost nothing are left out (LeaveOutUnattributed) unless
// opt.Unattributed, and at most MaxRows groups are drawn, those with the
// most kernel time; a note under the axis says what was left out.
func Shares(w io.Writer, groups []analyze.Group, opt SharesOptions) error {
	f, err := sharesFigure(groups, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

func sharesFigure(groups []analyze.Group, opt SharesOptions) (*figure, error) {
	var notes []string
	if !opt.Unattributed {
		var note string
		if groups, note = LeaveOutUnattributed(groups); note != "" {
			notes = append(notes, "not drawn: "+note+"; --unattributed draws them")
		}
	}
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
	if note != "" {
		notes = append(notes, note)
	}
	title := "Kernel-time share by category"
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	p.X.Label.Text = withNote("share of the group's GPU kernel time (%)", strings.Join(notes, "\n"))
	p.X.Tick.Marker = niceTicks{}
	labels := GroupLabels(gs)
	for i, g := range gs {
		// The 100% bar hides the group's kernel time: the label says it,
		// per step (per device over a whole trace, a step kind's time
		// outside steps in all).
		switch {
		case g.Steps > 0:
			labels[i] += " · " + fmtMS(ms(g.KernelPerStepNS)) + " ms/step"
		default:
			labels[i] += " · " + fmtMS(ms(g.KernelNS)) + " ms"
		}
	}
	n := len(gs)
	l := newLayer()
	var present presentTops
	ticks := make([]plot.Tick, n)
	for i, g := range gs {
		y := float64(n - 1 - i) // first group on top
		ticks[i] = plot.Tick{Value: y, Label: labels[i]}
		x := 0.0
		for k, ns := range CategoriesByTop(g.Categories) {
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

// LeaveOutUnattributed returns groups less the groups outside any step of
// each run whose such groups together hold under UnattributedFloor of the
// run's kernel time, and says what it left out ("" when nothing).
func LeaveOutUnattributed(groups []analyze.Group) ([]analyze.Group, string) {
	total, outside := map[string]int64{}, map[string]int64{}
	for _, g := range groups {
		total[g.Rank.Run] += g.KernelNS
		if g.Class.Scope == step.Outside {
			outside[g.Rank.Run] += g.KernelNS
		}
	}
	small := func(run string) bool { return float64(outside[run]) < UnattributedFloor*float64(total[run]) }
	kept := make([]analyze.Group, 0, len(groups))
	var n int
	var ns int64
	var share float64
	runs := map[string]bool{}
	for _, g := range groups {
		if g.Class.Scope != step.Outside || !small(g.Rank.Run) {
			kept = append(kept, g)
			continue
		}
		n++
		ns += g.KernelNS
		runs[g.Rank.Run] = true
		share = max(share, stats.Ratio(outside[g.Rank.Run], total[g.Rank.Run]))
	}
	if n == 0 {
		return groups, ""
	}
	of := "of the run's"
	if len(runs) > 1 {
		of = "at most, of a run's"
	}
	what := "group"
	if n > 1 {
		what = "groups"
	}
	return kept, fmt.Sprintf("%d %s outside any step, %s ms of kernel time (%s %s)", n, what, fmtMS(ms(ns)), render.Pct(share), of)
}

// GroupLabels names groups for a chart's bars and a report's rows: the run
// when the groups hold several, the rank when the run has several (the
// input file, or the process, for ranks the traces do not give), the
// device when the rank has several, and the step kind with its step count.
// Where two labels would be the same (inputs without runs),
// render.GroupNames's are used.
func GroupLabels(gs []analyze.Group) []string {
	type member struct {
		path string
		proc int32
	}
	runs := map[string]bool{}
	members := map[string]map[member]bool{}
	paths := map[string]map[string]bool{}
	devices := map[member]map[int32]bool{}
	for _, g := range gs {
		m := member{g.Rank.Path, g.Rank.Proc}
		runs[g.Rank.Run] = true
		if members[g.Rank.Run] == nil {
			members[g.Rank.Run], paths[g.Rank.Run] = map[member]bool{}, map[string]bool{}
		}
		members[g.Rank.Run][m] = true
		paths[g.Rank.Run][g.Rank.Path] = true
		if devices[m] == nil {
			devices[m] = map[int32]bool{}
		}
		devices[m][g.Device] = true
	}
	out := make([]string, len(gs))
	seen := map[string]bool{}
	for i, g := range gs {
		var parts []string
		if len(runs) > 1 {
			parts = append(parts, ClipMiddle(g.Rank.Run, RunLabelRunes))
		}
		if len(members[g.Rank.Run]) > 1 {
			switch {
			case g.Rank.Number != nil:
				parts = append(parts, "rank "+strconv.Itoa(*g.Rank.Number))
			case len(paths[g.Rank.Run]) > 1 || g.Rank.PID == 0:
				parts = append(parts, path.Base(g.Rank.Path))
			default:
				parts = append(parts, "pid "+strconv.FormatInt(g.Rank.PID, 10))
			}
		}
		if len(devices[member{g.Rank.Path, g.Rank.Proc}]) > 1 {
			parts = append(parts, "dev "+strconv.Itoa(int(g.Device)))
		}
		parts = append(parts, render.KindLabel(g))
		out[i] = render.Printable(strings.Join(parts, " · "))
		if seen[out[i]] {
			return render.GroupNames(gs)
		}
		seen[out[i]] = true
	}
	return out
}

// RunLabelRunes is the most runes of a run's name in a label or a chart
// title: long names (nsys2026.2.1_torchrun-2gpu-nccl-before) would take
// the width of the bars.
const RunLabelRunes = 24

// ClipMiddle shortens s to n runes by cutting its middle, where names of
// runs tend to agree: "nsys2026.2.…-nccl-before".
func ClipMiddle(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 3 {
		return s
	}
	head := (n - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}
