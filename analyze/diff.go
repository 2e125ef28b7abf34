package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/traceq/traceq/classify"
)

// Diff compares two runs: each side is one or more inputs (a trace, or the
// rank files of a directory), compared per step kind.
//
// The figures (window, time per step, delta, share change) are defined in
// docs/definitions.md#diff.
type Diff struct {
	Before []InputInfo
	After  []InputInfo
	// Comparable is false when the sides share no step kind, or no
	// category within the kinds they share; Notes says why, and lists the
	// step kinds present on one side only.
	Comparable bool
	Notes      []string
	Kinds      []KindDiff
}

// KindDiff compares one step kind.
type KindDiff struct {
	StepKind StepKind
	// BeforeWindows and AfterWindows count the windows (steps × devices)
	// the per-step figures divide by; Devices count the (input, process,
	// device) groups of the kind, and Steps the most steps any of them has
	// (0 without step markers).
	BeforeWindows int
	AfterWindows  int
	BeforeDevices int
	AfterDevices  int
	BeforeSteps   int
	AfterSteps    int
	// Total compares the kind's whole kernel time (category "total").
	Total      CategoryDiff
	Categories []CategoryDiff
	// Kernels are the kernels whose time per step changed most.
	Kernels []KernelDiff
	// Idle compares the idle time per step by cause.
	Idle IdleDiff
}

// IdleDiff compares the idle time of one step kind per step (window), in
// total and by cause (IdleSplit), each divided and rounded as a category's
// time per step.
type IdleDiff struct {
	Total       CategoryDiff // the category is empty
	LaunchBound CategoryDiff
	DeviceSide  CategoryDiff
	Unknown     CategoryDiff
}

// CategoryDiff compares one category of one step kind.
type CategoryDiff struct {
	Category        classify.Category
	BeforeNS        int64 // summed over the side's windows
	AfterNS         int64
	BeforePerStepNS int64
	AfterPerStepNS  int64
	DeltaNS         int64    // AfterPerStepNS - BeforePerStepNS
	DeltaPct        *float64 // DeltaNS / BeforePerStepNS × 100; null when before is 0
	BeforeShare     float64
	AfterShare      float64
	ShareChange     float64 // AfterShare - BeforeShare
}

// Kernel changes.
const (
	ChangeAppeared  = "appeared"
	ChangeVanished  = "vanished"
	ChangeGrew      = "grew"
	ChangeShrank    = "shrank"
	ChangeUnchanged = "unchanged"
)

// KernelDiff compares one kernel, matched across the sides by name or,
// where the names differ only in template arguments and parameter lists,
// by ShortName.
type KernelDiff struct {
	// Name is the kernel name, or the short name for a short-name match.
	Name string
	// Label is the kernel's short label, unique over every kernel name of
	// both sides (KernelLabels); a short-name match's is its Name.
	Label    string
	Category classify.Category
	// Match is "name" or "short_name"; "" for a kernel on one side only.
	Match           string
	Change          string // appeared, vanished, grew, shrank, unchanged
	BeforeNS        int64
	AfterNS         int64
	BeforePerStepNS int64
	AfterPerStepNS  int64
	DeltaNS         int64
	DeltaPct        *float64
	BeforeInstances int64
	AfterInstances  int64
	// BeforeNames and AfterNames list the full names a short-name match
	// joined.
	BeforeNames []string
	AfterNames  []string
}

// sideKind accumulates one step kind of one side.
type sideKind struct {
	windows, steps, devices int
	kernel                  int64
	cats                    map[classify.Category]int64
	idle                    int64
	split                   IdleSplit
	names                   map[string]*nameStat
}

type nameStat struct {
	cat   classify.Category
	n     int64
	total int64
}

// Compare computes the diff of two sides. opt.Kind restricts it to one
// step kind; opt.Top is the number of kernels kept per kind (0: 10).
func Compare(before, after []Input, opt Options) *Diff {
	top := opt.Top
	if top <= 0 {
		top = 10
	}
	cl := opt.classifier()
	// Empty lists, not null, for JSON readers.
	d := &Diff{Notes: []string{}, Kinds: []KindDiff{}}
	b, bKinds := diffSide(before, opt, cl)
	a, aKinds := diffSide(after, opt, cl)
	for _, in := range before {
		d.Before = append(d.Before, Describe(in))
	}
	for _, in := range after {
		d.After = append(d.After, Describe(in))
	}
	var common []StepKind
	for _, k := range bKinds {
		if a[k] != nil {
			common = append(common, k)
		} else {
			d.Notes = append(d.Notes, fmt.Sprintf("step kind %q is in before only", k))
		}
	}
	for _, k := range aKinds {
		if b[k] == nil {
			d.Notes = append(d.Notes, fmt.Sprintf("step kind %q is in after only", k))
		}
	}
	if len(common) == 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("not comparable: no common step kind (before: %s; after: %s); --no-steps compares whole traces",
			kindList(bKinds), kindList(aKinds)))
	}
	for _, k := range common {
		kd := compareKind(k, b[k], a[k], top)
		shared := 0
		for _, c := range kd.Categories {
			if c.BeforeNS > 0 && c.AfterNS > 0 {
				shared++
			}
		}
		if shared == 0 {
			d.Notes = append(d.Notes, fmt.Sprintf("step kind %q: no category has time on both sides", k))
		} else if k != KindNone {
			d.Comparable = true
		}
		d.Kinds = append(d.Kinds, kd)
	}
	if len(common) > 0 && !d.Comparable {
		d.Notes = append(d.Notes, "not comparable: the common step kinds share no category")
	}
	labelDiff(d, before, after)
	return d
}

func kindList(ks []StepKind) string {
	if len(ks) == 0 {
		return "none"
	}
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.String()
	}
	return strings.Join(names, ", ")
}

// diffSide sums one side per step kind, and returns the kinds in report
// order.
func diffSide(inputs []Input, opt Options, cl *classify.Classifier) (map[StepKind]*sideKind, []StepKind) {
	m := map[StepKind]*sideKind{}
	get := func(k StepKind) *sideKind {
		s := m[k]
		if s == nil {
			s = &sideKind{cats: map[classify.Category]int64{}, names: map[string]*nameStat{}}
			m[k] = s
		}
		return s
	}
	r, _ := Breakdown(inputs, Options{Classifier: cl, Kind: opt.Kind, Top: 1, ByTop: opt.ByTop})
	for _, g := range r.Groups {
		s := get(g.StepKind)
		s.windows += max(g.Steps, 1)
		s.steps = max(s.steps, g.Steps)
		s.devices++
		s.kernel += g.KernelNS
		s.idle += g.IdleNS
		s.split.add(g.Idle)
		for _, c := range g.Categories {
			s.cats[c.Category] += c.KernelNS
		}
	}
	// Kernel names, per kind; categories as Breakdown assigns them.
	for _, in := range inputs {
		t := in.Trace
		catOf := make([]classify.Category, len(t.Names))
		known := make([]bool, len(t.Names))
		for i := range t.Activities {
			a := &t.Activities[i]
			k := stepKindOf(in, i)
			s := m[k]
			if s == nil {
				continue // filtered out by opt.Kind
			}
			name := t.Names[a.Name]
			if !known[a.Name] {
				catOf[a.Name], known[a.Name] = opt.categorize(a, name), true
			}
			ns := s.names[name]
			if ns == nil {
				ns = &nameStat{cat: catOf[a.Name]}
				s.names[name] = ns
			}
			ns.n++
			ns.total += a.Dur
		}
	}
	kinds := make([]StepKind, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return m, kinds
}

func pctChange(before, after int64) *float64 {
	if before == 0 {
		return nil
	}
	v := float64(after-before) / float64(before) * 100
	return &v
}

func categoryDiff(cat classify.Category, b, a int64, bw, aw int, bTotal, aTotal int64) CategoryDiff {
	c := CategoryDiff{Category: cat, BeforeNS: b, AfterNS: a,
		BeforePerStepNS: PerStep(b, bw), AfterPerStepNS: PerStep(a, aw),
		BeforeShare: Ratio(b, bTotal), AfterShare: Ratio(a, aTotal)}
	c.DeltaNS = c.AfterPerStepNS - c.BeforePerStepNS
	c.DeltaPct = pctChange(c.BeforePerStepNS, c.AfterPerStepNS)
	c.ShareChange = c.AfterShare - c.BeforeShare
	return c
}

func compareKind(kind StepKind, b, a *sideKind, top int) KindDiff {
	kd := KindDiff{StepKind: kind, Categories: []CategoryDiff{}, Kernels: []KernelDiff{}, BeforeWindows: b.windows, AfterWindows: a.windows, BeforeSteps: b.steps, AfterSteps: a.steps,
		BeforeDevices: b.devices, AfterDevices: a.devices}
	kd.Total = categoryDiff(classify.Category{}, b.kernel, a.kernel, b.windows, a.windows, b.kernel, a.kernel)
	seen := map[classify.Category]bool{}
	var cats []classify.Category
	for _, m := range []map[classify.Category]int64{b.cats, a.cats} {
		for c := range m {
			if !seen[c] {
				seen[c] = true
				cats = append(cats, c)
			}
		}
	}
	for _, c := range cats {
		kd.Categories = append(kd.Categories, categoryDiff(c, b.cats[c], a.cats[c], b.windows, a.windows, b.kernel, a.kernel))
	}
	// Biggest change first, then the declared category order.
	slices.SortFunc(kd.Categories, func(x, y CategoryDiff) int {
		if c := cmp.Compare(abs(y.DeltaNS), abs(x.DeltaNS)); c != 0 {
			return c
		}
		return classify.Compare(x.Category, y.Category)
	})
	kd.Kernels = kernelDiffs(b, a, top)
	idle := func(bns, ans int64) CategoryDiff {
		return categoryDiff(classify.Category{}, bns, ans, b.windows, a.windows, b.idle, a.idle)
	}
	kd.Idle = IdleDiff{Total: idle(b.idle, a.idle), LaunchBound: idle(b.split.LaunchBoundNS, a.split.LaunchBoundNS),
		DeviceSide: idle(b.split.DeviceSideNS, a.split.DeviceSideNS), Unknown: idle(b.split.UnknownNS, a.split.UnknownNS)}
	return kd
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// kernelDiffs matches kernel names across the sides and keeps the top
// changes.
func kernelDiffs(b, a *sideKind, top int) []KernelDiff {
	out := []KernelDiff{}
	add := func(name, match string, bs, as nameStat, bNames, aNames []string) {
		cat := as.cat
		if cat.Sub == "" {
			cat = bs.cat
		}
		k := KernelDiff{Name: name, Category: cat, Match: match,
			BeforeNS: bs.total, AfterNS: as.total, BeforeInstances: bs.n, AfterInstances: as.n,
			BeforePerStepNS: PerStep(bs.total, b.windows), AfterPerStepNS: PerStep(as.total, a.windows),
			BeforeNames: bNames, AfterNames: aNames}
		k.DeltaNS = k.AfterPerStepNS - k.BeforePerStepNS
		k.DeltaPct = pctChange(k.BeforePerStepNS, k.AfterPerStepNS)
		switch {
		case bs.n == 0:
			k.Change = ChangeAppeared
		case as.n == 0:
			k.Change = ChangeVanished
		case k.DeltaNS > 0:
			k.Change = ChangeGrew
		case k.DeltaNS < 0:
			k.Change = ChangeShrank
		default:
			k.Change = ChangeUnchanged
		}
		out = append(out, k)
	}
	// Exact names first.
	var bOnly, aOnly []string
	for name, bs := range b.names {
		if as, ok := a.names[name]; ok {
			add(name, "name", *bs, *as, nil, nil)
		} else {
			bOnly = append(bOnly, name)
		}
	}
	for name := range a.names {
		if _, ok := b.names[name]; !ok {
			aOnly = append(aOnly, name)
		}
	}
	// Then names that differ only in template arguments or parameters.
	slices.Sort(bOnly)
	slices.Sort(aOnly)
	byShort := func(names []string) map[string][]string {
		m := map[string][]string{}
		for _, n := range names {
			s := ShortName(n)
			m[s] = append(m[s], n)
		}
		return m
	}
	bShort, aShort := byShort(bOnly), byShort(aOnly)
	sum := func(m map[string]*nameStat, names []string) nameStat {
		var s nameStat
		for _, n := range names {
			x := m[n]
			s.n += x.n
			s.total += x.total
			if s.cat.Sub == "" {
				s.cat = x.cat
			}
		}
		return s
	}
	for short, bn := range bShort {
		an, ok := aShort[short]
		if !ok {
			for _, n := range bn {
				add(n, "", *b.names[n], nameStat{}, nil, nil)
			}
			continue
		}
		add(short, "short_name", sum(b.names, bn), sum(a.names, an), bn, an)
	}
	for short, an := range aShort {
		if _, ok := bShort[short]; ok {
			continue
		}
		for _, n := range an {
			add(n, "", nameStat{}, *a.names[n], nil, nil)
		}
	}
	slices.SortFunc(out, func(x, y KernelDiff) int {
		if c := cmp.Compare(abs(y.DeltaNS), abs(x.DeltaNS)); c != 0 {
			return c
		}
		if c := cmp.Compare(y.AfterNS+y.BeforeNS, x.AfterNS+x.BeforeNS); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		return cmp.Compare(x.Match, y.Match)
	})
	if len(out) > top {
		out = out[:top]
	}
	return out
}
