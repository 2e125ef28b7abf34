package window

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// Args finds the collective args (trace.Collective) of an input's kernels:
// those on the kernel itself (Kineto copies them onto NCCL kernels), else
// those of the innermost record_param_comms CPU op on the launching
// thread that was open when the kernel's launch call started. The table's
// categories and the collectives' sizes and communicators read the same
// args through it.
type Args struct {
	t      *trace.Trace
	kernel []trace.Collective // CollectiveOnKernel, by (Proc, Corr)
	ops    map[threadKey]*step.Innermost
	// nccl indexes the CPU ranges named "nccl:OP" (PyTorch's
	// record_function around a c10d collective: nccl:all_to_all), by
	// thread: what names the collective of a kernel launched inside one
	// when no args do (older PyTorch writes no collective args).
	nccl map[threadKey]*step.Innermost
	// The last answer: the kernels of a CUDA-graph replay share their
	// launch's correlation id, and so its answer.
	lastProc int32
	lastCorr int64
	last     *trace.Collective
}

type threadKey struct {
	proc   int32
	thread int64
}

// newArgs indexes the collective args of t and its nccl:OP ranges; nil
// when t has neither.
func newArgs(t *trace.Trace) *Args {
	nccl := ncclRanges(t)
	if len(t.Collectives) == 0 && nccl == nil {
		return nil
	}
	x := &Args{t: t, lastProc: -1, nccl: nccl}
	i, _ := slices.BinarySearchFunc(t.Collectives, trace.CollectiveOnCPUOp, func(c trace.Collective, s trace.CollectiveSource) int {
		return cmp.Compare(c.Source, s)
	})
	x.kernel = t.Collectives[:i]
	var opList []int // CollectiveOnCPUOp: indices in t.Collectives
	for j := i; j < len(t.Collectives); j++ {
		if t.Collectives[j].Source == trace.CollectiveOnCPUOp {
			opList = append(opList, j)
		}
	}
	if len(opList) == 0 {
		return x
	}
	// Innermost wants start order, the enclosing range first on a tie.
	slices.SortFunc(opList, func(p, q int) int {
		a, b := &t.Collectives[p], &t.Collectives[q]
		return cmp.Or(cmp.Compare(a.Proc, b.Proc), cmp.Compare(a.Thread, b.Thread), cmp.Compare(a.Start, b.Start),
			cmp.Compare(b.Dur, a.Dur), cmp.Compare(p, q))
	})
	x.ops = map[threadKey]*step.Innermost{}
	for _, j := range opList {
		c := &t.Collectives[j]
		k := threadKey{c.Proc, c.Thread}
		if x.ops[k] == nil {
			x.ops[k] = &step.Innermost{}
		}
		x.ops[k].Add(c.Start, c.Start+trace.Time(c.Dur), int32(j))
	}
	for _, v := range x.ops {
		v.Build()
	}
	return x
}

// ncclPrefix starts the name of the range PyTorch opens around a c10d
// collective it hands to NCCL.
const ncclPrefix = "nccl:"

// ncclRanges indexes t's CPU ranges named nccl:OP by thread; nil when
// there are none.
func ncclRanges(t *trace.Trace) map[threadKey]*step.Innermost {
	var is []bool // per name: nccl:OP
	var out map[threadKey]*step.Innermost
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind != trace.RangeCPU {
			continue
		}
		if is == nil {
			is = make([]bool, len(t.Names))
			for id, n := range t.Names {
				is[id] = len(n) > len(ncclPrefix) && n[:len(ncclPrefix)] == ncclPrefix
			}
		}
		if !is[r.Name] {
			continue
		}
		if out == nil {
			out = map[threadKey]*step.Innermost{}
		}
		k := threadKey{r.Proc, r.Thread}
		if out[k] == nil {
			out[k] = &step.Innermost{}
		}
		out[k].Add(r.Start, r.End(), int32(i))
	}
	for _, v := range out {
		v.Build()
	}
	return out
}

// OpName returns the name of the collective activity act ran: its args'
// "Collective name", else the OP of the innermost nccl:OP range open on
// the launching thread when its launch call started; "" when neither.
func (x *Args) OpName(act *trace.Activity) string {
	if x == nil {
		return ""
	}
	if c := x.Find(act); c != nil && c.Op != 0 {
		return x.t.Names[c.Op]
	}
	if x.nccl == nil || act.Corr == 0 {
		return ""
	}
	l := x.t.FindLaunch(act.Proc, act.Corr)
	if l == nil {
		return ""
	}
	j := x.nccl[threadKey{l.Proc, l.Thread}].Find(l.Start)
	if j < 0 {
		return ""
	}
	return x.t.Names[x.t.Ranges[j].Name][len(ncclPrefix):]
}

// Find returns the args of activity act (one of the input's), nil when
// there are none; the Source of what it returns says where they were
// read. A nil Args has none.
func (x *Args) Find(act *trace.Activity) *trace.Collective {
	if x == nil || act.Corr == 0 {
		return nil
	}
	if act.Proc == x.lastProc && act.Corr == x.lastCorr {
		return x.last
	}
	c := x.lookup(act)
	x.lastProc, x.lastCorr, x.last = act.Proc, act.Corr, c
	return c
}

func (x *Args) lookup(act *trace.Activity) *trace.Collective {
	i, ok := slices.BinarySearchFunc(x.kernel, act, func(c trace.Collective, a *trace.Activity) int {
		return cmp.Or(cmp.Compare(c.Proc, a.Proc), cmp.Compare(c.Corr, a.Corr))
	})
	if ok {
		return &x.kernel[i]
	}
	if x.ops == nil {
		return nil
	}
	l := x.t.FindLaunch(act.Proc, act.Corr)
	if l == nil {
		return nil
	}
	j := x.ops[threadKey{l.Proc, l.Thread}].Find(l.Start)
	if j < 0 {
		return nil
	}
	return &x.t.Collectives[j]
}
