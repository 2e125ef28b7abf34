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
	return t.LinkTimeAt(t.Link, run, c)
}

// LinkTimeAt is LinkTime at link l instead of the table's: what it reads
// of the ops (sizes, instances, group sizes, kernel time) does not depend
// on the link the table was matched with, so one match serves a caller
// that compares with a link of its own.
func (t *Table) LinkTimeAt(l *Link, run string, c step.Class) (linked, link int64) {
	if l == nil || !(l.GBps > 0) {
		return 0, 0
	}
	bps := uint64(math.Round(l.GBps * 1e9))
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
