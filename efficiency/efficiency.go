package efficiency

import (
	"slices"
	"strings"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/gpuspec"
	"github.com/traceq/traceq/interconnect"
	"github.com/traceq/traceq/opcost"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// Options say what to measure and against which limits.
type Options struct {
	// Filter keeps the windows of one class (--kind); its zero value
	// keeps all.
	Filter step.Filter
	// Table is the GPU table devices are matched in; nil: gpuspec.Default().
	Table *gpuspec.Table
	// GPU, when set, is every device's row (--gpu).
	GPU *gpuspec.GPU
	// Captures are the capture traces of the inputs' CUDA graphs: a
	// replayed graph takes the ops and shapes of the captured one
	// (docs/definitions.md#cuda-graph-replays).
	Captures []Capture
	// LinkTime, when set, gives for one run and class the kernel time of
	// the collectives whose messages are sized (linked) and their time at
	// the link (docs/definitions.md#speed-of-light): the collectives
	// analysis's join, made by the caller. Link names that link.
	LinkTime func(run string, c step.Class) (linkedNS, linkNS int64, link *interconnect.Link)
}

// Capture is a capture trace and the path it was read from.
type Capture struct {
	Path  string
	Trace *trace.Trace
}

// Result is the efficiency of a set of inputs.
type Result struct {
	Filter step.Filter
	// Inputs are the table's inputs (path, run, format, rank…).
	Inputs     []window.Input
	Devices    []Device
	Ops        []OpRow
	Categories []CategoryRow
	Steps      []StepRow
	// Graphs describe, per input with CUDA-graph replays, how many of the
	// replayed kernels a capture trace priced.
	Graphs []GraphRow
	// Kernels sums the kernels per name (all inputs, by name), for the
	// kernels table's columns.
	Kernels []KernelRow
}

// KernelRow is one kernel name over every input: its time, SM coverage,
// and the time and work of its kernels whose op a model priced.
type KernelRow struct {
	Name     string
	KernelNS int64
	// ModelledNS is the time of its kernels whose op a model priced;
	// FLOPs, Bytes and RooflineNS their shares of their ops' work.
	ModelledNS, FLOPs, Bytes, RooflineNS int64
	SM                                   Coverage
}

// Efficiency is RooflineNS / ModelledNS.
func (r *KernelRow) Efficiency() float64 { return Efficiency(r.RooflineNS, r.ModelledNS) }

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
	Class    step.Class
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
	Run   string
	Class step.Class
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
	Link             *interconnect.Link
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

// Analyze measures the kernels of tbl's inputs against their devices'
// limits. It reads the inputs' models: a loader that drops each model
// once its input is added runs a Reducer instead.
func Analyze(tbl *window.Table, opt Options) *Result {
	r := NewReducer(opt)
	for i := range tbl.Inputs {
		r.Reduce(tbl, i)
	}
	return r.Result(tbl)
}

// Reducer is Analyze one input at a time: Reduce takes what the analysis
// needs of an input's model while the table holds it (a few rows per op
// shape, category, step kind and kernel name), so that the model can be
// dropped before the next input is read; Result merges them, in input
// order, into what Analyze returns.
type Reducer struct {
	opt   Options
	set   *captureSet
	parts map[int]*inputState
}

// NewReducer returns a Reducer with Analyze's options.
func NewReducer(opt Options) *Reducer {
	if opt.Table == nil {
		opt.Table = gpuspec.Default()
	}
	return &Reducer{opt: opt, set: prepareCaptures(opt.Captures), parts: map[int]*inputState{}}
}

// Reduce takes input i of tbl, whose model the table must still hold.
func (r *Reducer) Reduce(tbl *window.Table, i int) {
	r.parts[i] = input(r.opt, tbl, i, r.set)
}

// Options are the reducer's options.
func (r *Reducer) Options() Options { return r.opt }

// SetLink sets Options.LinkTime for Result: the collectives' join, which
// needs every input.
func (r *Reducer) SetLink(linkTime func(run string, c step.Class) (linkedNS, linkNS int64, link *interconnect.Link)) {
	r.opt.LinkTime = linkTime
}

// Result merges the inputs taken into the analysis of tbl; an input not
// taken is left out.
func (r *Reducer) Result(tbl *window.Table) *Result {
	a := &analysis{opt: r.opt, tbl: tbl, rows: map[string]*OpRow{}, cats: map[catKey]*CategoryRow{}, classes: map[classKey]*StepRow{},
		kernels: map[string]*KernelRow{}}
	res := &Result{Filter: r.opt.Filter, Inputs: tbl.Inputs, Devices: Devices(tbl, r.opt.Table, r.opt.GPU)}
	for i := range tbl.Inputs {
		if st := r.parts[i]; st != nil {
			if st.graph != nil {
				g := *st.graph
				g.Run = tbl.Inputs[i].Run
				res.Graphs = append(res.Graphs, g)
			}
			a.merge(st)
		}
	}
	a.finish(res)
	return res
}

// Devices gives each device of each input its GPU table row: gpu when
// given (--gpu), else the row matching what the trace says of it
// (docs/definitions.md#the-device).
func Devices(tbl *window.Table, table *gpuspec.Table, gpu *gpuspec.GPU) []Device {
	var out []Device
	for idx := range tbl.Inputs {
		out = append(out, devicesOf(tbl, idx, table, gpu)...)
	}
	return out
}

// devicesOf is Devices of input idx.
func devicesOf(tbl *window.Table, idx int, table *gpuspec.Table, gpu *gpuspec.GPU) []Device {
	if table == nil {
		table = gpuspec.Default()
	}
	in := &tbl.Inputs[idx]
	var out []Device
	for _, id := range in.DeviceIDs {
		d := Device{Run: in.Run, Path: in.Path, Input: idx, Device: id}
		if m, ok := deviceProps(in.Devices, id); ok {
			d.Name, d.SMs = m.Name, m.SMs
			if gpu == nil {
				d.Spec, _ = table.Match(m)
			}
		}
		if gpu != nil {
			d.Spec, d.ByFlag = gpu, true
		}
		if d.SMs == 0 && d.Spec != nil {
			d.SMs = d.Spec.SMs
		}
		out = append(out, d)
	}
	return out
}

// DefaultLink is the default link of devs' rows when they all have the
// same one (a --link name or GB/s per direction), and the rows' names
// ("V100 SXM2"; "H100 SXM and H200" for rows that share it); "" when a
// device has no row or no link, or they differ. The choice between it
// and a link given is collectives.Options.WithDefault's.
func DefaultLink(devs []Device) (link, rows string) {
	var names []string
	for _, d := range devs {
		if d.Spec == nil || d.Spec.Link == "" || (link != "" && d.Spec.Link != link) {
			return "", ""
		}
		link = d.Spec.Link
		if !slices.Contains(names, d.Spec.Name) {
			names = append(names, d.Spec.Name)
		}
	}
	return link, strings.Join(names, " and ")
}

type catKey struct {
	run   string
	class step.Class
	cat   classify.Category
}

type classKey struct {
	run   string
	class step.Class
}

type analysis struct {
	opt     Options
	tbl     *window.Table
	rows    map[string]*OpRow
	cats    map[catKey]*CategoryRow
	classes map[classKey]*StepRow
	kernels map[string]*KernelRow
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

// input analyses input idx of tbl on its own: its rows before the merge.
func input(opt Options, tbl *window.Table, idx int, set *captureSet) *inputState {
	in := &tbl.Inputs[idx]
	t := in.Trace
	st := &inputState{opt: opt, tbl: tbl, idx: idx, in: in, t: t, set: set, devs: map[int32]*Device{},
		rowIdx: map[sigRef]int32{}, costs: newCostCache(t, set.caps), kernels: map[trace.NameID]*KernelRow{}}
	devs := devicesOf(tbl, idx, opt.Table, opt.GPU)
	for i := range devs {
		st.devs[devs[i].Device] = &devs[i]
	}
	graphs := matchReplays(t, set)
	if graphs != nil {
		graphs.row.Path = in.Path
		row := graphs.row
		st.graph = &row
	}
	replayed := func(i int) bool { return graphs != nil && graphs.isRep[i] }

	// The input's own op instances, by OpID: each one's kernel time first.
	insts := make([]opInst, len(t.Ops))
	for i := range t.Activities {
		act := &t.Activities[i]
		if act.Kind != trace.KindKernel || replayed(i) || !st.keep(i) {
			continue
		}
		if op := t.AttrOf(act.Attr).Op; op != 0 {
			insts[op].totalNS += act.Dur
			insts[op].kernels++
		}
	}
	// Every activity into its category and class; the kernels launched
	// one by one into their op's row too. Replayed kernels wait for their
	// graph.
	for i := range t.Activities {
		act := &t.Activities[i]
		if !st.keep(i) {
			continue
		}
		cr, sr := st.rowsOf(i)
		cr.KernelNS += act.Dur
		if act.Kind != trace.KindKernel {
			continue
		}
		if replayed(i) {
			sr.ReplayNS += act.Dur
			continue
		}
		blocks := t.ConfigOf(t.AttrOf(act.Attr).Config).Blocks()
		if op := t.AttrOf(act.Attr).Op; op != 0 {
			st.kernel(act, cr, sr, blocks, &insts[op], sigRef{0, t.OpOf(op).Sig, act.Device})
		} else {
			st.kernel(act, cr, sr, blocks, nil, sigRef{})
		}
	}
	// The replays, one graph launch at a time: a captured op's replayed
	// kernels are one instance of it.
	if graphs != nil {
		for _, g := range graphs.groups {
			st.replay(g)
		}
	}
	// What outlives the model: the rows, their kernels named.
	for _, lr := range st.rows {
		lr.finish(t)
	}
	st.in, st.t, st.set, st.costs, st.rowIdx, st.replayInsts, st.devs = nil, nil, nil, nil, nil, nil, nil
	return st
}

type kindCat struct {
	class step.Class
	cat   window.CatID
}

// inputState is the analysis of one input.
type inputState struct {
	opt    Options
	tbl    *window.Table
	idx    int
	graph  *GraphRow // nil without graph replays
	in     *window.Input
	t      *trace.Trace
	set    *captureSet
	devs   map[int32]*Device
	local  map[kindCat]*CategoryRow
	last   kindCat
	lastCR *CategoryRow
	lastSR *StepRow // the row of the class last asked for
	kinds  map[step.Class]*StepRow
	rows   []*localRow
	rowIdx map[sigRef]int32
	costs  *costCache
	// kernels sums the priced kernels per name.
	kernels map[trace.NameID]*KernelRow
	// replayInsts holds, per capture, the state of its ops' instances in
	// the replay being counted.
	replayInsts map[int32][]opInst
}

// keep reports whether activity i's window is of the class kept.
func (st *inputState) keep(i int) bool {
	return st.opt.Filter.Keeps(st.in.Steps.ActivityClass(i))
}

// rowsOf returns the category row and the class row of activity i.
func (st *inputState) rowsOf(i int) (*CategoryRow, *StepRow) {
	if st.local == nil {
		st.local, st.kinds = map[kindCat]*CategoryRow{}, map[step.Class]*StepRow{}
	}
	class := st.in.Steps.ActivityClass(i)
	k := kindCat{class, st.tbl.ActivityCategory(st.idx, i)}
	cr := st.lastCR
	if cr == nil || k != st.last {
		if cr = st.local[k]; cr == nil {
			cr = &CategoryRow{Class: class, Category: st.tbl.Category(k.cat)}
			st.local[k] = cr
		}
		st.last, st.lastCR = k, cr
	}
	// Neighbouring activities are mostly of one class: the last row is
	// at hand without hashing the class (a map lookup per kernel was a
	// tenth of the analysis).
	sr := st.lastSR
	if sr == nil || sr.Class != class {
		if sr = st.kinds[class]; sr == nil {
			sr = &StepRow{Class: class}
			st.kinds[class] = sr
		}
		st.lastSR = sr
	}
	return cr, sr
}

// kernel counts a kernel's SM coverage and, when it has an op instance
// (inst, with the op's signature ref), its share of the op's row and
// work.
func (st *inputState) kernel(act *trace.Activity, cr *CategoryRow, sr *StepRow, blocks int64, inst *opInst, ref sigRef) {
	dev := st.devs[act.Device]
	var cov Coverage
	if blocks > 0 && dev.SMs > 0 {
		cov = Coverage{Weighted: min(1, float64(blocks)/float64(dev.SMs)) * float64(act.Dur), KnownNS: act.Dur}
		cr.SM.add(cov)
	}
	kr := st.kernels[act.Name]
	if kr == nil {
		kr = &KernelRow{Name: st.t.Names[act.Name]}
		st.kernels[act.Name] = kr
	}
	kr.KernelNS += act.Dur
	kr.SM.add(cov)
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
			st.rows = append(st.rows, st.costs.newRow(ref, dev))
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
	kr.ModelledNS += act.Dur
	kr.FLOPs += f
	kr.Bytes += b
	kr.RooflineNS += rf
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
			if j < 0 || c.ops[j] == 0 || !st.keep(int(i)) {
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
		if !st.keep(int(i)) {
			continue
		}
		cr, sr := st.rowsOf(int(i))
		blocks := t.ConfigOf(t.AttrOf(act.Attr).Config).Blocks()
		j := int32(-1)
		if c != nil {
			j = g.res.pair[k]
		}
		if j < 0 {
			st.kernel(act, cr, sr, blocks, nil, sigRef{})
			continue
		}
		sr.MatchedNS += act.Dur
		if blocks == 0 {
			blocks = c.configOf(j).Blocks()
		}
		if op := c.ops[j]; op != 0 {
			st.kernel(act, cr, sr, blocks, &insts[op], sigRef{g.res.captureIdx + 1, c.trace.OpOf(op).Sig, act.Device})
		} else {
			st.kernel(act, cr, sr, blocks, nil, sigRef{})
		}
	}
}

// merge adds an input's rows to the run's.
func (a *analysis) merge(st *inputState) {
	// The input's run is named once every input is read: its rows take
	// it here.
	in := &a.tbl.Inputs[st.idx]
	for _, lr := range st.rows {
		key := in.Run + lr.key
		if r := a.rows[key]; r != nil {
			r.merge(&lr.row)
		} else {
			row := lr.row
			row.Run = in.Run
			a.rows[key] = &row
		}
	}
	for k, cr := range st.local {
		cr.Run = in.Run
		ck := catKey{in.Run, k.class, cr.Category}
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
	for class, sr := range st.kinds {
		kk := classKey{in.Run, class}
		r := a.classes[kk]
		if r == nil {
			r = &StepRow{Run: in.Run, Class: class}
			a.classes[kk] = r
		}
		r.ModelledNS += sr.ModelledNS
		r.RooflineNS += sr.RooflineNS
		r.ReplayNS += sr.ReplayNS
		r.MatchedNS += sr.MatchedNS
	}
	for _, kr := range st.kernels {
		r := a.kernels[kr.Name]
		if r == nil {
			r = &KernelRow{Name: kr.Name}
			a.kernels[kr.Name] = r
		}
		r.KernelNS += kr.KernelNS
		r.ModelledNS += kr.ModelledNS
		r.FLOPs += kr.FLOPs
		r.Bytes += kr.Bytes
		r.RooflineNS += kr.RooflineNS
		r.SM.add(kr.SM)
	}
}

// deviceProps returns what the trace says of device id: its own entry,
// else, for a device the trace lists no properties of (a ROCm process
// whose kernels name the physical device 9 while deviceProperties lists
// its one visible device 0), the properties of the trace's devices when
// they all describe the same GPU.
func deviceProps(ds []trace.Device, id int32) (trace.Device, bool) {
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
