package report

import (
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/render"
)

// collectiveTable is the collectives analysis a report shows: for inputs
// of several ranks, when some collective was matched across ranks; nil
// otherwise.
func (w *writer) collectiveTable() *collectives.Table {
	if len(w.tbl.Ranks) < 2 {
		return nil
	}
	ct := w.charts.Collectives()
	for _, o := range ct.Ops {
		if !o.UpperBound {
			return ct
		}
	}
	return nil
}

// verdicts writes the collectives analysis's answer lines as a list.
func (w *writer) verdicts(ct *collectives.Table) {
	for _, v := range render.CollectiveVerdicts(ct) {
		w.sb.WriteString("- " + render.MarkdownCell(v) + "\n")
	}
	w.sb.WriteString("\n")
}

// collectives writes, for a run of several ranks, the collectives
// analysis: its answer lines, the per-rank chart, the tables.
func (w *writer) collectives() error {
	ct := w.collectiveTable()
	if ct == nil {
		return nil
	}
	sb := &w.sb
	sb.WriteString(w.h(1) + "Collectives\n\n")
	w.verdicts(ct)
	link, err := w.drawKind("collectives", Collectives, 0, 0, "collective time per rank: transfer vs waiting")
	if err != nil {
		return err
	}
	sb.WriteString(link + "\n\n")
	sb.WriteString("*Per rank, its collective kernels' time: the transfer (each instance's shortest kernel over the ranks: the last rank to arrive waits for no one) " +
		"and the rest, waiting for the last rank. The straggler is the rank that arrived last most often. `traceq collectives` prints the same; " +
		"docs/definitions.md defines the figures.*\n")
	render.CollectiveTables(sb, ct, render.Options{Format: "markdown", Level: w.opt.Level + 2, Top: 12})
	sb.WriteString("\n")
	return nil
}
