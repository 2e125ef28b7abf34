package render

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
)

// crossRankText appends the cross-rank table of a multi-rank breakdown: one
// table per step kind, a row per category (the total first).
func crossRankText(sb *strings.Builder, rows []analyze.RankRow, opt Options) {
	md := opt.Format == "markdown"
	if len(rows) == 0 {
		return
	}
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].StepKind == rows[i].StepKind && rows[j].Run == rows[i].Run {
			j++
		}
		who := "all ranks"
		if rows[i].Run != "" {
			who = Printable(rows[i].Run)
		}
		title := who + " · " + rankKindTitle(rows[i].StepKind) + " · cross-rank comparison of " + strconv.Itoa(rows[i].Ranks) + " ranks"
		sb.WriteByte('\n')
		heading(sb, title, opt)
		sb.WriteString("GPU time per rank: all ranks summed, then min / median / max across ranks and the rank with the max; " +
			"for a collective, the rank with the max waited most, and the straggler is the rank the others wait for " +
			"(it arrives last most often: traceq collectives)\n\n")
		t := &Table{Head: []string{"category", "all ranks ms", "share", "min ms", "median ms", "max ms", "max/median", "straggler", "max rank"},
			Right: []bool{false, true, true, true, true, true, true, false, false}}
		for _, r := range rows[i:j] {
			strag := ""
			if s := r.Straggler; s != nil && s.Distinct {
				strag = RankName(s.Rank, s.Path, s.PID) + " (last in " + Pct(s.Share()) + ")"
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

func rankKindTitle(kind analyze.StepKind) string {
	switch kind {
	case analyze.KindAll:
		return "whole trace"
	case analyze.KindNone:
		return "outside any step"
	case analyze.KindStep:
		return "steps"
	}
	return kind.String() + " steps"
}

// slowest names the rank with the most time. See RankName.
func slowest(r analyze.RankRow) string { return RankName(r.MaxRank, r.MaxPath, r.MaxPID) }

// RankName names a rank of a run in a table cell: "rank 3" when the trace
// says its rank, else "pid 149" for one of several processes of an nsys
// export, else the file's base name (the run's directory is the run).
func RankName(rank *int, path string, pid int64) string {
	if rank != nil {
		return "rank " + strconv.Itoa(*rank)
	}
	if pid != 0 {
		return "pid " + strconv.FormatInt(pid, 10)
	}
	return path[strings.LastIndexByte(path, '/')+1:]
}

// crossRankCSV writes the cross-rank rows as a second CSV table, after an
// empty line, with a header of its own.
func crossRankCSV(w io.Writer, rows []analyze.RankRow) error {
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
		cw.Write(append([]string{r.StepKind.String(), rowCategory(r.Total, r.Category), strconv.Itoa(r.Ranks), strconv.FormatInt(r.TotalNS, 10), ftoa(r.Share),
			strconv.FormatInt(r.MinNS, 10), strconv.FormatFloat(r.MedianNS, 'f', 1, 64), strconv.FormatInt(r.MaxNS, 10),
			ftoa(r.MaxOverMedian), intOrEmpty(r.MaxRank), csvText(r.MaxPath), strconv.FormatInt(r.MaxPID, 10)},
			stragglerCSV(r.Straggler)...))
	}
	cw.Flush()
	return cw.Error()
}

func stragglerCSV(s *analyze.Straggler) []string {
	if s == nil {
		return []string{"", "", "", "", ""}
	}
	return []string{intOrEmpty(s.Rank), csvText(s.Path), strconv.FormatInt(s.PID, 10), strconv.FormatInt(s.LastArrivals, 10),
		strconv.FormatInt(s.Instances, 10)}
}
