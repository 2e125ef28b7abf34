package render

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
)

// Options tunes table output.
type Options struct {
	Format string // text, markdown, csv, json
	// Top is the number of kernels shown per group in text and markdown.
	Top int
	// NameWidth clips kernel names in text and markdown (0: 100 runes);
	// CSV and JSON always carry full names.
	NameWidth int
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
	parts := []string{g.Path}
	if g.Rank != nil {
		parts = append(parts, "rank "+strconv.Itoa(*g.Rank))
	}
	if g.PID != 0 {
		parts = append(parts, "pid "+strconv.FormatInt(g.PID, 10))
	}
	parts = append(parts, "device "+strconv.Itoa(int(g.Device)))
	kind := g.StepKind
	if g.Steps > 0 {
		kind = StepCount(g.Steps, g.StepKind)
	} else if kind == analyze.KindAll {
		kind = "whole trace"
	} else if kind == analyze.KindNone {
		kind = "outside any step"
	}
	parts = append(parts, kind)
	return strings.Join(parts, " · ")
}

// Breakdown writes the per-group breakdown of r.
func Breakdown(w io.Writer, r *analyze.Report, opt Options) error {
	switch opt.Format {
	case "json":
		return writeJSON(w, r)
	case "csv":
		if err := breakdownCSV(w, r); err != nil {
			return err
		}
		return crossRankCSV(w, r.CrossRank)
	case "markdown", "text", "":
		var sb strings.Builder
		md := opt.Format == "markdown"
		for i := range r.Groups {
			g := &r.Groups[i]
			if i > 0 {
				sb.WriteByte('\n')
			}
			if md {
				sb.WriteString("### " + GroupTitle(g) + "\n\n")
			} else {
				sb.WriteString("== " + GroupTitle(g) + "\n")
			}
			summary := fmt.Sprintf("kernel time %s ms · busy %s ms · span %s ms · idle %s ms (%s of span)",
				MS(g.KernelNS), MS(g.BusyNS), MS(g.SpanNS), MS(g.IdleNS), Pct(ratio(g.IdleNS, g.SpanNS)))
			if g.Steps > 0 {
				summary += " · summed over " + StepCount(g.Steps, "")
			}
			if ss := g.StepStats; ss != nil {
				summary += "\n" + StepStatsLine(ss)
			}
			if md {
				sb.WriteString(summary + "\n\n")
			} else {
				sb.WriteString(summary + "\n\n")
			}
			ct := &table{head: []string{"category", "kernel ms", "share", "busy ms", "instances"},
				right: []bool{false, true, true, true, true}}
			for _, c := range g.Categories {
				ct.add(c.Category, MS(c.KernelNS), Pct(c.Share), MS(c.BusyNS), strconv.FormatInt(c.Instances, 10))
			}
			kt := &table{head: []string{"top kernel", "total ms", "share", "instances", "category"},
				right: []bool{false, true, true, true, false}}
			topk := g.Top[:min(len(g.Top), opt.top())]
			names := make([]string, len(topk))
			for j, k := range topk {
				names[j] = k.Name
			}
			shown := displayNames(names, opt.nameWidth())
			for j, k := range topk {
				kt.add(shown[j], MS(k.TotalNS), Pct(k.Share), strconv.FormatInt(k.Instances, 10), k.Category)
			}
			if md {
				ct.markdown(&sb)
				sb.WriteByte('\n')
				kt.markdown(&sb)
			} else {
				ct.text(&sb, "  ")
				sb.WriteByte('\n')
				kt.text(&sb, "  ")
			}
		}
		crossRankText(&sb, r.CrossRank, md)
		_, err := io.WriteString(w, sb.String())
		return err
	}
	return CheckFormat(opt.Format)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func intOrEmpty(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 6, 64) }

func breakdownCSV(w io.Writer, r *analyze.Report) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"path", "rank", "pid", "device", "step_kind", "steps", "group_kernel_ns", "group_busy_ns",
		"group_span_ns", "category", "kernel_ns", "busy_ns", "share", "instances"})
	for _, g := range r.Groups {
		for _, c := range g.Categories {
			cw.Write([]string{g.Path, intOrEmpty(g.Rank), strconv.FormatInt(g.PID, 10), strconv.Itoa(int(g.Device)),
				g.StepKind, strconv.Itoa(g.Steps), strconv.FormatInt(g.KernelNS, 10), strconv.FormatInt(g.BusyNS, 10),
				strconv.FormatInt(g.SpanNS, 10), c.Category, strconv.FormatInt(c.KernelNS, 10),
				strconv.FormatInt(c.BusyNS, 10), ftoa(c.Share), strconv.FormatInt(c.Instances, 10)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// KernelReport is the JSON document of the kernels command.
type KernelReport struct {
	Inputs  []analyze.InputInfo  `json:"inputs"`
	Kernels []analyze.KernelStat `json:"kernels"`
}

// Kernels writes the per-kernel table (nsys cuda_gpu_kern_sum's columns
// plus the category).
func Kernels(w io.Writer, r *KernelReport, opt Options) error {
	switch opt.Format {
	case "json":
		return writeJSON(w, r)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"time_pct", "total_ns", "instances", "avg_ns", "med_ns", "min_ns", "max_ns", "stddev_ns", "name", "category", "path", "device"})
		for _, k := range r.Kernels {
			dev := ""
			if k.Device != nil {
				dev = strconv.Itoa(int(*k.Device))
			}
			cw.Write([]string{strconv.FormatFloat(k.Share*100, 'f', 4, 64), strconv.FormatInt(k.Total, 10),
				strconv.FormatInt(k.N, 10), ftoa(k.Mean), ftoa(k.Median), strconv.FormatInt(k.Min, 10),
				strconv.FormatInt(k.Max, 10), ftoa(k.StdDev), k.Name, k.Category, k.Path, dev})
		}
		cw.Flush()
		return cw.Error()
	case "markdown", "text", "":
		perDev := len(r.Kernels) > 0 && r.Kernels[0].Device != nil
		head := []string{"Time %", "Total ms", "Instances", "Avg ms", "Med ms", "Min ms", "Max ms", "StdDev ms"}
		right := []bool{true, true, true, true, true, true, true, true}
		if perDev {
			head = append(head, "Input", "Dev")
			right = append(right, false, true)
		}
		head = append(head, "Category", "Name")
		right = append(right, false, false)
		t := &table{head: head, right: right}
		names := make([]string, len(r.Kernels))
		for i, k := range r.Kernels {
			names[i] = k.Name
		}
		shown := displayNames(names, opt.nameWidth())
		for i, k := range r.Kernels {
			row := []string{Pct(k.Share), MS(k.Total), strconv.FormatInt(k.N, 10), MSf(k.Mean), MSf(k.Median),
				MS(k.Min), MS(k.Max), MSf(k.StdDev)}
			if perDev {
				row = append(row, k.Path, strconv.Itoa(int(*k.Device)))
			}
			row = append(row, k.Category, shown[i])
			t.add(row...)
		}
		var sb strings.Builder
		if opt.Format == "markdown" {
			t.markdown(&sb)
		} else {
			t.text(&sb, "")
		}
		_, err := io.WriteString(w, sb.String())
		return err
	}
	return CheckFormat(opt.Format)
}
