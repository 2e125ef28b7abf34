package findings

import (
	"slices"

	"github.com/traceq/traceq/step"
)

// KindChange compares the findings of one step kind of two runs: what a
// diff says after the step time (docs/definitions.md#findings-before-and-after).
type KindChange struct {
	Class         step.Class
	Before, After *KindFindings
	// StragglerBefore and StragglerAfter are each run's straggler (nil:
	// none stands out).
	StragglerBefore, StragglerAfter *StragglerEvidence
	// Collectives compares each collective op found in either run.
	Collectives []OpChange
	// Findings compares the savings listed in either run (not the
	// straggler, said apart, nor the informational findings and capture
	// gaps), in the after run's order then the before run's.
	Findings []FindingChange
}

// OpChange compares one collective op's wait and transfer per step; a
// side without the op is nil.
type OpChange struct {
	Op, Group     string
	Before, After *OpState
}

// FindingChange compares one finding: nil on the side that does not list
// it (gone, or new).
type FindingChange struct {
	Kind          Kind
	Before, After *Finding
}

// StragglerChange names how the straggler changed.
type StragglerChange uint8

const (
	NoStraggler    StragglerChange = iota // none on either side
	StragglerGone                         // before only
	StragglerNew                          // after only
	StragglerSame                         // the same rank on both sides
	StragglerMoved                        // another rank after
)

// Straggler says how the straggler changed.
func (c *KindChange) Straggler() StragglerChange {
	b, a := c.StragglerBefore, c.StragglerAfter
	switch {
	case b == nil && a == nil:
		return NoStraggler
	case a == nil:
		return StragglerGone
	case b == nil:
		return StragglerNew
	case sameRank(b, a):
		return StragglerSame
	}
	return StragglerMoved
}

// sameRank says whether two stragglers of two runs are the same rank: by
// distributed rank where both traces say it, else by process id.
func sameRank(b, a *StragglerEvidence) bool {
	if b.Rank.Number != nil && a.Rank.Number != nil {
		return *b.Rank.Number == *a.Rank.Number
	}
	return b.Rank.PID == a.Rank.PID
}

// Compare compares the findings of run before in rb with those of run
// after in ra, step kind by step kind, for the kinds both runs have (rb
// and ra may be one report holding both runs).
func Compare(rb *Report, before string, ra *Report, after string) []KindChange {
	var out []KindChange
	if rb == nil || ra == nil {
		return out
	}
	for i := range rb.Kinds {
		b := &rb.Kinds[i]
		if b.Run != before {
			continue
		}
		a := ra.Of(after, b.Class)
		if a == nil {
			continue
		}
		c := KindChange{Class: b.Class, Before: b, After: a, StragglerBefore: b.Straggler, StragglerAfter: a.Straggler}
		type opKey struct{ op, group string }
		ops := map[opKey]*OpChange{}
		var order []opKey
		for side, list := range [][]OpState{b.Collectives, a.Collectives} {
			for j := range list {
				o := &list[j]
				k := opKey{o.Op, o.Group}
				oc := ops[k]
				if oc == nil {
					oc = &OpChange{Op: o.Op, Group: o.Group}
					ops[k] = oc
					order = append(order, k)
				}
				if side == 0 {
					oc.Before = o
				} else {
					oc.After = o
				}
			}
		}
		for _, k := range order {
			c.Collectives = append(c.Collectives, *ops[k])
		}
		seen := map[findingKey]bool{}
		for _, side := range []*KindFindings{a, b} {
			for j := range side.Findings {
				f := &side.Findings[j]
				if !f.Ranked() || f.Kind == Straggler {
					continue
				}
				k := keyOf(f)
				if seen[k] {
					continue
				}
				seen[k] = true
				c.Findings = append(c.Findings, FindingChange{Kind: f.Kind, Before: b.find(k), After: a.find(k)})
			}
		}
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(x, y KindChange) int { return x.Class.Compare(y.Class) })
	return out
}

// findingKey identifies a finding across two runs: its kind and, for a
// collective's, the op and its process group; for a roofline finding,
// its category.
type findingKey struct {
	kind      Kind
	op, group string
}

func keyOf(f *Finding) findingKey {
	k := findingKey{kind: f.Kind}
	switch {
	case f.Collective != nil:
		k.op, k.group = f.Collective.Op, f.Collective.Group
	case f.Roofline != nil:
		k.op = f.Roofline.Category.String()
	}
	return k
}

func (kf *KindFindings) find(k findingKey) *Finding {
	for i := range kf.Findings {
		if f := &kf.Findings[i]; f.Ranked() && keyOf(f) == k {
			return f
		}
	}
	return nil
}
