package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/chart"
)

// maxInputCharts is the most inputs that get their own steps, hist and
// timeline charts in a report; the shares chart and the comparison table
// cover every input.
const maxInputCharts = 4

// minStepsChart and minHistSteps are the fewest steps a report draws a
// steps chart and a histogram of.
const (
	minStepsChart = 2
	minHistSteps  = 3
)

// stepsOf names steps of a kind: "decode steps", or "steps" for the
// generic kind.
func stepsOf(kind string) string {
	if kind == "step" || kind == "" {
		return "steps"
	}
	return kind + " steps"
}

func reportCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write a markdown report (tables and charts) to a directory, or append it as a dated section to a benchmark log",
		Description: "--out DIR writes DIR/report.md and the chart files next to it.\n" +
			"--append BENCH.md appends one dated section to BENCH.md (created if absent; what is there is never changed),\n" +
			"with the charts in --out DIR, or by default in a new directory next to BENCH.md.",
		ArgsUsage: "INPUT...",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write report.md and the charts to `DIR`"},
			&cli.StringFlag{Name: "append", Usage: "append a dated section to the markdown `FILE`"},
			&cli.StringFlag{Name: "format", Value: "svg", Usage: "chart format: svg or png"},
			// The date makes appended sections non-deterministic; tests
			// pin it.
			&cli.StringFlag{Name: "date", Hidden: true, EnvVars: []string{"TRACEQ_DATE"}, Usage: "date of the appended section, YYYY-MM-DD (default: today, UTC)"},
		}, chartFlags()...), inputFlags()...),
		Action: func(c *cli.Context) error {
			out, app := c.String("out"), c.String("append")
			if out == "" && app == "" {
				return usagef("report: give --out DIR, --append FILE, or both")
			}
			if err := chart.CheckFormat(c.String("format")); err != nil {
				return usagef("report: %v", err)
			}
			if c.Int("top") <= 0 {
				return usagef("report: --top must be > 0")
			}
			date := c.String("date")
			if date == "" {
				date = time.Now().UTC().Format(time.DateOnly)
			} else if _, err := time.Parse(time.DateOnly, date); err != nil {
				return usagef("report: --date %q: want YYYY-MM-DD", date)
			}
			cl, err := classifier(c)
			if err != nil {
				return err
			}
			inputs, err := loadInputs(c, e)
			if err != nil {
				return err
			}
			d := newChartData(inputs, cl, c.String("step-kind"), c.Int("top"))
			rp := &reportPlan{d: d, format: c.String("format"), top: c.Int("top")}
			var mdPath string
			if app == "" {
				mdPath, rp.chartDir, rp.linkDir = filepath.Join(out, "report.md"), out, out
				rp.level = 1
			} else {
				mdPath, rp.linkDir, rp.chartDir = app, filepath.Dir(app), out
				if out == "" {
					rp.chartDir = freshDir(filepath.Join(filepath.Dir(app), "traceq-"+date+"-"+slug(inputs[0].Path)))
				}
				rp.level, rp.date = 2, date
			}
			if err := os.MkdirAll(rp.chartDir, 0o755); err != nil {
				return err
			}
			md, files, err := rp.write()
			if err != nil {
				return err
			}
			if app == "" {
				if err := os.WriteFile(mdPath, md, 0o644); err != nil {
					return err
				}
			} else if err := appendSection(app, md); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "wrote %s and %d charts in %s\n", mdPath, files, rp.chartDir)
			return nil
		},
	}
}

// freshDir returns dir, or dir-2, dir-3… the first that does not exist, so
// a second report the same day does not overwrite the first one's charts.
func freshDir(dir string) string {
	for i := 1; ; i++ {
		p := dir
		if i > 1 {
			p = dir + "-" + strconv.Itoa(i)
		}
		if _, err := os.Stat(p); os.IsNotExist(err) {
			return p
		}
	}
}

// appendSection appends md to path (created if absent), after a blank
// line, without changing what the file holds.
func appendSection(path string, md []byte) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	var pre []byte
	switch {
	case len(old) == 0:
	case bytes.HasSuffix(old, []byte("\n\n")):
	case bytes.HasSuffix(old, []byte("\n")):
		pre = []byte("\n")
	default:
		pre = []byte("\n\n")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(pre, md...)); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// slug is a file-name-safe short name of an input path: its base name
// without trace extensions.
func slug(p string) string {
	b := filepath.Base(strings.TrimRight(p, "/"))
	for _, ext := range []string{".gz", ".json", ".sqlite", ".pt.trace", ".trace"} {
		b = strings.TrimSuffix(b, ext)
	}
	var sb strings.Builder
	for _, r := range b {
		if r == '-' || r == '_' || r == '.' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	if sb.Len() == 0 {
		return "input"
	}
	return sb.String()
}

// reportPlan writes one report: the charts into chartDir and the markdown
// with links relative to linkDir.
type reportPlan struct {
	d        *chartData
	format   string
	top      int
	chartDir string
	linkDir  string
	level    int    // heading level of the report's title
	date     string // set for an appended section
	files    int
}

func (rp *reportPlan) h(n int) string { return strings.Repeat("#", rp.level+n) + " " }

// chart draws one chart to file name in chartDir and returns its
// markdown image link, or "" with the reason when there is nothing to draw.
func (rp *reportPlan) chart(name, kind string, i, stepIndex int, alt string) (string, error) {
	return rp.drawFile(name, alt, func(w io.Writer) error { return rp.d.draw(w, kind, i, stepIndex, rp.format) })
}

// drawFile writes what draw draws to name in chartDir and returns its
// markdown image link.
func (rp *reportPlan) drawFile(name, alt string, draw func(io.Writer) error) (string, error) {
	var buf bytes.Buffer
	if err := draw(&buf); err != nil {
		return "", err
	}
	p := filepath.Join(rp.chartDir, name+"."+rp.format)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	rp.files++
	rel, err := filepath.Rel(rp.linkDir, p)
	if err != nil {
		rel = p
	}
	return "![" + alt + "](" + filepath.ToSlash(rel) + ")", nil
}

func (rp *reportPlan) write() ([]byte, int, error) {
	d := rp.d
	var sb strings.Builder
	title := traceTitle(d.inputs)
	if rp.date != "" {
		sb.WriteString(rp.h(0) + title + " — " + rp.date + "\n\n")
	} else {
		sb.WriteString(rp.h(0) + "traceq report: " + title + "\n\n")
	}
	rp.inputsTable(&sb)

	sb.WriteString(rp.h(1) + "Where GPU time goes\n\n")
	link, err := rp.chart("shares", "shares", 0, 0, "kernel-time share by category")
	if err != nil {
		return nil, 0, err
	}
	sb.WriteString(link + "\n\n")
	sb.WriteString("*Each bar is one input, device and step kind; its segments are the top-level categories' shares of that group's GPU kernel time " +
		"(the summed durations of its kernels, memcpys and memsets; work on overlapping streams counts in full). The label ends with the group's kernel time.*\n\n")
	rp.comparison(&sb)
	if err := rp.beforeAfter(&sb); err != nil {
		return nil, 0, err
	}

	sb.WriteString(rp.h(1) + "Top kernels\n\n")
	link, err = rp.chart("top", "top", 0, 0, "top kernels")
	if err != nil {
		return nil, 0, err
	}
	sb.WriteString(link + "\n\n")
	sb.WriteString(fmt.Sprintf("*The %d kernels (and memory operations) with the most total GPU time across all inputs%s; the share is of all GPU activity time.*\n\n",
		len(d.kernels), kindNote(d.stepKind)))
	var kb bytes.Buffer
	if err := render.Kernels(&kb, &render.KernelReport{Inputs: d.report.Inputs, Kernels: d.kernels}, render.Options{Format: "markdown"}); err != nil {
		return nil, 0, err
	}
	sb.Write(kb.Bytes())
	sb.WriteString("\n")

	if err := rp.steps(&sb); err != nil {
		return nil, 0, err
	}

	sb.WriteString(rp.h(1) + "Breakdown by group\n\n")
	var bb bytes.Buffer
	if err := render.Breakdown(&bb, d.report, render.Options{Format: "markdown", Top: 5, NameWidth: 80}); err != nil {
		return nil, 0, err
	}
	// render.Breakdown titles groups at level 3; keep them one below ours.
	body := bb.String()
	if rp.level != 1 {
		body = strings.ReplaceAll("\n"+body, "\n### ", "\n"+rp.h(2))[1:]
	}
	sb.WriteString(body)
	return []byte(sb.String()), rp.files, nil
}

func kindNote(kind string) string {
	if kind == "" {
		return ""
	}
	return " in " + kind + " steps"
}

func (rp *reportPlan) inputsTable(sb *strings.Builder) {
	t := mdTable{head: []string{"input", "format", "rank", "activities", "steps", "note"}, right: []bool{false, false, true, true, true, false}}
	for i, in := range rp.d.report.Inputs {
		rank := ""
		if in.Rank != nil {
			rank = strconv.Itoa(*in.Rank)
			if in.WorldSize != nil {
				rank += " of " + strconv.Itoa(*in.WorldSize)
			}
		}
		steps := "none"
		if st := rp.d.inputs[i].Steps; st != nil {
			steps = strconv.Itoa(len(st.List))
		}
		note := ""
		if in.Truncated != "" {
			note = "truncated: " + in.Truncated
		}
		t.add("`"+in.Path+"`", in.Format, rank, strconv.Itoa(in.Activities), steps, note)
	}
	t.write(sb)
	sb.WriteString("\n")
}

// comparison writes, for several inputs, one row per group: its times and
// each top-level category's share, so ranks or a before/after pair read
// side by side.
func (rp *reportPlan) comparison(sb *strings.Builder) {
	gs := rp.d.report.Groups
	paths := map[string]bool{}
	for _, g := range gs {
		paths[g.Path] = true
	}
	if len(paths) < 2 {
		return
	}
	sb.WriteString(rp.h(2) + "Per-input comparison\n\n")
	tops := classify.Tops()
	present := make([]bool, len(tops))
	by := make([][]int64, len(gs))
	for i, g := range gs {
		by[i] = analyze.CategoriesByTop(g.Categories)
		for k, ns := range by[i] {
			if ns > 0 {
				present[k] = true
			}
		}
	}
	t := mdTable{head: []string{"group", "kernel ms", "busy ms", "span ms", "idle"}, right: []bool{false, true, true, true, true}}
	for k, top := range tops {
		if present[k] {
			t.head = append(t.head, top)
			t.right = append(t.right, true)
		}
	}
	labels := chart.GroupLabels(gs)
	for i, g := range gs {
		// The label's last part is the kernel time, a column here.
		label := labels[i][:strings.LastIndex(labels[i], " · ")]
		row := []string{label, render.MS(g.KernelNS), render.MS(g.BusyNS), render.MS(g.SpanNS), render.Pct(ratio(g.IdleNS, g.SpanNS))}
		for k := range tops {
			if present[k] {
				row = append(row, render.Pct(ratio(by[i][k], g.KernelNS)))
			}
		}
		t.add(row...)
	}
	t.write(sb)
	sb.WriteString("\n*kernel: summed activity durations; busy: wall time with at least one activity running; span: first activity start to last end; idle: span − busy, as a share of span. Category columns: share of the group's kernel time.*\n\n")
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// ranksOfOneRun reports whether two inputs are different ranks of one
// distributed run (their traces say so), rather than a before/after pair.
func ranksOfOneRun(a, b analyze.InputInfo) bool {
	return a.Rank != nil && b.Rank != nil && *a.Rank != *b.Rank &&
		a.WorldSize != nil && b.WorldSize != nil && *a.WorldSize == *b.WorldSize && *a.WorldSize > 1
}

// beforeAfter writes, for two inputs that are not two ranks of one run,
// traceq diff's comparison of the second against the first: its chart and
// its markdown tables.
func (rp *reportPlan) beforeAfter(sb *strings.Builder) error {
	d := rp.d
	if len(d.inputs) != 2 || ranksOfOneRun(d.report.Inputs[0], d.report.Inputs[1]) {
		return nil
	}
	before, after := d.inputs[:1], d.inputs[1:]
	df := analyze.Compare(before, after, analyze.Options{Classifier: d.cl, Kind: d.stepKind})
	sb.WriteString(rp.h(2) + "Before → after\n\n")
	fmt.Fprintf(sb, "*`%s` is before, `%s` after, as `traceq diff` compares them.*\n\n", before[0].Path, after[0].Path)
	if df.Comparable {
		title := filepath.Base(before[0].Path) + " → " + filepath.Base(after[0].Path)
		link, err := rp.drawFile("diff", "change in GPU time per step", func(w io.Writer) error {
			return chart.Diff(w, df, chart.Options{Format: rp.format, Title: title})
		})
		if err != nil {
			return err
		}
		sb.WriteString(link + "\n\n")
	}
	var buf bytes.Buffer
	if err := render.Diff(&buf, df, render.Options{Format: "markdown"}); err != nil {
		return err
	}
	// render.Diff titles its parts at level 3; keep them below ours.
	body := strings.ReplaceAll("\n"+buf.String(), "\n### ", "\n"+rp.h(3))[1:]
	sb.WriteString(body + "\n")
	return nil
}

// steps writes the step statistics and the per-input charts.
func (rp *reportPlan) steps(sb *strings.Builder) error {
	d := rp.d
	hasSteps := len(d.report.StepRows) > 0
	if hasSteps {
		sb.WriteString(rp.h(1) + "Steps\n\n")
		t := mdTable{head: []string{"group", "steps", "span min", "p50", "p90", "p99", "max", "mean", "busy p50", "idle p50", "outlier steps"},
			right: []bool{false, true, true, true, true, true, true, true, true, true, false}}
		var stepGroups []analyze.Group
		for _, g := range d.report.Groups {
			if g.StepStats != nil {
				stepGroups = append(stepGroups, g)
			}
		}
		labels := chart.GroupLabels(stepGroups)
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
			label := labels[i][:strings.LastIndex(labels[i], " · ")]
			t.add(label, strconv.Itoa(ss.Count), render.MS(ss.SpanNS.Min), render.MSf(ss.SpanNS.P50), render.MSf(ss.SpanNS.P90),
				render.MSf(ss.SpanNS.P99), render.MS(ss.SpanNS.Max), render.MSf(ss.SpanNS.Mean), render.MSf(ss.BusyNS.P50),
				render.MSf(ss.IdleNS.P50), strings.Join(out, ", "))
		}
		t.write(sb)
		sb.WriteString("\n*Times in ms. span: a step's first kernel start to its last kernel end on the device; busy: time with at least one kernel running; idle: span − busy. " +
			"Percentiles interpolate linearly between closest ranks. Outliers: steps slower than the median by more than 3.5 robust standard deviations (MAD / 0.6745).*\n\n")
	} else {
		sb.WriteString(rp.h(1) + "Timeline\n\n")
		sb.WriteString("*No step markers: the timeline shows the whole trace.*\n\n")
	}
	slugs := uniqueSlugs(d.inputs)
	n := min(len(d.inputs), maxInputCharts)
	if len(d.inputs) > n {
		fmt.Fprintf(sb, "*Per-input charts for the first %d of %d inputs.*\n\n", n, len(d.inputs))
	}
	for i := range n {
		suffix := ""
		if len(d.inputs) > 1 {
			suffix = "-" + slugs[i]
			sb.WriteString(rp.h(2) + "`" + d.inputs[i].Path + "`\n\n")
		}
		// One step is one bar: the shares chart already shows it.
		if rows := d.series(i, false); len(rows) >= minStepsChart {
			link, err := rp.chart("steps"+suffix, "steps", i, 0, "GPU time per step by category")
			if err != nil {
				return err
			}
			sb.WriteString(link + "\n\n")
			caption := fmt.Sprintf("*Each bar is one step's GPU kernel time on device %d, split by category; the dark tick is the step's GPU span.", rows[0].Device)
			if _, bin := chart.StepBars(rows, chart.MaxStepBars); bin > 1 {
				caption += fmt.Sprintf(" The %d steps are binned: each bar is the mean of %d consecutive steps.", len(rows), bin)
			}
			sb.WriteString(caption + "*\n\n")
			if hrows := d.series(i, true); len(hrows) >= minHistSteps {
				link, err = rp.chart("hist"+suffix, "hist", i, 0, "step time distribution")
				if err != nil {
					return err
				}
				sb.WriteString(link + "\n\n")
				fmt.Fprintf(sb, "*Distribution of the GPU span of the %d %s, with p50, p90 and p99.*\n\n", len(hrows), stepsOf(hrows[0].Step.Kind))
			}
		}
		idx, what := medianStep(d.series(i, true))
		if !hasSteps || d.inputs[i].Steps == nil {
			idx, what = 0, "the whole trace (no step markers)"
		} else if idx < 0 {
			continue
		}
		link, err := rp.chart("timeline"+suffix, "timeline", i, idx, "timeline of one step")
		if err != nil {
			fmt.Fprintf(sb, "*No timeline: %v.*\n\n", err)
			continue
		}
		sb.WriteString(link + "\n\n")
		fmt.Fprintf(sb, "*Timeline of %s: every kernel on its stream, coloured by category; white is time the stream ran nothing. `traceq chart --kind timeline --step-index N` draws another step.*\n\n", what)
	}
	return nil
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
	if m.Step.Kind == "step" {
		return m.Step.Index, fmt.Sprintf("step %d, the step with the median span", m.Step.Index)
	}
	return m.Step.Index, fmt.Sprintf("step %d, the %s step with the median span", m.Step.Index, m.Step.Kind)
}

// uniqueSlugs names the per-input chart files; equal slugs get -2, -3….
func uniqueSlugs(inputs []analyze.Input) []string {
	out := make([]string, len(inputs))
	seen := map[string]int{}
	for i, in := range inputs {
		s := slug(in.Path)
		seen[s]++
		if k := seen[s]; k > 1 {
			s += "-" + strconv.Itoa(k)
		}
		out[i] = s
	}
	return out
}

// mdTable is a small markdown table.
type mdTable struct {
	head  []string
	right []bool
	rows  [][]string
}

func (t *mdTable) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *mdTable) write(w io.StringWriter) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
	line := func(cells []string) {
		w.WriteString("|")
		for _, c := range cells {
			w.WriteString(" " + esc(c) + " |")
		}
		w.WriteString("\n")
	}
	line(t.head)
	w.WriteString("|")
	for _, r := range t.right {
		if r {
			w.WriteString("---:|")
		} else {
			w.WriteString("---|")
		}
	}
	w.WriteString("\n")
	for _, r := range t.rows {
		line(r)
	}
}
