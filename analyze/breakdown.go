package analyze

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
)

// Input is one parsed trace and the name the user gave it.
type Input struct {
	Path  string
	Trace *trace.Trace
	// Steps is the input's step segmentation; nil when the trace has no
	// step markers, and the whole trace is then one window.
	Steps *Steps
}

// Steps segments one input into steps and assigns activities to them.
type Steps struct {
	List []Step
	// Of holds, for each activity (by index in Trace.Activities), the
	// index in List of the step it belongs to, or -1 for none.
	Of []int32
}

// Step is one step window found from a marker range.
type Step struct {
	Index  int    `json:"index"` // position among the input's steps, from 0
	Kind   string `json:"kind"`  // decode, prefill, mixed, step
	Marker string `json:"marker"`
	// Start and End bound the CPU marker range.
	Start trace.Time `json:"marker_start_ns"`
	End   trace.Time `json:"marker_end_ns"`
	Proc  int32      `json:"-"`
}

// Step kinds. KindAll is the single window of a trace without steps;
// KindNone holds GPU time that belongs to no step.
const (
	KindAll  = "all"
	KindNone = "unattributed"
)

// Options selects what Breakdown and Kernels compute.
type Options struct {
	Classifier *classify.Classifier // nil means classify.Default()
	// Kind restricts step-grouped output to one step kind ("decode"); ""
	// keeps all.
	Kind string
	// Top is the number of top kernels kept per group; 0 means 10.
	Top int
}

func (o *Options) classifier() *classify.Classifier {
	if o.Classifier == nil {
		return classify.Default()
	}
	return o.Classifier
}

// InputInfo describes one input in a report.
type InputInfo struct {
	Path      string `json:"path"`
	Format    string `json:"format"`
	Rank      *int   `json:"rank"`       // null when the trace does not say
	WorldSize *int   `json:"world_size"` // null when the trace does not say
	// Activities is the number of GPU activities read.
	Activities int `json:"activities"`
	// Truncated is set when the input ended early; its text says where.
	Truncated string `json:"truncated,omitempty"`
}

// CategoryStat is one category's time in a group.
type CategoryStat struct {
	Category  string  `json:"category"`
	KernelNS  int64   `json:"kernel_ns"`
	BusyNS    int64   `json:"busy_ns"`
	Share     float64 `json:"share"` // KernelNS / group KernelNS
	Instances int64   `json:"instances"`
}

// TopKernel is one of a group's most expensive kernel names.
type TopKernel struct {
	Name      string  `json:"name"`
	Category  string  `json:"category"`
	Instances int64   `json:"instances"`
	TotalNS   int64   `json:"total_ns"`
	Share     float64 `json:"share"` // TotalNS / group KernelNS
}

// Group is the breakdown of one (input, process, device, step kind).
type Group struct {
	Path     string `json:"path"`
	Rank     *int   `json:"rank"`
	PID      int64  `json:"pid"`
	Device   int32  `json:"device"`
	StepKind string `json:"step_kind"`
	Steps    int    `json:"steps"` // number of steps summed; 0 without step markers
	KernelNS int64  `json:"kernel_ns"`
	BusyNS   int64  `json:"busy_ns"`
	SpanNS   int64  `json:"span_ns"`
	// IdleNS is SpanNS - BusyNS: time inside the window with no activity.
	IdleNS     int64          `json:"idle_ns"`
	Categories []CategoryStat `json:"categories"`
	Top        []TopKernel    `json:"top"`
	// StepStats describes the group's steps one by one; absent for the
	// whole-trace and unattributed groups.
	StepStats *StepStats `json:"step_stats,omitempty"`

	input int
	proc  int32
}

// Report is the result of Breakdown.
type Report struct {
	Inputs  []InputInfo  `json:"inputs"`
	Groups  []Group      `json:"groups"`
	Kernels []KernelStat `json:"kernels"`
	// CrossRank compares the ranks (see CrossRank); empty for one rank.
	CrossRank []RankRow `json:"cross_rank"`
	// StepRows lists every step of every input (per device), in order;
	// empty without step markers.
	StepRows []StepRow `json:"-"`
	// Steps is StepRows with their derived figures (traceq steps), and
	// StepSummaries each stepped input's marker and unattributed counts.
	Steps         []StepLine    `json:"-"`
	StepSummaries []StepSummary `json:"-"`
}

// StepRow is one step on one device.
type StepRow struct {
	Input  int
	Path   string
	Step   Step
	PID    int64
	Device int32
	Start  trace.Time // first activity start
	SpanNS int64
	BusyNS int64
	// KernelNS is the step's total kernel time; ByCat its split, in the
	// order of Report category ids (CatIDs).
	KernelNS int64
	ByCat    map[string]int64
}

// window accumulates one (input, proc, device, step).
type window struct {
	input      int
	proc       int32
	device     int32
	step       int32 // index in Steps.List, -1 for none, 0 with no steps
	first      trace.Time
	last       trace.Time
	kernel     int64
	busy       union
	cats       map[int32]*catAcc
	names      map[trace.NameID]*nameAcc
	hasAnyTime bool
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

// categorizer classifies the names of one trace once each.
type categorizer struct {
	ids    map[string]int32 // category id -> index
	cats   []string
	byName [][]int32 // per input, per NameID: category index
}

func (c *categorizer) id(cat string) int32 {
	if i, ok := c.ids[cat]; ok {
		return i
	}
	i := int32(len(c.cats))
	c.ids[cat] = i
	c.cats = append(c.cats, cat)
	return i
}

// nameCats classifies every name of t; memcpy and memset activities are
// categorised by their kind, whatever their name.
func (c *categorizer) nameCats(t *trace.Trace, cl *classify.Classifier) []int32 {
	out := make([]int32, len(t.Names))
	for i := range out {
		out[i] = -1
	}
	for i := range t.Activities {
		a := &t.Activities[i]
		if out[a.Name] >= 0 {
			continue
		}
		out[a.Name] = c.id(ActivityCategory(a, t.Names[a.Name], cl))
	}
	return out
}

// ActivityCategory is the category of an activity: memcpy and memset
// activities by their kind, whatever their name; kernels by name.
func ActivityCategory(a *trace.Activity, name string, cl *classify.Classifier) string {
	switch a.Kind {
	case trace.KindMemcpy:
		return "memcpy/memcpy"
	case trace.KindMemset:
		return "memcpy/memset"
	}
	return cl.Classify(name)
}

// Breakdown computes the per-group figures of the inputs.
func Breakdown(inputs []Input, opt Options) *Report {
	cl := opt.classifier()
	top := opt.Top
	if top <= 0 {
		top = 10
	}
	cz := &categorizer{ids: map[string]int32{}}
	r := &Report{}
	var wins []*window
	cz.byName = make([][]int32, len(inputs))
	for ii, in := range inputs {
		t := in.Trace
		r.Inputs = append(r.Inputs, Describe(in))
		byName := cz.nameCats(t, cl)
		cz.byName[ii] = byName
		m := map[winKey]*window{}
		var lastKey winKey
		var last *window
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
						first: a.Start, cats: map[int32]*catAcc{}, names: map[trace.NameID]*nameAcc{}}
					m[k] = w
					wins = append(wins, w)
				}
				last, lastKey = w, k
			}
			end := a.End()
			if end > w.last || !w.hasAnyTime {
				w.last = end
			}
			w.hasAnyTime = true
			w.kernel += a.Dur
			w.busy.add(a.Start, end)
			ci := byName[a.Name]
			ca := w.cats[ci]
			if ca == nil {
				ca = &catAcc{}
				w.cats[ci] = ca
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
	}
	r.Groups = groups(inputs, wins, cz, top, opt.Kind)
	r.StepRows = stepRows(inputs, wins, cz)
	addStepStats(inputs, r)
	r.CrossRank = CrossRank(r)
	return r
}

// Describe says what an input is: path, format, rank, size, truncation.
func Describe(in Input) InputInfo {
	t := in.Trace
	info := InputInfo{Path: in.Path, Format: string(t.Meta.Format), Activities: len(t.Activities)}
	if t.Meta.Rank >= 0 {
		v := t.Meta.Rank
		info.Rank = &v
	}
	if t.Meta.WorldSize >= 0 {
		v := t.Meta.WorldSize
		info.WorldSize = &v
	}
	if t.Truncated != nil {
		info.Truncated = t.Truncated.Reason
	}
	return info
}

func procRank(t *trace.Trace, proc int32) *int {
	if int(proc) < len(t.Procs) && t.Procs[proc].Rank >= 0 {
		v := t.Procs[proc].Rank
		return &v
	}
	if t.Meta.Rank >= 0 && len(t.Procs) <= 1 {
		v := t.Meta.Rank
		return &v
	}
	return nil
}

func procPID(t *trace.Trace, proc int32) int64 {
	if int(proc) < len(t.Procs) {
		return t.Procs[proc].PID
	}
	return 0
}

func stepKind(in Input, step int32) string {
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
	kind         string
}

// groups sums windows into (input, proc, device, step kind) groups.
func groups(inputs []Input, wins []*window, cz *categorizer, top int, onlyKind string) []Group {
	type gacc struct {
		g     Group
		cats  map[int32]*CategoryStat
		names map[trace.NameID]*nameAcc
		steps map[int32]bool
	}
	m := map[groupKey]*gacc{}
	var order []groupKey
	for _, w := range wins {
		in := inputs[w.input]
		kind := stepKind(in, w.step)
		if onlyKind != "" && kind != onlyKind {
			continue
		}
		k := groupKey{w.input, w.proc, w.device, kind}
		ga := m[k]
		if ga == nil {
			ga = &gacc{g: Group{Path: in.Path, Rank: procRank(in.Trace, w.proc), PID: procPID(in.Trace, w.proc),
				Device: w.device, StepKind: kind, input: w.input, proc: w.proc},
				cats: map[int32]*CategoryStat{}, names: map[trace.NameID]*nameAcc{}, steps: map[int32]bool{}}
			m[k] = ga
			order = append(order, k)
		}
		if in.Steps != nil && w.step >= 0 {
			ga.steps[w.step] = true
		}
		ga.g.KernelNS += w.kernel
		ga.g.BusyNS += w.busy.sum()
		ga.g.SpanNS += int64(w.last - w.first)
		for ci, ca := range w.cats {
			cs := ga.cats[ci]
			if cs == nil {
				cs = &CategoryStat{Category: cz.cats[ci]}
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
		g.IdleNS = g.SpanNS - g.BusyNS
		for _, cs := range ga.cats {
			cs.Share = ratio(cs.KernelNS, g.KernelNS)
			g.Categories = append(g.Categories, *cs)
		}
		slices.SortFunc(g.Categories, func(a, b CategoryStat) int {
			if c := cmp.Compare(b.KernelNS, a.KernelNS); c != 0 {
				return c
			}
			return classify.Compare(a.Category, b.Category)
		})
		t := inputs[k.input].Trace
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
			g.Top = append(g.Top, TopKernel{Name: t.Names[id], Category: cz.cats[cz.byName[k.input][id]],
				Instances: na.n, TotalNS: na.total, Share: ratio(na.total, g.KernelNS)})
		}
		out = append(out, g)
	}
	slices.SortFunc(out, compareGroups)
	return out
}

var kindOrder = map[string]int{KindAll: 0, "decode": 1, "prefill": 2, "mixed": 3, "step": 4, KindNone: 9}

func compareGroups(a, b Group) int {
	if c := cmp.Compare(a.input, b.input); c != 0 {
		return c
	}
	if c := cmp.Compare(a.proc, b.proc); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Device, b.Device); c != 0 {
		return c
	}
	return compareKinds(a.StepKind, b.StepKind)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
