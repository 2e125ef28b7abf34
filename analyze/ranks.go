package analyze

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/classify"
)

// CategoryTotal is the Category of the RankRow that sums all GPU activity
// time of a step kind, whatever its category.
const CategoryTotal = "total"

// RankRow compares the ranks on one category of one step kind. A rank is
// one process of one input: a rank file of a torch.profiler run, or one
// process of an nsys export. Its value is the GPU time of the category
// (kernel_ns of Breakdown, summed over the rank's devices) in the steps of
// the kind; a rank that ran none of the category counts as 0, a rank
// without steps of the kind does not count.
type RankRow struct {
	StepKind string `json:"step_kind"`
	Category string `json:"category"` // a category, or CategoryTotal
	Ranks    int    `json:"ranks"`    // ranks with steps of this kind
	// TotalNS sums the ranks: the all-ranks aggregate. Share is TotalNS
	// over the all-ranks TotalNS of the kind's CategoryTotal row.
	TotalNS int64   `json:"total_ns"`
	Share   float64 `json:"share"`
	MinNS   int64   `json:"min_ns"`
	// MedianNS is the middle value, or the mean of the two middle values
	// for an even number of ranks.
	MedianNS float64 `json:"median_ns"`
	MaxNS    int64   `json:"max_ns"`
	// MaxOverMedian is MaxNS / MedianNS (0 when the median is 0): how far
	// the slowest rank is from the typical one.
	MaxOverMedian float64 `json:"max_over_median"`
	// The slowest rank: the one with MaxNS (the first in input order on a
	// tie). SlowestRank is its distributed rank, null when unknown.
	SlowestRank *int   `json:"slowest_rank"`
	SlowestPath string `json:"slowest_path"`
	SlowestPID  int64  `json:"slowest_pid"`
	// ByRankNS holds every rank's value, in input (then process) order.
	ByRankNS []int64 `json:"by_rank_ns"`
}

// CrossRank compares the ranks of a report: one row per step kind and
// category (and a CategoryTotal row per step kind). It returns an empty,
// non-nil slice when the report holds fewer than two ranks.
func CrossRank(r *Report) []RankRow {
	type rankKey struct {
		input int
		proc  int32
	}
	var ranks []rankKey
	first := map[rankKey]*Group{}
	for i := range r.Groups {
		g := &r.Groups[i]
		k := rankKey{g.input, g.proc}
		if first[k] == nil {
			first[k] = g
			ranks = append(ranks, k)
		}
	}
	out := []RankRow{}
	if len(ranks) < 2 {
		return out
	}
	slices.SortFunc(ranks, func(a, b rankKey) int {
		if c := cmp.Compare(a.input, b.input); c != 0 {
			return c
		}
		return cmp.Compare(a.proc, b.proc)
	})
	rankIndex := map[rankKey]int{}
	for i, k := range ranks {
		rankIndex[k] = i
	}

	// values[kind][category][rank]; has[kind][rank] marks ranks with the kind.
	values := map[string]map[string][]int64{}
	has := map[string][]bool{}
	for i := range r.Groups {
		g := &r.Groups[i]
		ri := rankIndex[rankKey{g.input, g.proc}]
		if has[g.StepKind] == nil {
			has[g.StepKind] = make([]bool, len(ranks))
			values[g.StepKind] = map[string][]int64{}
		}
		has[g.StepKind][ri] = true
		add := func(cat string, ns int64) {
			v := values[g.StepKind][cat]
			if v == nil {
				v = make([]int64, len(ranks))
				values[g.StepKind][cat] = v
			}
			v[ri] += ns
		}
		add(CategoryTotal, g.KernelNS)
		for _, c := range g.Categories {
			add(c.Category, c.KernelNS)
		}
	}

	kinds := make([]string, 0, len(values))
	for k := range values {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, compareKinds)
	for _, kind := range kinds {
		var rows []RankRow
		for cat, v := range values[kind] {
			row := RankRow{StepKind: kind, Category: cat}
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
			if n := len(sample); n%2 == 1 {
				row.MedianNS = float64(sample[n/2])
			} else {
				row.MedianNS = (float64(sample[n/2-1]) + float64(sample[n/2])) / 2
			}
			if row.MedianNS > 0 {
				row.MaxOverMedian = float64(row.MaxNS) / row.MedianNS
			}
			g := first[ranks[slowest]]
			row.SlowestRank, row.SlowestPath, row.SlowestPID = g.Rank, g.Path, g.PID
			rows = append(rows, row)
		}
		var all int64
		for _, row := range rows {
			if row.Category == CategoryTotal {
				all = row.TotalNS
			}
		}
		for i := range rows {
			rows[i].Share = ratio(rows[i].TotalNS, all)
		}
		// The total first, then categories by all-ranks time.
		slices.SortFunc(rows, func(a, b RankRow) int {
			if (a.Category == CategoryTotal) != (b.Category == CategoryTotal) {
				if a.Category == CategoryTotal {
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
	return out
}
