package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// Options tunes table output.
type Options struct {
	Format string // text, markdown, csv, json
	// Top is the number of kernels shown per group in text and markdown.
	Top int
	// NameWidth clips kernel names in text and markdown (0: 100 runes);
	// CSV and JSON always carry full names.
	NameWidth int
	// Level is the heading level of section titles in markdown (0: 3), so
	// that a table can sit inside a report.
	Level int
	// Detail selects the parts of breakdown's text and markdown after the
	// summary; NoHint leaves out the line naming the others.
	Detail Detail
	NoHint bool
	// Efficiency, when it priced some kernel, adds the speed of light of
	// each class to breakdown's summary, the efficiency tables to its
	// --detail efficiency and columns to the kernels table.
	Efficiency *efficiency.Result
}

func (o Options) level() int {
	if o.Level <= 0 {
		return 3
	}
	return o.Level
}

func (o Options) nameWidth() int {
	if o.NameWidth <= 0 {
		return 100
	}
	return o.NameWidth
}

func (o Options) top() int {
	if o.Top <= 0 {
		return 10
	}
	return o.Top
}

// GroupTitle names a group: path, rank, process, device, step kind.
func GroupTitle(g *analyze.Group) string {
	parts := []string{g.Rank.Path}
	if g.Rank.Number != nil {
		parts = append(parts, "rank "+strconv.Itoa(*g.Rank.Number))
	}
	if g.Rank.PID != 0 {
		parts = append(parts, "pid "+strconv.FormatInt(g.Rank.PID, 10))
	}
	parts = append(parts, "device "+strconv.Itoa(int(g.Device)))
	kind := g.Class.String()
	switch {
	case g.Steps > 0:
		kind = StepCount(g.Steps, g.Class.Kind)
	case g.Class.Scope == step.Whole:
		kind = "whole trace"
	case g.Class.Scope == step.Outside:
		kind = "outside any step"
	}
	parts = append(parts, kind)
	return Printable(strings.Join(parts, " · "))
}

// heading writes a section title: "### title" in markdown (at
// opt.Level), "== title" in text.
func heading(sb *strings.Builder, title string, opt Options) {
	if opt.Format == "markdown" {
		sb.WriteString(strings.Repeat("#", opt.level()) + " " + title + "\n\n")
	} else {
		sb.WriteString("== " + title + "\n")
	}
}

// Breakdown writes the breakdown r, its per-kernel table ks, the findings
// of a and, for the communication rows of the cross-rank table, the
// stragglers of a.Collectives (nil when the collectives were not
// matched). Text and markdown lead with the summary of each run and
// class, its findings first, then the parts opt.Detail asks for; CSV and
// JSON are complete, with the per-kernel table next to the groups.
func Breakdown(w io.Writer, r *analyze.GroupTable, ks []analyze.KernelStat, a Answer, opt Options) error {
	ct := a.Collectives
	switch opt.Format {
	case "json":
		return writeJSON(w, jsonBreakdownDoc{Inputs: jsonInputs(r.Table.Inputs), Groups: jsonGroups(r.Groups),
			Kernels: jsonKernels(ks, kernelEff(opt.Efficiency)), CrossRank: jsonRanks(r.CrossRank, ct), EmptyLaunches: jsonEmptyLaunches(r.Table),
			Findings: jsonFindings(a.Findings), Below: jsonBelow(a.Findings), Settings: jsonSettings(a.Settings)})
	case "csv":
		if err := breakdownCSV(w, r); err != nil {
			return err
		}
		return crossRankCSV(w, r.CrossRank, ct)
	case "markdown", "text", "":
	default:
		return CheckFormat(opt.Format)
	}
	var sb strings.Builder
	md := opt.Format == "markdown"
	summaryText(&sb, r, a, opt)
	var names Labels
	if opt.Detail&(DetailGroups|DetailKernels) != 0 {
		names = LabelsOf(r.Table.Names())
	}
	if opt.Detail&DetailGroups != 0 {
		sb.WriteByte('\n')
		groupsText(&sb, r, names, opt)
	}
	if opt.Detail&DetailRanks != 0 {
		crossRankText(&sb, r.CrossRank, ct, opt)
	}
	if opt.Detail&DetailEfficiency != 0 && Priced(opt.Efficiency) {
		efficiencyTables(&sb, opt.Efficiency, opt)
	}
	if opt.Detail&DetailKernels != 0 && len(ks) > 0 {
		sb.WriteByte('\n')
		heading(&sb, fmt.Sprintf("the %d kernels with the most time, all inputs", min(len(ks), opt.top())), opt)
		t := kernelTable(ks[:min(len(ks), opt.top())], names, opt)
		if md {
			t.Markdown(&sb)
		} else {
			t.Text(&sb, "  ")
		}
	}
	if opt.Detail != DetailAll && !opt.NoHint {
		var more []string
		for _, d := range []struct {
			d    Detail
			name string
		}{{DetailGroups, "groups"}, {DetailRanks, "ranks"}, {DetailKernels, "kernels"}, {DetailEfficiency, "efficiency"}} {
			if opt.Detail&d.d == 0 && (d.d != DetailRanks || len(r.CrossRank) > 0) && (d.d != DetailEfficiency || Priced(opt.Efficiency)) {
				more = append(more, d.name)
			}
		}
		if len(more) > 0 {
			sb.WriteString("\n(more: --detail " + strings.Join(more, ", ") + " or all; --format json has everything)\n")
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// groupsText writes every group: its times, categories and top kernels.
func groupsText(sb *strings.Builder, r *analyze.GroupTable, names Labels, opt Options) {
	md := opt.Format == "markdown"
	for i := range r.Groups {
		g := &r.Groups[i]
		if i > 0 {
			sb.WriteByte('\n')
		}
		heading(sb, GroupTitle(g), opt)
		summary := fmt.Sprintf("kernel time %s ms · busy %s ms · span %s ms · idle %s ms (%s of span)",
			MS(g.KernelNS), MS(g.BusyNS), MS(g.SpanNS), MS(g.IdleNS), Pct(ratio(g.IdleNS, g.SpanNS)))
		if g.Steps > 0 {
			summary += " · summed over " + StepCount(g.Steps, 0)
		}
		if ss := g.StepStats; ss != nil {
			summary += "\n" + StepStatsLine(ss)
		}
		if md {
			summary += "\n" // a paragraph of its own
		}
		summary += "\n" + IdleLine(g)
		sb.WriteString(summary + "\n\n")
		ct := &Table{Head: []string{"category", "kernel ms", "share", "busy ms", "instances"},
			Right: []bool{false, true, true, true, true}}
		for _, c := range g.Categories {
			ct.Add(c.Category.String(), MS(c.KernelNS), Pct(c.Share), MS(c.BusyNS), strconv.FormatInt(c.Instances, 10))
		}
		kt := &Table{Head: []string{"top kernel", "total ms", "share", "instances", "category"},
			Right: []bool{false, true, true, true, false}}
		topk := g.Top[:min(len(g.Top), opt.top())]
		rows := make([]string, len(topk))
		for j, k := range topk {
			rows[j] = k.Name
		}
		shown := names.List(rows, opt.nameWidth())
		for j, k := range topk {
			kt.Add(shown[j], MS(k.TotalNS), Pct(k.Share), strconv.FormatInt(k.Instances, 10), k.Category.String())
		}
		ct.Write(sb, md)
		sb.WriteByte('\n')
		kt.Write(sb, md)
	}
}

func int64OrEmpty(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

func intOrEmpty(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 6, 64) }

func breakdownCSV(w io.Writer, r *analyze.GroupTable) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"path", "rank", "pid", "device", "step_kind", "steps", "group_kernel_ns", "group_busy_ns",
		"group_span_ns", "category", "kernel_ns", "busy_ns", "share", "instances"})
	for _, g := range r.Groups {
		for _, c := range g.Categories {
			cw.Write([]string{csvText(g.Rank.Path), intOrEmpty(g.Rank.Number), strconv.FormatInt(g.Rank.PID, 10), strconv.Itoa(int(g.Device)),
				g.Class.String(), strconv.Itoa(g.Steps), strconv.FormatInt(g.KernelNS, 10), strconv.FormatInt(g.BusyNS, 10),
				strconv.FormatInt(g.SpanNS, 10), c.Category.String(), strconv.FormatInt(c.KernelNS, 10),
				strconv.FormatInt(c.BusyNS, 10), ftoa(c.Share), strconv.FormatInt(c.Instances, 10)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// Kernels writes the per-kernel table (nsys cuda_gpu_kern_sum's columns
// plus the category) of the inputs of tbl.
func Kernels(w io.Writer, tbl *window.Table, ks []analyze.KernelStat, opt Options) error {
	switch opt.Format {
	case "json":
		return writeJSON(w, jsonKernelsDoc{Inputs: jsonInputs(tbl.Inputs), Kernels: jsonKernels(ks, kernelEff(opt.Efficiency))})
	case "csv":
		cw := csv.NewWriter(w)
		eff := kernelEff(opt.Efficiency)
		head := []string{"time_pct", "total_ns", "instances", "avg_ns", "med_ns", "min_ns", "max_ns", "stddev_ns", "name", "category", "path", "device"}
		if eff != nil {
			head = append(head, "sm_coverage", "modelled_ns", "flops", "bytes", "roofline_ns", "efficiency")
		}
		cw.Write(head)
		for _, k := range ks {
			dev := ""
			if k.Device != nil {
				dev = strconv.Itoa(int(*k.Device))
			}
			row := []string{strconv.FormatFloat(k.Share*100, 'f', 4, 64), strconv.FormatInt(k.Total, 10),
				strconv.FormatInt(k.N, 10), ftoa(k.Mean), ftoa(k.P50), strconv.FormatInt(k.Min, 10),
				strconv.FormatInt(k.Max, 10), ftoa(k.StdDev), csvText(k.Name), k.Category.String(), csvText(k.Path), dev}
			if eff != nil {
				if e := eff[k.Name]; e != nil && k.Device == nil {
					row = append(row, ftoa(e.SM.Value()), strconv.FormatInt(e.ModelledNS, 10), strconv.FormatInt(e.FLOPs, 10),
						strconv.FormatInt(e.Bytes, 10), strconv.FormatInt(e.RooflineNS, 10), ftoa(e.Efficiency()))
				} else {
					row = append(row, "", "", "", "", "", "")
				}
			}
			cw.Write(row)
		}
		cw.Flush()
		return cw.Error()
	case "markdown", "text", "":
	default:
		return CheckFormat(opt.Format)
	}
	var sb strings.Builder
	if t := kernelTable(ks, LabelsOf(tbl.Names()), opt); opt.Format == "markdown" {
		t.Markdown(&sb)
	} else {
		t.Text(&sb, "")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func kernelTable(ks []analyze.KernelStat, names Labels, opt Options) *Table {
	perDev := len(ks) > 0 && ks[0].Device != nil
	head := []string{"Time %", "Total ms", "Instances", "Avg ms", "Med ms", "Min ms", "Max ms", "StdDev ms"}
	right := []bool{true, true, true, true, true, true, true, true}
	if perDev {
		head = append(head, "Input", "Dev")
		right = append(right, false, true)
	}
	// The efficiency columns, where the efficiency analysis knows them:
	// SM coverage with grids, efficiency and achieved rates with priced
	// kernels (docs/definitions.md#efficiency).
	eff := kernelEff(opt.Efficiency)
	if perDev {
		eff = nil
	}
	sm, priced := false, Priced(opt.Efficiency)
	for _, e := range eff {
		sm = sm || e.SM.KnownNS > 0
	}
	if sm {
		head, right = append(head, "SM cov"), append(right, true)
	}
	if priced {
		head, right = append(head, "Modelled", "Eff", "TB/s", "TFLOP/s"), append(right, true, true, true, true)
	}
	head = append(head, "Category", "Name")
	right = append(right, false, false)
	t := &Table{Head: head, Right: right}
	rows := make([]string, len(ks))
	for i, k := range ks {
		rows[i] = k.Name
	}
	shown := names.List(rows, opt.nameWidth())
	for i, k := range ks {
		row := []string{Pct(k.Share), MS(k.Total), strconv.FormatInt(k.N, 10), MSf(k.Mean), MSf(k.P50),
			MS(k.Min), MS(k.Max), MSf(k.StdDev)}
		if perDev {
			row = append(row, k.Path, strconv.Itoa(int(*k.Device)))
		}
		e := eff[k.Name]
		if sm {
			if e != nil && e.SM.KnownNS > 0 {
				row = append(row, Pct(e.SM.Value()))
			} else {
				row = append(row, "—")
			}
		}
		if priced {
			if e != nil && e.ModelledNS > 0 {
				fl := "—"
				if e.FLOPs > 0 {
					fl = rate(efficiency.Rate(e.FLOPs, e.ModelledNS))
				}
				row = append(row, Pct(stats.Ratio(e.ModelledNS, e.KernelNS)), Pct(e.Efficiency()), rate(efficiency.Rate(e.Bytes, e.ModelledNS)), fl)
			} else {
				row = append(row, "—", "—", "—", "—")
			}
		}
		row = append(row, k.Category.String(), shown[i])
		t.Add(row...)
	}
	return t
}

// kernelEff indexes r's kernel rows by name; nil without r.
func kernelEff(r *efficiency.Result) map[string]*efficiency.KernelRow {
	if r == nil {
		return nil
	}
	m := make(map[string]*efficiency.KernelRow, len(r.Kernels))
	for i := range r.Kernels {
		m[r.Kernels[i].Name] = &r.Kernels[i]
	}
	return m
}
