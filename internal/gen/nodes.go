package gen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/trace"
)

// NodeConfig describes a run over several hosts, for the communicator
// matching, the per-communicator links and the merged timeline (issue
// 24): Nodes hosts of PerNode ranks, one tensor-parallel group per host
// (its all-reduces stay inside it), data-parallel attention across hosts
// (each host's ranks serve their own batch: their step markers carry
// their own token counts) and an expert-parallel all-to-all over every
// rank (a dispatch and a combine per layer, DeepEP's kernel names).
//
// Every rank's trace is written on one true clock; host n's clock reads
// n × SkewNS late or early, as real hosts' clocks disagree. The
// all-reduces of a group end together at its last arrival plus the
// transfer time (bus bytes over IntraGBps), the all-to-alls at the last
// arrival of all ranks plus theirs (over InterGBps): the premise of the
// collectives analysis, exact by construction.
//
// Decode steps replay a CUDA graph: vLLM's custom all-reduce and DeepEP's
// low-latency kernels, with no collective args (the communicators come
// from pg_config and the hosts). Prefill steps launch kernel by kernel:
// NCCL all-reduces carrying Kineto's process-group args (on the kernel in
// even prefill steps, on a record_param_comms op around the launch in odd
// ones) and DeepEP's normal dispatch and combine, without args, on a
// second stream.
type NodeConfig struct {
	Nodes   int // hosts (0 means 2)
	PerNode int // ranks per host, one tensor-parallel group (0 means 8)
	Steps   int
	// DecodeEvery: steps 0, N, 2N, … are prefill steps, the others decode
	// (0: all decode; 1: all prefill).
	DecodeEvery int
	Layers      int // 0 means 2
	// SlowPct, when set, has one entry per rank: its compute kernels take
	// that many percent longer.
	SlowPct  []int
	JitterNS int64 // a per-rank random 0..JitterNS-1 ns on each compute kernel
	// IntraGBps is the bus bandwidth of the all-reduces inside a host (0
	// means 64); InterGBps that of the all-to-all across hosts (0 means
	// 16). Both in GB/s = bytes per ns.
	IntraGBps, InterGBps int64
	// Hidden is the hidden size (0 means 4096): an all-reduce moves
	// tokens × Hidden bf16 values, and so does an all-to-all (the tokens
	// of the lowest rank's host: the size traceq gives it from
	// --bytes-per-token). Transfer times must be whole ns (WriteNodeRank
	// says when they are not).
	Hidden int64
	// SkewNS: the timestamps of host n are n × SkewNS late (negative:
	// early). With SkewInBase the trace's baseTimeNanoseconds holds the
	// skew (it is n × SkewNS earlier), so that base + ts is the true time
	// on every host: aligning by the base is exact. Without it every host
	// writes the same base and its clock is off by the skew.
	SkewNS     int64
	SkewInBase bool
	// AllToAllArgs runs the prefill steps' all-to-alls as NCCL's
	// all_to_all_single with uneven splits (torch.distributed's, as an EP
	// layer without DeepEP does): ncclDevKernel_SendRecv kernels carrying
	// Kineto's collective args, "all_to_allv" and each rank's "In split
	// size" and "Out split size" (tokens routed to each peer, a hot
	// expert rank among them), the combine sending back what the dispatch
	// brought. The message size is then the args' (the majority of the
	// ranks' larger message), the token imbalance the split sizes'.
	AllToAllArgs bool
	Seed         int64
}

func (c NodeConfig) nodes() int   { return cmpOr(c.Nodes, 2) }
func (c NodeConfig) perNode() int { return cmpOr(c.PerNode, 8) }
func (c NodeConfig) layers() int  { return cmpOr(c.Layers, 2) }
func (c NodeConfig) intra() int64 { return cmpOr(c.IntraGBps, 64) }
func (c NodeConfig) inter() int64 { return cmpOr(c.InterGBps, 16) }
func (c NodeConfig) hidden() int64 {
	return cmpOr(c.Hidden, 4096)
}

func cmpOr[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Ranks is the world size.
func (c NodeConfig) Ranks() int { return c.nodes() * c.perNode() }

// Node is the host index of rank.
func (c NodeConfig) Node(rank int) int { return rank / c.perNode() }

// Host names the host of rank, as the directory layout does
// (run/node0/rank3.json).
func (c NodeConfig) Host(rank int) string { return "node" + strconv.Itoa(c.Node(rank)) }

// BytesPerToken is what one token adds to a message: --bytes-per-token.
func (c NodeConfig) BytesPerToken() int64 { return 2 * c.hidden() }

// Kind is step i's kind: "prefill" or "decode".
func (c NodeConfig) Kind(i int) string {
	if c.DecodeEvery > 0 && i%c.DecodeEvery == 0 {
		return "prefill"
	}
	return "decode"
}

// SkewOf is the amount rank's timestamps are late by (its host's).
func (c NodeConfig) SkewOf(rank int) int64 { return int64(c.Node(rank)) * c.SkewNS }

// BaseTime is the baseTimeNanoseconds of rank's trace.
func (c NodeConfig) BaseTime(rank int) int64 {
	if c.SkewInBase {
		return nodeBase - c.SkewOf(rank)
	}
	return nodeBase
}

// nodeBase is the baseTimeNanoseconds written: Kineto floors the system
// clock to a quarter (2024-04-01 here); ts counts from it.
const nodeBase = 1711929600000000000

// nodeStart is the true time of the first event, on the trace's relative
// clock (about 51 days into the quarter, as real traces read).
const nodeStart = trace.Time(4_458_676_000_000_000)

// NodeExpected is what the analysis of a NodeConfig run must find.
type NodeExpected struct {
	// Comms are the communicators' collectives per step kind: decode and
	// prefill, each the TP all-reduces of every host, then the all-to-all.
	Comms []CommExpect
	// KindNS is all GPU time per step kind and rank.
	KindNS map[string][]int64
	// Tokens is each step's token count per host.
	Tokens [][]int64
	// Bytes and Activities are those of the rank's trace written.
	Bytes      int64
	Activities int64
}

// CommExpect is one step kind's collectives of one op on one
// communicator.
type CommExpect struct {
	Kind string // "decode" or "prefill"
	Op   string // "allreduce" or "all_to_all"
	// Ranks are the members (global ranks, ascending); Group and
	// GroupRanks the process group as pg_config and the args name it.
	Ranks      []int
	Group      string
	GroupRanks string
	// Rules are what form the communicator, in the order
	// collectives.CommRule numbers them: "args" and "cpu_op" (the
	// prefill all-reduces' process-group args, on the kernel or on the
	// record_param_comms op that launched it), "pg_config"
	// (graph-replayed kernels and DeepEP's, from the ranks' pg_config and
	// hosts).
	Rules []string
	// Link is "intra" (every member on one host) or "inter"; BusGBps the
	// bus bandwidth the collectives ran at.
	Link    string
	BusGBps int64
	// Instances and TransferNS (summed once per instance).
	Instances  int64
	TransferNS int64
	// Per member (the index in Ranks): kernel time, wait, last arrivals
	// (ties to the lowest rank).
	KernelNS, WaitNS, LastArrivals []int64
	// Sizes per message size and source; BusBytes sums the instances'
	// bus bytes (over TransferNS: BusGBps).
	Sizes    map[SizeKey]*SizeExpect
	BusBytes int64
	// TokenMaxSum sums, over the instances, the most tokens any member's
	// step had; TokenSum sums every member's: the token imbalance is
	// len(Ranks) × TokenMaxSum / TokenSum. Instances with split sizes
	// (AllToAllArgs) count in SplitMaxSum and SplitSum instead: each
	// member's count the larger of the rows it sends and receives;
	// SplitCount per member.
	TokenMaxSum, TokenSum int64
	SplitInstances        int64
	SplitMaxSum, SplitSum int64
	SplitCount            []int64
	// Phases is the number of ops the analysis splits it into: DeepEP's
	// dispatch and combine (2), NCCL's send/recv kernels (1), an
	// all-reduce (1).
	Phases int
}

// Straggler is the member with the most last arrivals (the lowest on a
// tie), as a global rank.
func (o *CommExpect) Straggler() int {
	best := 0
	for i, n := range o.LastArrivals {
		if n > o.LastArrivals[best] {
			best = i
		}
	}
	return o.Ranks[best]
}

// A layer: attention with its tensor-parallel all-reduce, then the MoE
// block: dispatch to the experts, their GEMMs, combine.
//
// DeepEP's kernels as real traces name them (deepseek-ai/DeepEP
// csrc/kernels: internode_ll.cu for the low-latency decode kernels,
// internode.cu for the normal ones).
var (
	fEPDispatchLL = family{name: "void deep_ep::internode_ll::dispatch<true, 3, 7168>(void*, float*, int*, long*, void*, int*, void*, int*, void*, void const*, long const*, int*, int*, int, int, int, int, int, int, int, int, bool)", lo: 9000, hi: 15000, comm: true}
	fEPCombineLL  = family{name: "void deep_ep::internode_ll::combine<3, 7168>(void*, void*, int*, void*, void const*, long const*, int const*, int const*, int*, int*, long const*, int, int, int, int, int, int, int, bool)", lo: 9000, hi: 15000, comm: true}
	fEPDispatch   = family{name: "void deep_ep::internode::dispatch<true, 8, 4, 2, 512, 16, 48>(int4*, float*, long*, float*, deep_ep::internode::SourceMeta*, int4 const*, float const*, long const*, float const*, int*, int*, int*, int*, int const*, int const*, int const*, int const*, int, int, int, int, int, int, void*, int, int, void**, int, int, int, bool)", lo: 20000, hi: 40000, comm: true}
	fEPCombine    = family{name: "void deep_ep::internode::combine<__nv_bfloat16, 8, 4, 2, 512, 12, 8, 2>(int4*, float*, bool const*, int4 const*, float const*, int const*, int const*, deep_ep::internode::SourceMeta const*, long const*, int const*, int const*, int, int, int, int, int, void*, int, int, void**, int, int, int)", lo: 20000, hi: 40000, comm: true}
	fA2ASendRecv  = family{name: "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", lo: 20000, hi: 40000, comm: true}
	fExpertGEMM   = family{name: "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int> >, cutlass::gemm::collective::CollectiveMma> >(cutlass::gemm::kernel::GemmUniversal::Params)", lo: 12000, hi: 20000}
)

// nodeKernel is one kernel of a step of a node run, in launch order.
type nodeKernel struct {
	f        *family
	ar, a2a  bool
	prefillF *family // the prefill step's kernel, when it differs
}

func nodeStepKernels(layers int) []nodeKernel {
	ks := []nodeKernel{{f: &fEmbed}}
	for range layers {
		ks = append(ks, nodeKernel{f: &fRMS}, nodeKernel{f: &fQKV}, nodeKernel{f: &fAttnDec, prefillF: &fAttnPre},
			nodeKernel{f: &fOProj}, nodeKernel{f: &fCustomAR, prefillF: &fNCCLAR, ar: true}, nodeKernel{f: &fRMS},
			nodeKernel{f: &fEPDispatchLL, prefillF: &fEPDispatch, a2a: true}, nodeKernel{f: &fExpertGEMM},
			nodeKernel{f: &fExpertGEMM}, nodeKernel{f: &fEPCombineLL, prefillF: &fEPCombine, a2a: true})
	}
	return append(ks, nodeKernel{f: &fFinalNorm}, nodeKernel{f: &fLMHead}, nodeKernel{f: &fArgmax})
}

// pgRanks writes a rank list as Kineto's "Process Group Ranks" does.
func pgRanks(ranks []int) string {
	s := make([]string, len(ranks))
	for i, r := range ranks {
		s[i] = strconv.Itoa(r)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// nodeGroups are the process groups of a node run in creation order, as
// vLLM makes them: the world, a tensor-parallel group per host (NCCL,
// then its gloo twin), a data-parallel group per local rank across hosts,
// the expert-parallel group of every rank.
type nodeGroup struct {
	name, desc, backend string
	ranks               []int
}

func (c NodeConfig) groups() []nodeGroup {
	n, per := c.Ranks(), c.perNode()
	all := make([]int, n)
	for r := range all {
		all[r] = r
	}
	gs := []nodeGroup{{"0", "default_pg", "cuda:nccl", all}}
	next := 1
	add := func(desc, backend string, ranks []int) {
		gs = append(gs, nodeGroup{strconv.Itoa(next), desc, backend, ranks})
		next++
	}
	for node := range c.nodes() {
		tp := make([]int, per)
		for i := range tp {
			tp[i] = node*per + i
		}
		add("undefined", "cuda:nccl", tp)
		add("undefined", "cpu:gloo,cuda:gloo", tp)
	}
	for l := range per {
		var dp []int
		for node := range c.nodes() {
			dp = append(dp, node*per+l)
		}
		add("undefined", "cuda:nccl", dp)
		add("undefined", "cpu:gloo,cuda:gloo", dp)
	}
	add("undefined", "cuda:nccl", all)
	return gs
}

// TPGroup returns the name and ranks of rank's tensor-parallel group.
func (c NodeConfig) TPGroup(rank int) (string, []int) {
	g := c.groups()[1+2*c.Node(rank)]
	return g.name, g.ranks
}

// EPGroup returns the process group the all-to-all runs in as traceq
// finds it from pg_config: the first, in creation order, of the largest
// NCCL groups (the world's default_pg, the same ranks as the EP group).
func (c NodeConfig) EPGroup() (string, []int) {
	g := c.groups()[0]
	return g.name, g.ranks
}

// WriteNodeRank writes rank's trace of the node run to out and returns
// the run's expected figures. Every rank's call simulates all ranks
// (cheaply), so that the traces agree; memory stays proportional to one
// step.
func WriteNodeRank(out io.Writer, cfg NodeConfig, rank int) (*NodeExpected, error) {
	n, per := cfg.Ranks(), cfg.perNode()
	if rank < 0 || rank >= n {
		return nil, fmt.Errorf("rank %d out of range (%d ranks)", rank, n)
	}
	if cfg.Steps < 0 || cfg.JitterNS < 0 || (cfg.SlowPct != nil && len(cfg.SlowPct) != n) {
		return nil, fmt.Errorf("negative steps or jitter, or SlowPct not one per rank")
	}
	hidden, intra, inter := cfg.hidden(), cfg.intra(), cfg.inter()
	if per > 1 && hidden*4*int64(per-1)%(int64(per)*intra) != 0 {
		return nil, fmt.Errorf("hidden %d × 4 × %d is not a multiple of %d × %d GB/s: all-reduce transfers would not be whole ns",
			hidden, per-1, per, intra)
	}
	if hidden*2*int64(n-1)%(int64(n)*inter) != 0 {
		return nil, fmt.Errorf("hidden %d × 2 × %d is not a multiple of %d × %d GB/s: all-to-all transfers would not be whole ns",
			hidden, n-1, n, inter)
	}
	groups := cfg.groups()
	exp := &NodeExpected{KindNS: map[string][]int64{"decode": make([]int64, n), "prefill": make([]int64, n)}}
	comms := map[string]*CommExpect{}
	var order []string
	commOf := func(kind, op string, node int) *CommExpect {
		k := kind + "/" + op + "/" + strconv.Itoa(node)
		o := comms[k]
		if o == nil {
			o = &CommExpect{Kind: kind, Op: op, Sizes: map[SizeKey]*SizeExpect{}}
			o.Phases = 1
			if op == "allreduce" {
				o.Group, o.Ranks = cfg.TPGroup(node * per)
				o.Link, o.BusGBps = "intra", intra
				if kind == "decode" {
					o.Rules = []string{"pg_config"}
				}
			} else {
				o.Group, o.Ranks = cfg.EPGroup()
				o.Rules, o.Link, o.BusGBps = []string{"pg_config"}, "inter", inter
				o.Phases = 2
				if kind == "prefill" && cfg.AllToAllArgs {
					o.Rules, o.Phases = []string{"args"}, 1
				}
				if cfg.nodes() == 1 {
					o.Link, o.BusGBps = "intra", intra
				}
			}
			o.GroupRanks = pgRanks(o.Ranks)
			m := len(o.Ranks)
			o.KernelNS, o.WaitNS, o.LastArrivals, o.SplitCount = make([]int64, m), make([]int64, m), make([]int64, m), make([]int64, m)
			comms[k] = o
			order = append(order, k)
		}
		return o
	}

	shared := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x40de5))
	jitter := make([]*rand.Rand, n)
	for r := range jitter {
		jitter[r] = rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(r)+0x1000))
	}
	w := &writer{w: bufio.NewWriterSize(out, 256<<10), first: true, pid: 6000 + int64(rank), device: int32(rank % per)}
	dev := int64(w.device)
	tid := w.pid
	skew := trace.Time(cfg.SkewOf(rank))
	var pg []string
	for _, g := range groups {
		if !containsInt(g.ranks, rank) {
			continue
		}
		pg = append(pg, fmt.Sprintf(`{"pg_name": %q, "pg_desc": %q, "backend_config": %q, "pg_size": %d, "ranks": %s}`,
			g.name, g.desc, g.backend, len(g.ranks), pgRanks(g.ranks)))
	}
	w.buf = fmt.Appendf(w.buf, `{
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": %d, "name": "NVIDIA H200", "totalGlobalMem": 150754820096, "computeMajor": 9, "computeMinor": 0, "numSms": 132}
  ],
  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d, "pg_count": %d, "pg_config": [%s], "nccl_version": "2.27.5"},
  "baseTimeNanoseconds": %d,
  "traceEvents": [
  `, w.device, rank, n, len(groups), strings.Join(pg, ", "), cfg.BaseTime(rank))

	tpName, tpRanks := cfg.TPGroup(rank)
	collArgs := func(elems int64) func([]byte) []byte {
		return func(b []byte) []byte {
			return fmt.Appendf(b, `, "Collective name": "allreduce", "In msg nelems": %d, "Out msg nelems": %d, "Group size": %d, "dtype": "BFloat16", "Process Group Name": %q, "Process Group Ranks": %q`,
				elems, elems, per, tpName, pgRanks(tpRanks))
		}
	}
	kernelArgs := func(stream, corr int64, extra func([]byte) []byte) func([]byte) []byte {
		return func(b []byte) []byte {
			b = fmt.Appendf(b, `, "device": %d, "stream": %d, "correlation": %d, "grid": [132, 1, 1], "block": [256, 1, 1]`, dev, stream, corr)
			if extra != nil {
				b = extra(b)
			}
			return b
		}
	}
	launchArgs := func(corr int64) func([]byte) []byte {
		return func(b []byte) []byte { return fmt.Appendf(b, `, "correlation": %d`, corr) }
	}
	// event writes one of this rank's events on its host's clock.
	event := func(cat, name string, pid, tid int64, ts trace.Time, dur int64, args func([]byte) []byte) {
		w.event(cat, name, pid, tid, ts+skew, dur, args)
	}

	const gap = 500
	free := make([]trace.Time, n)
	for r := range free {
		free[r] = nodeStart
	}
	cpu := nodeStart + 10_000
	var corr int64 = 100
	prefills := 0
	slow := func(r int, d int64) int64 {
		if cfg.SlowPct != nil {
			d = d * int64(100+cfg.SlowPct[r]) / 100
		}
		if cfg.JitterNS > 0 {
			d += jitter[r].Int64N(cfg.JitterNS)
		}
		return d
	}
	arr := make([]trace.Time, n)
	tokens := make([]int64, cfg.nodes())
	// route[r][p]: the rows rank r sends peer p in a dispatch (AllToAllArgs).
	route := make([][]int64, n)
	for r := range route {
		route[r] = make([]int64, n)
	}
	for i := 0; i < cfg.Steps; i++ {
		kind := cfg.Kind(i)
		prefill := kind == "prefill"
		for g := range tokens {
			if prefill {
				tokens[g] = 128 * (1 + shared.Int64N(16))
			} else {
				tokens[g] = 8 + shared.Int64N(56)
			}
		}
		exp.Tokens = append(exp.Tokens, append([]int64(nil), tokens...))
		tok := tokens[cfg.Node(rank)]
		marker := fmt.Sprintf("execute_context_0(0)_generation_%d(%d)", tok, tok)
		if prefill {
			marker = fmt.Sprintf("execute_context_1(%d)_generation_0(0)", tok)
		}
		argsOnOp := prefill && prefills%2 == 1
		if prefill {
			prefills++
		}
		start := cpu
		t := cpu + 10_000
		graphCorr := int64(0)
		if !prefill {
			corr++
			graphCorr = corr
			event("cuda_runtime", "cudaGraphLaunch", w.pid, tid, t, 8_000, launchArgs(graphCorr))
			for r := range free {
				free[r] = max(free[r], t+10_000)
			}
			t += 9_000
		}
		for _, k := range nodeStepKernels(cfg.layers()) {
			f := k.f
			if prefill && k.prefillF != nil {
				f = k.prefillF
			}
			splits := prefill && k.a2a && cfg.AllToAllArgs
			dispatch := k.f == &fEPDispatchLL
			if splits {
				f = &fA2ASendRecv
				if dispatch {
					cfg.routeTokens(shared, route, tokens)
				}
			}
			c := graphCorr
			launch := t
			coll := k.ar || k.a2a
			if prefill {
				corr++
				c = corr
				if k.ar && argsOnOp {
					// It ends before the next launch: the events of a thread nest.
					event("cpu_op", "record_param_comms", w.pid, tid, t-200, 2_400, collArgs(tok*hidden))
				}
				event("cuda_runtime", "cudaLaunchKernel", w.pid, tid, t, 2_000, launchArgs(c))
				t += 2_500
			}
			stream := int64(computeStream)
			if prefill && coll {
				stream = commStream
			}
			d0 := f.lo + shared.Int64N(f.hi-f.lo)
			if !coll {
				for r := range free {
					s := free[r]
					if prefill {
						s = max(s, launch+1_000)
					}
					d := slow(r, d0*(1+tokens[cfg.Node(r)]/1024))
					free[r] = s + trace.Time(d+gap)
					exp.KindNS[kind][r] += d
					if r == rank {
						event("kernel", f.name, dev, stream, s, d, kernelArgs(stream, c, nil))
						exp.Activities++
					}
				}
				continue
			}
			for r := range free {
				arr[r] = free[r]
				if prefill {
					arr[r] = max(arr[r], launch+1_000)
				}
			}
			// Each communicator: its members arrive when their compute is
			// done and all end at the last arrival plus the transfer.
			var members [][]int
			if k.ar {
				for node := range cfg.nodes() {
					_, m := cfg.TPGroup(node * per)
					members = append(members, m)
				}
			} else {
				_, m := cfg.EPGroup()
				members = [][]int{m}
			}
			for gi, m := range members {
				var o *CommExpect
				var bytes, busBytes, bw int64
				src := "bytes_per_token"
				if k.ar {
					o = commOf(kind, "allreduce", gi)
					bytes = tokens[gi] * hidden * 2
					busBytes = bytes * 2 * int64(per-1) / int64(per)
					bw = intra
					if prefill {
						src = "args"
						if argsOnOp {
							src = "cpu_op"
						}
						if !containsStr(o.Rules, src) {
							o.Rules = append(o.Rules, src)
							if len(o.Rules) == 2 && o.Rules[0] == "cpu_op" {
								o.Rules[0], o.Rules[1] = "args", "cpu_op"
							}
						}
					}
				} else {
					o = commOf(kind, "all_to_all", 0)
					bytes = tokens[0] * hidden * 2
					bw = o.BusGBps
					var most, sum int64
					if splits {
						// Each rank's count is the larger of its two
						// directions, and so is the size its args give
						// (the larger message): the instance's is the
						// majority's, the lowest rank's on a tie.
						var sizes []int64
						for j, r := range m {
							in, out := splitSums(route, r, dispatch)
							c := max(in, out)
							sizes = append(sizes, c)
							most, sum = max(most, c), sum+c
							o.SplitCount[j] += c
						}
						bytes = majorityOf(sizes) * hidden * 2
						src = "args"
						o.SplitInstances++
						o.SplitMaxSum += most
						o.SplitSum += sum
					} else {
						for _, r := range m {
							tk := tokens[cfg.Node(r)]
							most, sum = max(most, tk), sum+tk
						}
						o.TokenMaxSum += most
						o.TokenSum += sum
					}
					busBytes = bytes * int64(n-1) / int64(n)
				}
				transfer := busBytes / bw
				last := 0
				for j, r := range m {
					if arr[r] > arr[m[last]] {
						last = j
					}
				}
				end := arr[m[last]] + trace.Time(transfer)
				o.Instances++
				o.TransferNS += transfer
				o.BusBytes += busBytes
				o.LastArrivals[last]++
				se := o.Sizes[SizeKey{bytes, src}]
				if se == nil {
					se = &SizeExpect{}
					o.Sizes[SizeKey{bytes, src}] = se
				}
				se.Instances++
				se.TransferNS += transfer
				for j, r := range m {
					d := int64(end - arr[r])
					o.KernelNS[j] += d
					o.WaitNS[j] += d - transfer
					exp.KindNS[kind][r] += d
					free[r] = end + gap
					if r == rank {
						var extra func([]byte) []byte
						if k.ar && prefill && !argsOnOp {
							extra = collArgs(tok * hidden)
						}
						if splits {
							epName, _ := cfg.EPGroup()
							extra = a2aArgs(route, r, dispatch, hidden, epName, m)
						}
						event("kernel", f.name, dev, stream, arr[r], d, kernelArgs(stream, c, extra))
						exp.Activities++
					}
				}
			}
		}
		endCPU := t + 20_000
		event("user_annotation", marker, w.pid, tid, start, int64(endCPU-start), nil)
		cpu = max(endCPU+20_000, slices.Max(free)-100_000)
		if w.err != nil {
			return nil, w.err
		}
	}
	if err := w.close("gen-nodes"); err != nil {
		return nil, err
	}
	exp.Bytes = w.n
	for _, kind := range []string{"decode", "prefill"} {
		for _, k := range order {
			if comms[k].Kind == kind {
				exp.Comms = append(exp.Comms, *comms[k])
			}
		}
	}
	return exp, nil
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// WriteNodeRun writes every rank of cfg under dir in the layout of a run
// over hosts, dir/node{n}/rank{r}.json, and returns the run's expected
// figures.
func WriteNodeRun(dir string, cfg NodeConfig) (*NodeExpected, error) {
	var exp *NodeExpected
	for r := range cfg.Ranks() {
		p := filepath.Join(dir, cfg.Host(r), "rank"+strconv.Itoa(r)+".json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		e, err := WriteNodeRank(f, cfg, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		if exp == nil {
			exp = e
		}
	}
	return exp, nil
}

// routeTokens draws where each rank's tokens go in a dispatch: route[r][p]
// rows from rank r to peer p, summing to r's host's tokens; peers weigh 1
// to 4, the last rank 12 (a hot expert).
func (c NodeConfig) routeTokens(rng *rand.Rand, route [][]int64, tokens []int64) {
	n := len(route)
	w := make([]int64, n)
	var total int64
	for p := range w {
		w[p] = 1 + rng.Int64N(4)
		if p == n-1 {
			w[p] = 12
		}
		total += w[p]
	}
	for r := range route {
		tok := tokens[c.Node(r)]
		left := tok
		for p := range route[r] {
			route[r][p] = tok * w[p] / total
			left -= route[r][p]
		}
		route[r][(int64(r)+left)%int64(n)] += left // what rounding left, spread by rank
	}
}

// splitSums are the rows rank r sends and receives in an all-to-all over
// every rank: route's row r and column r in a dispatch, the other way
// round in the combine (which returns what the dispatch brought).
func splitSums(route [][]int64, r int, dispatch bool) (in, out int64) {
	for p := range route {
		in += route[r][p]
		out += route[p][r]
	}
	if !dispatch {
		in, out = out, in
	}
	return in, out
}

// a2aArgs are Kineto's collective args of rank r's all_to_all_single
// with uneven splits (PyTorch's "all_to_allv"), on its kernel.
func a2aArgs(route [][]int64, r int, dispatch bool, hidden int64, group string, ranks []int) func([]byte) []byte {
	in := make([]string, len(route))
	out := make([]string, len(route))
	for p := range route {
		a, b := route[r][p], route[p][r]
		if !dispatch {
			a, b = b, a
		}
		in[p], out[p] = strconv.FormatInt(a, 10), strconv.FormatInt(b, 10)
	}
	nin, nout := splitSums(route, r, dispatch)
	return func(b []byte) []byte {
		return fmt.Appendf(b, `, "Collective name": "all_to_allv", "In msg nelems": %d, "Out msg nelems": %d, "Group size": %d, "dtype": "BFloat16", "In split size": "[%s]", "Out split size": "[%s]", "Process Group Name": %q, "Process Group Ranks": %q`,
			nin*hidden, nout*hidden, len(ranks), strings.Join(in, ", "), strings.Join(out, ", "), group, pgRanks(ranks))
	}
}

// majorityOf is the value most of xs hold, the first's on a tie: the
// message size traceq takes when ranks' args disagree.
func majorityOf(xs []int64) int64 {
	best, bestN := int64(0), 0
	for i, x := range xs {
		n := 0
		for _, y := range xs {
			if y == x {
				n++
			}
		}
		if i == 0 || n > bestN {
			best, bestN = x, n
		}
	}
	return best
}
