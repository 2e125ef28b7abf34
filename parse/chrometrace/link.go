package chrometrace

import (
	"cmp"
	"slices"
	"strings"

	"github.com/traceq/traceq/trace"
)

// Linking activities and launch calls to the CPU ops that launched them,
// once the whole trace is read (trace.Op says the rule):
//
//  1. the op whose External id the record carries, when that op's
//     interval on the launch call's thread contains the call (a kernel's
//     External id is its launch call's, which is the op's; some Kineto
//     versions write the correlation id there instead, which names no op
//     or, by chance, an unrelated one: the containment check tells). Only
//     ops read before the record count (Kineto writes the CPU ops first):
//     a record whose id names no op read so far keeps no id, so that the
//     ids of millions of kernels are not held while the file is read;
//     rule 3 still finds its op;
//  2. else, for an activity, its launch call's op;
//  3. else, for a launch call, the innermost op on its thread whose
//     interval contains the call's start (traces without External ids).
//
// Kernels of a CUDA-graph replay (their launch call is a graph launch)
// get no op: the op that launched the graph did not launch them.

// opIndex finds ops by External id and by containment.
type opIndex struct {
	ops   []rawOp
	byExt map[extKey]int32
	// byThread holds, per (process, thread), the indices of its ops in
	// start order, the enclosing op first on a tie.
	byThread map[threadKey][]int32
}

type extKey struct {
	proc int32
	ext  int64
}

type threadKey struct {
	proc   int32
	thread int64
}

func newOpIndex(ops []rawOp) *opIndex {
	x := &opIndex{ops: ops, byExt: make(map[extKey]int32, len(ops)), byThread: map[threadKey][]int32{}}
	for i := range ops {
		o := &ops[i]
		if o.ext != 0 {
			k := extKey{o.proc, o.ext}
			if _, dup := x.byExt[k]; !dup { // ids are unique in every real trace; the first wins
				x.byExt[k] = int32(i)
			}
		}
		tk := threadKey{o.proc, o.thread}
		x.byThread[tk] = append(x.byThread[tk], int32(i))
	}
	for _, idx := range x.byThread {
		slices.SortStableFunc(idx, func(a, b int32) int {
			oa, ob := &ops[a], &ops[b]
			if c := cmp.Compare(oa.start, ob.start); c != 0 {
				return c
			}
			return cmp.Compare(ob.dur, oa.dur)
		})
	}
	return x
}

// contains reports whether op i runs on (proc, thread) over t.
func (x *opIndex) contains(i int32, proc int32, thread int64, t trace.Time) bool {
	o := &x.ops[i]
	return o.proc == proc && o.thread == thread && o.start <= t && t <= o.start+trace.Time(o.dur)
}

// byID returns the op of External id ext in proc, or -1.
func (x *opIndex) byID(proc int32, ext int64) int32 {
	if ext == 0 {
		return -1
	}
	if i, ok := x.byExt[extKey{proc, ext}]; ok {
		return i
	}
	return -1
}

// query asks for the innermost op of (proc, thread) containing t; the
// answer goes to *op.
type query struct {
	proc   int32
	thread int64
	t      trace.Time
	op     *int32
}

// innermost answers the queries: for each, the op of its (proc, thread)
// with the latest start at or before t whose interval contains t (the
// shorter one on a tie), or -1. One sweep per thread over its ops in
// start order keeps the stack of ops that may still contain a later time:
// an op that ended before a time can contain no later one.
func (x *opIndex) innermost(qs []query) {
	slices.SortFunc(qs, func(a, b query) int {
		if c := cmp.Compare(a.proc, b.proc); c != 0 {
			return c
		}
		if c := cmp.Compare(a.thread, b.thread); c != 0 {
			return c
		}
		return cmp.Compare(a.t, b.t)
	})
	var stack []int32
	for len(qs) > 0 {
		k := threadKey{qs[0].proc, qs[0].thread}
		n := 1
		for n < len(qs) && qs[n].proc == k.proc && qs[n].thread == k.thread {
			n++
		}
		idx := x.byThread[k]
		stack = stack[:0]
		j := 0
		for _, q := range qs[:n] {
			for ; j < len(idx) && x.ops[idx[j]].start <= q.t; j++ {
				stack = append(stack, idx[j])
			}
			for len(stack) > 0 && x.end(stack[len(stack)-1]) < q.t {
				stack = stack[:len(stack)-1]
			}
			*q.op = -1
			if len(stack) > 0 {
				*q.op = stack[len(stack)-1]
			}
		}
		qs = qs[n:]
	}
}

func (x *opIndex) end(i int32) trace.Time { return x.ops[i].start + trace.Time(x.ops[i].dur) }

// byName is pred of a name of t, asked once per name.
func byName(t *trace.Trace, pred func(string) bool) func(trace.NameID) bool {
	seen := map[trace.NameID]bool{}
	return func(id trace.NameID) bool {
		v, ok := seen[id]
		if !ok {
			v = pred(t.Names[id])
			seen[id] = v
		}
		return v
	}
}

// isGraphLaunch reports whether a launch call replays a CUDA (HIP) graph.
func isGraphLaunch(name string) bool { return strings.Contains(name, "GraphLaunch") }

// link resolves the pending attributes of t's launches and activities
// into t's attribute tables. pend is indexed by Attr-1 of each record;
// ops are every CPU op read, with final processes and sig indexing
// sigKeys. The signatures of the ops kept are built then, their strings
// interned with names after every record's: t.Names must be set again
// afterwards. Launches must be sorted.
func link(t *trace.Trace, in *trace.AttrInterner, names *trace.Interner, pend []pendAttr, ops []rawOp, sigKeys []string) {
	var x *opIndex
	if len(ops) > 0 {
		x = newOpIndex(ops)
	}
	if t.Names == nil {
		t.Names = names.Names()
	}
	pend = blockGrids(t, in, pend)
	// launchOp[i] is the op (index into ops) of launch i, -1 for none.
	launchOp := make([]int32, len(t.Launches))
	var qs []query
	graph := make([]bool, len(t.Launches))
	isGraph := byName(t, isGraphLaunch)
	for i := range t.Launches {
		l := &t.Launches[i]
		graph[i] = isGraph(l.Name)
		launchOp[i] = -1
		if x == nil {
			continue
		}
		var ext int64
		if l.Attr != 0 {
			ext = pend[l.Attr-1].ext
		}
		op := x.byID(l.Proc, ext)
		if op >= 0 && !x.contains(op, l.Proc, l.Thread, l.Start) {
			op = -1 // not this call's op: a correlation id, or another op's id
		}
		launchOp[i] = op
		if op < 0 {
			qs = append(qs, query{l.Proc, l.Thread, l.Start, &launchOp[i]})
		}
	}
	if len(qs) > 0 {
		x.innermost(qs)
	}
	// Referenced ops get ids in trace.CompareOps order.
	used := map[int32]bool{}
	var actOp []int32
	if x != nil {
		actOp = make([]int32, len(t.Activities))
	}
	// The kernels of a graph replay share their launch's correlation id:
	// the last lookup is often the next one's.
	lastProc, lastCorr, lastLaunch := int32(-1), int64(0), -1
	launches := trace.NewLaunchFinder(t.Launches)
	for i := range t.Activities {
		if x == nil {
			break
		}
		a := &t.Activities[i]
		actOp[i] = -1
		li := lastLaunch
		if a.Proc != lastProc || a.Corr != lastCorr {
			li = -1
			if a.Corr != 0 {
				li = launches.Find(a.Proc, a.Corr)
			}
			lastProc, lastCorr, lastLaunch = a.Proc, a.Corr, li
		}
		if li >= 0 && graph[li] {
			continue
		}
		op := int32(-1)
		if a.Attr != 0 {
			op = x.byID(a.Proc, pend[a.Attr-1].ext)
			if op >= 0 && li >= 0 {
				l := &t.Launches[li]
				if !x.contains(op, l.Proc, l.Thread, l.Start) {
					op = -1
				}
			}
		}
		if op < 0 && li >= 0 {
			op = launchOp[li]
		}
		actOp[i] = op
		if op >= 0 {
			used[op] = true
		}
	}
	for _, op := range launchOp {
		if op >= 0 {
			used[op] = true
		}
	}
	opID := map[int32]trace.OpID{}
	if len(used) > 0 {
		order := make([]int32, 0, len(used))
		for i := range used {
			order = append(order, i)
		}
		slices.Sort(order) // signatures numbered in file order
		t.Ops = make([]trace.Op, 1, len(order)+1)
		for _, i := range order {
			o := &ops[i]
			key := sigKeys[o.sig]
			sig := in.Sig(key, func() trace.OpSig { return buildSig(key, names.ID) })
			t.Ops = append(t.Ops, trace.Op{Start: o.start, Dur: o.dur, Proc: o.proc, Sig: sig})
		}
		// Sort the ops and their indices together, ties in file order.
		perm := make([]int, len(order))
		for i := range perm {
			perm[i] = i
		}
		slices.SortFunc(perm, func(a, b int) int {
			if c := trace.CompareOps(&t.Ops[a+1], &t.Ops[b+1]); c != 0 {
				return c
			}
			return cmp.Compare(order[a], order[b])
		})
		sorted := make([]trace.Op, 1, len(t.Ops))
		for rank, p := range perm {
			sorted = append(sorted, t.Ops[p+1])
			opID[order[p]] = trace.OpID(rank + 1)
		}
		t.Ops = sorted
	}
	var last trace.Attr
	lastID := trace.AttrID(0)
	final := func(attr trace.AttrID, ops []int32, i int) trace.AttrID {
		var a trace.Attr
		if attr != 0 {
			p := pend[attr-1]
			a.Config, a.Kernel = p.config, p.kernel
		}
		if ops != nil && ops[i] >= 0 {
			a.Op = opID[ops[i]]
		}
		if a == last && a.Op == 0 { // consecutive records share attributes
			return lastID
		}
		last, lastID = a, in.Attr(a)
		return lastID
	}
	for i := range t.Launches {
		t.Launches[i].Attr = final(t.Launches[i].Attr, launchOp, i)
	}
	for i := range t.Activities {
		a := &t.Activities[i]
		a.Attr = final(a.Attr, actOp, i)
	}
}

// countsThreads reports whether a launch call's "grid" counts threads
// rather than thread blocks: hipExtModuleLaunchKernel (and the deprecated
// hipHccModuleLaunchKernel it replaced) takes OpenCL-style global work
// sizes, and Kineto records them as the grid of the call and of its
// kernel (hipBLASLt's Cijk_ GEMMs: grid [40960, 1, 1] with block
// [256, 1, 1] is 160 workgroups).
func countsThreads(name string) bool {
	return name == "hipExtModuleLaunchKernel" || name == "hipHccModuleLaunchKernel"
}

// blockGrids turns the thread grids of the launch calls that count
// threads (countsThreads), and of the kernels they launched, into grids
// of blocks: ⌈grid / block⌉ per dimension (a last, partial workgroup
// still occupies a CU), unknown (zero) where the block is. pend is
// link's; records without an External id share its entries, so a record
// that changes gets an entry of its own (one per entry changed), and the
// pend returned holds them. Launches must be sorted.
func blockGrids(t *trace.Trace, in *trace.AttrInterner, pend []pendAttr) []pendAttr {
	var calls map[extKey]bool // the (process, correlation) of each such call
	threads := byName(t, countsThreads)
	for i := range t.Launches {
		l := &t.Launches[i]
		if !threads(l.Name) {
			continue
		}
		if calls == nil {
			calls = map[extKey]bool{}
		}
		calls[extKey{l.Proc, l.Corr}] = true
	}
	if calls == nil {
		return pend
	}
	fixed := map[trace.AttrID]trace.AttrID{} // pend entry → its copy in blocks
	fix := func(attr *trace.AttrID) {
		if *attr == 0 || pend[*attr-1].config == 0 {
			return
		}
		id, ok := fixed[*attr]
		if !ok {
			p := pend[*attr-1]
			p.config = in.Config(blockGrid(in.ConfigOf(p.config)))
			pend = append(pend, p)
			id = trace.AttrID(len(pend))
			fixed[*attr] = id
		}
		*attr = id
	}
	for i := range t.Launches {
		if l := &t.Launches[i]; threads(l.Name) {
			fix(&l.Attr)
		}
	}
	for i := range t.Activities {
		if a := &t.Activities[i]; a.Corr != 0 && calls[extKey{a.Proc, a.Corr}] {
			fix(&a.Attr)
		}
	}
	return pend
}

// blockGrid is c with its grid of threads counted in blocks.
func blockGrid(c trace.Config) trace.Config {
	for i := range c.Grid {
		if c.Block[i] <= 0 {
			c.Grid = [3]int32{}
			return c
		}
	}
	for i := range c.Grid {
		c.Grid[i] = int32((int64(c.Grid[i]) + int64(c.Block[i]) - 1) / int64(c.Block[i]))
	}
	return c
}
