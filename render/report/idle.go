package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/chart"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/window"
)

// idleVerdicts says in a paragraph, over all groups of one run, how much
// of the time the GPU was idle and why (docs/definitions.md, "Idle time by
// cause"); for several runs, one item per run. "" when the groups span no
// time.
func (w *writer) idleVerdicts() string {
	if len(w.runs) == 1 {
		return idleParagraph(w.groups.Groups)
	}
	var sb strings.Builder
	for _, r := range w.runs {
		var gs []analyze.Group
		for _, g := range w.groups.Groups {
			if slices.Contains(r.inputs, g.Rank.Input) {
				gs = append(gs, g)
			}
		}
		if p := idleParagraph(gs); p != "" {
			sb.WriteString("- " + render.MarkdownCell(r.name) + ": " + p + "\n")
		}
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// idleParagraph is idleVerdicts for one run's groups.
func idleParagraph(groups []analyze.Group) string {
	var span, idle, kernel, launchCPU, between int64
	var split window.IdleSplit
	var comm window.CommStat
	gaps, launches, windows := 0, false, 0
	per := "per device"
	for _, g := range groups {
		windows += max(g.Steps, 1)
		if g.Steps > 0 {
			per = "per step and device"
		}
		span += g.SpanNS
		idle += g.IdleNS
		kernel += g.KernelNS
		launchCPU += g.LaunchCPUNS
		split.LaunchBoundNS += g.Idle.LaunchBoundNS
		split.DeviceSideNS += g.Idle.DeviceSideNS
		split.UnknownNS += g.Idle.UnknownNS
		comm.BusyNS += g.Comm.BusyNS
		comm.ExposedNS += g.Comm.ExposedNS
		between += g.BetweenStepsNS
		gaps += g.BetweenStepGaps
		launches = launches || len(g.Launches) > 0
	}
	if span == 0 {
		return ""
	}
	say := []string{idleVerdict(span, idle, split, windows, per)}
	if launches {
		say = append(say, fmt.Sprintf("Launch calls took %s ms of CPU time per ms of GPU kernel time.",
			strconv.FormatFloat(stats.Ratio(launchCPU, kernel), 'f', 2, 64)))
	}
	if gaps > 0 {
		say = append(say, fmt.Sprintf("Between steps the device waited %s ms per step for the host, outside the steps' spans.",
			render.MSf(float64(between)/float64(gaps))))
	}
	if comm.BusyNS > 0 {
		say = append(say, fmt.Sprintf("Of %s ms of communication %s, %s was exposed: no other work ran on the device alongside it.",
			render.MS(stats.PerStep(comm.BusyNS, windows)), per, render.Pct(stats.Ratio(comm.ExposedNS, comm.BusyNS))))
	}
	return strings.Join(say, " ")
}

// idleSection writes why the GPU was idle: the verdict over all groups and
// one row per group.
func (w *writer) idleSection() {
	verdict := w.idleVerdicts()
	if verdict == "" {
		return
	}
	sb := &w.sb
	sb.WriteString(w.h(1) + "Why the GPU was idle\n\n")
	sb.WriteString(verdict + "\n\n")
	gs, left := w.tableGroups()
	t := render.Table{Head: []string{"group", "idle ms", "of span", "launch-bound ms", "device-side ms", "unknown ms",
		"between steps ms/step", "launch CPU / GPU", "communication exposed"},
		Right: []bool{false, true, true, true, true, true, true, true, true}}
	names := chart.GroupLabels(gs)
	for i, g := range gs {
		bs, lr, ce := "", "", ""
		if g.BetweenStepGaps > 0 {
			bs = render.MSf(float64(g.BetweenStepsNS) / float64(g.BetweenStepGaps))
		}
		if len(g.Launches) > 0 {
			lr = render.LaunchRatio(&g)
		}
		if g.Comm.BusyNS > 0 {
			ce = render.Pct(stats.Ratio(g.Comm.ExposedNS, g.Comm.BusyNS))
		}
		t.Add(names[i], render.MS(g.IdleNS), render.Pct(stats.Ratio(g.IdleNS, g.SpanNS)), render.MS(g.Idle.LaunchBoundNS),
			render.MS(g.Idle.DeviceSideNS), render.MS(g.Idle.UnknownNS), bs, lr, ce)
	}
	t.Markdown(sb)
	sb.WriteString("\n*Idle: time in a span when the device ran nothing. Each gap is put on the work that ended it: launch-bound when that work's launch call " +
		"started after the device ran dry (the host was late), device-side when it was already queued (a dependency, an event, a sync, another stream), " +
		"unknown when the trace holds no launch call for it. Between steps: from the end of one step's GPU span to the start of the next. " +
		"Communication exposed: the part of its time when no other kind of work ran on the device.*\n\n")
	sb.WriteString(left)
}

// idleVerdict says in a sentence or two what the idle time was, per step
// and device (windows of them).
func idleVerdict(span, idle int64, s window.IdleSplit, windows int, per string) string {
	share := stats.Ratio(idle, span)
	head := fmt.Sprintf("The GPU was idle %s of the time (%s of %s ms %s).", render.Pct(share),
		render.MS(stats.PerStep(idle, windows)), render.MS(stats.PerStep(span, windows)), per)
	if share < 0.05 {
		return head + " Idle time is not where the time goes."
	}
	lb, ds, un := stats.Ratio(s.LaunchBoundNS, idle), stats.Ratio(s.DeviceSideNS, idle), stats.Ratio(s.UnknownNS, idle)
	switch {
	case lb >= 0.5:
		return head + fmt.Sprintf(" %s of it was launch-bound: the device had finished its work before the host launched the next. "+
			"CUDA graphs, fewer and larger kernels or faster host code would shorten it.", render.Pct(lb))
	case ds >= 0.5:
		return head + fmt.Sprintf(" %s of it was device-side: the next work was already queued and waited on a dependency, "+
			"an event, a synchronisation or another stream.", render.Pct(ds))
	case un >= 0.5:
		return head + fmt.Sprintf(" %s of it ended with work whose launch call the trace does not hold: its cause is unknown.", render.Pct(un))
	}
	return head + fmt.Sprintf(" No single cause: %s launch-bound, %s device-side, %s unknown.", render.Pct(lb), render.Pct(ds), render.Pct(un))
}
