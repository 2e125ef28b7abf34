package collectives

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// Options configures Match.
type Options struct {
	// Filter keeps only collectives of windows of one class (--kind).
	Filter step.Filter
	// BytesPerToken, when > 0, sizes the collectives that carry no
	// collective args: BytesPerToken times the token count of their step's
	// marker (step.Step.Tokens).
	BytesPerToken int64
	// Link, when set, is what bus bandwidth is compared with, for every
	// communicator (the same as Links.All).
	Link *Link
	// Links, when given, are the links per scope: a communicator on one
	// host is compared with Links.Intra, one that spans hosts with
	// Links.Inter (--link intra=…,inter=…).
	Links Links
	// NoSizes skips message sizes and bandwidths: for the stragglers
	// alone (breakdown's cross-rank table), which need only durations.
	NoSizes bool
	// OnInstance, when set, receives every matched instance (a merged
	// timeline draws the waits).
	OnInstance func(*Instance)
}

// Instance is one matched instance of a collective, as OnInstance sees it.
type Instance struct {
	Run   string
	Class step.Class
	Op    string
	// Ranks are its ranks in rank order; Kernels the index of each one's
	// kernel among its input's collective kernels
	// (window.Input.Collectives.Kernels).
	Ranks   []Member
	Kernels []int32
	// TransferNS is the shortest kernel's duration; Last the position in
	// Ranks of the rank that arrived last (its kernel the shortest).
	TransferNS int64
	Last       int
}

// WithDefault is the rule of the link collectives are compared with
// (docs/definitions.md#the-link), written once for every command: the
// link given (--link, TRACEQ_LINK, a traceq.toml) when there is one;
// else def, the default link of the devices' row of the GPU table
// (gpuspec.GPU.Link; device names the row), marked as assumed; else
// none. With links given per scope and no intra-host one, the default
// is the intra-host link: a device's default link is its own (NVLink,
// PCIe), never the network between hosts. A def ParseLink does not read
// is no default.
func (o Options) WithDefault(def, device string) Options {
	if def == "" || o.Link != nil || (o.Links.Given() && o.Links.Intra != nil) || o.Links.All != nil {
		return o
	}
	l, err := ParseLink(def)
	if err != nil {
		return o
	}
	l.Device = device
	if o.Links.Given() {
		o.Links.Intra = &l
	} else {
		o.Link = &l
	}
	return o
}

// links returns the links of opt: Links, or Link for every communicator.
func (o Options) links() Links {
	if o.Links.Given() {
		return o.Links
	}
	return Links{All: o.Link}
}

// SizeSource says where a collective's message size was read.
type SizeSource uint8

const (
	sizeArgs          SizeSource = iota // Kineto's collective args on the kernel
	sizeCPUOp                           // the args of the record_param_comms op that launched it
	sizeOpShape                         // the tensor of the record_param_comms op that launched it (no args)
	sizeBytesPerToken                   // Options.BytesPerToken × the step's tokens
	sizeUnknown                         // none of these
)

var sizeSourceNames = [...]string{sizeArgs: "args", sizeCPUOp: "cpu_op", sizeOpShape: "cpu_op_shape",
	sizeBytesPerToken: "bytes_per_token", sizeUnknown: "unknown"}

func (s SizeSource) String() string {
	if int(s) < len(sizeSourceNames) {
		return sizeSourceNames[s]
	}
	return "unknown"
}

// Member is one rank of a run, in the run's rank order.
type Member struct {
	*window.Rank
	// Index is the rank's position in the run's rank order: by distributed
	// rank where known, then input and process order. Ties between ranks
	// go to the lower Index.
	Index int
}

// RankStat is one rank's share of a collective op.
type RankStat struct {
	Member
	// KernelNS sums the rank's kernels of matched instances; KernelNS =
	// WaitNS + TransferNS.
	KernelNS   int64
	WaitNS     int64
	TransferNS int64
	// LastArrivals counts the instances where this rank arrived last: its
	// kernel was the shortest (ties to the lowest Index).
	LastArrivals int64
	// LeadNS sums, over the instances where this rank arrived last, the
	// time between its arrival and the next-to-last rank's: the second-
	// shortest kernel minus the shortest. It is what those instances would
	// have been shorter had the rank kept up with the others
	// (docs/definitions.md#straggler).
	LeadNS int64
	// SplitCount sums, over the op's instances with split sizes
	// (Op.SplitInstances), the larger of what the rank sent and received.
	SplitCount int64
}

// Straggler is the rank that arrived last most often.
type Straggler struct {
	Member
	LastArrivals int64
	Instances    int64 // the instances it could have been last in
	// Distinct says that it stands out: last strictly more often than
	// any other rank, and in at least 1.5/n of the instances (n ranks).
	// Otherwise no rank is slow in particular (ranks take turns, as with
	// random jitter).
	Distinct bool
}

// pickStraggler returns the rank of stats with the most last arrivals
// (the first on a tie: stats are in rank order) out of instances.
func pickStraggler(ranks []RankStat, instances int64) *Straggler {
	if len(ranks) < 2 || instances <= 0 {
		return nil
	}
	best, second := 0, -1
	for i := 1; i < len(ranks); i++ {
		switch {
		case ranks[i].LastArrivals > ranks[best].LastArrivals:
			best, second = i, best
		case second < 0 || ranks[i].LastArrivals > ranks[second].LastArrivals:
			second = i
		}
	}
	b := ranks[best].LastArrivals
	return &Straggler{Member: ranks[best].Member, LastArrivals: b, Instances: instances,
		Distinct: b > ranks[second].LastArrivals && 2*b*int64(len(ranks)) >= 3*instances}
}

// Share is LastArrivals / Instances.
func (s *Straggler) Share() float64 { return stats.Ratio(s.LastArrivals, s.Instances) }

// Bandwidth is what bytes over transfer time give: algorithm bandwidth,
// bus bandwidth (nccl-tests' conventions) and its share of the link. A
// nil field is unknown: no message size, no transfer time, an op or group
// size without a bus factor, or no link.
type Bandwidth struct {
	AlgGBps   *float64
	BusGBps   *float64
	LinkShare *float64
}

// Size is the instances of one op with one message size.
type Size struct {
	Bytes      int64 // message size per nccl-tests' convention; -1 unknown
	Source     SizeSource
	Instances  int64
	TransferNS int64
	Bandwidth
}

// Op is one collective op of one class and communicator in one run,
// matched across its ranks.
type Op struct {
	Run   string
	Class step.Class
	// Op is the collective: the sub-category of its kernels
	// (communication/allreduce → "allreduce"), or the args' name for
	// kernels the rules leave at communication/other.
	Op string
	// Group and GroupRanks name the process group from the collective
	// args ("Process Group Name", "Process Group Ranks"); "" when the
	// kernels carry none.
	Group, GroupRanks string
	// GroupSize is n in the bus bandwidth factors: the args' group size
	// (the majority of the ranks' kernels), unless the match contradicts
	// it (fewer than the ranks matched, or more than the world size), else
	// the number of ranks matched, else (one rank) the trace's world size;
	// 0 when unknown.
	GroupSize int
	// ArgsGroupSize is the group size the args say (the majority of the
	// ranks' kernels); 0 when they say none. When it differs from
	// GroupSize, the match contradicted it.
	ArgsGroupSize int
	// Ranks are the ranks that ran the op, in rank order.
	Ranks []RankStat
	// Instances counts the instances found on every rank of Ranks.
	Instances int64
	// UnmatchedInstances counts those missing on some rank;
	// UnmatchedNS sums their kernels on the ranks that ran them.
	UnmatchedInstances int64
	UnmatchedNS        int64
	// KernelNS and WaitNS sum the matched kernels over ranks; TransferNS
	// sums each matched instance's transfer time once.
	KernelNS   int64
	TransferNS int64
	WaitNS     int64
	// ClassNS is all GPU activity time of the class on Ranks; Share is
	// (KernelNS + UnmatchedNS) / ClassNS.
	ClassNS int64
	Share   float64
	// Steps is the number of steps of the class on the op's ranks (the
	// most of any rank; 1 for a whole trace): what a per-step figure
	// divides the op's sums by.
	Steps int
	// Straggler is the rank that arrived last most often; nil for one
	// rank or no matched instance.
	Straggler *Straggler
	// UpperBound is set for a one-rank op: waiting cannot be told from
	// transfer, so TransferNS bounds the transfer time from above (and
	// bandwidths from below).
	UpperBound bool
	// Sizes are the per-size rows: known sizes ascending, unknown last.
	Sizes []Size
	// SizeConflicts counts the instances whose ranks' args disagree on
	// the message size (a dtype or an element count): the majority's size
	// was used, the lowest rank's on a tie. An all-to-all instance counted
	// by its split sizes is none: its ranks send uneven amounts by design.
	SizeConflicts int64
	// UnusableArgs counts the instances of unknown size whose kernels
	// have collective args that give no size: no element count, a dtype
	// of unknown size, or more than a TiB.
	UnusableArgs int64
	// SizedInstances and SizedTransferNS are the instances of known size;
	// Bandwidth aggregates them: summed (bus) bytes over summed transfer.
	SizedInstances  int64
	SizedTransferNS int64
	Bandwidth
	// Phase is the part of an expert-parallel all-to-all its kernels run
	// ("dispatch", "combine", from their names); "" otherwise.
	Phase string
	// Rules say what formed the communicator (docs/definitions.md#communicators),
	// in order, one or more when kernels of one op were matched by several
	// (prefill kernels by their args, graph-replayed decode ones by
	// pg_config, say).
	Rules []CommRule
	// Host is the host whose ranks form the communicator under RuleHost;
	// "" otherwise.
	Host string
	// Scope says whether the op's ranks are on one host (ScopeIntra),
	// several (ScopeInter) or hosts are unknown (ScopeAny); Link is the
	// link that bounds it (Options.Links.For(Scope)); nil when none.
	Scope Scope
	Link  *Link
	// TokenInstances counts the instances whose every rank's step gives a
	// token count (its marker); TokenMaxSum sums their largest rank's
	// count, TokenSum every rank's: TokenImbalance is their ratio to the
	// mean.
	TokenInstances        int64
	TokenMaxSum, TokenSum int64
	// SplitInstances counts the all-to-all instances whose every rank's
	// kernel carries its split sizes in full ("In split size", "Out split
	// size"); they are counted from those, not from the markers. Each
	// rank's count is the larger of the rows (elements, for the list form)
	// it sends and receives (RankStat.SplitCount); SplitMaxSum sums each
	// instance's largest, SplitSum every rank's.
	SplitInstances        int64
	SplitMaxSum, SplitSum int64
}

// SplitImbalance is the count of the rank with the most in each instance
// over the mean of its ranks, over the instances with split sizes
// (docs/definitions.md#expert-parallelism): 1 when every rank sends and
// receives as many; 0 when unknown.
func (o *Op) SplitImbalance() float64 {
	if o.SplitSum <= 0 {
		return 0
	}
	return float64(len(o.Ranks)) * float64(o.SplitMaxSum) / float64(o.SplitSum)
}

// TokenImbalance is the tokens of the rank with the most in each
// instance over the mean of its ranks, over the instances with token
// counts (docs/definitions.md#expert-parallelism): 1 when every rank has as
// many; 0 when unknown.
func (o *Op) TokenImbalance() float64 {
	if o.TokenSum <= 0 {
		return 0
	}
	return float64(len(o.Ranks)) * float64(o.TokenMaxSum) / float64(o.TokenSum)
}

// Run lists the ranks of one run.
type Run struct {
	Name  string
	Ranks []Member
}

// Table is the result of Match.
type Table struct {
	// Source is the table the collectives were matched in: its inputs.
	Source *window.Table
	// Filter is the class kept (Options.Filter).
	Filter step.Filter
	Runs   []Run
	Link   *Link
	// Links are the links per scope when --link gave them so (Link is
	// then nil).
	Links         Links
	BytesPerToken int64
	// Ops in report order: run, class, then most kernel time first.
	Ops []Op
}

// BusFactor is nccl-tests' bus bandwidth factor of op over n ranks
// (busbw = algbw × factor), and whether op has one: the bytes a message
// of b bytes puts on the bus are b × factor.
func BusFactor(op string, n int) (float64, bool) { return busFactor(op, n) }

// busFactor is nccl-tests' bus bandwidth factor of op over n ranks
// (busbw = algbw × factor), and whether op has one: allreduce 2(n−1)/n;
// allgather, reduce_scatter and all_to_all (n−1)/n; broadcast, reduce and
// send_recv 1. A group of one rank moves nothing over the bus: no factor.
func busFactor(op string, n int) (float64, bool) {
	switch op {
	case "broadcast", "reduce", "send_recv":
		return 1, true
	}
	if n < 2 {
		return 0, false
	}
	f := float64(n-1) / float64(n)
	switch op {
	case "allreduce":
		return 2 * f, true
	case "allgather", "reduce_scatter", "all_to_all":
		return f, true
	}
	return 0, false
}

// dtypeSizes are the element sizes of the dtypes torch.profiler names in
// collective args (c10::ScalarType names).
var dtypeSizes = map[string]int64{
	"float": 4, "double": 8, "half": 2, "bfloat16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1,
	"float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1, "byte": 1, "char": 1, "bool": 1, "short": 2,
	"int": 4, "long": 8, "complexfloat": 8, "complexdouble": 16, "complexhalf": 4,
	"uint16": 2, "uint32": 4, "uint64": 8, "qint8": 1, "quint8": 1, "qint32": 4,
}

// argsBytes is the message size of a collective per nccl-tests'
// convention: the larger of its input and output buffers (allgather's
// output, reduce_scatter's input, the one buffer of the others), -1 when
// the args do not give it.
func argsBytes(inElems, outElems int64, dtype string) int64 {
	size, ok := dtypeSizes[strings.ToLower(dtype)]
	n := max(inElems, outElems)
	if !ok || n <= 0 || n > math.MaxInt64/size {
		return -1
	}
	return n * size
}

// Match matches the collective kernels (category communication/*) of
// each run's ranks and splits their time into waiting for the last rank
// and transfer (docs/definitions.md, "Collectives").
//
// Matching: a communicator issues its collectives in the same order on
// every rank, so the k-th kernel of (step, op, stream) on one rank is the
// k-th on every other. The step is the step's position among its rank's
// steps (the whole trace without steps); communicators are told apart by
// the process group of the collective args where the kernels have them.
// Streams are matched by id when every rank uses the same ids for its
// collectives, else by order of first use.
//
// Memory: a few int32 per collective kernel, and per-rank offsets into
// them per (step, op, stream); no per-kernel maps.
func Match(tbl *window.Table, opt Options) *Table {
	ct := &Table{Source: tbl, Filter: opt.Filter, Link: opt.Link, BytesPerToken: opt.BytesPerToken, Ops: []Op{}}
	if opt.Links.Given() {
		ct.Link, ct.Links = opt.Links.All, opt.Links
	}
	var runs []string
	byRun := map[string][]window.RankID{}
	for _, r := range tbl.Ranks {
		if r.Activities == 0 {
			continue
		}
		if _, ok := byRun[r.Run]; !ok {
			runs = append(runs, r.Run)
		}
		byRun[r.Run] = append(byRun[r.Run], r.ID)
	}
	// All GPU activity time of each rank per class: the denominator of
	// an op's share.
	classNS := map[classKey]int64{}
	steps := map[classKey]map[int32]bool{}
	for i := range tbl.Windows {
		w := &tbl.Windows[i]
		k := classKey{w.Rank, w.Class}
		classNS[k] += w.KernelNS
		if steps[k] == nil {
			steps[k] = map[int32]bool{}
		}
		steps[k][w.Step] = true
	}
	for _, run := range runs {
		a := &runAnalysis{tbl: tbl, opt: opt, run: run, classNS: classNS, steps: steps}
		a.collect(byRun[run])
		a.match()
		ct.Runs = append(ct.Runs, Run{Name: run, Ranks: a.members()})
		ct.Ops = append(ct.Ops, a.ops()...)
	}
	return ct
}

type classKey struct {
	rank  window.RankID
	class step.Class
}

// rankData is one rank's collective kernels.
type rankData struct {
	Member
	// kern are the rank's collective kernels, in time order until match
	// sorts them by lane.
	kern []collKernel
	// off[l] is where lane l starts in kern once sorted; off[nlanes] =
	// len(kern).
	off []int32
	// streams are the collective streams in order of first use.
	streams []int32
	// recs are the input's collective kernels (window.Collectives).
	recs *window.Collectives
	// sizes are argsSize's answers by key (recs.Keys), when sized.
	sizes []rankSize
	sized []bool
}

// collKernel is one collective kernel: 8 bytes, the analysis's memory
// per kernel. Its size is looked up again when its instance is matched.
type collKernel struct {
	idx  int32 // index in the input's Collectives.Kernels
	lane int32 // index in runAnalysis.lanes
}

// laneKey is what the k-th kernels of all ranks share.
type laneKey struct {
	comm   int32 // index in runAnalysis.comms
	step   int32 // the step's position among the rank's steps; -1 none
	class  step.Class
	op     int32 // index in runAnalysis.ops
	stream int32 // stream id, or slot in order of first use
	phase  phase
	rule   CommRule
}

// commKey names a communicator: the process group (from args or
// pg_config) or, under RuleHost, the host.
type commKey struct{ group, ranks, host string }

type sizeKey struct {
	bytes  int64
	source SizeSource
}

// rankSize is what one rank's kernel of an instance says about its size.
type rankSize struct {
	bytes     int64 // from the args; -1 none or unusable
	source    SizeSource
	groupSize int32 // from the args; -1 none
	args      bool  // the kernel has collective args
}

// interner numbers the distinct keys it is given, in order of first use.
type interner[K comparable] struct {
	keys []K
	ids  map[K]int32
}

func (n *interner[K]) id(k K) int32 {
	if id, ok := n.ids[k]; ok {
		return id
	}
	if n.ids == nil {
		n.ids = map[K]int32{}
	}
	id := int32(len(n.keys))
	n.keys = append(n.keys, k)
	n.ids[k] = id
	return id
}

// runAnalysis is Match for one run.
type runAnalysis struct {
	tbl     *window.Table
	opt     Options
	run     string
	classNS map[classKey]int64
	steps   map[classKey]map[int32]bool // each rank's steps of each class

	ranks []*rankData
	// hostOf is the host of each distributed rank of the run ("" when
	// unknown), for the communicators of kernels without args.
	hostOf    map[int]string
	multiHost bool
	// pgCache holds each rank's choice of process group per op; intra and
	// phases what each kernel name says (intraOnly, phaseOf).
	pgCache  map[pgChoiceKey]pgChoice
	intra    map[string]bool
	phases   map[string]phase
	opNames  interner[string]
	opOfCat  []int32 // per full window.CatID: its op; notComm, or -2 not yet
	comms    interner[commKey]
	sizeBuf  []rankSize // instance's scratch
	countBuf []int64    // splits' scratch
	lanes    interner[laneKey]
	lastLane int32 // the last lane found; -1 none

	// results, per op entry
	entries  []*opAcc
	entryIDs map[entryKey]int
	laneOp   []int32 // lane → entry
}

type entryKey struct {
	class step.Class
	op    int32
	comm  int32
	phase phase
}

// opAcc accumulates one Op.
type opAcc struct {
	key      entryKey
	ranks    []int // indices in runAnalysis.ranks, rank order
	stats    []RankStat
	op       Op
	gsVotes  []vote // the args' group sizes, one vote per rank's kernel
	sizeRows map[sizeKey]*Size
	// The row of the last instance and its size.
	lastSize sizeKey
	lastRow  *Size
	bytes    float64 // summed bytes of instances of known size
	rules    uint8   // the CommRules of its lanes, a bit each
}

func (a *runAnalysis) laneID(k laneKey) int32 {
	// Consecutive kernels of a rank mostly share their lane.
	if a.lastLane >= 0 && a.lanes.keys[a.lastLane] == k {
		return a.lastLane
	}
	a.lastLane = a.lanes.id(k)
	return a.lastLane
}

// notComm marks, in the per-category op table, a category that is no
// collective's.
const notComm = -1

// opOf returns the op of full category cid (an index in opNames), or
// notComm: its sub when it is communication (a generic collective
// kernel's follows its args: window.Table.ActivityCategory).
func (a *runAnalysis) opOf(cid window.CatID) int32 {
	for int(cid) >= len(a.opOfCat) {
		a.opOfCat = append(a.opOfCat, -2)
	}
	op := a.opOfCat[cid]
	if op == -2 {
		op = notComm
		if c := a.tbl.Category(cid); c.Top == classify.Communication {
			op = a.opNames.id(c.Sub)
		}
		a.opOfCat[cid] = op
	}
	return op
}

// collect finds every rank's collective kernels and their lanes, from
// the records the table keeps of each input (window.Collectives).
func (a *runAnalysis) collect(rankIDs []window.RankID) {
	a.lastLane = -1
	var all []*rankData
	for i := 0; i < len(rankIDs); {
		ii := a.tbl.Ranks[rankIDs[i]].Input
		j := i
		for j < len(rankIDs) && a.tbl.Ranks[rankIDs[j]].Input == ii {
			j++
		}
		in := &a.tbl.Inputs[ii]
		recs := &in.Collectives
		byProc := map[int32]*rankData{}
		for _, id := range rankIDs[i:j] {
			r := &rankData{Member: Member{Rank: &a.tbl.Ranks[id]}, recs: recs}
			byProc[r.Proc] = r
			a.ranks = append(a.ranks, r)
			all = append(all, r)
		}
		i = j
		// isColl says whether kernel k is of a kept class. Pass 1 counts
		// each rank's collective kernels, pass 2 stores them in slices
		// of that exact size.
		// What each key says, found at its first kernel of a kept
		// class (in kernel order, as per kernel: ops and streams are
		// numbered in order of first use): 1 a collective's, 2 not, 0
		// not known yet.
		keyColl := make([]uint8, len(recs.Keys))
		isColl := func(k *window.CollectiveKernel) bool {
			if !a.opt.Filter.Keeps(in.Steps.Class(k.Step)) {
				return false
			}
			c := keyColl[k.Key]
			if c == 0 {
				key := &recs.Keys[k.Key]
				c = 2
				if a.opOf(key.Cat) != notComm {
					c = 1
					if r := byProc[key.Proc]; !slices.Contains(r.streams, key.Stream) {
						r.streams = append(r.streams, key.Stream)
					}
				}
				keyColl[k.Key] = c
			}
			return c == 1
		}
		count := make([]int, len(recs.Keys))
		for x := range recs.Kernels {
			if k := &recs.Kernels[x]; isColl(k) {
				count[k.Key]++
			}
		}
		n := map[int32]int{}
		for ki, c := range count {
			n[recs.Keys[ki].Proc] += c
		}
		keyRank := make([]*rankData, len(recs.Keys))
		for ki := range recs.Keys {
			keyRank[ki] = byProc[recs.Keys[ki].Proc]
		}
		for p, r := range byProc {
			r.kern = make([]collKernel, 0, n[p])
		}
		for x := range recs.Kernels {
			if k := &recs.Kernels[x]; isColl(k) {
				r := keyRank[k.Key]
				r.kern = append(r.kern, collKernel{idx: int32(x)})
			}
		}
	}
	slices.SortStableFunc(a.ranks, compareRanks)
	for i, r := range a.ranks {
		r.Index = i
	}
	// Streams by id when every rank's set of collective streams is the
	// same, else by order of first use.
	byID := true
	var ref []int32
	for _, r := range a.ranks {
		if len(r.kern) == 0 {
			continue
		}
		s := slices.Sorted(slices.Values(r.streams))
		if ref == nil {
			ref = s
		} else if !slices.Equal(ref, s) {
			byID = false
		}
	}
	a.commsOf()
	for _, r := range all {
		a.lanesOf(r, byID)
	}
}

// compareRanks is the run's rank order: by distributed rank where known,
// then input and process order.
func compareRanks(x, y *rankData) int {
	switch {
	case x.Number != nil && y.Number != nil:
		if c := cmp.Compare(*x.Number, *y.Number); c != 0 {
			return c
		}
	case x.Number != nil:
		return -1
	case y.Number != nil:
		return 1
	}
	return cmp.Compare(x.ID, y.ID)
}

// lanesOf gives each collective kernel of rank r its lane.
func (a *runAnalysis) lanesOf(r *rankData, streamsByID bool) {
	in := &a.tbl.Inputs[r.Input]
	// The position of each step among the steps of its process.
	var stepOrd []int32
	if in.Steps != nil {
		stepOrd = make([]int32, len(in.Steps.List))
		n := map[int32]int32{}
		for i, s := range in.Steps.List {
			stepOrd[i] = n[s.Proc]
			n[s.Proc]++
		}
	}
	// What a kernel's lane takes from its key (op, stream, phase,
	// communicator and rule), found at its key's first kernel: the
	// communicators are numbered in the same order, and 300k kernels of
	// a few keys are not looked up one by one.
	byKey := make([]laneKey, len(r.recs.Keys))
	known := make([]bool, len(r.recs.Keys))
	for j := range r.kern {
		kr := &r.recs.Kernels[r.kern[j].idx]
		if !known[kr.Key] {
			byKey[kr.Key], known[kr.Key] = a.keyLane(r, &r.recs.Keys[kr.Key], streamsByID), true
		}
		k := byKey[kr.Key]
		k.step, k.class = -1, step.WholeTrace
		if in.Steps != nil {
			k.class = in.Steps.Class(kr.Step)
			if kr.Step >= 0 {
				k.step = stepOrd[kr.Step]
			}
		}
		r.kern[j].lane = a.laneID(k)
	}
}

// keyLane is what the lane of rank r's kernels of key takes from it: its
// op, stream, phase, communicator and rule.
func (a *runAnalysis) keyLane(r *rankData, key *window.CollectiveKey, streamsByID bool) laneKey {
	var k laneKey
	k.op = a.opOf(key.Cat)
	k.stream = key.Stream
	if !streamsByID {
		k.stream = int32(slices.Index(r.streams, key.Stream))
	}
	if a.opNames.keys[k.op] == "all_to_all" {
		name := a.tbl.Name(key.Name)
		ph, ok := a.phases[name]
		if !ok {
			ph = phaseOf(name)
			a.phases[name] = ph
		}
		k.phase = ph
	}
	var comm commKey
	if key.Args >= 0 && (r.recs.Args[key.Args].Group != "" || r.recs.Args[key.Args].GroupRanks != "") {
		c := &r.recs.Args[key.Args]
		comm, k.rule = commKey{group: c.Group, ranks: c.GroupRanks}, RuleArgs
		if c.Source == trace.CollectiveOnCPUOp {
			k.rule = RuleCPUOp
		}
	} else {
		comm, k.rule = a.commWithout(r, a.opNames.keys[k.op], a.tbl.Name(key.Name))
	}
	k.comm = a.comms.id(comm)
	return k
}

// maxMessage bounds a message size read from args: no GPU holds a
// buffer of a TiB, so a larger element count is a corrupt one.
const maxMessage = 1 << 40

// argsSize is what the collective args of rank r's kernel x (an index in
// its Collectives.Kernels) of op say: the args on it or its launching op,
// else (older PyTorch) the tensor of the record_param_comms op that
// launched it.
func (a *runAnalysis) argsSize(r *rankData, x int32, op string) rankSize {
	ki := r.recs.Kernels[x].Key
	if r.sizes == nil {
		r.sizes = make([]rankSize, len(r.recs.Keys))
		r.sized = make([]bool, len(r.recs.Keys))
	}
	if !r.sized[ki] {
		r.sizes[ki], r.sized[ki] = a.keySize(r, &r.recs.Keys[ki], op), true
	}
	return r.sizes[ki]
}

// keySize is argsSize for rank r's kernels of key (of op).
func (a *runAnalysis) keySize(r *rankData, key *window.CollectiveKey, op string) rankSize {
	if key.Args < 0 {
		return opShapeSize(r.recs, key, op)
	}
	c := &r.recs.Args[key.Args]
	rs := rankSize{bytes: argsBytes(c.InElems, c.OutElems, c.DType), source: sizeArgs, groupSize: c.GroupSize, args: true}
	if c.Source == trace.CollectiveOnCPUOp {
		rs.source = sizeCPUOp
	}
	if rs.bytes > maxMessage {
		rs.bytes = -1
	}
	return rs
}

// tokenBytes is the size of rank r's kernel x from its step's tokens
// (Options.BytesPerToken); -1 without.
func (a *runAnalysis) tokenBytes(r *rankData, x int32) int64 {
	in := &a.tbl.Inputs[r.Input]
	if a.opt.BytesPerToken <= 0 || in.Steps == nil {
		return -1
	}
	if s := r.recs.Kernels[x].Step; s >= 0 {
		if tok := in.Steps.List[s].Tokens; tok > 0 && tok <= math.MaxInt64/a.opt.BytesPerToken {
			return tok * a.opt.BytesPerToken
		}
	}
	return -1
}

// vote counts one value.
type vote struct {
	value int64
	n     int64
}

// addVote counts value in votes.
func addVote(votes []vote, value int64) []vote {
	for i := range votes {
		if votes[i].value == value {
			votes[i].n++
			return votes
		}
	}
	return append(votes, vote{value, 1})
}

// majority returns the value with the most votes, the first counted on a
// tie; false without votes.
func majority(votes []vote) (int64, bool) {
	best := -1
	for i, v := range votes {
		if best < 0 || v.n > votes[best].n {
			best = i
		}
	}
	if best < 0 {
		return 0, false
	}
	return votes[best].value, true
}

// instanceSize is the size of one instance from its ranks' sizes (in
// rank order): the majority of the byte counts the args give (the lowest
// rank's on a tie; conflict when they differ), else of those the steps'
// tokens give; unusable when some rank has args but none gives a size.
func (a *runAnalysis) instanceSize(ranks []rankSize, tokens func(i int) int64) (sk sizeKey, conflict, unusable bool) {
	sk = sizeKey{bytes: -1, source: sizeUnknown}
	first, same, anyArgs := -1, true, false
	for i, r := range ranks {
		anyArgs = anyArgs || r.args
		if r.bytes <= 0 {
			continue
		}
		if first < 0 {
			first = i
		} else if r.bytes != ranks[first].bytes {
			same = false
		}
	}
	if first >= 0 {
		b := ranks[first].bytes
		if !same {
			var votes []vote
			for _, r := range ranks {
				if r.bytes > 0 {
					votes = addVote(votes, r.bytes)
				}
			}
			b, _ = majority(votes)
		}
		// The source: the kernel's own args before the launching op's.
		src := sizeUnknown
		for _, r := range ranks {
			if r.bytes == b {
				src = min(src, r.source)
			}
		}
		return sizeKey{b, src}, !same, false
	}
	var votes []vote
	for i := range ranks {
		if b := tokens(i); b > 0 {
			votes = addVote(votes, b)
		}
	}
	if b, ok := majority(votes); ok {
		return sizeKey{b, sizeBytesPerToken}, false, false
	}
	return sk, false, anyArgs
}

// match sorts each rank's kernels by lane (a counting sort, stable, so
// each lane keeps time order) and walks the lanes' k-th kernels.
func (a *runAnalysis) match() {
	nl := len(a.lanes.keys)
	// spare is the slice a rank's kernels were in before the last rank's
	// counting sort, reused for the next one's.
	var spare []collKernel
	for _, r := range a.ranks {
		// By lane, each lane in time order (activity order, which
		// collect gathered them in): a counting sort.
		r.off = make([]int32, nl+1)
		for _, k := range r.kern {
			r.off[k.lane+1]++
		}
		for l := 0; l < nl; l++ {
			r.off[l+1] += r.off[l]
		}
		at := slices.Clone(r.off[:nl])
		if cap(spare) < len(r.kern) {
			spare = make([]collKernel, len(r.kern))
		}
		sorted := spare[:len(r.kern)]
		for _, k := range r.kern {
			sorted[at[k.lane]] = k
			at[k.lane]++
		}
		spare, r.kern = r.kern, sorted
	}
	// The ranks of each communicator: those with any of its kernels.
	commRanks := make([][]int, len(a.comms.keys))
	for ri, r := range a.ranks {
		seen := make([]bool, len(a.comms.keys))
		for l := 0; l < nl; l++ {
			if c := a.lanes.keys[l].comm; !seen[c] && r.off[l+1] > r.off[l] {
				seen[c] = true
				commRanks[c] = append(commRanks[c], ri)
			}
		}
	}
	a.entryIDs = map[entryKey]int{}
	a.laneOp = make([]int32, nl)
	for l, k := range a.lanes.keys {
		ek := entryKey{k.class, k.op, k.comm, k.phase}
		e, ok := a.entryIDs[ek]
		if !ok {
			e = len(a.entries)
			a.entryIDs[ek] = e
			ranks := commRanks[k.comm]
			acc := &opAcc{key: ek, ranks: ranks, stats: make([]RankStat, len(ranks)),
				sizeRows: map[sizeKey]*Size{}}
			for i, ri := range ranks {
				acc.stats[i].Member = a.ranks[ri].Member
			}
			a.entries = append(a.entries, acc)
		}
		a.entries[e].rules |= 1 << k.rule
		a.laneOp[l] = int32(e)
	}
	durs := make([]int64, len(a.ranks))
	for l := 0; l < nl; l++ {
		e := a.entries[a.laneOp[l]]
		var most int32
		for _, ri := range e.ranks {
			r := a.ranks[ri]
			most = max(most, r.off[l+1]-r.off[l])
		}
		for k := int32(0); k < most; k++ {
			matched := true
			for _, ri := range e.ranks {
				r := a.ranks[ri]
				if r.off[l]+k >= r.off[l+1] {
					matched = false
					break
				}
			}
			if !matched {
				e.op.UnmatchedInstances++
				for _, ri := range e.ranks {
					r := a.ranks[ri]
					if p := r.off[l] + k; p < r.off[l+1] {
						e.op.UnmatchedNS += a.dur(r, p)
					}
				}
				continue
			}
			a.instance(e, l, k, durs)
		}
	}
}

func (a *runAnalysis) dur(r *rankData, p int32) int64 {
	return r.recs.Kernels[r.kern[p].idx].Dur
}

// instance adds the k-th kernels of lane l, found on every rank of e.
func (a *runAnalysis) instance(e *opAcc, l int, k int32, durs []int64) {
	transfer, second := int64(math.MaxInt64), int64(math.MaxInt64)
	last := 0
	sizes := a.sizeBuf[:0]
	for i, ri := range e.ranks {
		r := a.ranks[ri]
		p := r.off[l] + k
		d := a.dur(r, p)
		durs[i] = d
		if d < transfer { // strict: a tie stays with the lower rank
			transfer, second, last = d, transfer, i
		} else if d < second {
			second = d
		}
		if !a.opt.NoSizes {
			rs := a.argsSize(r, r.kern[p].idx, a.opNames.keys[e.key.op])
			sizes = append(sizes, rs)
			if rs.groupSize > 0 {
				e.gsVotes = addVote(e.gsVotes, int64(rs.groupSize))
			}
		}
	}
	a.sizeBuf = sizes
	e.op.Instances++
	e.op.TransferNS += transfer
	for i := range e.ranks {
		st := &e.stats[i]
		st.KernelNS += durs[i]
		st.TransferNS += transfer
		st.WaitNS += durs[i] - transfer
		e.op.KernelNS += durs[i]
		e.op.WaitNS += durs[i] - transfer
	}
	e.stats[last].LastArrivals++
	split := a.tokens(e, l, k)
	if a.opt.OnInstance != nil {
		a.onInstance(e, l, k, transfer, last)
	}
	if len(e.ranks) > 1 {
		e.stats[last].LeadNS += second - transfer
	}
	sk := sizeKey{bytes: -1, source: sizeUnknown}
	if !a.opt.NoSizes {
		var conflict, unusable bool
		sk, conflict, unusable = a.instanceSize(sizes, func(i int) int64 {
			r := a.ranks[e.ranks[i]]
			return a.tokenBytes(r, r.kern[r.off[l]+k].idx)
		})
		// An all-to-all with uneven splits sends a different amount from
		// each rank by design: no conflict.
		if conflict && !split {
			e.op.SizeConflicts++
		}
		if unusable {
			e.op.UnusableArgs++
		}
	}
	if sk.bytes > 0 {
		e.bytes += float64(sk.bytes)
		e.op.SizedInstances++
		e.op.SizedTransferNS += transfer
	}
	row := e.lastRow
	if row == nil || e.lastSize != sk {
		// Instances of an op mostly repeat the last one's size.
		if row = e.sizeRows[sk]; row == nil {
			row = &Size{Bytes: sk.bytes, Source: sk.source}
			e.sizeRows[sk] = row
		}
		e.lastSize, e.lastRow = sk, row
	}
	row.Instances++
	row.TransferNS += transfer
}

func (a *runAnalysis) members() []Member {
	out := make([]Member, len(a.ranks))
	for i, r := range a.ranks {
		out[i] = r.Member
	}
	return out
}

// ops turns the accumulated entries into Ops.
func (a *runAnalysis) ops() []Op {
	var out []Op
	for _, e := range a.entries {
		op := e.op
		comm := a.comms.keys[e.key.comm]
		op.Run, op.Class, op.Op = a.run, e.key.class, a.opNames.keys[e.key.op]
		op.Group, op.GroupRanks, op.Host = comm.group, comm.ranks, comm.host
		op.Phase = phaseNames[e.key.phase]
		for rule := range CommRule(numRules) {
			if e.rules&(1<<rule) != 0 {
				op.Rules = append(op.Rules, rule)
			}
		}
		op.Scope = a.scope(e.ranks)
		op.Link = a.opt.links().For(op.Scope)
		op.Ranks = e.stats
		for _, ri := range e.ranks {
			k := classKey{a.ranks[ri].ID, e.key.class}
			op.ClassNS += a.classNS[k]
			op.Steps = max(op.Steps, len(a.steps[k]))
		}
		op.Share = stats.Ratio(op.KernelNS+op.UnmatchedNS, op.ClassNS)
		op.GroupSize, op.ArgsGroupSize = a.groupSize(e)
		op.UpperBound = len(e.ranks) == 1
		op.Straggler = pickStraggler(e.stats, op.Instances)
		// The link share is the time the instances would take at the
		// link over the time they took (for a bandwidth, busbw / link).
		for _, row := range e.sizeRows {
			op.Sizes = append(op.Sizes, *row)
		}
		slices.SortFunc(op.Sizes, func(x, y Size) int {
			if (x.Bytes < 0) != (y.Bytes < 0) {
				return cmp.Compare(y.Bytes, x.Bytes) // unknown last
			}
			return cmp.Or(cmp.Compare(x.Bytes, y.Bytes), cmp.Compare(x.Source, y.Source))
		})
		// Summed in the sizes' order, not the map's: the same input gives
		// the same float, bit for bit.
		var linkNS float64
		linkAll := op.Link != nil
		for i := range op.Sizes {
			row := &op.Sizes[i]
			if row.Bytes < 0 {
				continue
			}
			row.Bandwidth = a.bandwidth(op.Op, op.GroupSize, float64(row.Bytes)*float64(row.Instances), row.TransferNS)
			if t, ok := a.linkTime(op.Link, op.Op, op.GroupSize, row.Bytes); ok && row.TransferNS > 0 {
				share := t * float64(row.Instances) / float64(row.TransferNS)
				row.LinkShare = &share
				linkNS += t * float64(row.Instances)
			} else {
				linkAll = false
			}
		}
		if op.SizedInstances > 0 {
			op.Bandwidth = a.bandwidth(op.Op, op.GroupSize, e.bytes, op.SizedTransferNS)
			if linkAll && op.SizedTransferNS > 0 {
				share := linkNS / float64(op.SizedTransferNS)
				op.LinkShare = &share
			}
		}
		if op.Instances+op.UnmatchedInstances > 0 {
			out = append(out, op)
		}
	}
	slices.SortStableFunc(out, func(x, y Op) int {
		return cmp.Or(x.Class.Compare(y.Class), cmp.Compare(y.KernelNS+y.UnmatchedNS, x.KernelNS+x.UnmatchedNS),
			cmp.Compare(x.Op, y.Op), cmp.Compare(x.Group, y.Group), cmp.Compare(x.GroupRanks, y.GroupRanks),
			cmp.Compare(x.Host, y.Host), cmp.Compare(x.Phase, y.Phase))
	})
	return out
}

// groupSize is n of the bus factors of e, and the group size its args
// say (the majority over its ranks' kernels; 0 none). n is the args' size unless the match contradicts it (fewer than the ranks
// matched, or more than the world size), else the number of ranks
// matched, else (one rank) the world size; 0 when unknown. A group larger
// than the ranks matched is one whose other ranks' files were not given.
func (a *runAnalysis) groupSize(e *opAcc) (n, args int) {
	world := 0
	for _, ri := range e.ranks {
		world = max(world, a.ranks[ri].WorldSize)
	}
	matched := len(e.ranks)
	if v, ok := majority(e.gsVotes); ok {
		args = int(v)
	}
	switch {
	case args > 0 && args >= matched && (world <= 0 || args <= world):
		return args, 0
	case matched > 1:
		n = matched
	case world > 1:
		n = world
	}
	return n, args
}

// bandwidth is bytes over transfer ns (1 byte/ns = 1 GB/s), its bus
// bandwidth and its share of link (nil: none).
func (a *runAnalysis) bandwidth(op string, n int, bytes float64, transferNS int64) Bandwidth {
	var bw Bandwidth
	if transferNS <= 0 {
		return bw
	}
	alg := bytes / float64(transferNS)
	bw.AlgGBps = &alg
	f, ok := busFactor(op, n)
	if !ok {
		return bw
	}
	bus := alg * f
	bw.BusGBps = &bus
	return bw
}

// linkTime is the time one instance of op over n ranks moving bytes would
// take at the link (Link.TimeAt); ok is false without a link or when it
// cannot tell.
func (a *runAnalysis) linkTime(link *Link, op string, n int, bytes int64) (float64, bool) {
	if link == nil {
		return 0, false
	}
	return link.TimeAt(op, n, bytes)
}

// Straggler returns the rank that arrived last most often in the
// collectives op of class c in run, over all its communicators; nil when
// no op of the run has several ranks. A nil table has none.
func (t *Table) Straggler(run string, c step.Class, op string) *Straggler {
	if t == nil {
		return nil
	}
	at := map[window.RankID]int{}
	var merged []RankStat
	var total int64
	for i := range t.Ops {
		o := &t.Ops[i]
		if o.Run != run || o.Class != c || o.Op != op || o.Straggler == nil {
			continue
		}
		total += o.Instances
		for _, st := range o.Ranks {
			j, ok := at[st.ID]
			if !ok {
				j = len(merged)
				at[st.ID] = j
				merged = append(merged, RankStat{Member: st.Member})
			}
			merged[j].LastArrivals += st.LastArrivals
		}
	}
	slices.SortFunc(merged, func(x, y RankStat) int { return cmp.Compare(x.Index, y.Index) })
	return pickStraggler(merged, total)
}

// ClassSum sums the collectives of one run and class, all ops and
// communicators together, per rank.
type ClassSum struct {
	Run   string
	Class step.Class
	// Ranks in rank order; each sums its ops' matched kernels.
	Ranks     []RankStat
	Instances int64
	// Straggler has the most last arrivals over all the class's instances
	// (the lowest Index on a tie); nil when every op has one rank.
	Straggler *Straggler
	// UpperBound: every op has one rank (see Op.UpperBound).
	UpperBound bool
	// Steps is the most steps of the class any op has (Op.Steps).
	Steps int
}

// PerClass sums t's ops per run and class, in t's order.
func (t *Table) PerClass() []ClassSum {
	var out []ClassSum
	for i := 0; i < len(t.Ops); {
		j := i + 1
		for j < len(t.Ops) && t.Ops[j].Run == t.Ops[i].Run && t.Ops[j].Class == t.Ops[i].Class {
			j++
		}
		k := ClassSum{Run: t.Ops[i].Run, Class: t.Ops[i].Class, UpperBound: true}
		byIndex := map[int]*RankStat{}
		var multi int64
		for _, o := range t.Ops[i:j] {
			k.Instances += o.Instances
			k.Steps = max(k.Steps, o.Steps)
			if !o.UpperBound {
				k.UpperBound = false
				multi += o.Instances
			}
			for _, st := range o.Ranks {
				s := byIndex[st.Index]
				if s == nil {
					s = &RankStat{Member: st.Member}
					byIndex[st.Index] = s
				}
				s.KernelNS += st.KernelNS
				s.WaitNS += st.WaitNS
				s.TransferNS += st.TransferNS
				if !o.UpperBound {
					s.LastArrivals += st.LastArrivals
					s.LeadNS += st.LeadNS
				}
			}
		}
		for _, s := range byIndex {
			k.Ranks = append(k.Ranks, *s)
		}
		slices.SortFunc(k.Ranks, func(x, y RankStat) int { return cmp.Compare(x.Index, y.Index) })
		if !k.UpperBound {
			k.Straggler = pickStraggler(k.Ranks, multi)
		}
		out = append(out, k)
		i = j
	}
	return out
}
