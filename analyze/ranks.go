package analyze

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/classify"
)

// RankRow compares the ranks of one run on one category of one step kind.
// A rank is one process of one input: a rank file of a torch.profiler run,
// or one process of an nsys export. Its value is the GPU time of the
// category (kernel_ns of Breakdown, summed over the rank's devices) in the
// steps of the kind; a rank that ran none of the category counts as 0, a
// rank without steps of the kind does not count.
type RankRow struct {
	Run      string
	StepKind StepKind
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
	// MaxRank is the rank with MaxNS (the first in input order on a tie):
	// its distributed rank (nil when unknown), path and pid.
	MaxRank *int
	MaxPath string
	MaxPID  int64
	// ByRankNS holds every rank's value, in input (then process) order.
	ByRankNS []int64
	// Straggler, for a communication/<op> row, is the rank the others
	// wait for in that collective (Collectives): the one arriving last
	// most often. The rank with MaxNS is the one that waited most, not
	// the slow one. Nil for other rows and when unknown.
	Straggler *Straggler
}

// CrossRank compares the ranks of each run of a group table: one row per
// run, step kind and category (and a Total row per run and step kind).
// Runs of one rank get no rows; the result is empty, not nil, then.
func CrossRank(r *GroupTable) []RankRow {
	type rankKey struct {
		input int
		proc  int32
	}
	byRun := map[string][]rankKey{}
	var runs []string
	first := map[rankKey]*Group{}
	for i := range r.Groups {
		g := &r.Groups[i]
		k := rankKey{g.Input, g.Proc}
		if first[k] == nil {
			first[k] = g
			if byRun[g.Run] == nil {
				runs = append(runs, g.Run)
			}
			byRun[g.Run] = append(byRun[g.Run], k)
		}
	}
	out := []RankRow{}
	for _, run := range runs {
		ranks := byRun[run]
		if len(ranks) < 2 {
			continue
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
		type catKey struct {
			total bool
			cat   classify.Category
		}
		// values[kind][category][rank]; has[kind][rank] marks ranks with the kind.
		values := map[StepKind]map[catKey][]int64{}
		has := map[StepKind][]bool{}
		for i := range r.Groups {
			g := &r.Groups[i]
			if g.Run != run {
				continue
			}
			ri := rankIndex[rankKey{g.Input, g.Proc}]
			if has[g.StepKind] == nil {
				has[g.StepKind] = make([]bool, len(ranks))
				values[g.StepKind] = map[catKey][]int64{}
			}
			has[g.StepKind][ri] = true
			add := func(k catKey, ns int64) {
				v := values[g.StepKind][k]
				if v == nil {
					v = make([]int64, len(ranks))
					values[g.StepKind][k] = v
				}
				v[ri] += ns
			}
			add(catKey{total: true}, g.KernelNS)
			for _, c := range g.Categories {
				add(catKey{cat: c.Category}, c.KernelNS)
			}
		}
		kinds := make([]StepKind, 0, len(values))
		for k := range values {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		for _, kind := range kinds {
			var rows []RankRow
			for ck, v := range values[kind] {
				row := RankRow{Run: run, StepKind: kind, Total: ck.total, Category: ck.cat}
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
				row.MedianNS = Percentile(sample, 50)
				if row.MedianNS > 0 {
					row.MaxOverMedian = float64(row.MaxNS) / row.MedianNS
				}
				g := first[ranks[slowest]]
				row.MaxRank, row.MaxPath, row.MaxPID = g.Rank, g.Path, g.PID
				rows = append(rows, row)
			}
			var all int64
			for _, row := range rows {
				if row.Total {
					all = row.TotalNS
				}
			}
			for i := range rows {
				rows[i].Share = Ratio(rows[i].TotalNS, all)
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
