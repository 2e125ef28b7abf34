package analyze_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// The idle oracle: a second, deliberately plain reading of the definitions
// of docs/definitions.md ("Idle time by cause"), written from them and not
// from analyze/idle.go: maps, sorting and scans instead of one streaming
// pass.

type idleWinKey struct {
	proc, dev, step int32
}

type idleWin struct {
	key         idleWinKey
	first, last trace.Time
	firstIdx    int // index of its first activity
	acts        []int
}

type idleKey struct {
	proc, dev int32
	kind      step.Class
}

type idleCalls struct {
	calls, cpu int64
	lat        []int64
}

type idleGroupO struct {
	idle     window.IdleSplit
	between  int64
	gaps     int
	launches map[string]*idleCalls
	comm     window.CommStat
}

type idleResult struct {
	groups map[idleKey]*idleGroupO
	rows   map[idleWinKey]window.IdleSplit // step windows
	empty  map[string]*idleCalls           // "pid api"
}

type ispan struct{ s, e trace.Time }

// unionOf merges the intervals of acts (indices into t.Activities).
func unionOf(t *trace.Trace, acts []int) []ispan {
	iv := make([]ispan, 0, len(acts))
	for _, i := range acts {
		a := &t.Activities[i]
		iv = append(iv, ispan{a.Start, a.End()})
	}
	slices.SortFunc(iv, func(a, b ispan) int { return cmp.Compare(a.s, b.s) })
	var out []ispan
	for _, x := range iv {
		if n := len(out); n > 0 && x.s <= out[n-1].e {
			out[n-1].e = max(out[n-1].e, x.e)
			continue
		}
		out = append(out, x)
	}
	return out
}

func overlap(a, b []ispan) int64 {
	var sum int64
	for _, x := range a {
		for _, y := range b {
			if ov := min(x.e, y.e) - max(x.s, y.s); ov > 0 {
				sum += int64(ov)
			}
		}
	}
	return sum
}

func oPercentile(sorted []int64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := p / 100 * float64(len(sorted)-1)
	lo := int(pos)
	if lo+1 >= len(sorted) {
		return float64(sorted[len(sorted)-1])
	}
	return float64(sorted[lo]) + (pos-float64(lo))*float64(sorted[lo+1]-sorted[lo])
}

func idleOracle(t *trace.Trace, st *step.Steps) *idleResult {
	cl := classify.Default()
	kindOf := func(s int32) step.Class {
		switch {
		case st == nil:
			return step.WholeTrace
		case s < 0:
			return step.Unattributed
		}
		return step.ClassOf(st.List[s].Kind)
	}
	// Launch calls by (proc, corr); the earliest is the activity's call.
	type pc struct {
		proc int32
		corr int64
	}
	calls := map[pc][]*trace.Launch{}
	for i := range t.Launches {
		l := &t.Launches[i]
		calls[pc{l.Proc, l.Corr}] = append(calls[pc{l.Proc, l.Corr}], l)
	}
	callOf := func(a *trace.Activity) *trace.Launch {
		if a.Corr == 0 {
			return nil
		}
		var best *trace.Launch
		for _, l := range calls[pc{a.Proc, a.Corr}] {
			if best == nil || l.Start < best.Start {
				best = l
			}
		}
		return best
	}
	wins := map[idleWinKey]*idleWin{}
	for i := range t.Activities {
		a := &t.Activities[i]
		k := idleWinKey{a.Proc, a.Device, 0}
		if st != nil {
			k.step = st.Of[i]
		}
		w := wins[k]
		if w == nil {
			w = &idleWin{key: k, first: a.Start, last: a.End(), firstIdx: i}
			wins[k] = w
		}
		w.first, w.last = min(w.first, a.Start), max(w.last, a.End())
		w.acts = append(w.acts, i)
	}
	// The scope whose gaps are idle time: the device, or the window.
	scopeActs := map[idleWinKey][]int{}
	scopeOf := func(w *idleWin) idleWinKey {
		if st != nil {
			return idleWinKey{-1, w.key.dev, -1}
		}
		return w.key
	}
	for _, w := range wins {
		scopeActs[scopeOf(w)] = append(scopeActs[scopeOf(w)], w.acts...)
	}
	type scopeInfo struct {
		pieces []ispan
		starts map[trace.Time][]int
	}
	scopes := map[idleWinKey]*scopeInfo{}
	for k, acts := range scopeActs {
		si := &scopeInfo{pieces: unionOf(t, acts), starts: map[trace.Time][]int{}}
		for _, i := range acts {
			si.starts[t.Activities[i].Start] = append(si.starts[t.Activities[i].Start], i)
		}
		scopes[k] = si
	}
	res := &idleResult{groups: map[idleKey]*idleGroupO{}, rows: map[idleWinKey]window.IdleSplit{}, empty: map[string]*idleCalls{}}
	group := func(w *idleWin) *idleGroupO {
		k := idleKey{w.key.proc, w.key.dev, kindOf(w.key.step)}
		g := res.groups[k]
		if g == nil {
			g = &idleGroupO{launches: map[string]*idleCalls{}}
			res.groups[k] = g
		}
		return g
	}
	isComm := func(i int) bool {
		a := &t.Activities[i]
		return a.Kind == trace.KindKernel && cl.Classify(t.Names[a.Name]).Top == classify.Communication
	}
	others := map[int32][]ispan{} // per device: the union of its non-communication activities
	for _, w := range wins {
		si := scopes[scopeOf(w)]
		var split window.IdleSplit
		for p := 1; p < len(si.pieces); p++ {
			gs, ge := si.pieces[p-1].e, si.pieces[p].s
			if gs < w.first || ge > w.last {
				continue
			}
			var best *trace.Launch
			for _, i := range si.starts[ge] {
				if l := callOf(&t.Activities[i]); l != nil && (best == nil || l.Start < best.Start) {
					best = l
				}
			}
			switch {
			case best == nil:
				split.UnknownNS += int64(ge - gs)
			case best.Start >= gs:
				split.LaunchBoundNS += int64(ge - gs)
			default:
				split.DeviceSideNS += int64(ge - gs)
			}
		}
		g := group(w)
		g.idle.LaunchBoundNS += split.LaunchBoundNS
		g.idle.DeviceSideNS += split.DeviceSideNS
		g.idle.UnknownNS += split.UnknownNS
		if st != nil && w.key.step >= 0 {
			res.rows[w.key] = split
		}
		// Communication: the window's own, against every other activity
		// of the device.
		var comm []int
		for _, i := range w.acts {
			if isComm(i) {
				comm = append(comm, i)
			}
		}
		if len(comm) == 0 {
			continue
		}
		if _, ok := others[w.key.dev]; !ok {
			var other []int
			for i := range t.Activities {
				if t.Activities[i].Device == w.key.dev && !isComm(i) {
					other = append(other, i)
				}
			}
			others[w.key.dev] = unionOf(t, other)
		}
		cu := unionOf(t, comm)
		var busy int64
		for _, p := range cu {
			busy += int64(p.e - p.s)
		}
		g.comm.BusyNS += busy
		g.comm.ExposedNS += busy - overlap(cu, others[w.key.dev])
	}
	// Between steps, per process and device, in order of first activity.
	if st != nil {
		var order []*idleWin
		for _, w := range wins {
			if w.key.step >= 0 {
				order = append(order, w)
			}
		}
		slices.SortFunc(order, func(a, b *idleWin) int { return cmp.Compare(a.firstIdx, b.firstIdx) })
		for i, w := range order {
			var prev *idleWin
			for _, p := range order[:i] {
				if p.key.proc == w.key.proc && p.key.dev == w.key.dev && (prev == nil || p.last > prev.last) {
					prev = p
				}
			}
			if prev == nil {
				continue
			}
			g := group(w)
			g.gaps++
			g.between += max(0, int64(w.first-prev.last))
		}
	}
	// Launch calls, by the window of their first activity.
	byCorr := map[pc][]int{}
	for i := range t.Activities {
		a := &t.Activities[i]
		if a.Corr != 0 {
			byCorr[pc{a.Proc, a.Corr}] = append(byCorr[pc{a.Proc, a.Corr}], i)
		}
	}
	for i := range t.Launches {
		l := &t.Launches[i]
		api := t.Names[l.Name]
		acts := byCorr[pc{l.Proc, l.Corr}]
		if len(acts) == 0 {
			k := fmt.Sprintf("%d %s", t.Procs[l.Proc].PID, api)
			if res.empty[k] == nil {
				res.empty[k] = &idleCalls{}
			}
			res.empty[k].calls++
			res.empty[k].cpu += l.Dur
			continue
		}
		first := acts[0] // activities are in start order
		k := idleWinKey{l.Proc, t.Activities[first].Device, 0}
		if st != nil {
			k.step = st.Of[first]
		}
		g := group(wins[k])
		ol := g.launches[api]
		if ol == nil {
			ol = &idleCalls{}
			g.launches[api] = ol
		}
		ol.calls++
		ol.cpu += l.Dur
		ol.lat = append(ol.lat, int64(t.Activities[first].Start-l.Start))
	}
	return res
}

// checkIdle compares Breakdown's idle figures for in with the oracle's.
func checkIdle(t *testing.T, in window.Input) *analyze.GroupTable {
	t.Helper()
	tbl, err := window.Build([]window.Input{in}, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := analyze.Breakdown(tbl, analyze.Options{})
	o := idleOracle(in.Trace, in.Steps)
	if len(r.Groups) != len(o.groups) {
		t.Errorf("%s: %d groups, oracle %d", in.Path, len(r.Groups), len(o.groups))
	}
	for _, g := range r.Groups {
		og := o.groups[idleKey{g.Rank.Proc, g.Device, g.Class}]
		if og == nil {
			t.Errorf("%s: group %d/%d/%s not in the oracle", in.Path, g.Rank.Proc, g.Device, g.Class)
			continue
		}
		name := fmt.Sprintf("%s device %d %s", in.Path, g.Device, g.Class)
		if g.Idle != og.idle || g.IdleNS != g.Idle.Total() {
			t.Errorf("%s: idle %d split %+v, oracle %+v", name, g.IdleNS, g.Idle, og.idle)
		}
		if g.BetweenStepsNS != og.between || g.BetweenStepGaps != og.gaps {
			t.Errorf("%s: between steps %d in %d gaps, oracle %d in %d", name, g.BetweenStepsNS, g.BetweenStepGaps, og.between, og.gaps)
		}
		if g.Comm != og.comm {
			t.Errorf("%s: communication %+v, oracle %+v", name, g.Comm, og.comm)
		}
		if len(g.Launches) != len(og.launches) {
			t.Errorf("%s: %d launch APIs, oracle %d", name, len(g.Launches), len(og.launches))
		}
		var cpu int64
		for _, l := range g.Launches {
			ol := og.launches[l.API]
			if ol == nil {
				t.Errorf("%s: launch API %s not in the oracle", name, l.API)
				continue
			}
			slices.Sort(ol.lat)
			want := analyze.LaunchStat{API: l.API, Calls: ol.calls, CPUNS: ol.cpu,
				LaunchToStart: stats.Dist{P50: oPercentile(ol.lat, 50), P90: oPercentile(ol.lat, 90), Max: ol.lat[len(ol.lat)-1]}}
			if l.API != want.API || l.Calls != want.Calls || l.CPUNS != want.CPUNS || l.LaunchToStart.Max != want.LaunchToStart.Max ||
				math.Abs(l.LaunchToStart.P50-want.LaunchToStart.P50) > 1e-6 || math.Abs(l.LaunchToStart.P90-want.LaunchToStart.P90) > 1e-6 {
				t.Errorf("%s: launches %+v, oracle %+v", name, l, want)
			}
			cpu += l.CPUNS
		}
		if cpu != g.LaunchCPUNS {
			t.Errorf("%s: launch CPU %d, summed %d", name, g.LaunchCPUNS, cpu)
		}
	}
	{
		for _, row := range r.Steps {
			proc := row.Rank.Proc
			if want := o.rows[idleWinKey{proc, row.Device, int32(row.Step.Index)}]; row.Idle != want || row.IdleNS != want.Total() {
				t.Errorf("%s: step %d device %d: idle %d split %+v, oracle %+v", in.Path, row.Step.Index, row.Device, row.IdleNS, row.Idle, want)
			}
		}
	}
	if len(tbl.EmptyLaunches) != len(o.empty) {
		t.Errorf("%s: %d empty launch rows, oracle %d", in.Path, len(tbl.EmptyLaunches), len(o.empty))
	}
	for _, e := range tbl.EmptyLaunches {
		if oe := o.empty[fmt.Sprintf("%d %s", tbl.Ranks[e.Rank].PID, e.API)]; oe == nil || oe.calls != e.Calls || oe.cpu != e.CPUNS {
			t.Errorf("%s: empty launches %+v, oracle %+v", in.Path, e, oe)
		}
	}
	return r
}

// TestIdleRandom checks random traces against the oracle: two processes
// sharing two devices, activities starting together, zero durations,
// calls sharing a correlation id, calls without activity and activities
// without call, steps overlapping and activities of no step.
func TestIdleRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 15))
	names := []string{"nvjet_tst_128x64_64x8_1x2_h_bz_coopA_TNT",
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "Memcpy HtoD (Pinned -> Device)"}
	apis := []string{"cudaLaunchKernel", "cudaGraphLaunch", "cuLaunchKernelEx", "cudaMemcpyAsync"}
	for iter := range 400 {
		in := trace.NewInterner()
		tr := &trace.Trace{Procs: []trace.Proc{{PID: 100, Rank: -1}, {PID: 200, Rank: -1}}, Meta: trace.Meta{Rank: -1, WorldSize: -1}}
		nsteps := 1 + rng.IntN(4)
		stepped := rng.IntN(3) > 0
		type home struct {
			dev, step int32
		}
		homes := map[[2]int64]home{} // a call's activities share its device and step
		n := 1 + rng.IntN(60)
		type tagged struct {
			a    trace.Activity
			step int32
		}
		var acts []tagged
		for range n {
			proc := int32(rng.IntN(2))
			corr := int64(0)
			if rng.IntN(6) > 0 {
				corr = 1 + rng.Int64N(25)
			}
			h, ok := homes[[2]int64{int64(proc), corr}]
			if !ok || corr == 0 {
				h = home{int32(rng.IntN(2)), int32(rng.IntN(nsteps+1)) - 1}
				homes[[2]int64{int64(proc), corr}] = h
			}
			ni := rng.IntN(len(names))
			kind := trace.KindKernel
			if ni == 2 {
				kind = trace.KindMemcpy
			}
			dur := rng.Int64N(60)
			if rng.IntN(8) == 0 {
				dur = 0
			}
			acts = append(acts, tagged{trace.Activity{Start: trace.Time(10 * rng.Int64N(150)), Dur: dur, Corr: corr,
				Name: in.ID(names[ni]), Device: h.dev, Stream: int32(rng.IntN(3)), Proc: proc, Kind: kind}, h.step})
		}
		for proc := range int32(2) {
			for corr := int64(1); corr <= 30; corr++ {
				for range rng.IntN(3) { // 0, 1 or 2 calls
					tr.Launches = append(tr.Launches, trace.Launch{Start: trace.Time(rng.Int64N(1600) - 100), Dur: rng.Int64N(40),
						Corr: corr, Name: in.ID(apis[rng.IntN(len(apis))]), Proc: proc, Thread: 1})
				}
			}
		}
		slices.SortStableFunc(acts, func(a, b tagged) int { return trace.CompareActivities(&a.a, &b.a) })
		var of []int32
		for _, x := range acts {
			tr.Activities = append(tr.Activities, x.a)
			of = append(of, x.step)
		}
		tr.Names = in.Names()
		slices.SortFunc(tr.Launches, func(a, b trace.Launch) int { return trace.CompareLaunches(&a, &b) })
		if err := tr.CheckValid(); err != nil {
			t.Fatal(err)
		}
		input := window.Input{Path: fmt.Sprintf("random%d", iter), Trace: tr}
		if stepped {
			st := &step.Steps{Of: of}
			kinds := []step.Kind{step.Decode, step.Prefill, step.Mixed}
			for i := range nsteps {
				st.List = append(st.List, step.Step{Index: i, Kind: kinds[rng.IntN(len(kinds))]})
			}
			input.Steps = st
		}
		checkIdle(t, input)
		if t.Failed() {
			t.Fatalf("iteration %d failed", iter)
		}
	}
}
