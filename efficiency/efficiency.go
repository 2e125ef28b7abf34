package efficiency

import (
	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/gpuspec"
	"github.com/traceq/traceq/opcost"
	"github.com/traceq/traceq/trace"
)

// Options say what to measure and against which limits.
type Options struct {
	Classifier *classify.Classifier // nil: classify.Default()
	// Kind keeps only the windows of one step kind; KindAny keeps all.
	Kind analyze.StepKind
	// Table is the GPU table devices are matched in; nil: gpuspec.Default().
	Table *gpuspec.Table
	// GPU, when set, is every device's row (--gpu).
	GPU *gpuspec.GPU
	// Captures are the capture traces of the inputs' CUDA graphs: a
	// replayed graph takes the ops and shapes of the captured one
	// (docs/definitions.md#cuda-graph-replays).
	Captures []Capture
	// Collectives, when given, sizes the collectives whose time at the
	// link enters the speed of light (the collectives analysis of the
	// same inputs and Kind).
	Collectives *analyze.CollectiveTable
	// Link is the interconnect collectives are timed at; nil: each run's
	// device default (the GPU table's link).
	Link *analyze.Link
}

// Capture is a capture trace and the path it was read from.
type Capture struct {
	Path  string
	Trace *trace.Trace
}

// Result is the efficiency of a set of inputs.
type Result struct {
	Kind       analyze.StepKind
	Inputs     []analyze.InputInfo
	Devices    []Device
	Ops        []OpRow
	Categories []CategoryRow
	Steps      []StepRow
	// Graphs describe, per input with CUDA-graph replays, how many of the
	// replayed kernels a capture trace priced.
	Graphs []GraphRow
}

// Device is one GPU of one input and the table row it was given.
type Device struct {
	Run, Path string
	Input     int
	Device    int32
	// Name and SMs are what the trace says of the device ("" and 0 when
	// it does not).
	Name string
	SMs  int
	// Spec is the GPU table's row: matched from the name, or chosen with
	// --gpu (ByFlag); nil when the device is unknown.
	Spec   *gpuspec.GPU
	ByFlag bool
}

// OpRow sums the kernels of one op shape on one device of a run: the op's
// name and what it was called with (dims and types), over its instances
// (docs/definitions.md#flops-and-bytes).
type OpRow struct {
	Run    string
	Device int32
	Name   string
	Dims   [][]int64
	Types  []string
	// Category is the category with the most of the row's kernel time.
	Category classify.Category
	// Kernels are the kernel names the op launched, most time first.
	Kernels []string
	// Instances counts the op's calls (a call's kernels are one instance).
	Instances int64
	// KernelNS sums the instances' kernels; FLOPs, Bytes and RooflineNS
	// the instances' work and roofline time (0 when not Modelled).
	KernelNS, FLOPs, Bytes, RooflineNS int64
	Modelled                           bool
	Model                              opcost.Model
	DType                              gpuspec.DType
	Bound                              Bound
	UpperBound                         bool
	// Note says why the op is not modelled, or what its model assumed.
	Note string
	SM   Coverage

	kernelNS []int64 // per Kernels entry
	catNS    []catNS
}

// Efficiency is RooflineNS / KernelNS (0 when not modelled).
func (r *OpRow) Efficiency() float64 { return Efficiency(r.RooflineNS, r.KernelNS) }

// Coverage is a time-weighted SM coverage: Σ coverage × duration over the
// kernels whose grid and device SM count are known, and that time.
type Coverage struct {
	Weighted float64
	KnownNS  int64
}

// Value is the time-weighted coverage, 0 when no kernel's is known.
func (c Coverage) Value() float64 {
	if c.KnownNS <= 0 {
		return 0
	}
	return c.Weighted / float64(c.KnownNS)
}

func (c *Coverage) add(d Coverage) { c.Weighted += d.Weighted; c.KnownNS += d.KnownNS }

// CategoryRow is one category of one step kind of a run.
type CategoryRow struct {
	Run      string
	StepKind analyze.StepKind
	Category classify.Category
	// Windows is the step kind's windows (steps × devices) the per-step
	// figures divide by.
	Windows int
	// KernelNS is the category's activity time; ModelledNS the part whose
	// op a model priced; FLOPs, Bytes and RooflineNS that part's work and
	// roofline time.
	KernelNS, ModelledNS, FLOPs, Bytes, RooflineNS int64
	SM                                             Coverage
}

// Efficiency is RooflineNS / ModelledNS.
func (r *CategoryRow) Efficiency() float64 { return Efficiency(r.RooflineNS, r.ModelledNS) }

// StepRow is one step kind of a run, and its speed of light
// (docs/definitions.md#speed-of-light).
type StepRow struct {
	Run      string
	StepKind analyze.StepKind
	// Steps is the most steps any device has of the kind; Windows the
	// step-device windows; SpanP50 the median span over them.
	Steps   int
	Windows int
	SpanP50 float64
	// KernelNS is all activity time; ModelledNS and RooflineNS as for a
	// category.
	KernelNS, ModelledNS, RooflineNS int64
	// LinkedNS is the collectives' kernel time that LinkNS, their bus
	// bytes at the link's bandwidth, replaces; Link the link (nil: none
	// known, and collectives count as measured).
	LinkedNS, LinkNS int64
	Link             *analyze.Link
	// SpeedOfLightNS = RooflineNS + LinkNS + the rest of KernelNS.
	SpeedOfLightNS int64
	// ReplayNS is the time of kernels replayed from CUDA graphs;
	// MatchedNS the part a capture trace gave ops.
	ReplayNS, MatchedNS int64
}

// GraphRow says how one input's CUDA-graph replays were priced.
type GraphRow struct {
	Run, Path string
	// Captures are the capture traces that priced replays.
	Captures []string
	// Replays counts graph launches; Kernels and KernelNS their kernels;
	// Matched and MatchedNS those a captured launch was found for.
	Replays                               int
	Kernels, KernelNS, Matched, MatchedNS int64
}

// opInst is one call of an op (or one replay of a captured op): its
// kernels share its cost by duration.
type opInst struct {
	totalNS, doneNS int64
	kernels, done   int32
	seen            bool
	row             int32 // index into the input's local rows
	roof            Roof
	modelled        bool
}

// Analyze measures the inputs' kernels against their devices' limits.
func Analyze(inputs []analyze.Input, opt Options) *Result {
	if opt.Classifier == nil {
		opt.Classifier = classify.Default()
	}
	if opt.Table == nil {
		opt.Table = gpuspec.Default()
	}
	a := &analysis{opt: opt, rows: map[string]*OpRow{}, cats: map[catKey]*CategoryRow{}, kinds: map[kindKey]*kindAcc{}}
	res := &Result{Kind: opt.Kind}
	set := prepareCaptures(opt.Captures)
	for i, in := range inputs {
		res.Inputs = append(res.Inputs, analyze.Describe(in))
		a.input(i, in, set, res)
	}
	a.finish(res)
	return res
}

type catKey struct {
	run  string
	kind analyze.StepKind
	cat  classify.Category
}

type kindKey struct {
	run  string
	kind analyze.StepKind
}

// kindAcc gathers one step kind of one run.
type kindAcc struct {
	row        StepRow
	spans      []int64
	stepsOfDev map[[2]int64]int // (input, device) → steps
	specs      map[*gpuspec.GPU]bool
}

type analysis struct {
	opt   Options
	rows  map[string]*OpRow
	cats  map[catKey]*CategoryRow
	kinds map[kindKey]*kindAcc
}

// window is one step (or the whole trace, or the unattributed time) on
// one device.
type window struct {
	kind       analyze.StepKind
	start, end trace.Time
	seen       bool
}

// localRow is an op row of one input before the merge by content.
type localRow struct {
	key     string
	row     OpRow
	cost    opcost.Cost
	roof    Roof
	names   []nameNS
	catTime []catNS
}

type nameNS struct {
	name trace.NameID // in the input: a kernel's own name
	ns   int64
}

type catNS struct {
	cat classify.Category
	ns  int64
}

// sigRef names an op signature in the input (tr 0) or a capture (tr i+1).
type sigRef struct {
	tr  int32
	sig trace.SigID
	dev int32
}

func (a *analysis) input(idx int, in analyze.Input, set *captureSet, res *Result) {
	t := in.Trace
	st := &inputState{a: a, in: in, t: t, set: set, devs: map[int32]*Device{},
		cats: make([]classify.Category, len(t.Names)), catDone: make([]bool, len(t.Names)),
		wins: map[winKey]*window{}, rowIdx: map[sigRef]int32{}, costs: newCostCache(t, set.caps)}
	// Devices and their rows.
	for _, id := range t.DeviceIDs() {
		d := &Device{Run: in.Run, Path: in.Path, Input: idx, Device: id}
		if m, ok := deviceProps(t, id); ok {
			d.Name, d.SMs = m.Name, m.SMs
			if a.opt.GPU == nil {
				d.Spec, _ = a.opt.Table.Match(m)
			}
		}
		if a.opt.GPU != nil {
			d.Spec, d.ByFlag = a.opt.GPU, true
		}
		if d.SMs == 0 && d.Spec != nil {
			d.SMs = d.Spec.SMs
		}
		st.devs[id] = d
		res.Devices = append(res.Devices, *d)
	}
	graphs := matchReplays(t, set)
	if graphs != nil {
		graphs.row.Run, graphs.row.Path = in.Run, in.Path
		res.Graphs = append(res.Graphs, graphs.row)
	}
	replayed := func(i int) bool { return graphs != nil && graphs.isRep[i] }

	// The input's own op instances, by OpID: each one's kernel time first.
	insts := make([]opInst, len(t.Ops))
	for i := range t.Activities {
		act := &t.Activities[i]
		if act.Kind != trace.KindKernel || replayed(i) {
			continue
		}
		if k, _ := st.windowOf(i); !st.keep(k) {
			continue
		}
		if op := t.AttrOf(act.Attr).Op; op != 0 {
			insts[op].totalNS += act.Dur
			insts[op].kernels++
		}
	}
	// Every activity into its window, category and step kind; the kernels
	// launched one by one into their op's row too. Replayed kernels wait
	// for their graph.
	for i := range t.Activities {
		act := &t.Activities[i]
		kind, cr, sr, ok := st.activity(i, act)
		if !ok || act.Kind != trace.KindKernel {
			continue
		}
		if replayed(i) {
			sr.ReplayNS += act.Dur
			continue
		}
		blocks := t.ConfigOf(t.AttrOf(act.Attr).Config).Blocks()
		if op := t.AttrOf(act.Attr).Op; op != 0 {
			st.kernel(act, kind, cr, sr, blocks, &insts[op], sigRef{0, t.OpOf(op).Sig, act.Device})
		} else {
			st.kernel(act, kind, cr, sr, blocks, nil, sigRef{})
		}
	}
	// The replays, one graph launch at a time: a captured op's replayed
	// kernels are one instance of it.
	if graphs != nil {
		for _, g := range graphs.groups {
			st.replay(g)
		}
	}
	st.merge(idx)
}

type winKey struct {
	dev  int32
	kind analyze.StepKind
	step int32
}

type kindCat struct {
	kind analyze.StepKind
	cat  classify.Category
}

// inputState is the analysis of one input.
type inputState struct {
	a       *analysis
	in      analyze.Input
	t       *trace.Trace
	set     *captureSet
	devs    map[int32]*Device
	cats    []classify.Category
	catDone []bool
	wins    map[winKey]*window
	lastWK  winKey
	lastW   *window
	local   map[kindCat]*CategoryRow
	kinds   map[analyze.StepKind]*StepRow
	rows    []*localRow
	rowIdx  map[sigRef]int32
	costs   *costCache
	// replayInsts holds, per capture, the state of its ops' instances in
	// the replay being counted.
	replayInsts map[int32][]opInst
}

func (st *inputState) windowOf(i int) (analyze.StepKind, int32) {
	if st.in.Steps == nil {
		return analyze.KindAll, -1
	}
	s := st.in.Steps.Of[i]
	if s < 0 {
		return analyze.KindNone, -1
	}
	return st.in.Steps.List[s].Kind, s
}

func (st *inputState) keep(k analyze.StepKind) bool {
	return st.a.opt.Kind == analyze.KindAny || st.a.opt.Kind == k
}

func (st *inputState) catOf(act *trace.Activity) classify.Category {
	if !st.catDone[act.Name] {
		st.cats[act.Name], st.catDone[act.Name] = analyze.ActivityCategory(act, st.t.Names[act.Name], st.a.opt.Classifier), true
	}
	return st.cats[act.Name]
}

// rowsOf returns the category row and the step-kind row of an activity.
func (st *inputState) rowsOf(kind analyze.StepKind, cat classify.Category) (*CategoryRow, *StepRow) {
	if st.local == nil {
		st.local, st.kinds = map[kindCat]*CategoryRow{}, map[analyze.StepKind]*StepRow{}
	}
	cr := st.local[kindCat{kind, cat}]
	if cr == nil {
		cr = &CategoryRow{Run: st.in.Run, StepKind: kind, Category: cat}
		st.local[kindCat{kind, cat}] = cr
	}
	sr := st.kinds[kind]
	if sr == nil {
		sr = &StepRow{Run: st.in.Run, StepKind: kind}
		st.kinds[kind] = sr
	}
	return cr, sr
}

// activity counts activity i in its window, category and step kind;
// false when --kind leaves it out.
func (st *inputState) activity(i int, act *trace.Activity) (analyze.StepKind, *CategoryRow, *StepRow, bool) {
	kind, step := st.windowOf(i)
	if !st.keep(kind) {
		return kind, nil, nil, false
	}
	wk := winKey{act.Device, kind, step}
	w := st.lastW
	if w == nil || wk != st.lastWK {
		if w = st.wins[wk]; w == nil {
			w = &window{kind: kind}
			st.wins[wk] = w
		}
		st.lastWK, st.lastW = wk, w
	}
	if !w.seen || act.Start < w.start {
		w.start = act.Start
	}
	w.end = max(w.end, act.End())
	w.seen = true
	cr, sr := st.rowsOf(kind, st.catOf(act))
	cr.KernelNS += act.Dur
	sr.KernelNS += act.Dur
	return kind, cr, sr, true
}

// kernel counts a kernel's SM coverage and, when it has an op instance
// (inst, with the op's signature ref), its share of the op's row and
// work.
func (st *inputState) kernel(act *trace.Activity, kind analyze.StepKind, cr *CategoryRow, sr *StepRow, blocks int64, inst *opInst, ref sigRef) {
	dev := st.devs[act.Device]
	var cov Coverage
	if blocks > 0 && dev.SMs > 0 {
		cov = Coverage{Weighted: min(1, float64(blocks)/float64(dev.SMs)) * float64(act.Dur), KnownNS: act.Dur}
		cr.SM.add(cov)
	}
	if inst == nil {
		return
	}
	cat := cr.Category
	if !inst.seen {
		inst.seen = true
		r, ok := st.rowIdx[ref]
		if !ok {
			r = int32(len(st.rows))
			st.rowIdx[ref] = r
			st.rows = append(st.rows, st.costs.newRow(st.in.Run, ref, dev))
		}
		inst.row = r
		lr := st.rows[r]
		lr.row.Instances++
		// Collective kernels are timed at the link, never priced.
		inst.modelled = lr.row.Modelled && cat.Top != classify.Communication
		if inst.modelled {
			inst.roof = lr.roof
		}
	}
	lr := st.rows[inst.row]
	lr.row.KernelNS += act.Dur
	lr.row.SM.add(cov)
	lr.addName(act.Name, act.Dur)
	lr.addCat(cat, act.Dur)
	first, before := inst.done == 0, inst.doneNS
	inst.done++
	inst.doneNS += act.Dur
	if !inst.modelled {
		return
	}
	c := lr.cost
	f := shareOf(c.FLOPs, before, inst.doneNS, inst.totalNS, first)
	b := shareOf(c.Bytes, before, inst.doneNS, inst.totalNS, first)
	rf := shareOf(inst.roof.NS(), before, inst.doneNS, inst.totalNS, first)
	lr.row.FLOPs += f
	lr.row.Bytes += b
	lr.row.RooflineNS += rf
	cr.ModelledNS += act.Dur
	cr.FLOPs += f
	cr.Bytes += b
	cr.RooflineNS += rf
	sr.ModelledNS += act.Dur
	sr.RooflineNS += rf
}

// replay counts the kernels of one graph launch: matched ones take their
// captured op (and, without a grid of their own, their captured launch's
// grid).
func (st *inputState) replay(g replayGroup) {
	t := st.t
	var c *capture
	var insts []opInst // by the capture's OpID; reused, reset below
	if g.res != nil && g.res.capture >= 0 {
		c = st.set.caps[g.res.captureIdx]
		if st.replayInsts == nil {
			st.replayInsts = map[int32][]opInst{}
		}
		insts = st.replayInsts[g.res.captureIdx]
		if insts == nil {
			insts = make([]opInst, len(c.trace.Ops))
			st.replayInsts[g.res.captureIdx] = insts
		}
		for k, i := range g.kernels {
			j := g.res.pair[k]
			if j < 0 || c.ops[j] == 0 {
				continue
			}
			if kind, _ := st.windowOf(int(i)); !st.keep(kind) {
				continue
			}
			in := &insts[c.ops[j]]
			in.totalNS += t.Activities[i].Dur
			in.kernels++
		}
		defer func() {
			for k := range g.kernels {
				if j := g.res.pair[k]; j >= 0 {
					insts[c.ops[j]] = opInst{}
				}
			}
		}()
	}
	for k, i := range g.kernels {
		act := &t.Activities[i]
		kind, _ := st.windowOf(int(i))
		if !st.keep(kind) {
			continue
		}
		cr, sr := st.rowsOf(kind, st.catOf(act))
		blocks := t.ConfigOf(t.AttrOf(act.Attr).Config).Blocks()
		j := int32(-1)
		if c != nil {
			j = g.res.pair[k]
		}
		if j < 0 {
			st.kernel(act, kind, cr, sr, blocks, nil, sigRef{})
			continue
		}
		sr.MatchedNS += act.Dur
		if blocks == 0 {
			blocks = c.configOf(j).Blocks()
		}
		if op := c.ops[j]; op != 0 {
			st.kernel(act, kind, cr, sr, blocks, &insts[op], sigRef{g.res.captureIdx + 1, c.trace.OpOf(op).Sig, act.Device})
		} else {
			st.kernel(act, kind, cr, sr, blocks, nil, sigRef{})
		}
	}
}

// merge adds the input's rows to the run's.
func (st *inputState) merge(idx int) {
	a, in := st.a, st.in
	for _, lr := range st.rows {
		lr.finish(st.t)
		if r := a.rows[lr.key]; r != nil {
			r.merge(&lr.row)
		} else {
			row := lr.row
			a.rows[lr.key] = &row
		}
	}
	for k, cr := range st.local {
		ck := catKey{in.Run, k.kind, k.cat}
		if r := a.cats[ck]; r != nil {
			r.KernelNS += cr.KernelNS
			r.ModelledNS += cr.ModelledNS
			r.FLOPs += cr.FLOPs
			r.Bytes += cr.Bytes
			r.RooflineNS += cr.RooflineNS
			r.SM.add(cr.SM)
		} else {
			a.cats[ck] = cr
		}
	}
	for kind, sr := range st.kinds {
		kk := kindKey{in.Run, kind}
		ka := a.kinds[kk]
		if ka == nil {
			ka = &kindAcc{row: StepRow{Run: in.Run, StepKind: kind}, stepsOfDev: map[[2]int64]int{}, specs: map[*gpuspec.GPU]bool{}}
			a.kinds[kk] = ka
		}
		r := &ka.row
		r.KernelNS += sr.KernelNS
		r.ModelledNS += sr.ModelledNS
		r.RooflineNS += sr.RooflineNS
		r.ReplayNS += sr.ReplayNS
		r.MatchedNS += sr.MatchedNS
	}
	for wk, w := range st.wins {
		ka := a.kinds[kindKey{in.Run, wk.kind}]
		ka.row.Windows++
		ka.spans = append(ka.spans, int64(w.end-w.start))
		if wk.step >= 0 || wk.kind == analyze.KindAll || wk.kind == analyze.KindNone {
			ka.stepsOfDev[[2]int64{int64(idx), int64(wk.dev)}]++
		}
		ka.specs[st.devs[wk.dev].Spec] = true
	}
}

// deviceProps returns what the trace says of device id: its own entry,
// else, for a device the trace lists no properties of (a ROCm process
// whose kernels name the physical device 9 while deviceProperties lists
// its one visible device 0), the properties of the trace's devices when
// they all describe the same GPU.
func deviceProps(t *trace.Trace, id int32) (trace.Device, bool) {
	ds := t.Meta.Devices
	for _, m := range ds {
		if m.ID == id {
			return m, true
		}
	}
	if len(ds) == 0 {
		return trace.Device{}, false
	}
	for _, m := range ds[1:] {
		if m.Name != ds[0].Name || m.SMs != ds[0].SMs || m.MemoryBytes != ds[0].MemoryBytes {
			return trace.Device{}, false
		}
	}
	return ds[0], true
}
