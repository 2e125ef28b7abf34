package collectives

import (
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/traceq/traceq/interconnect"
	"github.com/traceq/traceq/step"
)

// LinkTime is, for one run and class, the collectives' share of the step's
// speed of light (docs/definitions.md#speed-of-light): linked is the
// kernel time of the ops whose every matched instance has a known message
// size, a group of two ranks or more, a bus factor and a link (Op.Link:
// the link of the op's scope, docs/definitions.md#the-link); link is that
// time at the op's link: per rank's kernel, the size times the bus factor
// at the link's bandwidth per direction, rounded up to the nanosecond.
// at names the link they were timed at: the one link, or for ops at
// links of two scopes (--link intra=…,inter=…) both, joined ("nvlink4 and
// ib-ndr400", GBps 0); with no op timed, the table's one link, if any.
// All are zero without a link.
func (t *Table) LinkTime(run string, c step.Class) (linked, link int64, at *interconnect.Link) {
	var used []*Link
	for i := range t.Ops {
		op := &t.Ops[i]
		if op.Run != run || op.Class != c {
			continue
		}
		if l, ns, ok := opLinkTime(op); ok {
			linked += l
			link += ns
			if !slices.Contains(used, op.Link) {
				used = append(used, op.Link)
			}
		}
	}
	switch {
	case len(used) == 0 && t.Link != nil:
		return 0, 0, &t.Link.Link
	case len(used) == 0:
		return 0, 0, nil
	case len(used) == 1:
		return linked, link, &used[0].Link
	}
	slices.SortFunc(used, func(a, b *Link) int { return strings.Compare(a.Label(), b.Label()) })
	var names, about []string
	for _, l := range used {
		names = append(names, l.Label())
		about = append(about, l.About)
	}
	return linked, link, &interconnect.Link{Name: strings.Join(names, " and "),
		About: "each communicator at its scope's link: " + strings.Join(about, "; ")}
}

// opLinkTime is an op's kernel time and its time at its link; ok is
// false for an op LinkTime leaves out.
func opLinkTime(op *Op) (linked, ns int64, ok bool) {
	l := op.Link
	if l == nil || !(l.GBps > 0) || op.Instances == 0 || op.SizedInstances != op.Instances || op.GroupSize < 2 {
		return 0, 0, false
	}
	f, ok := busFactor(op.Op, op.GroupSize)
	if !ok {
		return 0, 0, false
	}
	bps := uint64(math.Round(l.GBps * 1e9))
	for _, s := range op.Sizes {
		if s.Bytes < 0 {
			continue
		}
		ns += ceilNS(uint64(math.Round(float64(s.Bytes)*f)), bps) * s.Instances * int64(len(op.Ranks))
	}
	return op.KernelNS, ns, true
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
