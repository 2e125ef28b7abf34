package chrometrace

import "slices"

// distinct keeps one kind of record of the model free of exact duplicates
// as it grows, so that memory is bounded by the distinct events: a gzip
// bomb of one trace repeated a thousand times costs one copy. The slice
// is sorted and compacted whenever it is full, before it would grow;
// with a size hint (a file), it is sized once and that is rare.
type distinct[T comparable] struct {
	cmp func(a, b T) int
	// eq says whether two records are duplicates; nil means ==. Records
	// eq holds for must be adjacent in cmp's order.
	eq func(a, b T) bool
	// key, when not nil, is the first key of cmp's order, which
	// duplicates share: records of different keys are compared by it
	// alone, without copying them (a GB of trace's 1.8 M activities are
	// checked in order and for duplicates after the parse, alone on a
	// core).
	key func(*T) int64
	n   int64 // duplicates dropped
	min T     // the first of them in the model's order (for the example)
	// done is the length of the prefix of the slice that is sorted and
	// free of duplicates.
	done int
	// sorted is the length of a prefix of the slice that is sorted, free
	// of duplicates or not: add sorts each batch into place and drops its
	// duplicates as it comes (order), on the merging goroutine while the
	// decoders run, so that the compaction after the parse, alone on a
	// core, has nothing left to do. unordered says order gave up (records
	// far out of place): compact sorts.
	sorted    int
	unordered bool
}

// add appends more to s and, while the records come nearly in order,
// sorts them and drops duplicates (order); else it drops duplicates only
// when s is full.
func (d *distinct[T]) add(s, more []T, seen, hint int64) []T {
	if len(s)+len(more) > cap(s) && len(s) > 0 {
		s = d.compact(s)
		// Grow anyway unless that freed a quarter: compacting a slice
		// of distinct records at every batch would be quadratic.
		if len(s)+len(more) <= cap(s)-cap(s)/4 {
			return d.order(append(s, more...))
		}
	}
	return d.order(append(grow(s, len(more), seen, hint), more...))
}

// order moves the records of s added since its last call to their place
// while that stays cheap (two moves a record added: insertionFix's
// budget) and compacts them. Past the budget it leaves it all to compact.
func (d *distinct[T]) order(s []T) []T {
	if d.unordered || len(s) < 2 {
		return s
	}
	from := max(d.sorted, 1)
	low, ok := insertionFixBudget(s, from, d.cmp, d.before(), 2*(len(s)-from)+1024)
	d.done = min(d.done, low) // a record moved into the checked prefix
	if !ok {
		d.unordered = true
		return s
	}
	d.sorted = len(s)
	// Sorted: dropping the duplicates is a pass over what was added (and
	// where a record moved to), not one over the whole slice at the end.
	// A duplicate that comes later but sorts first is kept in place of
	// the one kept so far, as one compaction of them all would.
	return d.compact(s)
}

// compact sorts s into the model's order and drops exact duplicates,
// counting them. Records often come in order (by time): then the part
// added since the last compaction only needs checking.
func (d *distinct[T]) compact(s []T) []T {
	from := max(d.done, 1)
	check := from // s[:check] is sorted
	if !d.unordered {
		check = max(check, d.sorted)
	}
	d.unordered = false
	before := d.before()
	for i := check; i < len(s); i++ {
		if before != nil && before(&s[i-1], &s[i]) {
			continue
		}
		if d.cmp(s[i-1], s[i]) > 0 {
			if !insertionFix(s, i, d.cmp, before) {
				slices.SortFunc(s, d.cmp)
			}
			from = 1
			break
		}
	}
	if len(s) < 2 {
		d.done, d.sorted = len(s), len(s)
		return s
	}
	// s[:n] is the records kept; a record is moved only once a duplicate
	// was dropped before it (copying each onto itself cost a third of
	// the final compaction of a GB of trace's activities).
	n := from
	for i := from; i < len(s); i++ {
		if (d.key != nil && d.key(&s[i]) != d.key(&s[n-1])) || !d.same(s[i], s[n-1]) {
			if n != i {
				s[n] = s[i]
			}
			n++
			continue
		}
		if d.n == 0 || d.cmp(s[i], d.min) < 0 {
			d.min = s[i]
		}
		d.n++
	}
	d.done, d.sorted = n, n
	return s[:n]
}

// before returns, with a key, a test that a is certainly before b in
// cmp's order (its key is less); nil without.
func (d *distinct[T]) before() func(a, b *T) bool {
	if d.key == nil {
		return nil
	}
	key := d.key
	return func(a, b *T) bool { return key(a) < key(b) }
}

func (d *distinct[T]) same(a, b T) bool {
	if d.eq != nil {
		return d.eq(a, b)
	}
	return a == b
}

// insertionFix sorts s, sorted before from, by moving each record that is
// out of place back to where it belongs, as long as that stays cheap: the
// records of a trace come nearly in order (a kernel on another stream
// started a little before the one written before it), and sorting a
// million of them from scratch took a fifth of a second on the single
// goroutine that merges. It gives up, leaving s a permutation of what it
// was, when the moves pass a budget of 2·len(s) + 1024 (a sort costs
// about 20 comparisons a record).
//
// before, when not nil, says that a is certainly before b (cmp(a, b) < 0)
// more cheaply than cmp.
func insertionFix[T any](s []T, from int, cmp func(a, b T) int, before func(a, b *T) bool) bool {
	_, ok := insertionFixBudget(s, from, cmp, before, 2*len(s)+1024)
	return ok
}

// insertionFixBudget is insertionFix with a budget of moves; it also
// returns the lowest index a record was moved to (len(s) for none). When
// it gives up, s[:i] is sorted for the i it stopped at.
func insertionFixBudget[T any](s []T, from int, cmp func(a, b T) int, before func(a, b *T) bool, budget int) (low int, ok bool) {
	low = len(s)
	for i := max(from, 1); i < len(s); i++ {
		if (before != nil && before(&s[i-1], &s[i])) || cmp(s[i-1], s[i]) <= 0 {
			continue
		}
		x := s[i]
		j := i - 1
		for j >= 0 && cmp(s[j], x) > 0 {
			j--
		}
		if budget -= i - j; budget < 0 {
			return low, false
		}
		copy(s[j+2:i+1], s[j+1:i])
		s[j+1] = x
		low = min(low, j+1)
	}
	return low, true
}
