package efficiency

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/opcost"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/trace"
)

// costCache prices each op signature once: an input's and its captures'.
type costCache struct {
	traces []*trace.Trace // 0: the input; i+1: capture i
	costs  [][]opcost.Cost
	done   [][]bool
}

func newCostCache(t *trace.Trace, caps []*capture) *costCache {
	c := &costCache{traces: []*trace.Trace{t}}
	for _, cp := range caps {
		c.traces = append(c.traces, cp.trace)
	}
	c.costs = make([][]opcost.Cost, len(c.traces))
	c.done = make([][]bool, len(c.traces))
	return c
}

// OpOf converts a recorded op signature of t into what opcost reads.
func OpOf(t *trace.Trace, sig *trace.OpSig) opcost.Op {
	o := opcost.Op{Name: t.Names[sig.Name]}
	for _, a := range sig.Args {
		o.Dims = append(o.Dims, a.Dims)
		o.Types = append(o.Types, t.Names[a.Type])
		o.Concrete = append(o.Concrete, t.Names[a.Value])
	}
	return o
}

func (c *costCache) of(r sigRef) opcost.Cost {
	if c.costs[r.tr] == nil {
		n := len(c.traces[r.tr].OpSigs)
		c.costs[r.tr], c.done[r.tr] = make([]opcost.Cost, n), make([]bool, n)
	}
	if !c.done[r.tr][r.sig] {
		t := c.traces[r.tr]
		c.costs[r.tr][r.sig], c.done[r.tr][r.sig] = opcost.Of(OpOf(t, t.SigOf(r.sig))), true
	}
	return c.costs[r.tr][r.sig]
}

// newRow starts the row of an op signature on a device; its run is set,
// and its key prefixed with it, when the inputs' rows are merged.
func (c *costCache) newRow(r sigRef, dev *Device) *localRow {
	t := c.traces[r.tr]
	sig := t.SigOf(r.sig)
	o := OpOf(t, sig)
	cost := c.of(r)
	lr := &localRow{cost: cost, row: OpRow{Device: dev.Device, Name: o.Name, Model: cost.Model, DType: cost.DType,
		UpperBound: cost.UpperBound, Note: cost.Note}}
	for i, d := range o.Dims {
		if d == nil {
			d = []int64{}
		}
		lr.row.Dims = append(lr.row.Dims, d)
		lr.row.Types = append(lr.row.Types, o.Types[i])
	}
	switch {
	case cost.Model == opcost.None:
	case dev.Spec == nil:
		lr.row.Note = "unknown device: give --gpu"
	default:
		roof, ok := RoofOf(cost, dev.Spec)
		if !ok {
			lr.row.Note = "no " + cost.DType.String() + " peak in the " + dev.Spec.Name + " row"
			break
		}
		lr.roof, lr.row.Modelled, lr.row.Bound = roof, true, roof.Bound()
	}
	// The merge key: run, device and the op's content (names are per
	// trace, so the text, not the ids).
	var b strings.Builder
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(int(dev.Device)))
	b.WriteByte(0)
	b.WriteString(o.Name)
	for i := range o.Dims {
		b.WriteByte(0)
		b.WriteString(o.Types[i])
		for _, x := range o.Dims[i] {
			b.WriteByte(',')
			b.WriteString(strconv.FormatInt(x, 10))
		}
	}
	lr.key = b.String()
	return lr
}

func (lr *localRow) addName(name trace.NameID, ns int64) {
	for i := range lr.names {
		if lr.names[i].name == name {
			lr.names[i].ns += ns
			return
		}
	}
	lr.names = append(lr.names, nameNS{name: name, ns: ns})
}

func (lr *localRow) addCat(cat classify.Category, ns int64) {
	for i := range lr.catTime {
		if lr.catTime[i].cat == cat {
			lr.catTime[i].ns += ns
			return
		}
	}
	lr.catTime = append(lr.catTime, catNS{cat: cat, ns: ns})
}

// finish names the row's kernels and category, most time first.
func (lr *localRow) finish(t *trace.Trace) {
	defer func() {
		if lr.row.Category.Top == classify.Communication && !lr.row.Modelled {
			lr.row.Note = "a collective: timed at the link in the speed of light when its size is known, not priced by op"
		}
	}()
	slices.SortStableFunc(lr.names, func(a, b nameNS) int { return cmp.Compare(b.ns, a.ns) })
	for _, n := range lr.names {
		lr.row.Kernels = append(lr.row.Kernels, t.Names[n.name])
	}
	lr.row.kernelNS = make([]int64, len(lr.names))
	for i, n := range lr.names {
		lr.row.kernelNS[i] = n.ns
	}
	lr.row.catNS = slices.Clone(lr.catTime)
	lr.row.pickCategory()
}

// pickCategory sets Category to the one with the most time (the first
// in category order on a tie).
func (r *OpRow) pickCategory() {
	slices.SortStableFunc(r.catNS, func(a, b catNS) int {
		if c := cmp.Compare(b.ns, a.ns); c != 0 {
			return c
		}
		return classify.Compare(a.cat, b.cat)
	})
	if len(r.catNS) > 0 {
		r.Category = r.catNS[0].cat
	}
}

// merge adds another input's row of the same op shape on the same device
// of the run.
func (r *OpRow) merge(o *OpRow) {
	r.Instances += o.Instances
	r.KernelNS += o.KernelNS
	r.FLOPs += o.FLOPs
	r.Bytes += o.Bytes
	r.RooflineNS += o.RooflineNS
	r.SM.add(o.SM)
	for i, name := range o.Kernels {
		if j := slices.Index(r.Kernels, name); j >= 0 {
			r.kernelNS[j] += o.kernelNS[i]
		} else {
			r.Kernels = append(r.Kernels, name)
			r.kernelNS = append(r.kernelNS, o.kernelNS[i])
		}
	}
	for _, c := range o.catNS {
		if j := slices.IndexFunc(r.catNS, func(x catNS) bool { return x.cat == c.cat }); j >= 0 {
			r.catNS[j].ns += c.ns
		} else {
			r.catNS = append(r.catNS, c)
		}
	}
	r.pickCategory()
	// Kernels most time first again.
	idx := make([]int, len(r.Kernels))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(r.kernelNS[b], r.kernelNS[a]) })
	ks, ns := make([]string, len(idx)), make([]int64, len(idx))
	for i, j := range idx {
		ks[i], ns[i] = r.Kernels[j], r.kernelNS[j]
	}
	r.Kernels, r.kernelNS = ks, ns
}

// finish orders the result's rows and completes the classes from the
// window table: windows, steps, the median span, the kernel time, the
// collectives at the link, the speed of light.
func (a *analysis) finish(res *Result) {
	for _, r := range a.rows {
		res.Ops = append(res.Ops, *r)
	}
	slices.SortFunc(res.Ops, func(x, y OpRow) int {
		return cmp.Or(cmp.Compare(x.Run, y.Run), cmp.Compare(y.KernelNS, x.KernelNS), cmp.Compare(x.Device, y.Device),
			cmp.Compare(x.Name, y.Name), cmp.Compare(dimsText(x.Dims, x.Types), dimsText(y.Dims, y.Types)))
	})
	spans := map[classKey][]int64{}
	steps := map[classKey]map[[2]int64]int{} // (input, device) → its windows of the class
	for i := range a.tbl.Windows {
		w := &a.tbl.Windows[i]
		if !a.opt.Filter.Keeps(w.Class) {
			continue
		}
		rk := &a.tbl.Ranks[w.Rank]
		k := classKey{rk.Run, w.Class}
		r := a.classes[k]
		if r == nil {
			r = &StepRow{Run: rk.Run, Class: w.Class}
			a.classes[k] = r
		}
		r.Windows++
		r.KernelNS += w.KernelNS
		spans[k] = append(spans[k], w.SpanNS())
		if steps[k] == nil {
			steps[k] = map[[2]int64]int{}
		}
		steps[k][[2]int64{int64(rk.Input), int64(w.Device)}]++
	}
	for k, r := range a.classes {
		for _, n := range steps[k] {
			r.Steps = max(r.Steps, n)
		}
		sp := spans[k]
		slices.Sort(sp)
		r.SpanP50 = stats.Percentile(sp, 50)
		if a.opt.LinkTime != nil {
			r.LinkedNS, r.LinkNS, r.Link = a.opt.LinkTime(k.run, k.class)
		}
		r.SpeedOfLightNS = r.RooflineNS + r.LinkNS + (r.KernelNS - r.ModelledNS - r.LinkedNS)
		res.Steps = append(res.Steps, *r)
	}
	slices.SortFunc(res.Steps, func(x, y StepRow) int {
		return cmp.Or(cmp.Compare(x.Run, y.Run), x.Class.Compare(y.Class))
	})
	for ck, c := range a.cats {
		if r := a.classes[classKey{ck.run, ck.class}]; r != nil {
			c.Windows = r.Windows
		}
		res.Categories = append(res.Categories, *c)
	}
	slices.SortFunc(res.Categories, func(x, y CategoryRow) int {
		return cmp.Or(cmp.Compare(x.Run, y.Run), x.Class.Compare(y.Class), cmp.Compare(y.KernelNS, x.KernelNS),
			classify.Compare(x.Category, y.Category))
	})
	for _, k := range a.kernels {
		res.Kernels = append(res.Kernels, *k)
	}
	slices.SortFunc(res.Kernels, func(x, y KernelRow) int { return cmp.Compare(x.Name, y.Name) })
}

// dimsText writes an op's arguments as the tables show them:
// [888,2880] c10::BFloat16, …
func dimsText(dims [][]int64, types []string) string {
	var b strings.Builder
	for i, d := range dims {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteByte('[')
		for j, x := range d {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(x, 10))
		}
		b.WriteByte(']')
		if i < len(types) {
			b.WriteString(types[i])
		}
	}
	return b.String()
}
