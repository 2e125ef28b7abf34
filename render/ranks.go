package render

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// straggler is the collectives analysis's straggler of a communication
// row of the cross-rank table (nil for other rows, or when ct is nil).
func straggler(r *analyze.RankRow, ct *collectives.Table) *collectives.Straggler {
	if r.Total || r.Category.Top != classify.Communication {
		return nil
	}
	return ct.Straggler(r.Run, r.Class, r.Category.Sub)
}

// crossRankText appends the cross-rank table of a multi-rank breakdown: one
// table per class, a row per category (the total first).
func crossRankText(sb *strings.Builder, rows []analyze.RankRow, ct *collectives.Table, opt Options) {
	md := opt.Format == "markdown"
	if len(rows) == 0 {
		return
	}
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].Class == rows[i].Class && rows[j].Run == rows[i].Run {
			j++
		}
		who := "all ranks"
		if rows[i].Run != "" {
			who = Printable(rows[i].Run)
		}
		title := who + " · " + rankKindTitle(rows[i].Class) + " · cross-rank comparison of " + strconv.Itoa(rows[i].Ranks) + " ranks"
		sb.WriteByte('\n')
		heading(sb, title, opt)
		sb.WriteString("GPU time per rank: all ranks summed, then min / median / max across ranks and the rank with the max; " +
			"for a collective, the rank with the max waited most, and the straggler is the rank the others wait for " +
			"(it arrives last most often: traceq collectives)\n\n")
		t := &Table{Head: []string{"category", "all ranks ms", "share", "min ms", "median ms", "max ms", "max/median", "straggler", "max rank"},
			Right: []bool{false, true, true, true, true, true, true, false, false}}
		for _, r := range rows[i:j] {
			strag := ""
			if s := straggler(&r, ct); s != nil && s.Distinct {
				strag = RankName(s.Rank) + " (last in " + Pct(s.Share()) + ")"
			} else if s != nil {
				strag = "none in particular"
			}
			t.Add(rowCategory(r.Total, r.Category), MS(r.TotalNS), Pct(r.Share), MS(r.MinNS), MSf(r.MedianNS), MS(r.MaxNS),
				strconv.FormatFloat(r.MaxOverMedian, 'f', 2, 64), strag, slowest(r))
		}
		t.Write(sb, md)
		i = j
	}
}

func rankKindTitle(c step.Class) string {
	switch {
	case c.Scope == step.Whole:
		return "whole trace"
	case c.Scope == step.Outside:
		return "outside any step"
	case c.Kind == step.Generic:
		return "steps"
	}
	return c.String() + " steps"
}

// slowest names the rank with the most time. See RankName.
func slowest(r analyze.RankRow) string { return RankName(r.MaxRank) }

// RankName names a rank of a run in a table cell: "rank 3" when the trace
// says its rank, else "pid 149" for one of several processes of an nsys
// export, else the file's base name (the run's directory is the run).
// When the run spans hosts, the host comes first: "node1 · rank 9".
func RankName(r *window.Rank) string {
	var s string
	switch {
	case r.Number != nil:
		s = numbered(r)
	case r.PID != 0:
		s = "pid " + strconv.FormatInt(r.PID, 10)
	default:
		s = r.Path[strings.LastIndexByte(r.Path, '/')+1:]
	}
	return onHost(r, s)
}

// numbered is "rank 3", with the name a thread name gave it when it says
// more ("rank 5 (TP5)", "rank 11 (PP1_TP3)").
func numbered(r *window.Rank) string {
	s := "rank " + strconv.Itoa(*r.Number)
	if r.Source == trace.RankFromThreadName && r.Name != "" && r.Name != strconv.Itoa(*r.Number) {
		s += " (" + r.Name + ")"
	}
	return s
}

// onHost puts the rank's host before its label when its run spans hosts.
func onHost(r *window.Rank, label string) string {
	if r.RunHosts > 1 && r.Host != "" {
		return r.Host + " · " + label
	}
	return label
}

// crossRankCSV writes the cross-rank rows as a second CSV table, after an
// empty line, with a header of its own.
func crossRankCSV(w io.Writer, rows []analyze.RankRow, ct *collectives.Table) error {
	if len(rows) == 0 {
		return nil
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"step_kind", "category", "ranks", "total_ns", "share", "min_ns", "median_ns", "max_ns",
		"max_over_median", "slowest_rank", "slowest_path", "slowest_pid", "straggler_rank", "straggler_path", "straggler_pid",
		"straggler_last_arrivals", "straggler_instances"})
	for _, r := range rows {
		cw.Write(append([]string{r.Class.String(), rowCategory(r.Total, r.Category), strconv.Itoa(r.Ranks), strconv.FormatInt(r.TotalNS, 10), ftoa(r.Share),
			strconv.FormatInt(r.MinNS, 10), strconv.FormatFloat(r.MedianNS, 'f', 1, 64), strconv.FormatInt(r.MaxNS, 10),
			ftoa(r.MaxOverMedian), intOrEmpty(r.MaxRank.Number), csvText(r.MaxRank.Path), strconv.FormatInt(r.MaxRank.PID, 10)},
			stragglerCSV(straggler(&r, ct))...))
	}
	cw.Flush()
	return cw.Error()
}

func stragglerCSV(s *collectives.Straggler) []string {
	if s == nil {
		return []string{"", "", "", "", ""}
	}
	return []string{intOrEmpty(s.Number), csvText(s.Path), strconv.FormatInt(s.PID, 10), strconv.FormatInt(s.LastArrivals, 10),
		strconv.FormatInt(s.Instances, 10)}
}
