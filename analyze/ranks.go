package analyze

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// RankRow compares the ranks of one run on one category of one class
// (docs/definitions.md#cross-rank). A rank's value is the GPU time of the
// category (kernel_ns of Breakdown, summed over the rank's devices) in the
// windows of the class; a rank that ran none of the category counts as 0,
// a rank without windows of the class does not count.
type RankRow struct {
	Run   string
	Class step.Class
	// Total marks the row that sums all GPU activity time of the step
	// kind, whatever its category; Category is then the zero value.
	Total    bool
	Category classify.Category
	Ranks    int // ranks with steps of this kind
	// TotalNS sums the ranks: the all-ranks aggregate. Share is TotalNS
	// over the all-ranks TotalNS of the kind's Total row.
	TotalNS int64
	Share   float64
	MinNS   int64
	// MedianNS is the middle value, or the mean of the two middle values
	// for an even number of ranks.
	MedianNS float64
	MaxNS    int64
	// MaxOverMedian is MaxNS / MedianNS (0 when the median is 0): how far
	// the rank with the most time is from the typical one.
	MaxOverMedian float64
	// MaxRank is the rank with MaxNS (the first in input order on a
	// tie). For a communication row it is the rank that waited most, not
	// the slow one: the collectives analysis names that (the straggler).
	MaxRank *window.Rank
	// ByRankNS holds every rank's value, in input (then process) order.
	ByRankNS []int64
}

// crossRank compares the ranks of each run of a group table: one row per
// run, class and category (and a Total row per run and class). Runs of
// one rank get no rows; the result is empty, not nil, then.
func crossRank(r *GroupTable) []RankRow {
	byRun := map[string][]window.RankID{}
	var runs []string
	seen := map[window.RankID]*window.Rank{}
	for i := range r.Groups {
		g := &r.Groups[i]
		if seen[g.Rank.ID] == nil {
			seen[g.Rank.ID] = g.Rank
			if byRun[g.Rank.Run] == nil {
				runs = append(runs, g.Rank.Run)
			}
			byRun[g.Rank.Run] = append(byRun[g.Rank.Run], g.Rank.ID)
		}
	}
	out := []RankRow{}
	for _, run := range runs {
		ranks := byRun[run]
		if len(ranks) < 2 {
			continue
		}
		slices.Sort(ranks)
		rankIndex := map[window.RankID]int{}
		for i, k := range ranks {
			rankIndex[k] = i
		}
		type catKey struct {
			total bool
			cat   classify.Category
		}
		// values[kind][category][rank]; has[kind][rank] marks ranks with the kind.
		values := map[step.Class]map[catKey][]int64{}
		has := map[step.Class][]bool{}
		for i := range r.Groups {
			g := &r.Groups[i]
			if g.Rank.Run != run {
				continue
			}
			ri := rankIndex[g.Rank.ID]
			if has[g.Class] == nil {
				has[g.Class] = make([]bool, len(ranks))
				values[g.Class] = map[catKey][]int64{}
			}
			has[g.Class][ri] = true
			add := func(k catKey, ns int64) {
				v := values[g.Class][k]
				if v == nil {
					v = make([]int64, len(ranks))
					values[g.Class][k] = v
				}
				v[ri] += ns
			}
			add(catKey{total: true}, g.KernelNS)
			for _, c := range g.Categories {
				add(catKey{cat: c.Category}, c.KernelNS)
			}
		}
		kinds := make([]step.Class, 0, len(values))
		for k := range values {
			kinds = append(kinds, k)
		}
		slices.SortFunc(kinds, step.Class.Compare)
		for _, kind := range kinds {
			var rows []RankRow
			for ck, v := range values[kind] {
				row := RankRow{Run: run, Class: kind, Total: ck.total, Category: ck.cat}
				var sample []int64
				slowest := -1
				for ri, ns := range v {
					if !has[kind][ri] {
						continue
					}
					sample = append(sample, ns)
					row.ByRankNS = append(row.ByRankNS, ns)
					row.TotalNS += ns
					if slowest < 0 || ns > v[slowest] {
						slowest = ri
					}
				}
				row.Ranks = len(sample)
				slices.Sort(sample)
				row.MinNS, row.MaxNS = sample[0], sample[len(sample)-1]
				row.MedianNS = stats.Percentile(sample, 50)
				if row.MedianNS > 0 {
					row.MaxOverMedian = float64(row.MaxNS) / row.MedianNS
				}
				row.MaxRank = seen[ranks[slowest]]
				rows = append(rows, row)
			}
			var all int64
			for _, row := range rows {
				if row.Total {
					all = row.TotalNS
				}
			}
			for i := range rows {
				rows[i].Share = stats.Ratio(rows[i].TotalNS, all)
			}
			// The total first, then categories by all-ranks time.
			slices.SortFunc(rows, func(a, b RankRow) int {
				if a.Total != b.Total {
					if a.Total {
						return -1
					}
					return 1
				}
				if c := cmp.Compare(b.TotalNS, a.TotalNS); c != 0 {
					return c
				}
				return classify.Compare(a.Category, b.Category)
			})
			out = append(out, rows...)
		}
	}
	return out
}
