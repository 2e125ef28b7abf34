package window

import (
	"cmp"
	"slices"
	"sync/atomic"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// Idle time by cause, launch statistics, time between steps and exposed
// communication (docs/definitions.md, "Idle time by cause"). Everything
// here is gathered during the table's one pass over the activities
// (idleScan.add, per activity) and finished per input (idleScan.finish).

// Gap causes: the index in an idleCum.
const (
	causeLaunchBound = iota
	causeDeviceSide
	causeUnknown
	numCauses
)

// Cause is what an idle gap is attributed to
// (docs/definitions.md#which-cause-a-gap-has).
type Cause uint8

const (
	LaunchBound Cause = causeLaunchBound
	DeviceSide  Cause = causeDeviceSide
	Unknown     Cause = causeUnknown
)

var causeNames = [...]string{causeLaunchBound: "launch-bound", causeDeviceSide: "device-side", causeUnknown: "unknown"}

func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "unknown"
}

// Gap is one idle gap of a device, as the idle analysis finds it: a time
// the device ran nothing between two activities of one busy union (a
// stepped input's device, else one process's device), and its cause.
type Gap struct {
	Rank       RankID // the rank of the activity that ends the gap
	Device     int32
	Start, End trace.Time
	Cause      Cause
}

// idleCum is idle time by cause, summed over the gaps met so far.
type idleCum [numCauses]int64

func (c idleCum) split() IdleSplit {
	return IdleSplit{LaunchBoundNS: c[causeLaunchBound], DeviceSideNS: c[causeDeviceSide], UnknownNS: c[causeUnknown]}
}

func (c idleCum) minus(o idleCum) idleCum {
	for i := range c {
		c[i] -= o[i]
	}
	return c
}

// gapScope is the busy union whose gaps are idle time: a device (stepped
// inputs: the device ran nothing of any step) or one window (the whole
// trace on a device of one process). cum sums its gaps by cause so far.
type gapScope struct {
	open bool
	end  trace.Time
	cum  idleCum
	// gen counts the gaps: cum has not changed while it has not.
	gen  int32
	proc int32 // the process whose activities end a gap; -1 for any
	// first is the activity that opened the scope, firstLaunch its
	// launch call (-1 for none): in a part of a pass that does not start
	// at the first activity, where the gap before it is found when the
	// parts are merged (part.absorb).
	first, firstLaunch int32
}

// windowIdle is what a window gathers for this file.
type windowIdle struct {
	seq   int32 // index among the input's windows
	scope *gapScope
	// at0 and at1 are the scope's gap sums when the window's first
	// activity and the activity that set its last end were added. No gap
	// can start in the window's span and end after the end the window has
	// reached (an activity covers it), so at1 - at0 are the gaps inside
	// the span: the window's idle time, by cause.
	at0, at1 idleCum
	// at1Gen is the scope's gen when at1 was set: while it is the same,
	// so is cum (copying cum per activity cost more than the rest of
	// the scan's step).
	at1Gen int32
	split  IdleSplit
	// The union of the window's communication activities, piece by
	// piece: its last piece is the scan's pieces[commLast-1] (0: none),
	// commBusy the summed length of those before (of all, once the scan
	// is closed); commHidden the part of the union other activities
	// overlap.
	commLast   int32
	commBusy   int64
	commHidden int64
	nc         *nonComm // the device's
	launches   map[string]*launchAcc
	// between is the time from the end of the latest-ending earlier step
	// on the device to this step's first activity; hasPrev is false for a
	// device's first step.
	between     int64
	betweenFrom step.Kind
	hasPrev     bool
}

type piece struct{ start, end trace.Time }

// pieces holds pieces in chunks of pieceChunk, in the order added:
// appending to one slice copied it as it grew (12 ms of a GB of trace's
// 300k communication kernels).
type pieces struct {
	chunks [][]piece
	n      int32
}

const pieceChunk = 1 << 12

// add appends p and returns its index.
func (ps *pieces) add(p piece) int32 {
	if ps.n%pieceChunk == 0 {
		ps.chunks = append(ps.chunks, make([]piece, pieceChunk))
	}
	ps.chunks[ps.n/pieceChunk][ps.n%pieceChunk] = p
	ps.n++
	return ps.n - 1
}

// at returns the piece of index i.
func (ps *pieces) at(i int32) *piece { return &ps.chunks[i/pieceChunk][i%pieceChunk] }

type launchAcc struct {
	calls   int64
	cpu     int64
	latency []int64
}

// idleScan is one input's share of the pass.
type idleScan struct {
	t       *trace.Trace
	stepped bool
	devices map[int32]*gapScope // stepped: one scope per device
	isComm  []bool              // per CatID
	catOf   []CatID             // per trace.NameID
	nwin    int32
	// Per launch call (index in t.Launches; the first of calls sharing a
	// correlation id): its first activity, 0 for none, else that
	// activity's index + 1 in the upper 32 bits and its window's seq (in
	// the part of the pass that saw it) in the lower ones. The parts of a
	// pass share it, each keeping the least value (launchSeen).
	launchAt []uint64
	// The last lookup, kept: a graph replay's kernels share one id.
	lastProc int32
	lastCorr int64
	lastLi   int
	// seenLi is the last call launchSeen recorded an activity of.
	seenLi  int
	finder  *trace.LaunchFinder
	nonComm map[int32]*nonComm
	// pieces are the pieces of the windows' communication unions, in
	// the order they were begun.
	pieces pieces
	// onGap, when set, receives every gap (Options.Gaps).
	onGap func(Gap)
}

func newIdleScan(tbl *Table, t *trace.Trace, stepped bool, catOf []CatID) *idleScan {
	ix := &idleScan{t: t, stepped: stepped, devices: map[int32]*gapScope{}, catOf: catOf, lastProc: -1, seenLi: -1, nonComm: map[int32]*nonComm{},
		finder: trace.NewLaunchFinder(t.Launches)}
	ix.isComm = make([]bool, len(tbl.cats))
	for i, c := range tbl.cats {
		ix.isComm[i] = c.Top == classify.Communication
	}
	if n := len(t.Launches); n > 0 {
		ix.launchAt = make([]uint64, n)
	}
	return ix
}

// fork returns a scan for another part of the same pass: what is per
// input is shared, what the pass gathers is its own.
func (ix *idleScan) fork() *idleScan {
	return &idleScan{t: ix.t, stepped: ix.stepped, devices: map[int32]*gapScope{}, isComm: ix.isComm, catOf: ix.catOf,
		launchAt: ix.launchAt, lastProc: -1, seenLi: -1, finder: trace.NewLaunchFinder(ix.t.Launches), nonComm: map[int32]*nonComm{}, onGap: ix.onGap}
}

// launchSeen records activity i of window w as launch call li's first
// activity unless an earlier activity was (another part of the pass may
// be recording the same call).
func (ix *idleScan) launchSeen(li, i int, w *win) {
	v := uint64(i+1)<<32 | uint64(uint32(w.seq))
	for {
		old := atomic.LoadUint64(&ix.launchAt[li])
		if old != 0 && old < v || atomic.CompareAndSwapUint64(&ix.launchAt[li], old, v) {
			return
		}
	}
}

// launchOf returns the index of activity a's launch call, or -1.
func (ix *idleScan) launchOf(a *trace.Activity) int {
	if a.Corr == 0 || len(ix.launchAt) == 0 {
		return -1
	}
	if a.Proc == ix.lastProc && a.Corr == ix.lastCorr {
		return ix.lastLi
	}
	li := ix.finder.Find(a.Proc, a.Corr)
	ix.lastProc, ix.lastCorr, ix.lastLi = a.Proc, a.Corr, li
	return li
}

// add takes activity i of window w into the scan: before the window's own
// figures are updated, so that w.last is the end before this activity.
func (ix *idleScan) add(w *win, i int) {
	a := &ix.t.Activities[i]
	end := a.End()
	li := ix.launchOf(a)
	fresh := w.scope == nil
	if fresh {
		w.seq = ix.nwin
		ix.nwin++
		if ix.stepped {
			w.scope = ix.devices[w.device]
			if w.scope == nil {
				w.scope = &gapScope{proc: -1}
				ix.devices[w.device] = w.scope
			}
		} else {
			w.scope = &gapScope{proc: w.proc}
		}
		w.nc = ix.nonComm[w.device]
		if w.nc == nil {
			w.nc = &nonComm{}
			ix.nonComm[w.device] = w.nc
		}
	}
	sc := w.scope
	switch {
	case !sc.open:
		sc.open, sc.end = true, end
		sc.first, sc.firstLaunch = int32(i), int32(li)
	case a.Start > sc.end:
		c := ix.cause(i, li, sc.end, sc.proc)
		sc.cum[c] += int64(a.Start - sc.end)
		sc.gen++
		if ix.onGap != nil {
			ix.onGap(Gap{Rank: w.rank, Device: a.Device, Start: sc.end, End: a.Start, Cause: Cause(c)})
		}
		sc.end = end
	case end > sc.end:
		sc.end = end
	}
	if fresh {
		w.at0, w.at1, w.at1Gen = sc.cum, sc.cum, sc.gen
	} else if end > w.last && w.at1Gen != sc.gen {
		// Element by element: a gap has just stored one of them, and
		// a wider load of the array waits for that store to land.
		w.at1[0], w.at1[1], w.at1[2], w.at1Gen = sc.cum[0], sc.cum[1], sc.cum[2], sc.gen
	}
	if li >= 0 && li != ix.seenLi {
		// The kernels of a graph replay share their call: the first
		// of them in the part was recorded, the others come after it.
		ix.launchSeen(li, i, w)
		ix.seenLi = li
	}
	if !ix.isComm[ix.catOf[a.Name]] {
		w.nc.add(a.Start, end, &ix.pieces)
	} else if w.commLast > 0 && a.Start <= ix.pieces.at(w.commLast-1).end {
		p := ix.pieces.at(w.commLast - 1)
		p.end = max(p.end, end)
	} else {
		if w.commLast > 0 {
			p := ix.pieces.at(w.commLast - 1)
			w.commBusy += int64(p.end - p.start)
		}
		w.commLast = ix.pieces.add(piece{a.Start, end}) + 1
		w.nc.live = append(w.nc.live, commRef{w, w.commLast - 1})
	}
}

// cause classifies the gap from gapStart to the start of activity i (li:
// its launch call): among the activities of the scope starting then (they
// follow i: the order is by start, then device), the one whose launch call
// started earliest decides.
func (ix *idleScan) cause(i, li int, gapStart trace.Time, proc int32) int {
	acts := ix.t.Activities
	a := &acts[i]
	var best *trace.Launch
	if li >= 0 {
		best = &ix.t.Launches[li]
	}
	for j := i + 1; j < len(acts) && acts[j].Start == a.Start && acts[j].Device == a.Device; j++ {
		b := &acts[j]
		if b.Corr == 0 || (proc >= 0 && b.Proc != proc) {
			continue
		}
		if l := ix.t.FindLaunch(b.Proc, b.Corr); l != nil && (best == nil || l.Start < best.Start) {
			best = l
		}
	}
	switch {
	case best == nil:
		return causeUnknown
	case best.Start >= gapStart:
		return causeLaunchBound
	}
	return causeDeviceSide
}

// closeComm closes the devices' unions of non-communication activities
// at the end of the scan's part of the pass, and its windows' unions of
// communication ones: their communication and exposed communication are
// then final.
func (ix *idleScan) closeComm(wins []*win) {
	for _, d := range ix.nonComm {
		d.close(&ix.pieces)
	}
	for _, w := range wins {
		if w.commLast > 0 {
			p := ix.pieces.at(w.commLast - 1)
			w.commBusy += int64(p.end - p.start)
			w.commLast = 0
		}
	}
	ix.pieces = pieces{}
}

// finish completes the input's windows, once every part of the pass is
// merged into wins: idle by cause, launch statistics and the time between
// steps. It returns the launch calls that launched no recorded activity.
// winOf is the window of a launch call's first activity (launchAt).
func (ix *idleScan) finish(in *Input, wins []*win, rankOf []RankID, winOf func(act int, seq int32) *win) []EmptyLaunch {
	for _, w := range wins {
		w.split = w.at1.minus(w.at0).split()
		w.idle = w.split.Total()
	}
	empty := ix.launchStats(rankOf, winOf)
	if ix.stepped {
		betweenSteps(in, wins)
	}
	return empty
}

// launchStats gives each window the launch calls of its activities, by
// API, and counts apart the calls that launched nothing recorded.
func (ix *idleScan) launchStats(rankOf []RankID, winOf func(act int, seq int32) *win) []EmptyLaunch {
	t := ix.t
	type key struct {
		proc int32
		name trace.NameID
	}
	empty := map[key]*launchAcc{}
	head := 0
	for i := range t.Launches {
		l := &t.Launches[i]
		if l.Proc != t.Launches[head].Proc || l.Corr != t.Launches[head].Corr {
			head = i
		}
		at := ix.launchAt[head]
		if at == 0 {
			k := key{l.Proc, l.Name}
			e := empty[k]
			if e == nil {
				e = &launchAcc{}
				empty[k] = e
			}
			e.calls++
			e.cpu += l.Dur
			continue
		}
		act := int(at>>32) - 1
		w := winOf(act, int32(uint32(at)))
		if w.launches == nil {
			w.launches = map[string]*launchAcc{}
		}
		acc := w.launches[t.Names[l.Name]]
		if acc == nil {
			acc = &launchAcc{}
			w.launches[t.Names[l.Name]] = acc
		}
		acc.calls++
		acc.cpu += l.Dur
		acc.latency = append(acc.latency, int64(t.Activities[act].Start-l.Start))
	}
	out := make([]EmptyLaunch, 0, len(empty))
	pid := make([]int64, 0, len(empty))
	for k, e := range empty {
		out = append(out, EmptyLaunch{Rank: rankOf[k.proc], API: t.Names[k.name], Calls: e.calls, CPUNS: e.cpu})
		pid = append(pid, procPID(t, k.proc))
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(pid[a], pid[b]); c != 0 {
			return c
		}
		return cmp.Compare(out[a].API, out[b].API)
	})
	sorted := make([]EmptyLaunch, len(out))
	for i, j := range order {
		sorted[i] = out[j]
	}
	return sorted
}

// commRef is one piece of a window's communication union.
type commRef struct {
	w   *win
	idx int32 // in the scan's pieces
}

// nonComm is the union of one device's non-communication activities (any
// step, any process), built piece by piece in the pass. When a piece
// closes (an activity starts after its end), every communication activity
// that can overlap it has been seen, and whatever comes later starts after
// it: its overlap with the communication pieces met so far is final.
type nonComm struct {
	open bool
	cur  piece
	// live are the communication pieces that may overlap the current
	// piece or later ones: those that end after the last closed piece. A
	// piece that ends before cannot grow: what would extend it starts
	// before its end, and every activity to come starts after.
	live []commRef
}

// add takes a non-communication activity into the union.
func (d *nonComm) add(start, end trace.Time, pieces *pieces) {
	switch {
	case !d.open:
		d.open, d.cur = true, piece{start, end}
	case start > d.cur.end:
		d.close(pieces)
		d.cur = piece{start, end}
	case end > d.cur.end:
		d.cur.end = end
	}
}

// close adds the current piece's overlap with each live communication
// piece (of pieces) to the piece's window, and drops the pieces it has
// passed.
func (d *nonComm) close(pieces *pieces) {
	if !d.open || len(d.live) == 0 {
		return
	}
	p := d.cur
	keep := d.live[:0]
	for _, r := range d.live {
		c := *pieces.at(r.idx)
		if ov := min(c.end, p.end) - max(c.start, p.start); ov > 0 {
			r.w.commHidden += int64(ov)
		}
		if c.end > p.end {
			keep = append(keep, r)
		}
	}
	d.live = keep
}

// betweenSteps sets, for each step window, the time since the end of the
// latest-ending earlier step of the same process and device: the host's
// time between steps, not idle time inside a step.
func betweenSteps(in *Input, wins []*win) {
	type prev struct {
		last trace.Time
		kind step.Kind
	}
	m := map[[2]int32]*prev{}
	for _, w := range wins { // in order of first activity
		if w.step < 0 {
			continue
		}
		kind := in.Steps.List[w.step].Kind
		k := [2]int32{w.proc, w.device}
		p := m[k]
		if p == nil {
			m[k] = &prev{w.last, kind}
			continue
		}
		w.hasPrev, w.betweenFrom = true, p.kind
		w.between = max(0, int64(w.first-p.last))
		if w.last > p.last {
			p.last, p.kind = w.last, kind
		}
	}
}

func procPID(t *trace.Trace, proc int32) int64 {
	if int(proc) < len(t.Procs) {
		return t.Procs[proc].PID
	}
	return 0
}
