package window

import (
	"runtime"
	"slices"

	"github.com/traceq/traceq/trace"
)

// An input's pass runs in parts, one per core, each over a run of its
// activities, and the parts are then merged into what one pass over all
// of them gathers. A part starts at a clean cut: an activity that starts
// when every earlier activity has ended (passCuts). Nothing before the cut
// then overlaps anything after it, so that a window's unions (busy time,
// per category, communication and the overlap that hides it) are the sum
// of its parts' unions, and a device's idle time before the cut is final
// at the cut; what crosses the cut is the gap at it, the windows with
// activities on both sides and the first activity of each launch call
// (part.absorb). Without a clean cut the input is one part.

// passMaxParts bounds the parts of a pass; passSplitMin is the fewest
// activities a part has. Both are variables for the tests, which split
// small inputs everywhere they can.
var (
	passMaxParts = 4
	passSplitMin = 1 << 16
)

// passCutsOf is passCuts; tests cut where they choose.
var passCutsOf = passCuts

// passParts is the number of parts an input's pass may run in.
func passParts() int { return min(runtime.GOMAXPROCS(0), passMaxParts) }

// passCuts returns where the parts of a pass over acts start, and
// len(acts): at most parts parts of passSplitMin activities or more, each
// starting at a clean cut (every earlier activity has ended by its
// start) at or after its share of acts, the first found. ends are the
// latest ends of acts cut in parts runs of as many (survey.rangeEnds):
// the search for a cut starts at the beginning of its share, not at the
// first activity. With split false, one part.
func passCuts(acts []trace.Activity, parts int, split bool, ends []trace.Time) []int {
	at := []int{0}
	n := len(acts)
	if !split || parts < 2 || n < 2*passSplitMin || len(ends) != parts {
		return append(at, n)
	}
	var end trace.Time // the latest end of acts[:i]
	i := 0
	for j := 1; j < parts; j++ {
		if share := j * n / parts; i < share {
			// acts[:share] are the runs before j.
			i, end = share, slices.Max(ends[:j])
		}
		for ; i < n-passSplitMin; i++ {
			a := &acts[i]
			if a.Start >= end && i-at[len(at)-1] >= passSplitMin {
				at = append(at, i)
				break
			}
			end = max(end, a.End())
		}
		if len(at) == j { // no cut
			break
		}
	}
	return append(at, n)
}

// part is one part of an input's pass: its activities [from, to), and the
// windows, idle scan and name sums it gathers.
type part struct {
	t        *Table
	in       *Input
	from, to int
	rankOf   []RankID
	catOf    []CatID // per trace.NameID
	actCat   []CatID // per activity; nil when catOf says
	scan     *idleScan
	names    *namePass
	m        map[winKey]*win
	wins     []*win // in order of first activity
}

// run is the part's pass over its activities.
func (p *part) run() {
	t, tr, in := p.t, p.in.Trace, p.in
	var recent recentWins
	var lastKey winKey
	var last *win
	for i := p.from; i < p.to; i++ {
		a := &tr.Activities[i]
		k := winKey{proc: a.Proc, device: a.Device, step: -1}
		if in.Steps != nil {
			k.step = in.Steps.Of[i]
		}
		w := last
		if w == nil || k != lastKey {
			w = recent.find(k)
			if w == nil {
				w = p.m[k]
				if w == nil {
					w = &win{rank: p.rankOf[a.Proc], proc: a.Proc, device: a.Device, step: k.step,
						first: a.Start, last: a.End()}
					p.m[k] = w
					p.wins = append(p.wins, w)
				}
				recent.put(k, w)
			}
			last, lastKey = w, k
		}
		p.scan.add(w, i)
		end := a.End()
		w.last = max(w.last, end)
		w.kernel += a.Dur
		w.busy.add(a.Start, end)
		full := p.catOf[a.Name]
		if p.actCat != nil {
			full = p.actCat[i]
		}
		cid := t.fold[full]
		if int(cid) >= len(w.cats) {
			w.cats = slices.Grow(w.cats, int(cid)+1-len(w.cats))[:cid+1]
		}
		ca := w.cats[cid]
		if ca == nil {
			ca = &catAcc{}
			w.cats[cid] = ca
			w.ncats++
		}
		ca.kernel += a.Dur
		ca.n++
		ca.busy.add(a.Start, end)
		coll := !t.opt.SkipCollectives && a.Kind == trace.KindKernel && t.isComm(full)
		p.names.add(nameItem{w: w, i: int32(i), full: full, step: k.step, coll: coll})
	}
}

// absorb merges part r, which starts where p ends, into p: p's windows,
// scan, name sums, durations and collective kernels become those of one
// pass over both. Both parts' communication unions are closed
// (idleScan.closeComm).
func (p *part) absorb(r *part) {
	acts := p.in.Trace.Activities
	// Each of r's gap scopes continues p's of the same device (stepped)
	// or window, if any: the gap between them (at r's first activity of
	// the scope), then r's gaps. shift is what p's scope had summed by
	// then, which r's windows' sums are relative to.
	shift := map[*gapScope]idleCum{}
	join := func(s1, s2 *gapScope) {
		if s1 == nil {
			shift[s2] = idleCum{}
			return
		}
		if a := &acts[s2.first]; a.Start > s1.end {
			c := p.scan.cause(int(s2.first), int(s2.firstLaunch), s1.end, s1.proc)
			s1.cum[c] += int64(a.Start - s1.end)
		}
		shift[s2] = s1.cum
		for c := range s1.cum {
			s1.cum[c] += s2.cum[c]
		}
		s1.end = max(s1.end, s2.end)
	}
	if p.scan.stepped {
		for d, s2 := range r.scan.devices {
			s1 := p.scan.devices[d]
			join(s1, s2)
			if s1 == nil {
				p.scan.devices[d] = s2
			}
		}
	}
	for _, w2 := range r.wins {
		k := winKey{proc: w2.proc, device: w2.device, step: w2.step}
		w1 := p.m[k]
		if !p.scan.stepped {
			var s1 *gapScope
			if w1 != nil {
				s1 = w1.scope
			}
			join(s1, w2.scope)
		}
		sh := shift[w2.scope]
		for c := range sh {
			w2.at0[c] += sh[c]
			w2.at1[c] += sh[c]
		}
		if w1 == nil {
			p.m[k] = w2
			p.wins = append(p.wins, w2)
			continue
		}
		w1.absorb(w2)
		w2.into = w1
	}
	p.names.durs.absorb(&r.names.durs, p.from, p.to, r.from, r.to)
	p.names.colls.absorb(&r.names.colls)
}

// absorb adds o, the same window's activities after a clean cut, to w.
func (w *win) absorb(o *win) {
	if o.last > w.last {
		w.at1 = o.at1
		w.last = o.last
	}
	w.kernel += o.kernel
	w.busy.join(o.busy)
	for id, c := range o.cats {
		if c == nil {
			continue
		}
		if id >= len(w.cats) {
			w.cats = slices.Grow(w.cats, id+1-len(w.cats))[:id+1]
		}
		if w.cats[id] == nil {
			w.cats[id] = c
			w.ncats++
			continue
		}
		mine := w.cats[id]
		mine.kernel += c.kernel
		mine.n += c.n
		mine.busy.join(c.busy)
	}
	for _, n := range o.names {
		if j := w.findName(n.key); j >= 0 {
			w.names[j].n += n.n
			w.names[j].total += n.total
		} else {
			w.addName(n)
		}
	}
	w.commBusy += o.commBusy
	w.commHidden += o.commHidden
}

// join adds o, a union of intervals that all start at or after u's end,
// to u.
func (u *union) join(o union) {
	switch {
	case !o.open:
	case !u.open:
		*u = o
	default:
		u.total = u.sum() + o.total
		u.start, u.end = o.start, o.end
	}
}

// launchWindow returns, for the first activity of a launch call (its
// index and its window's seq in the part that ran it), the window it is
// in once the parts are merged.
func launchWindow(ps []*part) func(act int, seq int32) *win {
	return func(act int, seq int32) *win {
		j := len(ps) - 1
		for j > 0 && act < ps[j].from {
			j--
		}
		w := ps[j].wins[seq]
		if w.into != nil {
			return w.into
		}
		return w
	}
}
