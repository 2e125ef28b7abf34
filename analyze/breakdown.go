package analyze

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// Options selects what Breakdown, Kernels and Compare compute.
type Options struct {
	// Filter keeps the windows of one class (--kind); its zero value
	// keeps all.
	Filter step.Filter
	// Top is the number of top kernels kept per group (Breakdown) or
	// kernels per class (Compare); 0 means 10.
	Top int
	// MinChange is Compare's threshold; nil means DefaultMinChange.
	MinChange *MinChange
}

func (o *Options) top() int {
	if o.Top <= 0 {
		return 10
	}
	return o.Top
}

// CategoryStat is one category's time in a group.
type CategoryStat struct {
	Category  classify.Category
	KernelNS  int64
	BusyNS    int64
	Share     float64 // KernelNS / group KernelNS
	Instances int64
	// KernelPerStepNS is KernelNS over the group's windows (its steps, or
	// 1 for a whole trace); StepShare is BusyNS over the group's SpanNS:
	// the share of step time the category kept the device busy.
	KernelPerStepNS int64
	StepShare       float64
}

// TopKernel is one of a group's most expensive kernel names.
type TopKernel struct {
	Name string
	// Mangled is the raw name the trace recorded when parse demangled it
	// (trace.Trace.Mangled); "" otherwise.
	Mangled   string
	Category  classify.Category
	Instances int64
	TotalNS   int64
	Share     float64 // TotalNS / group KernelNS
}

// Group is the breakdown of one (rank, device, class): one block of
// `traceq breakdown` (docs/definitions.md#group).
type Group struct {
	Rank   *window.Rank
	Device int32
	Class  step.Class
	Steps  int // number of steps summed; 0 for the windows that are not steps
	// KernelNS, BusyNS, SpanNS and IdleNS sum the group's windows
	// (docs/definitions.md#per-group).
	KernelNS int64
	BusyNS   int64
	SpanNS   int64
	IdleNS   int64
	// KernelPerStepNS is KernelNS per window; StepShare is BusyNS over
	// SpanNS.
	KernelPerStepNS int64
	StepShare       float64
	Categories      []CategoryStat
	Top             []TopKernel
	// StepStats describes the group's steps one by one; nil for the
	// whole-trace and unattributed groups.
	StepStats *StepStats
	// Idle splits IdleNS by cause.
	Idle window.IdleSplit
	// BetweenStepsNS is the time between steps that ends in the group's
	// steps, summed over BetweenStepGaps steps, split by the kind of the
	// step before in BetweenFrom.
	BetweenStepsNS  int64
	BetweenStepGaps int
	BetweenFrom     []StepGapStat
	// Launches describes the launch calls of the group's activities per
	// API, most CPU time first; LaunchCPUNS sums their CPU time.
	Launches    []LaunchStat
	LaunchCPUNS int64
	// Comm is the group's communication time and the part of it exposed.
	Comm window.CommStat
}

// LaunchStat describes the launch calls of one API (cudaLaunchKernel,
// cudaGraphLaunch, cudaMemcpyAsync, …) that launched a group's activities.
type LaunchStat struct {
	API   string
	Calls int64
	// CPUNS is the time spent inside the calls (their summed durations).
	CPUNS int64
	// LaunchToStart describes, per call, its first activity's start minus
	// the call's start.
	LaunchToStart stats.Dist
}

// StepGapStat is the time between steps on one device ending in steps of
// a group, for one kind of step before them.
type StepGapStat struct {
	From step.Kind // the kind of the step before the gap
	// Gaps counts the steps preceded by a step of kind From; TotalNS sums
	// the time from that step's span end to theirs start (0 where the
	// spans overlap).
	Gaps    int
	TotalNS int64
}

// GroupTable is the result of Breakdown.
type GroupTable struct {
	// Table is what the breakdown was computed from: its inputs, ranks
	// and names.
	Table  *window.Table
	Groups []Group
	// Steps lists every step on every device, whatever the filter
	// (docs/definitions.md#per-step-figures), by input, step index,
	// process and device; empty when no input has steps.
	Steps []StepRow
	// CrossRank compares the ranks of each run (see CrossRank); empty for
	// runs of one rank.
	CrossRank []RankRow
}

// Breakdown computes the per-group figures of a table, its step table
// and its cross-rank comparison.
func Breakdown(tbl *window.Table, opt Options) *GroupTable {
	r := &GroupTable{Table: tbl}
	r.Groups = groups(tbl, opt)
	r.Steps = stepRows(tbl)
	addStats(r.Steps, r.Groups)
	r.CrossRank = crossRank(r)
	return r
}

// HasCommunication reports whether a cross-rank row is a collective's:
// the rows whose straggler the collectives analysis names.
func (r *GroupTable) HasCommunication() bool {
	return slices.ContainsFunc(r.CrossRank, func(row RankRow) bool {
		return !row.Total && row.Category.Top == classify.Communication
	})
}

// AnyCommunication reports whether some group ran collective kernels
// (category communication/*): whether the collectives are worth matching.
func (r *GroupTable) AnyCommunication() bool {
	for i := range r.Groups {
		for _, c := range r.Groups[i].Categories {
			if c.Category.Top == classify.Communication {
				return true
			}
		}
	}
	return false
}

type groupKey struct {
	rank   window.RankID
	device int32
	class  step.Class
}

// groups sums windows into (rank, device, class) groups.
func groups(tbl *window.Table, opt Options) []Group {
	// A name has one category, but for a generic collective kernel
	// whose args name its op (window.Table.ActivityCategory): top
	// kernels are (name, folded category).
	type nameKey struct {
		name window.NameID
		cat  window.CatID
	}
	type nameAcc struct {
		n, total int64
	}
	type launchAcc struct {
		calls, cpu int64
		latency    []int64
	}
	type gacc struct {
		g        Group
		cats     map[window.CatID]*CategoryStat
		names    map[nameKey]*nameAcc
		steps    map[int32]bool
		from     map[step.Kind]*StepGapStat
		launches map[string]*launchAcc
	}
	m := map[groupKey]*gacc{}
	var order []groupKey
	for i := range tbl.Windows {
		w := &tbl.Windows[i]
		if !opt.Filter.Keeps(w.Class) {
			continue
		}
		k := groupKey{w.Rank, w.Device, w.Class}
		ga := m[k]
		if ga == nil {
			ga = &gacc{g: Group{Rank: &tbl.Ranks[w.Rank], Device: w.Device, Class: w.Class},
				cats: map[window.CatID]*CategoryStat{}, names: map[nameKey]*nameAcc{}, steps: map[int32]bool{}}
			m[k] = ga
			order = append(order, k)
		}
		g := &ga.g
		if w.Step >= 0 {
			ga.steps[w.Step] = true
		}
		g.KernelNS += w.KernelNS
		g.BusyNS += w.BusyNS
		g.SpanNS += w.SpanNS()
		g.IdleNS += w.IdleNS
		g.Idle.Add(w.Idle)
		g.Comm.Add(w.Comm)
		if w.HasPrev {
			g.BetweenStepsNS += w.BetweenNS
			g.BetweenStepGaps++
			if ga.from == nil {
				ga.from = map[step.Kind]*StepGapStat{}
			}
			s := ga.from[w.From]
			if s == nil {
				s = &StepGapStat{From: w.From}
				ga.from[w.From] = s
			}
			s.Gaps++
			s.TotalNS += w.BetweenNS
		}
		for _, l := range w.Launches {
			if ga.launches == nil {
				ga.launches = map[string]*launchAcc{}
			}
			x := ga.launches[l.API]
			if x == nil {
				x = &launchAcc{}
				ga.launches[l.API] = x
			}
			x.calls += l.Calls
			x.cpu += l.CPUNS
			x.latency = append(x.latency, l.LaunchToStart...)
		}
		for _, c := range w.Cats {
			cs := ga.cats[c.Cat]
			if cs == nil {
				cs = &CategoryStat{Category: tbl.Category(c.Cat)}
				ga.cats[c.Cat] = cs
			}
			cs.KernelNS += c.KernelNS
			cs.BusyNS += c.BusyNS
			cs.Instances += c.N
		}
		for _, n := range w.Names {
			k := nameKey{n.Name, tbl.Fold(n.Cat)}
			x := ga.names[k]
			if x == nil {
				x = &nameAcc{}
				ga.names[k] = x
			}
			x.n += n.N
			x.total += n.TotalNS
		}
	}
	top := opt.top()
	out := make([]Group, 0, len(order))
	for _, k := range order {
		ga := m[k]
		g := ga.g
		g.Steps = len(ga.steps)
		windows := max(g.Steps, 1)
		g.KernelPerStepNS = stats.PerStep(g.KernelNS, windows)
		g.StepShare = stats.Ratio(g.BusyNS, g.SpanNS)
		for _, s := range ga.from {
			g.BetweenFrom = append(g.BetweenFrom, *s)
		}
		slices.SortFunc(g.BetweenFrom, func(a, b StepGapStat) int { return cmp.Compare(a.From, b.From) })
		g.Launches = []LaunchStat{}
		for api, l := range ga.launches {
			g.Launches = append(g.Launches, LaunchStat{API: api, Calls: l.calls, CPUNS: l.cpu, LaunchToStart: stats.Select(l.latency)})
			g.LaunchCPUNS += l.cpu
		}
		slices.SortFunc(g.Launches, func(a, b LaunchStat) int {
			if c := cmp.Compare(b.CPUNS, a.CPUNS); c != 0 {
				return c
			}
			return cmp.Compare(a.API, b.API)
		})
		g.Categories = categoryList(ga.cats, g.KernelNS, g.SpanNS, windows)
		ids := make([]nameKey, 0, len(ga.names))
		for id := range ga.names {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b nameKey) int {
			if c := cmp.Compare(ga.names[b].total, ga.names[a].total); c != 0 {
				return c
			}
			if c := cmp.Compare(ga.names[b].n, ga.names[a].n); c != 0 {
				return c
			}
			if c := cmp.Compare(tbl.Name(a.name), tbl.Name(b.name)); c != 0 {
				return c
			}
			// Spelled out only for a name of two categories: the
			// comparison runs n log n times on a group of n names.
			return cmp.Compare(tbl.Category(a.cat).String(), tbl.Category(b.cat).String())
		})
		if len(ids) > top {
			ids = ids[:top]
		}
		for _, id := range ids {
			na := ga.names[id]
			g.Top = append(g.Top, TopKernel{Name: tbl.Name(id.name), Mangled: tbl.Mangled(id.name), Category: tbl.Category(id.cat),
				Instances: na.n, TotalNS: na.total, Share: stats.Ratio(na.total, g.KernelNS)})
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Group) int {
		return cmp.Or(cmp.Compare(a.Rank.ID, b.Rank.ID), cmp.Compare(a.Device, b.Device), a.Class.Compare(b.Class))
	})
	return out
}

// categoryList finishes a group's categories (a group, or a run's class
// in a summary): each one's shares of the kernel time and of the span,
// its time per window, largest kernel time first (ties in category
// order).
func categoryList[K comparable](cats map[K]*CategoryStat, kernel, span int64, windows int) []CategoryStat {
	out := make([]CategoryStat, 0, len(cats))
	for _, cs := range cats {
		cs.Share = stats.Ratio(cs.KernelNS, kernel)
		cs.StepShare = stats.Ratio(cs.BusyNS, span)
		cs.KernelPerStepNS = stats.PerStep(cs.KernelNS, windows)
		out = append(out, *cs)
	}
	slices.SortFunc(out, func(a, b CategoryStat) int {
		if c := cmp.Compare(b.KernelNS, a.KernelNS); c != 0 {
			return c
		}
		return classify.Compare(a.Category, b.Category)
	})
	return out
}
