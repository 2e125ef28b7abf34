package collectives

import (
	"math"
	"math/bits"

	"github.com/traceq/traceq/step"
)

// LinkTime is, for one run and class, the collectives' share of the step's
// speed of light (docs/definitions.md#speed-of-light): linked is the
// kernel time of the ops whose every matched instance has a known message
// size, a group of two ranks or more and a bus factor; link is that time
// at the table's link: per rank's kernel, the size times the bus factor
// at the link's bandwidth per direction, rounded up to the nanosecond.
// Both are 0 without a link.
func (t *Table) LinkTime(run string, c step.Class) (linked, link int64) {
	if t.Link == nil || !(t.Link.GBps > 0) {
		return 0, 0
	}
	bps := uint64(math.Round(t.Link.GBps * 1e9))
	for i := range t.Ops {
		op := &t.Ops[i]
		if op.Run != run || op.Class != c || op.Instances == 0 || op.SizedInstances != op.Instances || op.GroupSize < 2 {
			continue
		}
		f, ok := busFactor(op.Op, op.GroupSize)
		if !ok {
			continue
		}
		var ns int64
		for _, s := range op.Sizes {
			if s.Bytes < 0 {
				continue
			}
			ns += ceilNS(uint64(math.Round(float64(s.Bytes)*f)), bps) * s.Instances * int64(len(op.Ranks))
		}
		linked += op.KernelNS
		link += ns
	}
	return linked, link
}

// ceilNS is ⌈bytes · 10⁹ / bps⌉ in 128 bits.
func ceilNS(bytes, bps uint64) int64 {
	if bytes == 0 || bps == 0 {
		return 0
	}
	hi, lo := bits.Mul64(bytes, 1e9)
	if hi >= bps {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, bps)
	if r != 0 {
		q++
	}
	return int64(min(q, math.MaxInt64))
}
