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
	// Devices and their rows.
	devs := map[int32]*Device{}
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
		devs[id] = d
		res.Devices = append(res.Devices, *d)
	}

	cats := make([]classify.Category, len(t.Names))
	catDone := make([]bool, len(t.Names))
	catOf := func(act *trace.Activity) classify.Category {
		if !catDone[act.Name] {
			cats[act.Name], catDone[act.Name] = analyze.ActivityCategory(act, t.Names[act.Name], a.opt.Classifier), true
		}
		return cats[act.Name]
	}

	graphs := matchReplays(t, set)
	if graphs != nil {
		graphs.row.Run, graphs.row.Path = in.Run, in.Path
		res.Graphs = append(res.Graphs, graphs.row)
	}

	// Op instances: the input's own ops (index = OpID), then the replayed
	// instances of captured ops.
	nOps := len(t.Ops)
	insts := make([]opInst, nOps+graphs.instances())
	instOf := func(i int, act *trace.Activity) (int, sigRef, bool) {
		if op := t.AttrOf(act.Attr).Op; op != 0 {
			return int(op), sigRef{0, t.OpOf(op).Sig, act.Device}, true
		}
		if k, ok := graphs.kernelOf(i); ok {
			c := set.caps[k.capture]
			return nOps + int(k.inst), sigRef{k.capture + 1, c.trace.OpOf(k.op).Sig, act.Device}, true
		}
		return 0, sigRef{}, false
	}
	windowOf := func(i int) (analyze.StepKind, int32) {
		if in.Steps == nil {
			return analyze.KindAll, -1
		}
		s := in.Steps.Of[i]
		if s < 0 {
			return analyze.KindNone, -1
		}
		return in.Steps.List[s].Kind, s
	}
	keep := func(k analyze.StepKind) bool { return a.opt.Kind == analyze.KindAny || a.opt.Kind == k }

	// Pass 1: each instance's total kernel time.
	for i := range t.Activities {
		act := &t.Activities[i]
		if act.Kind != trace.KindKernel {
			continue
		}
		if k, _ := windowOf(i); !keep(k) {
			continue
		}
		if n, _, ok := instOf(i, act); ok {
			insts[n].totalNS += act.Dur
			insts[n].kernels++
		}
	}

	// Pass 2: every activity into its window, category and op row.
	type winKey struct {
		dev  int32
		kind analyze.StepKind
		step int32
	}
	wins := map[winKey]*window{}
	type kc struct {
		kind analyze.StepKind
		cat  classify.Category
	}
	local := map[kc]*CategoryRow{}
	kinds := map[analyze.StepKind]*StepRow{}
	var rows []*localRow
	rowIdx := map[sigRef]int32{}
	costs := newCostCache(t, set.caps)
	for i := range t.Activities {
		act := &t.Activities[i]
		kind, step := windowOf(i)
		if !keep(kind) {
			continue
		}
		wk := winKey{act.Device, kind, step}
		w := wins[wk]
		if w == nil {
			w = &window{kind: kind}
			wins[wk] = w
		}
		if !w.seen || act.Start < w.start {
			w.start = act.Start
		}
		w.end = max(w.end, act.End())
		w.seen = true

		cat := catOf(act)
		cr := local[kc{kind, cat}]
		if cr == nil {
			cr = &CategoryRow{Run: in.Run, StepKind: kind, Category: cat}
			local[kc{kind, cat}] = cr
		}
		sr := kinds[kind]
		if sr == nil {
			sr = &StepRow{Run: in.Run, StepKind: kind}
			kinds[kind] = sr
		}
		cr.KernelNS += act.Dur
		sr.KernelNS += act.Dur
		if act.Kind != trace.KindKernel {
			continue
		}
		dev := devs[act.Device]
		attr := t.AttrOf(act.Attr)
		blocks := t.ConfigOf(attr.Config).Blocks()
		replayed := graphs != nil && graphs.replayed(i)
		if replayed {
			sr.ReplayNS += act.Dur
		}
		n, ref, ok := instOf(i, act)
		if ok && n >= nOps {
			sr.MatchedNS += act.Dur
			if blocks == 0 {
				k, _ := graphs.kernelOf(i)
				blocks = set.caps[k.capture].configOf(k.launch).Blocks()
			}
		}
		var cov Coverage
		if blocks > 0 && dev.SMs > 0 {
			cov = Coverage{Weighted: min(1, float64(blocks)/float64(dev.SMs)) * float64(act.Dur), KnownNS: act.Dur}
			cr.SM.add(cov)
		}
		if !ok {
			continue
		}
		oi := &insts[n]
		if !oi.seen {
			oi.seen = true
			r, okRow := rowIdx[ref]
			if !okRow {
				r = int32(len(rows))
				rowIdx[ref] = r
				rows = append(rows, costs.newRow(in.Run, ref, dev))
			}
			oi.row = r
			lr := rows[r]
			lr.row.Instances++
			// Collective kernels are timed at the link, never priced.
			oi.modelled = lr.row.Modelled && cat.Top != classify.Communication
			if oi.modelled {
				oi.roof = lr.roof
			}
		}
		lr := rows[oi.row]
		lr.row.KernelNS += act.Dur
		lr.row.SM.add(cov)
		lr.addName(act.Name, act.Dur)
		lr.addCat(cat, act.Dur)
		first, before := oi.done == 0, oi.doneNS
		oi.done++
		oi.doneNS += act.Dur
		if !oi.modelled {
			continue
		}
		c := lr.cost
		f := shareOf(c.FLOPs, before, oi.doneNS, oi.totalNS, first)
		b := shareOf(c.Bytes, before, oi.doneNS, oi.totalNS, first)
		rf := shareOf(oi.roof.NS(), before, oi.doneNS, oi.totalNS, first)
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

	// Merge into the run's rows.
	for _, lr := range rows {
		lr.finish(t)
		key := lr.key
		if r := a.rows[key]; r != nil {
			r.merge(&lr.row)
		} else {
			row := lr.row
			a.rows[key] = &row
		}
	}
	for k, cr := range local {
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
	for kind, sr := range kinds {
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
	for wk, w := range wins {
		ka := a.kinds[kindKey{in.Run, wk.kind}]
		ka.row.Windows++
		ka.spans = append(ka.spans, int64(w.end-w.start))
		if wk.step >= 0 || wk.kind == analyze.KindAll || wk.kind == analyze.KindNone {
			ka.stepsOfDev[[2]int64{int64(idx), int64(wk.dev)}]++
		}
		ka.specs[devs[wk.dev].Spec] = true
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
