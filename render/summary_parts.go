package render

import (
	"io"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/collectives"
)

// The markdown report (render/report) puts the run summary first and the
// per-group details last, with charts between; these two write
// Breakdown's text and markdown parts apart.

// Summary writes the summary Breakdown leads with, in markdown when
// opt.Format is "markdown" and text otherwise: per run and step kind, the
// step time, the findings and where the time goes.
func Summary(w io.Writer, r *analyze.GroupTable, a Answer, opt Options) error {
	var sb strings.Builder
	summaryText(&sb, r, a, opt)
	_, err := io.WriteString(w, sb.String())
	return err
}

// BreakdownDetail writes what Breakdown writes after the summary for
// opt.Detail's groups and cross-rank tables (not its kernels), without the
// hint naming the other parts; ct names the stragglers as in Breakdown.
func BreakdownDetail(w io.Writer, r *analyze.GroupTable, ct *collectives.Table, opt Options) error {
	var sb strings.Builder
	if opt.Detail&DetailGroups != 0 {
		groupsText(&sb, r, LabelsOf(r.Table.Names()), opt)
	}
	if opt.Detail&DetailRanks != 0 {
		crossRankText(&sb, r.CrossRank, ct, opt)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
