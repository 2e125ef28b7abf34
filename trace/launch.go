package trace

import (
	"slices"
	"sort"
)

// LaunchFinder finds launch calls by (process, correlation id), as
// FindLaunch does, for lookups made one after another in the order of the
// activities. The calls are sorted by both (CompareLaunches), so each
// process's are a run of them, and a process's lookups gallop from where
// its last one ended: its activities mostly come in the order of its
// calls, so the next is near, where a binary search over every call of a
// GB of trace misses the cache at most of its twenty steps. The activities
// of several processes interleave: each keeps its own position (in an nsys
// export of four ranks, one position for all jumped across a quarter of
// the calls at nearly every activity).
//
// The zero value finds nothing; NewLaunchFinder makes one for a trace.
type LaunchFinder struct {
	ls    []Launch
	procs []procCalls // by process, made at the first lookup
	// at is, per process index, 1 + the index of its procCalls (0: no
	// calls): a lookup per activity, not a search of procs.
	at []int32
}

// procCalls are the calls of one process, ls[from:to], and where its last
// lookup ended (from + pos).
type procCalls struct {
	proc          int32
	from, to, pos int
}

// NewLaunchFinder returns a finder over ls, sorted by CompareLaunches (a
// Trace's Launches).
func NewLaunchFinder(ls []Launch) *LaunchFinder { return &LaunchFinder{ls: ls} }

// callsOf returns proc's calls, nil when it made none.
func (f *LaunchFinder) callsOf(proc int32) *procCalls {
	if f.procs == nil {
		ls := f.ls
		for from := 0; from < len(ls); {
			p := ls[from].Proc
			to := from + sort.Search(len(ls)-from, func(i int) bool { return ls[from+i].Proc > p })
			f.procs = append(f.procs, procCalls{proc: p, from: from, to: to})
			if p >= 0 && int(p) >= len(f.at) {
				f.at = slices.Grow(f.at, int(p)+1-len(f.at))[:p+1]
			}
			if p >= 0 {
				f.at[p] = int32(len(f.procs))
			}
			from = to
		}
	}
	if proc < 0 || int(proc) >= len(f.at) || f.at[proc] == 0 {
		return nil
	}
	return &f.procs[f.at[proc]-1]
}

// Find returns the index in the calls of the first call of (proc, corr),
// or -1: the call FindLaunch returns.
func (f *LaunchFinder) Find(proc int32, corr int64) int {
	c := f.callsOf(proc)
	if c == nil {
		return -1
	}
	ls := f.ls[c.from:c.to]
	n := len(ls)
	// The answer is the first index at or after the key, in [lo, hi].
	var lo, hi int
	p := c.pos
	if ls[p].Corr < corr {
		lo, hi = p+1, n
		for step := 1; p+step < n; step *= 2 {
			if ls[p+step].Corr >= corr {
				hi = p + step
				break
			}
			lo = p + step + 1
		}
	} else {
		lo, hi = 0, p
		for step := 1; p-step >= 0; step *= 2 {
			if ls[p-step].Corr < corr {
				lo = p - step + 1
				break
			}
			hi = p - step
		}
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ls[m].Corr < corr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	c.pos = min(lo, n-1)
	if lo < n && ls[lo].Corr == corr {
		return c.from + lo
	}
	return -1
}
