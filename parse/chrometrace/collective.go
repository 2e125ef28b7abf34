package chrometrace

import (
	"math"
	"strings"

	"github.com/traceq/traceq/trace"
)

// Collective args: torch.profiler records what a c10d collective moved as
// args of its record_param_comms CPU op and, since PyTorch 2.1, copies
// them onto the NCCL kernel. They come last in the kernel's args, after
// the correlation id where the scanner would stop, so the scanner reads
// on only for kernels named like NCCL's (ncclKernel_…, ncclDevKernel_…;
// RCCL keeps the names) and for record_param_comms ops: other events pay
// nothing for them.

// commsOp is the CPU op that carries a collective's args.
const commsOp = "record_param_comms"

// collArgs holds the collective args of one event; fields.seen says which
// were read.
type collArgs struct {
	name, inElems, outElems, groupSize, dtype, group, ranks val
	inSplit, outSplit                                       val
}

// mayBeCollective reports whether a GPU activity's name is that of a
// collective kernel whose args the scanner must read to the end.
func mayBeCollective(name string) bool {
	return strings.HasPrefix(name, "nccl") || strings.HasPrefix(name, "rccl")
}

// collective fills d.out.coll from the args read; absent numbers are -1,
// absent strings "" (id 0).
func (d *decoder) collective(src trace.CollectiveSource, start trace.Time, dur, corr, thread int64) {
	f, c := &d.f, &d.coll
	count := func(bit uint64, v val) int64 {
		if f.seen&bit == 0 {
			return -1
		}
		if n, ok := num(&v); ok && n >= 0 {
			return n
		}
		return -1
	}
	str := func(bit uint64, v val) trace.NameID {
		if f.seen&bit == 0 || v.Type != vString {
			return 0
		}
		return d.intern(v.Str)
	}
	gs := count(seenGroupSize, c.groupSize)
	if gs > math.MaxInt32 {
		gs = -1
	}
	d.out.coll = trace.Collective{
		Start: start, Dur: dur, Corr: corr, Thread: thread,
		InElems: count(seenInElems, c.inElems), OutElems: count(seenOutElems, c.outElems),
		GroupSize: int32(gs), Op: str(seenCollName, c.name), DType: str(seenDType, c.dtype),
		Group: str(seenGroup, c.group), GroupRanks: str(seenRanks, c.ranks), Source: src,
		InSplit: splitSum(f.seen&seenInSplit != 0, c.inSplit), OutSplit: splitSum(f.seen&seenOutSplit != 0, c.outSplit),
	}
	d.out.hasColl = true
}

// hasCollective reports whether the event named its collective.
func (d *decoder) hasCollective() bool {
	return d.f.seen&seenCollName != 0 && d.coll.name.Type == vString && d.coll.name.Str != ""
}

// maxSplitPeers is the longest split-size list PyTorch writes in full
// (kTruncatLength in torch/csrc/profiler/util.cpp): a longer one is its
// first 30 entries and ", ...".
const maxSplitPeers = 30

// splitSum is the sum of a split-size arg ("In split size": "[3, 0, 5]",
// one count per peer) when it was seen and lists every peer; -1 when
// absent, empty (an even split, which PyTorch records as "[]"),
// truncated, negative or malformed: a partial sum would be a wrong count.
func splitSum(seen bool, v val) int64 {
	if !seen || v.Type != vString {
		return -1
	}
	s := strings.TrimSpace(v.Str)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return -1
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	if s == "" {
		return -1
	}
	var sum int64
	peers := 0
	for f := range strings.SplitSeq(s, ",") {
		n, ok := parseInt(strings.TrimSpace(f))
		if !ok || n < 0 || sum > math.MaxInt64-n {
			return -1 // "...": truncated; or not a count
		}
		sum += n
		peers++
	}
	if peers > maxSplitPeers {
		return -1
	}
	return sum
}
