package collectives

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// Communicators: which ranks' kernels are instances of one collective
// (docs/definitions.md#communicators). A kernel's communicator is, by the
// first rule that gives one:
//
//  1. RuleArgs / RuleCPUOp: the process group its collective args name
//     ("Process Group Name" and "Process Group Ranks", on the kernel or on
//     the record_param_comms op that launched it);
//  2. RulePGConfig: for a kernel without them (a CUDA-graph replay, a
//     custom all-reduce, DeepEP), the rank's process group from Kineto's
//     pg_config that the op runs in: a tensor-parallel op (all-reduce,
//     all-gather, reduce-scatter, reduce, broadcast) the smallest group
//     of consecutive ranks — tensor parallelism is the innermost
//     dimension in vLLM, SGLang and Megatron — among those on the rank's
//     host when the kernel works only inside a host (custom all-reduce,
//     symmetric memory, DeepEP's intranode kernels) and the hosts are
//     known; an all-to-all the largest group (expert parallelism spans
//     the data- and tensor-parallel ranks);
//  3. RuleHost: without pg_config, a kernel that works only inside a host
//     is matched with the ranks of its host alone;
//  4. RuleOne: else every rank of the run that ran the op, one
//     communicator, and the output says so.

// CommRule says what formed a communicator.
type CommRule uint8

const (
	RuleArgs CommRule = iota
	RuleCPUOp
	RulePGConfig
	RuleHost
	RuleOne
	numRules
)

var ruleNames = [...]string{RuleArgs: "args", RuleCPUOp: "cpu_op", RulePGConfig: "pg_config", RuleHost: "host", RuleOne: "one"}

func (r CommRule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return "rule(" + strconv.Itoa(int(r)) + ")"
}

// phase is the part of an expert-parallel all-to-all a kernel runs.
type phase uint8

const (
	phaseNone phase = iota
	phaseDispatch
	phaseCombine
)

var phaseNames = [...]string{phaseNone: "", phaseDispatch: "dispatch", phaseCombine: "combine"}

// phaseOf is the phase an all-to-all kernel's name says: DeepEP's
// dispatch/combine (and notify_dispatch, get_dispatch_layout), pplx's
// dispatchKernel/combineKernel, TRT-LLM's and mori's EP kernels.
func phaseOf(name string) phase {
	s := strings.ToLower(name)
	switch {
	case strings.Contains(s, "dispatch"):
		return phaseDispatch
	case strings.Contains(s, "combine"):
		return phaseCombine
	}
	return phaseNone
}

// intraOnly reports whether a collective kernel works only between the
// GPUs of one host (peer memory over NVLink or PCIe, not a network):
// vLLM's and SGLang's custom all-reduce, PyTorch's symmetric-memory
// kernels, TRT-LLM's and FlashInfer's custom all-reduce, DeepEP's
// intranode kernels.
func intraOnly(name string) bool {
	s := strings.ToLower(name)
	for _, k := range []string{"cross_device_reduce", "multimem_", "one_shot_all_reduce", "two_shot_all_reduce",
		"deep_ep::intranode", "customallreduce", "allreduce_fusion", "lamport", "quick_all_reduce", "quickreduce"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// tpOps are the ops a tensor-parallel group runs.
var tpOps = map[string]bool{"allreduce": true, "allgather": true, "reduce_scatter": true, "reduce": true, "broadcast": true}

// commsOf finds the host of each distributed rank of the run, for the
// rules of kernels without args.
func (a *runAnalysis) commsOf() {
	a.hostOf = map[int]string{}
	hosts := map[string]bool{}
	for _, r := range a.ranks {
		if r.Number != nil {
			a.hostOf[*r.Number] = r.Host
		}
		if r.Host != "" {
			hosts[r.Host] = true
		}
	}
	a.multiHost = len(hosts) > 1
	a.pgCache = map[pgChoiceKey]pgChoice{}
	a.intra, a.phases = map[string]bool{}, map[string]phase{}
}

type pgChoiceKey struct {
	rank  window.RankID
	op    string
	intra bool
}

type pgChoice struct {
	comm commKey
	ok   bool
}

// commWithout is the communicator of rank r's kernel named name of op
// that carries no process-group args, and the rule that found it.
func (a *runAnalysis) commWithout(r *rankData, op, name string) (commKey, CommRule) {
	intra, ok := a.intra[name]
	if !ok {
		intra = intraOnly(name)
		a.intra[name] = intra
	}
	if tpOps[op] || op == "all_to_all" {
		k := pgChoiceKey{r.ID, op, intra}
		c, seen := a.pgCache[k]
		if !seen {
			c.comm, c.ok = a.fromPGConfig(r, op, intra)
			a.pgCache[k] = c
		}
		if c.ok {
			return c.comm, RulePGConfig
		}
	}
	if intra && a.multiHost && r.Host != "" {
		return commKey{host: r.Host}, RuleHost
	}
	return commKey{}, RuleOne
}

// fromPGConfig picks rank r's process group for op from its pg_config.
func (a *runAnalysis) fromPGConfig(r *rankData, op string, intra bool) (commKey, bool) {
	if r.Number == nil {
		return commKey{}, false
	}
	me := *r.Number
	var cands []trace.ProcessGroup
	for _, g := range a.tbl.Inputs[r.Input].ProcessGroups {
		if len(g.Ranks) < 2 || !slices.Contains(g.Ranks, me) || !strings.Contains(strings.ToLower(g.Backend), "nccl") {
			continue
		}
		if slices.ContainsFunc(cands, func(c trace.ProcessGroup) bool { return slices.Equal(c.Ranks, g.Ranks) }) {
			continue // the same ranks again: the first group names them
		}
		cands = append(cands, g)
	}
	if len(cands) == 0 {
		return commKey{}, false
	}
	if intra && r.Host != "" {
		// A kernel that works inside a host runs in a group on the
		// rank's host (when the hosts of its ranks are known).
		var on []trace.ProcessGroup
		for _, g := range cands {
			if a.onHost(g.Ranks, r.Host) {
				on = append(on, g)
			}
		}
		if len(on) > 0 {
			cands = on
		}
	}
	best := -1
	for i, g := range cands {
		switch {
		case op == "all_to_all":
			if best < 0 || len(g.Ranks) > len(cands[best].Ranks) {
				best = i
			}
		case consecutive(g.Ranks):
			if best < 0 || !consecutive(cands[best].Ranks) || len(g.Ranks) < len(cands[best].Ranks) {
				best = i
			}
		case best < 0:
			best = i
		case !consecutive(cands[best].Ranks) && len(g.Ranks) < len(cands[best].Ranks):
			best = i
		}
	}
	g := cands[best]
	return commKey{group: g.Name, ranks: kinetoRanks(g.Ranks)}, true
}

// onHost reports whether every rank of ranks is known to be on host.
func (a *runAnalysis) onHost(ranks []int, host string) bool {
	for _, n := range ranks {
		if h, ok := a.hostOf[n]; !ok || h != host {
			return false
		}
	}
	return true
}

// consecutive reports whether ranks are n, n+1, …, in any order.
func consecutive(ranks []int) bool {
	s := slices.Sorted(slices.Values(ranks))
	for i := 1; i < len(s); i++ {
		if s[i] != s[i-1]+1 {
			return false
		}
	}
	return true
}

// kinetoRanks writes ranks as Kineto's "Process Group Ranks" does: "[0,
// 1, 2]", so that a group pg_config names is the one args name.
func kinetoRanks(ranks []int) string {
	s := make([]string, len(ranks))
	for i, r := range ranks {
		s[i] = strconv.Itoa(r)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// scope is whether the ranks (indices in a.ranks) are on one host.
func (a *runAnalysis) scope(ranks []int) Scope {
	host := ""
	for _, ri := range ranks {
		h := a.ranks[ri].Host
		switch {
		case h == "":
			return ScopeAny
		case host == "":
			host = h
		case h != host:
			return ScopeInter
		}
	}
	if host == "" {
		return ScopeAny
	}
	return ScopeIntra
}

// tokens adds the k-th instance of lane l's token counts to e: from the
// all-to-all's split sizes when every rank's kernel carries them in full
// (splits), else each rank's step's tokens, when every rank's step gives
// them (docs/definitions.md#expert-parallelism).
// It reports whether the split sizes counted it.
func (a *runAnalysis) tokens(e *opAcc, l int, k int32) (split bool) {
	if len(e.ranks) < 2 {
		return false
	}
	if a.splits(e, l, k) {
		return true
	}
	var most, sum int64
	for _, ri := range e.ranks {
		r := a.ranks[ri]
		in := &a.tbl.Inputs[r.Input]
		if in.Steps == nil {
			return false
		}
		s := r.recs.Kernels[r.kern[r.off[l]+k].idx].Step
		if s < 0 || in.Steps.List[s].Tokens <= 0 {
			return false
		}
		tok := in.Steps.List[s].Tokens
		if sum > math.MaxInt64-tok || e.op.TokenSum > math.MaxInt64-sum-tok {
			return false
		}
		most, sum = max(most, tok), sum+tok
	}
	e.op.TokenInstances++
	e.op.TokenMaxSum += most
	e.op.TokenSum += sum
	return false
}

// splits adds the k-th instance of lane l's split sizes to e when every
// rank's kernel has them: each rank's count is the larger of what it
// sends and what it receives (SplitCount), and reports whether it did.
func (a *runAnalysis) splits(e *opAcc, l int, k int32) bool {
	if a.opNames.keys[e.key.op] != "all_to_all" {
		return false
	}
	var most, sum int64
	counts := a.countBuf[:0]
	for _, ri := range e.ranks {
		r := a.ranks[ri]
		key := &r.recs.Keys[r.recs.Kernels[r.kern[r.off[l]+k].idx].Key]
		if key.Args < 0 {
			return false
		}
		c := max(r.recs.Args[key.Args].InSplit, r.recs.Args[key.Args].OutSplit)
		if r.recs.Args[key.Args].InSplit < 0 || r.recs.Args[key.Args].OutSplit < 0 ||
			sum > math.MaxInt64-c || e.op.SplitSum > math.MaxInt64-sum-c {
			return false
		}
		most, sum = max(most, c), sum+c
		counts = append(counts, c)
	}
	a.countBuf = counts
	for i, c := range counts {
		if e.stats[i].SplitCount > math.MaxInt64-c {
			return false
		}
	}
	for i, c := range counts {
		e.stats[i].SplitCount += c
	}
	e.op.SplitInstances++
	e.op.SplitMaxSum += most
	e.op.SplitSum += sum
	return true
}

// onInstance hands the k-th instance of lane l to Options.OnInstance: the
// kernels as indices in each rank's input's Collectives.Kernels.
func (a *runAnalysis) onInstance(e *opAcc, l int, k int32, transfer int64, last int) {
	in := &Instance{Run: a.run, Class: e.key.class, Op: a.opNames.keys[e.key.op], TransferNS: transfer, Last: last}
	for _, ri := range e.ranks {
		r := a.ranks[ri]
		in.Ranks = append(in.Ranks, r.Member)
		in.Kernels = append(in.Kernels, r.kern[r.off[l]+k].idx)
	}
	a.opt.OnInstance(in)
}

// opShapeSizes are the ops whose message, by nccl-tests' convention, is
// the tensor handed to the collective: the whole buffer of an all-reduce,
// a broadcast or a reduce, the send buffer of an all-to-all or a send.
var opShapeOps = map[string]bool{"allreduce": true, "broadcast": true, "reduce": true, "all_to_all": true, "send_recv": true}

// opShapeSize is what the CPU op that launched a kernel of key says of
// its size when no collective args do (PyTorch before 2.1): the first
// tensor of its record_param_comms op (window.CollectiveShape), elements
// × its type's size.
func opShapeSize(recs *window.Collectives, key *window.CollectiveKey, op string) rankSize {
	none := rankSize{bytes: -1, source: sizeUnknown, groupSize: -1}
	if !opShapeOps[op] || key.Shape < 0 {
		return none
	}
	sh := recs.Shapes[key.Shape]
	size, ok := typeSize(sh.Type)
	if !ok || sh.Elems <= 0 || sh.Elems > maxMessage/size {
		return none
	}
	return rankSize{bytes: sh.Elems * size, source: sizeOpShape, groupSize: -1}
}

// typeSize is the element size of a tensor type as Kineto's "Input type"
// writes it (C++ names: "float", "long int", "c10::BFloat16").
func typeSize(t string) (int64, bool) {
	s := strings.ToLower(strings.TrimPrefix(t, "c10::"))
	switch s {
	case "long int", "long long int", "int64_t":
		s = "long"
	case "short int":
		s = "short"
	case "unsigned char", "uint8_t":
		s = "byte"
	case "signed char", "int8_t":
		s = "char"
	case "unsigned short":
		s = "uint16"
	}
	v, ok := dtypeSizes[s]
	return v, ok
}
