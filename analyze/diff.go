package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/labels"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// Diff compares two runs: each side is one or more inputs (a trace, or the
// rank files of a directory), compared class by class.
//
// The figures (window, time per step, delta, share change, step time,
// tokens, change and noise) are defined in docs/definitions.md#diff.
type Diff struct {
	Before, After *window.Table
	// BeforeRun and AfterRun name the sides: their inputs' runs.
	BeforeRun string
	AfterRun  string
	// MinChange is the threshold the changes were judged with; a change
	// below NoiseK standard errors of the step-to-step spread is noise.
	MinChange MinChange
	NoiseK    int
	// Comparable is false when the sides share no class, or no category
	// within the classes they share (KindDiff.Unshared).
	Comparable bool
	// OnlyBefore and OnlyAfter list the classes found on one side only,
	// in report order.
	OnlyBefore, OnlyAfter []step.Class
	Kinds                 []KindDiff
}

// KindDiff compares one class.
type KindDiff struct {
	Class step.Class
	// Unshared says that no category has time on both sides.
	Unshared bool
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
	// StepTime compares the windows' spans; nil for the windows that are
	// not steps.
	StepTime *StepTimeDiff
	// Tokens compares the token counts of the steps' markers; nil unless
	// every window of the kind on both sides has one.
	Tokens *TokenDiff
	// Total compares the kind's whole kernel time (category "total").
	Total CategoryDiff
	// Wall compares the wall time per window: the summed span of the
	// windows over their number (for a whole trace, the span per device:
	// what diff leads with when there are no steps).
	Wall       CategoryDiff
	Categories []CategoryDiff
	// Kernels are the kernels whose time per step changed most.
	Kernels []KernelDiff
	// Idle compares the idle time per step by cause.
	Idle IdleDiff
}

// StepTimeDiff compares the step time: the span of each window (one step
// on one device) of the kind, as percentiles over the side's windows.
type StepTimeDiff struct {
	Before, After      stats.Dist
	DeltaP50, DeltaP90 float64 // after − before
	DeltaP50Pct        *float64
	DeltaP90Pct        *float64
	Verdict            // on DeltaP50
}

// TokenDiff compares the tokens per step and the step time per token.
type TokenDiff struct {
	// BeforeP50 and AfterP50 are the median token count of the windows'
	// steps.
	BeforeP50, AfterP50 float64
	// NSPerToken is the summed span of the windows over their summed
	// tokens, rounded to the nanosecond; nil when the tokens sum to 0
	// (undefined), and so is the delta.
	BeforeNSPerToken *int64
	AfterNSPerToken  *int64
	DeltaNSPerToken  *int64
	DeltaPct         *float64
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
	// Verdict judges DeltaNS: appeared, vanished, unchanged, noise, grew
	// or shrank.
	Verdict
}

// KernelDiff compares one kernel, matched across the sides by name or,
// where the names differ only in template arguments and parameter lists,
// by their short name (labels.Short).
type KernelDiff struct {
	// Name is the kernel name, or the short name for a short-name match.
	Name     string
	Category classify.Category
	// Match is "name" or "short_name"; "" for a kernel on one side only.
	Match           string
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
	// Verdict (Change: appeared, vanished, unchanged, noise, grew,
	// shrank) judges DeltaNS.
	Verdict
}

// sideKind accumulates one class of one side: its windows and their
// sums.
type sideKind struct {
	tbl     *window.Table
	wins    []*window.Window
	dev     []int // each window's device, numbered from 0
	steps   int   // the most stepped windows of any device
	devices int
	kernel  int64
	cats    map[classify.Category]int64
	catIDs  map[classify.Category]window.CatID
	idle    int64
	split   window.IdleSplit
	names   map[nameKey]*nameStat
	// spans holds each window's span, for steps; tokens its step's token
	// count, nil when a window's marker gives none.
	spans  []int64
	tokens []int64
	span   int64 // summed span of the windows
}

// nameKey is a kernel row of the diff: a name in one (folded) category.
// A name is in two where the category of a generic collective kernel
// follows its op (window.Table.ActivityCategory): one row each.
type nameKey struct {
	name string
	cat  classify.Category
}

func (k nameKey) compare(o nameKey) int {
	return cmp.Or(strings.Compare(k.name, o.name), strings.Compare(k.cat.String(), o.cat.String()))
}

type nameStat struct {
	cat   classify.Category
	n     int64
	total int64
}

// Compare computes the diff of two sides. opt.Filter restricts it to one
// class; opt.Top is the number of kernels kept per class (0: 10);
// opt.MinChange the threshold (nil: DefaultMinChange).
func Compare(before, after *window.Table, opt Options) *Diff {
	mc := DefaultMinChange
	if opt.MinChange != nil {
		mc = *opt.MinChange
	}
	// Empty lists, not null, for JSON readers.
	d := &Diff{Before: before, After: after, Kinds: []KindDiff{}, MinChange: mc, NoiseK: noiseK,
		BeforeRun: runName(before.Inputs), AfterRun: runName(after.Inputs)}
	b, bKinds := diffSide(before, opt)
	a, aKinds := diffSide(after, opt)
	var common []step.Class
	for _, k := range bKinds {
		if a[k] != nil {
			common = append(common, k)
		} else {
			d.OnlyBefore = append(d.OnlyBefore, k)
		}
	}
	for _, k := range aKinds {
		if b[k] == nil {
			d.OnlyAfter = append(d.OnlyAfter, k)
		}
	}
	for _, k := range common {
		kd := compareKind(k, b[k], a[k], opt.top(), mc)
		shared := 0
		for _, c := range kd.Categories {
			if c.BeforeNS > 0 && c.AfterNS > 0 {
				shared++
			}
		}
		if shared == 0 {
			kd.Unshared = true
		} else if k != step.Unattributed {
			d.Comparable = true
		}
		d.Kinds = append(d.Kinds, kd)
	}
	return d
}

// runName names a side of a diff: its inputs' run, the runs joined with
// " + " when they are several.
func runName(inputs []window.Input) string {
	var names []string
	seen := map[string]bool{}
	for _, in := range inputs {
		if !seen[in.Run] {
			seen[in.Run] = true
			names = append(names, in.Run)
		}
	}
	if len(names) > 3 {
		names = append(names[:2], fmt.Sprintf("… (%d runs)", len(names)))
	}
	return strings.Join(names, " + ")
}

// diffSide sums one side per class from its windows, and returns the
// classes in report order.
func diffSide(tbl *window.Table, opt Options) (map[step.Class]*sideKind, []step.Class) {
	m := map[step.Class]*sideKind{}
	type devKey struct {
		rank   window.RankID
		device int32
	}
	devs := map[step.Class]map[devKey]int{}
	stepped := map[step.Class][]int{} // per device, its stepped windows
	for i := range tbl.Windows {
		w := &tbl.Windows[i]
		if !opt.Filter.Keeps(w.Class) {
			continue
		}
		s := m[w.Class]
		if s == nil {
			s = &sideKind{tbl: tbl, cats: map[classify.Category]int64{}, catIDs: map[classify.Category]window.CatID{},
				names: map[nameKey]*nameStat{}, tokens: []int64{}}
			m[w.Class] = s
			devs[w.Class] = map[devKey]int{}
		}
		dk := devKey{w.Rank, w.Device}
		di, seen := devs[w.Class][dk]
		if !seen {
			di = s.devices
			devs[w.Class][dk] = di
			s.devices++
			stepped[w.Class] = append(stepped[w.Class], 0)
		}
		s.wins = append(s.wins, w)
		s.dev = append(s.dev, di)
		if w.Class.Scope == step.InStep {
			stepped[w.Class][di]++
			s.steps = max(s.steps, stepped[w.Class][di])
			s.spans = append(s.spans, w.SpanNS())
			st := tbl.Inputs[tbl.Ranks[w.Rank].Input].Steps
			if tok := st.List[w.Step].Tokens; tok >= 0 && s.tokens != nil {
				s.tokens = append(s.tokens, tok)
			} else {
				s.tokens = nil
			}
		}
		s.kernel += w.KernelNS
		s.span += w.SpanNS()
		s.idle += w.IdleNS
		s.split.Add(w.Idle)
		for _, c := range w.Cats {
			cat := tbl.Category(c.Cat)
			s.cats[cat] += c.KernelNS
			s.catIDs[cat] = c.Cat
		}
		for _, n := range w.Names {
			k := nameKey{tbl.Name(n.Name), tbl.Category(tbl.Fold(n.Cat))}
			ns := s.names[k]
			if ns == nil {
				ns = &nameStat{cat: k.cat}
				s.names[k] = ns
			}
			ns.n += n.N
			ns.total += n.TotalNS
		}
	}
	kinds := make([]step.Class, 0, len(m))
	for k, s := range m {
		kinds = append(kinds, k)
		if len(s.spans) == 0 {
			s.tokens = nil
		}
	}
	slices.SortFunc(kinds, step.Class.Compare)
	return m, kinds
}

// sample returns each window's value of f: the row's per-window times.
func (s *sideKind) sample(f func(w *window.Window) int64) spread {
	xs := make([]int64, len(s.wins))
	for i, w := range s.wins {
		xs[i] = f(w)
	}
	return spreadOf(xs, s.dev, s.devices)
}

// catSample is the sample of one category's kernel time per window.
func (s *sideKind) catSample(c classify.Category) spread {
	id, ok := s.catIDs[c]
	return s.sample(func(w *window.Window) int64 {
		if !ok {
			return 0
		}
		return w.Cat(id).KernelNS
	})
}

// nameSample is the sample of the summed kernel time of names in (folded)
// category cat per window.
func (s *sideKind) nameSample(names []string, cat classify.Category) spread {
	var ids []window.NameID
	for _, n := range names {
		if id, ok := s.tbl.NameIDOf(n); ok {
			ids = append(ids, id)
		}
	}
	in := map[window.CatID]bool{}
	return s.sample(func(w *window.Window) int64 {
		var x int64
		for _, id := range ids {
			i, _ := slices.BinarySearchFunc(w.Names, id, func(n window.NameSum, id window.NameID) int { return cmp.Compare(n.Name, id) })
			for ; i < len(w.Names) && w.Names[i].Name == id; i++ {
				c := w.Names[i].Cat
				ok, seen := in[c]
				if !seen {
					ok = s.tbl.Category(s.tbl.Fold(c)) == cat
					in[c] = ok
				}
				if ok {
					x += w.Names[i].TotalNS
				}
			}
		}
		return x
	})
}

func pctChange(before, after int64) *float64 {
	if before == 0 {
		return nil
	}
	v := float64(after-before) / float64(before) * 100
	return &v
}

func pctChangeF(before, after float64) *float64 {
	if before == 0 {
		return nil
	}
	v := (after - before) / before * 100
	return &v
}

func categoryDiff(cat classify.Category, b, a int64, bw, aw int, bTotal, aTotal int64) CategoryDiff {
	c := CategoryDiff{Category: cat, BeforeNS: b, AfterNS: a,
		BeforePerStepNS: stats.PerStep(b, bw), AfterPerStepNS: stats.PerStep(a, aw),
		BeforeShare: stats.Ratio(b, bTotal), AfterShare: stats.Ratio(a, aTotal)}
	c.DeltaNS = c.AfterPerStepNS - c.BeforePerStepNS
	c.DeltaPct = pctChange(c.BeforePerStepNS, c.AfterPerStepNS)
	c.ShareChange = c.AfterShare - c.BeforeShare
	return c
}

// judged gives c its verdict from the two sides' samples.
func (c CategoryDiff) judged(b, a spread, mc MinChange) CategoryDiff {
	c.Verdict = judge(float64(c.DeltaNS), float64(c.BeforePerStepNS), b, a, mc, 1)
	return c
}

func compareKind(kind step.Class, b, a *sideKind, top int, mc MinChange) KindDiff {
	bw, aw := len(b.wins), len(a.wins)
	kd := KindDiff{Class: kind, Categories: []CategoryDiff{}, Kernels: []KernelDiff{}, BeforeWindows: bw, AfterWindows: aw, BeforeSteps: b.steps, AfterSteps: a.steps,
		BeforeDevices: b.devices, AfterDevices: a.devices}
	kernel := func(w *window.Window) int64 { return w.KernelNS }
	kd.Total = categoryDiff(classify.Category{}, b.kernel, a.kernel, bw, aw, b.kernel, a.kernel).judged(b.sample(kernel), a.sample(kernel), mc)
	span := func(w *window.Window) int64 { return w.SpanNS() }
	kd.Wall = categoryDiff(classify.Category{}, b.span, a.span, bw, aw, b.span, a.span).judged(b.sample(span), a.sample(span), mc)
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
		cd := categoryDiff(c, b.cats[c], a.cats[c], bw, aw, b.kernel, a.kernel).judged(b.catSample(c), a.catSample(c), mc)
		cd.Verdict = cd.Verdict.presence(b.cats[c], a.cats[c])
		kd.Categories = append(kd.Categories, cd)
	}
	// Biggest change first, then the declared category order.
	slices.SortFunc(kd.Categories, func(x, y CategoryDiff) int {
		if c := cmp.Compare(abs(y.DeltaNS), abs(x.DeltaNS)); c != 0 {
			return c
		}
		return classify.Compare(x.Category, y.Category)
	})
	kd.Kernels = kernelDiffs(b, a, top, mc)
	idle := func(bns, ans int64, f func(w *window.Window) int64) CategoryDiff {
		return categoryDiff(classify.Category{}, bns, ans, bw, aw, b.idle, a.idle).judged(b.sample(f), a.sample(f), mc)
	}
	kd.Idle = IdleDiff{
		Total:       idle(b.idle, a.idle, func(w *window.Window) int64 { return w.IdleNS }),
		LaunchBound: idle(b.split.LaunchBoundNS, a.split.LaunchBoundNS, func(w *window.Window) int64 { return w.Idle.LaunchBoundNS }),
		DeviceSide:  idle(b.split.DeviceSideNS, a.split.DeviceSideNS, func(w *window.Window) int64 { return w.Idle.DeviceSideNS }),
		Unknown:     idle(b.split.UnknownNS, a.split.UnknownNS, func(w *window.Window) int64 { return w.Idle.UnknownNS }),
	}
	if len(b.spans) > 0 && len(a.spans) > 0 {
		kd.StepTime = stepTimeDiff(b, a, mc)
		kd.Tokens = tokenDiff(b, a)
	}
	return kd
}

// stepTimeDiff compares the spans' p50 and p90, and judges the p50's
// change against the standard error of a median.
func stepTimeDiff(b, a *sideKind, mc MinChange) *StepTimeDiff {
	bs, as := spreadOf(b.spans, b.dev, b.devices), spreadOf(a.spans, a.dev, a.devices)
	st := &StepTimeDiff{Before: stats.Of(slices.Clone(b.spans)), After: stats.Of(slices.Clone(a.spans))}
	st.DeltaP50, st.DeltaP90 = st.After.P50-st.Before.P50, st.After.P90-st.Before.P90
	st.DeltaP50Pct, st.DeltaP90Pct = pctChangeF(st.Before.P50, st.After.P50), pctChangeF(st.Before.P90, st.After.P90)
	st.Verdict = judge(st.DeltaP50, st.Before.P50, bs, as, mc, medianSE)
	return st
}

// tokenDiff compares the token counts, when every stepped window of both
// sides has one.
func tokenDiff(b, a *sideKind) *TokenDiff {
	if b.tokens == nil || a.tokens == nil {
		return nil
	}
	perToken := func(s *sideKind) *int64 {
		var span, tok int64
		for i, t := range s.tokens {
			span += s.spans[i]
			tok += t
		}
		if tok <= 0 {
			return nil
		}
		v := divRound(span, tok)
		return &v
	}
	td := &TokenDiff{BeforeP50: stats.Of(slices.Clone(b.tokens)).P50, AfterP50: stats.Of(slices.Clone(a.tokens)).P50,
		BeforeNSPerToken: perToken(b), AfterNSPerToken: perToken(a)}
	if td.BeforeNSPerToken != nil && td.AfterNSPerToken != nil {
		d := *td.AfterNSPerToken - *td.BeforeNSPerToken
		td.DeltaNSPerToken = &d
		td.DeltaPct = pctChange(*td.BeforeNSPerToken, *td.AfterNSPerToken)
	}
	return td
}

// divRound is a/b for a ≥ 0, rounded half up; 0 when b ≤ 0.
func divRound(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	q, r := a/b, a%b
	if r >= b-r {
		q++
	}
	return q
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// kernelDiffs matches kernel names across the sides and keeps the top
// changes.
func kernelDiffs(b, a *sideKind, top int, mc MinChange) []KernelDiff {
	out := []KernelDiff{}
	add := func(name, match string, bs, as nameStat, bNames, aNames []string) {
		cat := as.cat
		if cat.Sub == "" {
			cat = bs.cat
		}
		k := KernelDiff{Name: name, Category: cat, Match: match,
			BeforeNS: bs.total, AfterNS: as.total, BeforeInstances: bs.n, AfterInstances: as.n,
			BeforePerStepNS: stats.PerStep(bs.total, len(b.wins)), AfterPerStepNS: stats.PerStep(as.total, len(a.wins)),
			BeforeNames: bNames, AfterNames: aNames}
		k.DeltaNS = k.AfterPerStepNS - k.BeforePerStepNS
		k.DeltaPct = pctChange(k.BeforePerStepNS, k.AfterPerStepNS)
		out = append(out, k)
	}
	// Exact names (in the same category) first.
	var bOnly, aOnly []nameKey
	for k, bs := range b.names {
		if as, ok := a.names[k]; ok {
			add(k.name, "name", *bs, *as, nil, nil)
		} else {
			bOnly = append(bOnly, k)
		}
	}
	for k := range a.names {
		if _, ok := b.names[k]; !ok {
			aOnly = append(aOnly, k)
		}
	}
	// Then names that differ only in template arguments or parameters.
	slices.SortFunc(bOnly, nameKey.compare)
	slices.SortFunc(aOnly, nameKey.compare)
	byShort := func(keys []nameKey) map[nameKey][]string {
		m := map[nameKey][]string{}
		for _, k := range keys {
			s := nameKey{labels.Short(k.name), k.cat}
			m[s] = append(m[s], k.name)
		}
		return m
	}
	bShort, aShort := byShort(bOnly), byShort(aOnly)
	sum := func(m map[nameKey]*nameStat, names []string, cat classify.Category) nameStat {
		s := nameStat{cat: cat}
		for _, n := range names {
			x := m[nameKey{n, cat}]
			s.n += x.n
			s.total += x.total
		}
		return s
	}
	for short, bn := range bShort {
		an, ok := aShort[short]
		if !ok {
			for _, n := range bn {
				add(n, "", *b.names[nameKey{n, short.cat}], nameStat{}, nil, nil)
			}
			continue
		}
		add(short.name, "short_name", sum(b.names, bn, short.cat), sum(a.names, an, short.cat), bn, an)
	}
	for short, an := range aShort {
		if _, ok := bShort[short]; ok {
			continue
		}
		for _, n := range an {
			add(n, "", nameStat{}, *a.names[nameKey{n, short.cat}], nil, nil)
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
		if c := cmp.Compare(x.Match, y.Match); c != 0 {
			return c
		}
		return cmp.Compare(x.Category.String(), y.Category.String())
	})
	if len(out) > top {
		out = out[:top]
	}
	// Verdicts for the rows kept: each needs a pass over the windows.
	for i := range out {
		k := &out[i]
		names := func(joined []string, n int64) []string {
			switch {
			case k.Match == "short_name":
				return joined
			case n > 0:
				return []string{k.Name}
			}
			return nil
		}
		k.Verdict = judge(float64(k.DeltaNS), float64(k.BeforePerStepNS),
			b.nameSample(names(k.BeforeNames, k.BeforeInstances), k.Category), a.nameSample(names(k.AfterNames, k.AfterInstances), k.Category), mc, 1).
			presence(k.BeforeInstances, k.AfterInstances)
	}
	return out
}
