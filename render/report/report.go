// Package report writes traceq's markdown report: the run summary first,
// then where GPU time goes, why the GPU was idle, the collectives, the top
// kernels and the steps, with their charts, and the details last; and the
// short section of it that `traceq report --append` adds to a benchmark
// log. It is a renderer in the manner of pprof's report.Generate: it takes
// the analysis and options (a heading level, where charts are linked from)
// and a callback that writes each chart file; it does no file I/O itself.
package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/findings"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/chart"
	"github.com/traceq/traceq/settings"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// MaxInputCharts is the most inputs that get their own steps, hist and
// timeline charts (the first inputs of each run in turn); the shares chart
// and the comparison table cover every input.
const MaxInputCharts = 4

// minStepsChart and minHistSteps are the fewest steps a report draws a
// steps chart and a histogram of.
const (
	minStepsChart = 2
	minHistSteps  = 3
)

// Options configures a report.
type Options struct {
	// Filter restricts the charts and tables to one class of windows.
	Filter step.Filter
	// Top is the number of kernels in the top chart and table, and of op
	// shapes in the speed-of-light section.
	Top int
	// Level is the heading level of the report's title: 1 for a report
	// of its own, 2 for a section appended to a benchmark log.
	Level int
	// Date, set for an appended section, ends its title.
	Date string
	// BytesPerToken and Link tune the collectives section (see
	// collectives.Options).
	BytesPerToken int64
	Link          *collectives.Link
	// Links are --link's per-scope links (intra=…,inter=…).
	Links collectives.Links
	// Unattributed shows, in the shares chart and the group tables, the
	// groups outside any step that hold almost nothing
	// (chart.LeaveOutUnattributed).
	Unattributed bool
	// Efficiency, when it priced some kernel, adds the speed of light to
	// the summary, a section with the roofline chart and the efficiency
	// tables, and the kernels table's columns.
	Efficiency *efficiency.Result
	// Findings sets the findings' threshold; Settings are the settings
	// the command found, which the summary says the origin of.
	Findings findings.Options
	Settings *settings.Settings
	// Timelines are the inputs' timelines, taken while their models were
	// held (ChartOptions.Timelines).
	Timelines *Timelines
	// Match, when set, makes the collectives analysis
	// (ChartOptions.Match).
	Match func() *collectives.Table
}

// ChartFunc writes one chart: name is a file-name-safe base name ("shares",
// "steps-runA-rank0"), draw writes the chart's bytes. It returns the link
// the markdown gives the chart, relative to the report.
type ChartFunc func(name string, draw func(w io.Writer) error) (link string, err error)

// Report is the analysis a report shows.
type Report struct {
	opt     Options
	tbl     *window.Table
	inputs  []window.Input
	runs    []run
	groups  *analyze.GroupTable
	kernels []analyze.KernelStat
	charts  *Charts
	// answer is what the summary leads with: the findings.
	answer render.Answer
}

// New analyses a table for a report.
func New(tbl *window.Table, opt Options) *Report {
	if opt.Level <= 0 {
		opt.Level = 1
	}
	c := NewCharts(tbl, ChartOptions{Filter: opt.Filter, Top: opt.Top,
		BytesPerToken: opt.BytesPerToken, Link: opt.Link, Links: opt.Links, Unattributed: opt.Unattributed, Timelines: opt.Timelines, Match: opt.Match})
	r := &Report{opt: opt, tbl: tbl, inputs: tbl.Inputs, runs: runsOf(tbl.Inputs), groups: c.groups, kernels: c.kernels, charts: c}
	var ct *collectives.Table
	if c.groups.AnyCommunication() {
		ct = c.Collectives()
	}
	fopt := opt.Findings
	fopt.Roofline, fopt.Priced = render.RooflineRows(opt.Efficiency)
	r.answer = render.Answer{Collectives: ct, Findings: findings.Find(c.groups, ct, fopt), Settings: opt.Settings}
	return r
}

// AtLevel is the same report with its title at heading level n: the full
// report of a section appended at level 2 is a document of its own.
func (r *Report) AtLevel(n int) *Report {
	c := *r
	c.opt.Level = max(1, n)
	return &c
}

// writer is a report being written: the markdown and its charts.
type writer struct {
	*Report
	sb     strings.Builder
	chart  ChartFunc
	format string
	files  int
}

func (w *writer) h(n int) string { return strings.Repeat("#", w.opt.Level+n) + " " }

// draw writes one chart through the callback and returns its markdown
// image link.
func (w *writer) draw(name, alt string, draw func(io.Writer) error) (string, error) {
	link, err := w.chart(name, draw)
	if err != nil {
		return "", err
	}
	w.files++
	return "![" + alt + "](" + link + ")", nil
}

// drawKind draws chart kind of input i (step stepIndex for a timeline).
func (w *writer) drawKind(name string, kind ChartKind, i, stepIndex int, alt string) (string, error) {
	return w.draw(name, alt, func(out io.Writer) error { return w.charts.Draw(out, kind, i, stepIndex, w.format) })
}

// Generate writes the whole report's markdown to out and its charts, in
// format (svg or png), through chart. It returns the number of charts
// written.
func (r *Report) Generate(out io.Writer, format string, chart ChartFunc) (int, error) {
	w := &writer{Report: r, chart: chart, format: format}
	if err := w.write(); err != nil {
		return w.files, err
	}
	_, err := io.WriteString(out, w.sb.String())
	return w.files, err
}

// title is the report's heading: its runs, and the date of an appended
// section.
func (w *writer) title() string {
	t := Title(w.inputs)
	if w.opt.Level == 1 {
		t = "traceq report: " + t
	}
	if w.opt.Date != "" {
		t += " — " + w.opt.Date
	}
	return w.h(0) + render.Printable(t) + "\n\n"
}

// summary writes the run summary breakdown leads with.
func (w *writer) summary() error {
	return render.Summary(&w.sb, w.groups, w.answer, render.Options{Format: "markdown", Level: w.opt.Level + 1, Efficiency: w.opt.Efficiency})
}

func (w *writer) write() error {
	sb := &w.sb
	sb.WriteString(w.title())
	if err := w.beforeAfter(true); err != nil {
		return err
	}
	if err := w.summary(); err != nil {
		return err
	}
	sb.WriteString("\n")

	sb.WriteString(w.h(1) + "Where GPU time goes\n\n")
	link, err := w.drawKind("shares", Shares, 0, 0, "kernel-time share by category")
	if err != nil {
		return err
	}
	sb.WriteString(link + "\n\n")
	sb.WriteString("*Each bar is one run, rank, device and step kind; its segments are the top-level categories' shares of that group's GPU kernel time " +
		"(the summed durations of its kernels, memcpys and memsets; work on overlapping streams counts in full). The label ends with the group's kernel time.*\n\n")
	w.comparison()
	w.idleSection()
	if err := w.collectives(); err != nil {
		return err
	}
	if err := w.speedOfLight(); err != nil {
		return err
	}

	sb.WriteString(w.h(1) + "Top kernels\n\n")
	link, err = w.drawKind("top", Top, 0, 0, "top kernels")
	if err != nil {
		return err
	}
	sb.WriteString(link + "\n\n")
	sb.WriteString(fmt.Sprintf("*The %d kernels (and memory operations) with the most total GPU time across all inputs%s; the share is of all GPU activity time.*\n\n",
		len(w.kernels), kindNote(w.opt.Filter)))
	if err := render.Kernels(sb, w.tbl, w.kernels, render.Options{Format: "markdown", Efficiency: w.opt.Efficiency}); err != nil {
		return err
	}
	sb.WriteString("\n")

	if err := w.stepSection(); err != nil {
		return err
	}

	sb.WriteString(w.h(1) + "Inputs\n\n")
	w.inputsTable()

	sb.WriteString(w.h(1) + "Breakdown by group\n\n")
	return render.BreakdownDetail(sb, w.groups, w.charts.stragglers(), render.Options{Format: "markdown", Top: 5, NameWidth: 80, Level: w.opt.Level + 2,
		Detail: render.DetailGroups | render.DetailRanks})
}

func kindNote(f step.Filter) string {
	c, on := f.Class()
	if !on {
		return ""
	}
	return " in " + c.String() + " steps"
}

func (w *writer) inputsTable() {
	t := render.Table{Head: []string{"run", "input", "format", "rank", "activities", "steps", "note"},
		Right: []bool{false, false, false, true, true, true, false}}
	for i, in := range w.inputs {
		rank := ""
		if in.Rank != nil {
			rank = strconv.Itoa(*in.Rank)
			if in.WorldSize != nil {
				rank += " of " + strconv.Itoa(*in.WorldSize)
			}
		}
		steps := "none"
		if st := in.Stepped; st != nil {
			steps = strconv.Itoa(st.Steps)
		}
		note := ""
		if in.Truncated != "" {
			note = "truncated: " + in.Truncated
		}
		t.Add(runName(w.inputs[i]), render.Code(in.Path), string(in.Format), rank, strconv.Itoa(in.Activities), steps, note)
	}
	t.Markdown(&w.sb)
	w.sb.WriteString("\n")
}

// tableGroups is the groups the report's group tables show: all of them
// with Options.Unattributed, else all but those outside any step that
// hold almost nothing; note says what was left out.
func (w *writer) tableGroups() ([]analyze.Group, string) {
	if w.opt.Unattributed {
		return w.groups.Groups, ""
	}
	gs, note := chart.LeaveOutUnattributed(w.groups.Groups)
	if note != "" {
		note = "*Not shown: " + note + "; `--unattributed` shows them.*\n\n"
	}
	return gs, note
}

// comparison writes, for several inputs, one row per group: its times and
// each top-level category's share, so ranks or runs read side by side.
func (w *writer) comparison() {
	if len(w.inputs) < 2 {
		return
	}
	gs, left := w.tableGroups()
	w.sb.WriteString(w.h(2) + "Per-group comparison\n\n")
	var present [classify.NumTops]bool
	by := make([]chart.TopSums, len(gs))
	for i, g := range gs {
		by[i] = chart.CategoriesByTop(g.Categories)
		for k, ns := range by[i] {
			if ns > 0 {
				present[k] = true
			}
		}
	}
	t := render.Table{Head: []string{"group", "kernel ms", "busy ms", "span ms", "idle"}, Right: []bool{false, true, true, true, true}}
	for _, top := range classify.Tops() {
		if present[top] {
			t.Head = append(t.Head, top.String())
			t.Right = append(t.Right, true)
		}
	}
	names := chart.GroupLabels(gs)
	for i, g := range gs {
		row := []string{names[i], render.MS(g.KernelNS), render.MS(g.BusyNS), render.MS(g.SpanNS), render.Pct(stats.Ratio(g.IdleNS, g.SpanNS))}
		for _, top := range classify.Tops() {
			if present[top] {
				row = append(row, render.Pct(stats.Ratio(by[i][top], g.KernelNS)))
			}
		}
		t.Add(row...)
	}
	t.Markdown(&w.sb)
	w.sb.WriteString("\n*kernel: summed activity durations; busy: wall time with at least one activity running; span: first activity start to last end; " +
		"idle: time in the span when the device ran nothing, as a share of span. Category columns: share of the group's kernel time.*\n\n")
	w.sb.WriteString(left)
}

// stepSection writes the step statistics and the per-input charts.
func (w *writer) stepSection() error {
	sb := &w.sb
	hasSteps := len(w.groups.Steps) > 0
	if hasSteps {
		sb.WriteString(w.h(1) + "Steps\n\n")
		t := render.Table{Head: []string{"group", "steps", "span min", "p50", "p90", "p99", "max", "mean", "busy p50", "idle p50", "outlier steps"},
			Right: []bool{false, true, true, true, true, true, true, true, true, true, false}}
		var stepGroups []analyze.Group
		for _, g := range w.groups.Groups {
			if g.StepStats != nil {
				stepGroups = append(stepGroups, g)
			}
		}
		names := chart.GroupLabels(stepGroups)
		for i, g := range stepGroups {
			ss := g.StepStats
			out := make([]string, 0, len(ss.Outliers))
			for j, o := range ss.Outliers {
				if j == 10 {
					out = append(out, fmt.Sprintf("… %d in all", len(ss.Outliers)))
					break
				}
				out = append(out, strconv.Itoa(o))
			}
			t.Add(names[i], strconv.Itoa(ss.Count), render.MS(ss.SpanNS.Min), render.MSf(ss.SpanNS.P50), render.MSf(ss.SpanNS.P90),
				render.MSf(ss.SpanNS.P99), render.MS(ss.SpanNS.Max), render.MSf(ss.SpanNS.Mean), render.MSf(ss.BusyNS.P50),
				render.MSf(ss.IdleNS.P50), strings.Join(out, ", "))
		}
		t.Markdown(sb)
		sb.WriteString("\n*Times in ms. span: a step's first kernel start to its last kernel end on the device; busy: time with at least one of the step's kernels running; " +
			"idle: time in the span when the device ran nothing. " +
			"Percentiles interpolate linearly between closest ranks. Outliers: steps slower than the median by more than 3.5 robust standard deviations (MAD / 0.6745).*\n\n")
	} else {
		sb.WriteString(w.h(1) + "Timeline\n\n")
		sb.WriteString("*No step markers: the timeline shows the whole trace.*\n\n")
	}
	shown := w.chartInputs()
	if len(w.inputs) > len(shown) {
		fmt.Fprintf(sb, "*Per-input charts for %d of %d inputs: the first of each run in turn.*\n\n", len(shown), len(w.inputs))
	}
	for _, i := range shown {
		suffix := w.inputSuffix(i)
		if len(w.inputs) > 1 {
			sb.WriteString(w.h(2) + render.Printable(InputTitle(w.inputs, i)) + "\n\n")
		}
		// One step is one bar: the shares chart already shows it.
		if rows := w.charts.series(i, false); len(rows) >= minStepsChart {
			link, err := w.drawKind("steps"+suffix, Steps, i, 0, "GPU time per step by category")
			if err != nil {
				return err
			}
			sb.WriteString(link + "\n\n")
			sb.WriteString(stepsCaption(rows) + "\n\n")
			if hrows := w.charts.series(i, true); len(hrows) >= minHistSteps {
				link, err = w.drawKind("hist"+suffix, Hist, i, 0, "step time distribution")
				if err != nil {
					return err
				}
				sb.WriteString(link + "\n\n")
				fmt.Fprintf(sb, "*Distribution of the GPU span of the %d %s, with p50, p90 and p99.*\n\n", len(hrows), stepsOf(hrows[0].Step.Kind))
			}
		}
		idx, what := medianStep(w.charts.series(i, true))
		if !hasSteps || w.inputs[i].Steps == nil {
			idx, what = 0, "the whole trace (no step markers)"
		} else if idx < 0 {
			continue
		}
		link, err := w.drawKind("timeline"+suffix, Timeline, i, idx, "timeline of one step")
		if err != nil {
			fmt.Fprintf(sb, "*No timeline: %v.*\n\n", err)
			continue
		}
		sb.WriteString(link + "\n\n")
		fmt.Fprintf(sb, "*Timeline of %s: every kernel on its stream, coloured by category; white is time the stream ran nothing. `traceq chart --type timeline --step-index N` draws another step.*\n\n", what)
	}
	return nil
}

// inputSuffix ends the names of input i's chart files: "" for a report of
// one input, else "-" and its slug.
func (w *writer) inputSuffix(i int) string {
	if len(w.inputs) < 2 {
		return ""
	}
	return "-" + inputSlugs(w.inputs)[i]
}

// stepsCaption says what the steps chart of rows shows.
func stepsCaption(rows []analyze.StepRow) string {
	caption := fmt.Sprintf("*Each bar is one step's GPU kernel time on device %d, split by category; the dark tick is the step's GPU span.", rows[0].Device)
	if _, bin := chart.StepBars(rows, chart.MaxStepBars); bin > 1 {
		caption += fmt.Sprintf(" The %d steps are binned: each bar is the mean of %d consecutive steps.", len(rows), bin)
	}
	return caption + "*"
}

// chartInputs picks the inputs that get their own charts: the first input
// of each run, then the second of each, … up to MaxInputCharts, in input
// order.
func (w *writer) chartInputs() []int {
	var out []int
	for k := 0; len(out) < MaxInputCharts; k++ {
		added := false
		for _, r := range w.runs {
			if k < len(r.inputs) && len(out) < MaxInputCharts {
				out = append(out, r.inputs[k])
				added = true
			}
		}
		if !added {
			break
		}
	}
	slices.Sort(out)
	return out
}

// stepsOf names steps of a kind: "decode steps", or "steps" for the
// generic kind.
func stepsOf(kind step.Kind) string {
	if kind == step.Generic || kind == 0 {
		return "steps"
	}
	return kind.String() + " steps"
}

// medianStep picks the step a report's timeline shows: the one with the
// median span among rows (the lower median; ties by index), a typical step
// rather than the first, which is often a warm-up.
func medianStep(rows []analyze.StepRow) (int, string) {
	if len(rows) == 0 {
		return -1, ""
	}
	s := slices.Clone(rows)
	slices.SortFunc(s, func(a, b analyze.StepRow) int {
		if c := cmp.Compare(a.SpanNS, b.SpanNS); c != 0 {
			return c
		}
		return cmp.Compare(a.Step.Index, b.Step.Index)
	})
	m := s[(len(s)-1)/2]
	if m.Step.Kind == step.Generic {
		return m.Step.Index, fmt.Sprintf("step %d, the step with the median span", m.Step.Index)
	}
	return m.Step.Index, fmt.Sprintf("step %d, the %s step with the median span", m.Step.Index, m.Step.Kind)
}
