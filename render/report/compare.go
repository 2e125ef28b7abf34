package report

import (
	"fmt"
	"io"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/chart"
)

// beforeAfter writes, for two runs, traceq diff's comparison of the second
// run against the first: its answer (the step time, then what changed in
// the findings), its chart, and in the full report its markdown tables.
// It comes before the runs' summaries: what changed is the answer a
// report of two runs is for. Two ranks of one run are one run, not a before and an after.
// More than two runs are not compared pairwise: the summary shows each,
// and a line says how to compare two.
func (w *writer) beforeAfter(full bool) error {
	sb := &w.sb
	switch {
	case len(w.runs) < 2:
		return nil
	case len(w.runs) > 2:
		fmt.Fprintf(sb, "*%d runs: the summary shows each; no before → after. Give two runs to `traceq report` (or `traceq diff`) to compare them.*\n\n", len(w.runs))
		return nil
	}
	a, b := w.runs[0], w.runs[1]
	df := analyze.Compare(w.tbl.Select(a.inputs), w.tbl.Select(b.inputs), analyze.Options{Filter: w.opt.Filter})
	sb.WriteString(w.h(1) + "Before → after\n\n")
	fmt.Fprintf(sb, "*%s is before, %s after, as `traceq diff` compares them.*\n\n", render.Code(a.name), render.Code(b.name))
	if df.Comparable {
		link, err := w.draw("diff", "change in GPU time per step", func(out io.Writer) error {
			return chart.Diff(out, df, chart.Options{Format: w.format, Title: chart.DiffTitle(df)})
		})
		if err != nil {
			return err
		}
		sb.WriteString(link + "\n\n")
	}
	if !full {
		for _, ls := range render.DiffAnswers(df, w.answer.Findings, w.answer.Findings) {
			for i, l := range ls {
				indent := ""
				if i > 0 {
					indent = "  " // the kind's details, under its step time
				}
				sb.WriteString(indent + "- " + render.MarkdownCell(l) + "\n")
			}
		}
		sb.WriteString("\n")
		notes := render.DiffNotes(df)
		for _, n := range notes {
			sb.WriteString("- note: " + render.MarkdownCell(n) + "\n")
		}
		if len(notes) > 0 {
			sb.WriteString("\n")
		}
		return nil
	}
	if err := render.Diff(sb, df, w.answer.Findings, w.answer.Findings, render.Options{Format: "markdown", Level: w.opt.Level + 2}); err != nil {
		return err
	}
	sb.WriteString("\n")
	return nil
}
