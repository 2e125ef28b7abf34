package window

import (
	"cmp"
	"slices"
	"sync"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// Window is one (rank, device, step) window: the activities of one step
// on one device of one rank (or, without steps, all of them; or those
// outside any step), and their sums (docs/definitions.md#window).
type Window struct {
	Rank   RankID
	Device int32
	// Step is the index of the window's step in its input's Steps.List;
	// -1 for the windows that are not steps.
	Step  int32
	Class step.Class
	// First and Last bound the window's activities: the first start and
	// the last end. Span is Last - First.
	First, Last trace.Time
	KernelNS    int64 // summed durations
	BusyNS      int64 // the union of the activities
	// IdleNS is the time in [First, Last) when the device ran nothing at
	// all (stepped inputs), or nothing of the window's rank (a whole
	// trace); Idle splits it by cause.
	IdleNS int64
	Idle   IdleSplit
	// Cats sums the activities per category (folded with Options.ByTop),
	// by category id; Names per activity name, by name id.
	Cats  []CatSum
	Names []NameSum
	// Launches describes the launch calls whose first activity is in the
	// window, per API, by API name.
	Launches []LaunchSum
	// Comm is the window's communication time and the part of it no other
	// activity overlapped.
	Comm CommStat
	// BetweenNS is the time from the end of the latest-ending earlier step
	// of the rank's device to the window's first activity (0 when that
	// step is still running); From is that step's kind. HasPrev is false
	// for a device's first step and for windows that are not steps.
	BetweenNS int64
	From      step.Kind
	HasPrev   bool
}

// SpanNS is the window's span: from its first activity's start to its
// last activity's end.
func (w *Window) SpanNS() int64 { return int64(w.Last - w.First) }

// Cat returns the window's sums of category id (zero when it has none).
func (w *Window) Cat(id CatID) CatSum {
	for _, c := range w.Cats {
		if c.Cat == id {
			return c
		}
	}
	return CatSum{Cat: id}
}

// Name returns the window's sums of name id, over its categories (a
// collective kernel's category can follow its args: see
// Table.ActivityCategory); zero when it has none.
func (w *Window) Name(id NameID) NameSum {
	i, _ := slices.BinarySearchFunc(w.Names, id, func(n NameSum, id NameID) int { return cmp.Compare(n.Name, id) })
	sum := NameSum{Name: id, Cat: -1}
	for ; i < len(w.Names) && w.Names[i].Name == id; i++ {
		if sum.Cat < 0 {
			sum.Cat = w.Names[i].Cat
		}
		sum.N += w.Names[i].N
		sum.TotalNS += w.Names[i].TotalNS
	}
	return sum
}

// CatSum is one category's activities in a window.
type CatSum struct {
	Cat      CatID
	KernelNS int64 // summed durations
	BusyNS   int64 // the union of the category's activities
	N        int64 // activities
}

// NameSum is one name's activities of one category in a window (a name
// has one category, unless its kernels' collective args say otherwise).
type NameSum struct {
	Name    NameID
	Cat     CatID // the activities' full category (never folded)
	N       int64
	TotalNS int64
}

// LaunchSum is the launch calls of one API in a window.
type LaunchSum struct {
	API   string
	Calls int64
	// CPUNS is the time spent inside the calls (their summed durations).
	CPUNS int64
	// LaunchToStart holds, per call, its first activity's start minus the
	// call's start.
	LaunchToStart []int64
}

// IdleSplit splits idle time by what the device waited for.
// LaunchBoundNS + DeviceSideNS + UnknownNS is the idle time exactly.
type IdleSplit struct {
	// LaunchBoundNS is idle time ended by work whose launch call started
	// at or after the device ran dry: the host had not yet asked for it.
	LaunchBoundNS int64
	// DeviceSideNS is idle time ended by work launched before the device
	// ran dry: it was queued, and the device waited on something else.
	DeviceSideNS int64
	// UnknownNS is idle time ended by work whose launch call is not in
	// the trace.
	UnknownNS int64
}

// Total is the idle time the split covers.
func (s IdleSplit) Total() int64 { return s.LaunchBoundNS + s.DeviceSideNS + s.UnknownNS }

// Add adds o to s.
func (s *IdleSplit) Add(o IdleSplit) {
	s.LaunchBoundNS += o.LaunchBoundNS
	s.DeviceSideNS += o.DeviceSideNS
	s.UnknownNS += o.UnknownNS
}

// CommStat is communication time: BusyNS is the union of the
// communication activities, ExposedNS the part of it when the device ran
// no other (non-communication) activity.
type CommStat struct {
	BusyNS    int64
	ExposedNS int64
}

// Add adds o to c.
func (c *CommStat) Add(o CommStat) {
	c.BusyNS += o.BusyNS
	c.ExposedNS += o.ExposedNS
}

// win accumulates one window during the pass.
type win struct {
	rank   RankID
	proc   int32
	device int32
	step   int32 // index in Steps.List, -1 for none
	first  trace.Time
	last   trace.Time
	kernel int64
	busy   union
	// idle is the time in [first, last) when the device ran nothing at
	// all (stepped inputs), or the window's own activities nothing (the
	// whole trace): the gaps idleScan splits by cause.
	idle int64
	// cats is indexed by CatID (a table has a few dozen): no map lookup
	// per activity.
	cats  []*catAcc
	ncats int
	// names are the window's sums per name and category, in order of
	// first activity; index finds them by key, made when the name pass's
	// cache cannot (nameCache), nil until then.
	names []nameAcc
	index map[nameCat]int32
	// lost is set when the window's row of the name cache was taken by
	// another window: its names are then not all in the cache.
	lost bool
	// into is the window of the same key of an earlier part of the pass
	// that absorbed this one (part.absorb); nil when none did.
	into *win
	windowIdle
}

// nameCat keys a window's names: a name and the category its activities
// have.
type nameCat struct {
	name NameID
	cat  CatID
}

type catAcc struct {
	kernel int64
	n      int64
	busy   union
}

type nameAcc struct {
	key   nameCat
	n     int64
	total int64
	// durs is, for memory operations and kernels, the slot + 1 of the
	// activities' durations (durations.slot), 0 until the first: the
	// window's device and class and the name's category are its key.
	durs [2]int
}

type winKey struct {
	proc, device, step int32
}

// add reduces one input to its windows: one pass over its activities.
func (t *Table) add(in Input) error {
	sv := surveyOf(&in, passParts())
	if err := t.checkSums(&in, sv); err != nil {
		return err
	}
	describe(&in, sv)
	ii := len(t.Inputs)
	t.Inputs = append(t.Inputs, in)
	tr := in.Trace
	firstRank := t.addRanks(ii, sv)
	rankOf := make([]RankID, max(len(tr.Procs), 1))
	for _, r := range t.Ranks[firstRank:] {
		rankOf[r.Proc] = r.ID
	}
	// Each name's table name and category, found once: the one per-name
	// category cache of the analyses.
	nameOf := make([]NameID, len(tr.Names))
	catOf := make([]CatID, len(tr.Names))
	for i := range nameOf {
		nameOf[i], catOf[i] = -1, -1
	}
	for _, r := range sv.ranges {
		for _, i := range r.firsts {
			a := &tr.Activities[i]
			if nameOf[a.Name] >= 0 {
				continue
			}
			s := tr.Names[a.Name]
			nameOf[a.Name] = t.nameID(s)
			catOf[a.Name] = t.catID(activityCategory(a, s, t.opt.Classifier))
			if m, ok := tr.Mangled[a.Name]; ok {
				if t.mangled == nil {
					t.mangled = map[NameID]string{}
				}
				if _, seen := t.mangled[nameOf[a.Name]]; !seen {
					t.mangled[nameOf[a.Name]] = m
				}
			}
		}
	}
	t.nameOf = append(t.nameOf, nameOf)
	t.catOf = append(t.catOf, catOf)
	t.actCat = append(t.actCat, nil)
	scan := newIdleScan(t, tr, in.Steps != nil, catOf)
	scan.onGap = t.opt.Gaps
	// A collective kernel whose name does not say its op
	// (communication/other: ncclDevKernel_Generic) takes the category of
	// the op its args name, and a send/recv kernel that of an all-to-all
	// (PyTorch runs all_to_all as NCCL's grouped sends and receives): its
	// own, per activity, kept in actCat when it differs from its name's.
	args := newArgs(tr)
	t.Inputs[ii].args = args
	var byArgs []bool // per trace.NameID: a communication/other or send_recv kernel name
	if args != nil {
		byArgs = make([]bool, len(tr.Names))
		for id, c := range catOf {
			byArgs[id] = c >= 0 && (t.cats[c] == genericComm || t.cats[c] == sendRecvComm)
		}
	}
	if byArgs != nil && slices.Contains(byArgs, true) {
		// Every activity's category is known before the pass, which
		// may then run in parts on several goroutines: finding one may
		// add a category to the table.
		for i := range tr.Activities {
			a := &tr.Activities[i]
			t.argsCategory(ii, i, a, catOf[a.Name], byArgs, args)
		}
	}
	var classOf func(s int32) step.Class // per step index
	if in.Steps != nil {
		cls := make([]step.Class, len(in.Steps.List)+1) // [0]: outside any step
		for j := range cls {
			cls[j] = in.Steps.Class(int32(j - 1))
		}
		classOf = func(s int32) step.Class { return cls[s+1] }
	} else {
		classOf = func(int32) step.Class { return step.WholeTrace }
	}
	at := passCutsOf(tr.Activities, len(sv.ranges), scan.onGap == nil, sv.rangeEnds())
	ps := make([]*part, len(at)-1)
	var of []int32 // per activity: its durations' slot (durations.of), shared by the parts
	if !t.opt.SkipDurations {
		of = make([]int32, len(tr.Activities))
	}
	for j := range ps {
		sc := scan
		if j > 0 {
			sc = scan.fork()
		}
		ps[j] = &part{t: t, in: &in, from: at[j], to: at[j+1], rankOf: rankOf, catOf: catOf, actCat: t.actCat[ii], scan: sc,
			names: newNamePass(tr, nameOf, catOf, classOf, t.opt.SkipDurations, args, of), m: map[winKey]*win{}}
	}
	if len(ps) == 1 {
		// One part: the name pass runs beside it, on a second goroutine.
		ps[0].names.start()
		ps[0].run()
		ps[0].names.wait()
	} else {
		var wg sync.WaitGroup
		for _, p := range ps[1:] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.run()
			}()
		}
		ps[0].run()
		wg.Wait()
	}
	for _, p := range ps {
		p.scan.closeComm(p.wins)
	}
	for _, p := range ps[1:] {
		ps[0].absorb(p)
	}
	p0 := ps[0]
	wins := p0.wins
	durs, colls := &p0.names.durs, &p0.names.colls
	// Sorting the durations (a tenth of a second a GB of trace) overlaps
	// with the windows' sums: with one input, nothing else runs then.
	sorted := make(chan []Durations, 1)
	go func() { sorted <- durs.done(tr.Activities) }()
	t.EmptyLaunches = append(t.EmptyLaunches, scan.finish(&in, wins, rankOf, launchWindow(ps))...)
	t.Windows = slices.Grow(t.Windows, len(wins))
	for _, w := range wins {
		t.Windows = append(t.Windows, w.done(in.Steps))
	}
	t.Inputs[ii].Collectives = colls.done()
	t.Inputs[ii].Durations = <-sorted
	return nil
}

// recentWins remembers the last windows looked up: the ranks and devices
// of an input interleave their activities, each in its own window, and
// comparing a few keys is cheaper than hashing one per activity.
type recentWins struct {
	keys [4]winKey
	wins [4]*win
	next int
}

func (r *recentWins) find(k winKey) *win {
	for i := range r.keys {
		if r.keys[i] == k && r.wins[i] != nil {
			return r.wins[i]
		}
	}
	return nil
}

func (r *recentWins) put(k winKey, w *win) {
	r.keys[r.next], r.wins[r.next] = k, w
	r.next = (r.next + 1) % len(r.keys)
}

// done is the window's final sums.
func (w *win) done(st *step.Steps) Window {
	out := Window{Rank: w.rank, Device: w.device, Step: w.step, Class: st.Class(w.step), First: w.first, Last: w.last,
		KernelNS: w.kernel, BusyNS: w.busy.sum(), IdleNS: w.idle, Idle: w.split,
		BetweenNS: w.between, From: w.betweenFrom, HasPrev: w.hasPrev}
	out.Cats = make([]CatSum, 0, w.ncats)
	for id, c := range w.cats { // in CatID order
		if c != nil {
			out.Cats = append(out.Cats, CatSum{Cat: CatID(id), KernelNS: c.kernel, BusyNS: c.busy.sum(), N: c.n})
		}
	}
	out.Names = make([]NameSum, 0, len(w.names))
	for _, n := range w.names {
		out.Names = append(out.Names, NameSum{Name: n.key.name, Cat: n.key.cat, N: n.n, TotalNS: n.total})
	}
	slices.SortFunc(out.Names, func(a, b NameSum) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Cat, b.Cat)) })
	if len(w.launches) > 0 {
		out.Launches = make([]LaunchSum, 0, len(w.launches))
		for api, l := range w.launches {
			out.Launches = append(out.Launches, LaunchSum{API: api, Calls: l.calls, CPUNS: l.cpu, LaunchToStart: l.latency})
		}
		slices.SortFunc(out.Launches, func(a, b LaunchSum) int { return cmp.Compare(a.API, b.API) })
	}
	out.Comm = CommStat{BusyNS: w.commBusy, ExposedNS: w.commBusy - w.commHidden}
	return out
}

// union accumulates the length of a union of intervals fed in order of
// start. It is the busy-time counter: overlaps count once.
type union struct {
	total      int64
	start, end trace.Time
	open       bool
}

func (u *union) add(s, e trace.Time) {
	if !u.open {
		u.start, u.end, u.open = s, e, true
		return
	}
	if s > u.end {
		u.total += int64(u.end - u.start)
		u.start, u.end = s, e
		return
	}
	if e > u.end {
		u.end = e
	}
}

// sum returns the union's length so far.
func (u *union) sum() int64 {
	if !u.open {
		return u.total
	}
	return u.total + int64(u.end-u.start)
}

// genericComm is the category of a collective kernel whose name does not
// say its op; sendRecvComm that of NCCL's send/recv kernels, which an
// all-to-all runs as.
var (
	genericComm  = classify.Category{Top: classify.Communication, Sub: "other"}
	sendRecvComm = classify.Category{Top: classify.Communication, Sub: "send_recv"}
	allToAllComm = classify.Category{Top: classify.Communication, Sub: "all_to_all"}
)

// argsCategory is the full category of activity i of input ii, a.Name's
// being full: when the name is a generic collective kernel's (byArgs),
// the category of the op its collective args (or the nccl:OP range it was
// launched in: Args.OpName) name; when it is a send/recv kernel's and
// that op is an all-to-all, communication/all_to_all; else full. It
// records the activity's category when it differs from its name's.
func (t *Table) argsCategory(ii, i int, a *trace.Activity, full CatID, byArgs []bool, args *Args) CatID {
	cat := full
	if byArgs[a.Name] && a.Kind == trace.KindKernel {
		if name := args.OpName(a); name != "" {
			if op, ok := classify.CollectiveCategory(name); ok && (t.cats[full] == genericComm || op == allToAllComm) {
				cat = t.catID(op)
			}
		}
	}
	ac := t.actCat[ii]
	if ac == nil && cat != full {
		// The first activity of another category than its name's: from
		// here on every activity's is kept.
		acts := t.Inputs[ii].Trace.Activities
		ac = make([]CatID, len(acts))
		for j := range i {
			ac[j] = t.catOf[ii][acts[j].Name]
		}
		t.actCat[ii] = ac
	}
	if ac != nil {
		ac[i] = cat
	}
	return cat
}
