package analyze

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
)

// Options selects what Breakdown, Kernels and Compare compute.
type Options struct {
	Classifier *classify.Classifier // nil means classify.Default()
	// Kind restricts step-grouped output to one step kind; KindAny keeps
	// all.
	Kind StepKind
	// Top is the number of top kernels kept per group; 0 means 10.
	Top int
	// ByTop folds every category into its top level: communication/*
	// becomes communication (gemm/marlin and moe/marlin_moe stay apart,
	// under gemm and moe).
	ByTop bool
	// MinChange is Compare's threshold; nil means DefaultMinChange.
	MinChange *MinChange
}

// categorize is the category rule of an analysis: ActivityCategory,
// folded to its top level with ByTop.
func (o *Options) categorize(a *trace.Activity, name string) classify.Category {
	c := ActivityCategory(a, name, o.classifier())
	if o.ByTop {
		return classify.Category{Top: c.Top}
	}
	return c
}

func (o *Options) classifier() *classify.Classifier {
	if o.Classifier == nil {
		return classify.Default()
	}
	return o.Classifier
}

func (o *Options) keeps(k StepKind) bool { return o.Kind == KindAny || o.Kind == k }

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
	// Label is the kernel's short label, unique over every kernel name of
	// the inputs (KernelLabels).
	Label string
	// Mangled is the raw name the trace recorded when parse demangled it
	// (trace.Trace.Mangled); "" otherwise.
	Mangled   string
	Category  classify.Category
	Instances int64
	TotalNS   int64
	Share     float64 // TotalNS / group KernelNS
}

// Group is the breakdown of one (input, process, device, step kind).
type Group struct {
	Path     string
	Run      string
	Rank     *int
	PID      int64
	Device   int32
	StepKind StepKind
	Steps    int // number of steps summed; 0 without step markers
	KernelNS int64
	BusyNS   int64
	SpanNS   int64
	// IdleNS is the time inside the group's windows when the device ran
	// no activity at all (see docs/definitions.md). Without steps it is
	// SpanNS - BusyNS.
	IdleNS int64
	// KernelPerStepNS is KernelNS per window; StepShare is BusyNS over
	// SpanNS.
	KernelPerStepNS int64
	StepShare       float64
	Categories      []CategoryStat
	Top             []TopKernel
	// StepStats describes the group's steps one by one; nil for the
	// whole-trace and unattributed groups.
	StepStats *StepStats
	// Idle splits IdleNS by cause (idle.go).
	Idle IdleSplit
	// BetweenStepsNS is the time between steps that ends in the group's
	// steps: from the end of the latest-ending earlier step of the device
	// to each step's first activity, summed over BetweenStepGaps steps,
	// split by the kind of the step before in BetweenFrom.
	BetweenStepsNS  int64
	BetweenStepGaps int
	BetweenFrom     []StepGapStat
	// Launches describes the launch calls of the group's activities per
	// API, most CPU time first; LaunchCPUNS sums their CPU time.
	Launches    []LaunchStat
	LaunchCPUNS int64
	// Comm is the group's communication time and the part of it exposed.
	Comm CommStat

	Input int   // index of the input in the analysis
	Proc  int32 // index of the process in the input's trace
}

// GroupTable is the per-group result of Breakdown.
type GroupTable struct {
	Inputs []InputInfo
	Groups []Group
	// CrossRank compares the ranks of each run (see CrossRank); empty for
	// runs of one rank.
	CrossRank []RankRow
	// EmptyLaunches counts the launch calls whose correlation id matches
	// no recorded GPU activity, per input, process and API.
	EmptyLaunches []EmptyLaunch
}

// window accumulates one (input, proc, device, step).
type window struct {
	input  int
	proc   int32
	device int32
	step   int32 // index in Steps.List, -1 for none, 0 with no steps
	first  trace.Time
	last   trace.Time
	kernel int64
	busy   union
	// idle is the time in [first, last) when the device ran nothing at
	// all (stepped inputs), or the window's own activities nothing (the
	// whole trace): the gaps idleScan splits by cause.
	idle  int64
	cats  map[catID]*catAcc
	names map[trace.NameID]*nameAcc
	windowIdle
}

type catAcc struct {
	kernel int64
	n      int64
	busy   union
}

type nameAcc struct {
	n     int64
	total int64
}

type winKey struct {
	proc, device, step int32
}

// accumulation is one pass over the inputs' activities: the windows, in
// order of first activity, and the categories met.
type accumulation struct {
	inputs []Input
	wins   []*window
	cats   *catTable
	byName [][]catID // per input, per NameID
	empty  []EmptyLaunch
}

func accumulate(inputs []Input, opt Options) *accumulation {
	acc := &accumulation{inputs: inputs, cats: newCatTable(), byName: make([][]catID, len(inputs))}
	for ii, in := range inputs {
		t := in.Trace
		byName := acc.cats.byName(t, opt.categorize)
		acc.byName[ii] = byName
		scan := newIdleScan(t, in.Steps != nil, byName, acc.cats)
		m := map[winKey]*window{}
		var lastKey winKey
		var last *window
		var inWins []*window
		for i := range t.Activities {
			a := &t.Activities[i]
			k := winKey{proc: a.Proc, device: a.Device}
			if in.Steps != nil {
				k.step = in.Steps.Of[i]
			}
			w := last
			if w == nil || k != lastKey {
				w = m[k]
				if w == nil {
					w = &window{input: ii, proc: a.Proc, device: a.Device, step: k.step,
						first: a.Start, last: a.End(), cats: map[catID]*catAcc{}, names: map[trace.NameID]*nameAcc{}}
					m[k] = w
					inWins = append(inWins, w)
				}
				last, lastKey = w, k
			}
			scan.add(w, i)
			end := a.End()
			w.last = max(w.last, end)
			w.kernel += a.Dur
			w.busy.add(a.Start, end)
			ca := w.cats[byName[a.Name]]
			if ca == nil {
				ca = &catAcc{}
				w.cats[byName[a.Name]] = ca
			}
			ca.kernel += a.Dur
			ca.n++
			ca.busy.add(a.Start, end)
			na := w.names[a.Name]
			if na == nil {
				na = &nameAcc{}
				w.names[a.Name] = na
			}
			na.n++
			na.total += a.Dur
		}
		acc.empty = append(acc.empty, scan.finish(ii, in, inWins)...)
		acc.wins = append(acc.wins, inWins...)
	}
	return acc
}

// Breakdown computes the per-group figures of the inputs and their step
// table (nil when no input has steps), in one pass over the activities.
func Breakdown(inputs []Input, opt Options) (*GroupTable, *StepTable) {
	top := opt.Top
	if top <= 0 {
		top = 10
	}
	acc := accumulate(inputs, opt)
	r := &GroupTable{}
	for _, in := range inputs {
		r.Inputs = append(r.Inputs, Describe(in))
	}
	r.Groups = acc.groups(top, opt)
	r.EmptyLaunches = acc.empty
	labelTops(r.Groups, inputs)
	st := acc.stepTable()
	st.addStats(r.Groups)
	r.CrossRank = CrossRank(r)
	addStragglers(inputs, r.CrossRank, opt)
	if len(st.Rows) == 0 && len(st.Inputs) == 0 {
		st = nil
	}
	return r, st
}

// addStragglers names the straggler of each communication row of the
// cross-rank table, from the collectives analysis (run only when there
// is such a row).
func addStragglers(inputs []Input, rows []RankRow, opt Options) {
	var ct *CollectiveTable
	for i := range rows {
		row := &rows[i]
		if row.Total || row.Category.Top != classify.Communication {
			continue
		}
		if ct == nil {
			ct = Collectives(inputs, CollectiveOptions{Classifier: opt.Classifier, Kind: opt.Kind, noSizes: true})
		}
		row.Straggler = ct.Straggler(row.Run, row.StepKind, row.Category.Sub)
	}
}

func stepKind(in Input, step int32) StepKind {
	switch {
	case in.Steps == nil:
		return KindAll
	case step < 0:
		return KindNone
	}
	return in.Steps.List[step].Kind
}

type groupKey struct {
	input        int
	proc, device int32
	kind         StepKind
}

// groups sums windows into (input, proc, device, step kind) groups.
func (acc *accumulation) groups(top int, opt Options) []Group {
	type gacc struct {
		g     Group
		cats  map[catID]*CategoryStat
		names map[trace.NameID]*nameAcc
		steps map[int32]bool
		idle  idleGroup
	}
	m := map[groupKey]*gacc{}
	var order []groupKey
	for _, w := range acc.wins {
		in := acc.inputs[w.input]
		kind := stepKind(in, w.step)
		if !opt.keeps(kind) {
			continue
		}
		k := groupKey{w.input, w.proc, w.device, kind}
		ga := m[k]
		if ga == nil {
			ga = &gacc{g: Group{Path: in.Path, Run: in.Run, Rank: Rank(in.Trace, w.proc), PID: procPID(in.Trace, w.proc),
				Device: w.device, StepKind: kind, Input: w.input, Proc: w.proc},
				cats: map[catID]*CategoryStat{}, names: map[trace.NameID]*nameAcc{}, steps: map[int32]bool{}}
			m[k] = ga
			order = append(order, k)
		}
		if in.Steps != nil && w.step >= 0 {
			ga.steps[w.step] = true
		}
		ga.g.KernelNS += w.kernel
		ga.g.BusyNS += w.busy.sum()
		ga.g.SpanNS += int64(w.last - w.first)
		ga.g.IdleNS += w.idle
		ga.idle.add(w)
		for ci, ca := range w.cats {
			cs := ga.cats[ci]
			if cs == nil {
				cs = &CategoryStat{Category: acc.cats.cats[ci]}
				ga.cats[ci] = cs
			}
			cs.KernelNS += ca.kernel
			cs.BusyNS += ca.busy.sum()
			cs.Instances += ca.n
		}
		for id, na := range w.names {
			x := ga.names[id]
			if x == nil {
				x = &nameAcc{}
				ga.names[id] = x
			}
			x.n += na.n
			x.total += na.total
		}
	}
	out := make([]Group, 0, len(order))
	for _, k := range order {
		ga := m[k]
		g := ga.g
		g.Steps = len(ga.steps)
		windows := max(g.Steps, 1)
		g.KernelPerStepNS = PerStep(g.KernelNS, windows)
		g.StepShare = Ratio(g.BusyNS, g.SpanNS)
		ga.idle.fill(&g, acc.inputs[k.input].Trace)
		g.Categories = categoryList(ga.cats, g.KernelNS, g.SpanNS, windows)
		t := acc.inputs[k.input].Trace
		ids := make([]trace.NameID, 0, len(ga.names))
		for id := range ga.names {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b trace.NameID) int {
			if c := cmp.Compare(ga.names[b].total, ga.names[a].total); c != 0 {
				return c
			}
			if c := cmp.Compare(ga.names[b].n, ga.names[a].n); c != 0 {
				return c
			}
			return cmp.Compare(t.Names[a], t.Names[b])
		})
		if len(ids) > top {
			ids = ids[:top]
		}
		for _, id := range ids {
			na := ga.names[id]
			g.Top = append(g.Top, TopKernel{Name: t.Names[id], Mangled: t.Mangled[id], Category: acc.cats.cats[acc.byName[k.input][id]],
				Instances: na.n, TotalNS: na.total, Share: Ratio(na.total, g.KernelNS)})
		}
		out = append(out, g)
	}
	slices.SortFunc(out, compareGroups)
	return out
}

func compareGroups(a, b Group) int {
	if c := cmp.Compare(a.Input, b.Input); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Proc, b.Proc); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Device, b.Device); c != 0 {
		return c
	}
	return cmp.Compare(a.StepKind, b.StepKind)
}
