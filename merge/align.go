package merge

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Aligning clocks by collectives. The kernels of one instance of a
// collective end together, once the data has moved (the premise of the
// collectives analysis: docs/definitions.md#collectives): on the true
// clock their ends coincide, so the difference between two ranks' ends is
// the difference between their clocks. Per communicator, each member's
// offset from the communicator's first rank is the median of those
// differences over its instances (robust to the odd instance whose
// kernels do not end together); communicators that share a rank chain the
// offsets, from the first rank of the run, whose clock the others take.

// matched is one instance as the alignment reads it: its members (plan
// indices, ascending) and their kernels' ends, on clocks already moved by
// the base alignment.
type matched struct {
	ranks []int
	ends  []int64
}

// alignment is what collectivesShift finds.
type alignment struct {
	// shift per plan: what to add to its clock (after the base shift).
	shift []int64
	// joined says the rank's shift came from collectives that chain it to
	// the first rank.
	joined []bool
	// spread is the median and the largest, over instances, of the time
	// between the first and the last end once aligned.
	spreadP50, spreadMax int64
	instances            int
}

// collectivesShift computes the shifts that make the instances' ends
// coincide, for n ranks.
func collectivesShift(n int, insts []matched) alignment {
	al := alignment{shift: make([]int64, n), joined: make([]bool, n), instances: len(insts)}
	if n == 0 {
		return al
	}
	// Per communicator (member set): each member's offset from the first.
	type comm struct {
		key   string
		ranks []int
		diffs [][]int64 // per member: end - first member's end, per instance
		n     int
	}
	byKey := map[string]*comm{}
	var comms []*comm
	for _, in := range insts {
		if len(in.ranks) < 2 {
			continue
		}
		var sb strings.Builder
		for _, r := range in.ranks {
			sb.WriteString(strconv.Itoa(r))
			sb.WriteByte(',')
		}
		c := byKey[sb.String()]
		if c == nil {
			c = &comm{key: sb.String(), ranks: in.ranks, diffs: make([][]int64, len(in.ranks))}
			byKey[c.key] = c
			comms = append(comms, c)
		}
		for j := range in.ranks {
			c.diffs[j] = append(c.diffs[j], in.ends[j]-in.ends[0])
		}
		c.n++
	}
	// Most instances first, then by members: a deterministic order.
	slices.SortStableFunc(comms, func(a, b *comm) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.key, b.key)) })
	offset := make([][]int64, len(comms)) // per comm, per member: the median difference
	for ci, c := range comms {
		offset[ci] = make([]int64, len(c.ranks))
		for j, d := range c.diffs {
			slices.Sort(d)
			offset[ci][j] = d[(len(d)-1)/2]
		}
	}
	al.joined[0] = true
	for changed := true; changed; {
		changed = false
		for ci, c := range comms {
			anchor := -1
			for j, r := range c.ranks {
				if al.joined[r] {
					anchor = j
					break
				}
			}
			if anchor < 0 {
				continue
			}
			a := c.ranks[anchor]
			for j, r := range c.ranks {
				if al.joined[r] {
					continue
				}
				// end_r + s_r = end_a + s_a on the true clock.
				al.shift[r] = al.shift[a] - (offset[ci][j] - offset[ci][anchor])
				al.joined[r] = true
				changed = true
			}
		}
	}
	al.spreadP50, al.spreadMax = spread(insts, al.shift, al.joined)
	return al
}

// spread is, over the instances whose ranks are all joined, the median
// and the largest time between the first and the last end once moved by
// shift.
func spread(insts []matched, shift []int64, joined []bool) (p50, most int64) {
	var spreads []int64
	for _, in := range insts {
		if len(in.ranks) < 2 {
			continue
		}
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		ok := true
		for j, r := range in.ranks {
			if !joined[r] {
				ok = false
				break
			}
			e := in.ends[j] + shift[r]
			lo, hi = min(lo, e), max(hi, e)
		}
		if ok {
			spreads = append(spreads, hi-lo)
		}
	}
	if len(spreads) == 0 {
		return 0, 0
	}
	slices.Sort(spreads)
	return spreads[(len(spreads)-1)/2], spreads[len(spreads)-1]
}
