package step

import (
	"cmp"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/traceq/traceq/trace"
)

// An Attributor decides which step a launch call, and so a GPU activity,
// belongs to: the rule of Find, one record at a time, so that a
// streaming reader (package slice) attributes exactly as Find does.
//
// The rule (docs/steps.md#attribution): an activity belongs to the step
// whose CPU marker range contains the start of the call that launched it
// (LaunchStep): the innermost marker range open at the call's start on the
// launching thread, or else on any thread of the same process (training
// launches backward kernels from the autograd thread while ProfilerStep#N
// is open on the main thread). Every kernel of a CUDA-graph replay shares
// the cudaGraphLaunch's correlation id and so its step. An activity whose
// launch call is not in the trace falls back to the GPU-side mirror of a
// marker (gpu_user_annotation) containing its start on the same device and
// stream, or else any stream of the device (MirrorStep).
//
// A mirror stands for the step of the first activity inside it, on its
// device and stream, that its launch placed in a step of the mirror's text
// (Observe feeds them; "first" is by start, then duration, correlation id,
// process and kind); failing that, the latest step of that text started
// before the mirror. Without CPU markers the mirrors are the steps, and
// mirrors of one annotation on several streams that overlap in time make
// one step.
//
// Use: NewAttributor from the ranges; LaunchStep for each launch; when
// some activity has no launch call and the trace has mirrors, Observe each
// activity placed by its launch; then Resolve, and MirrorStep for the
// activities without a launch call. Steps returns the steps.
type Attributor struct {
	cpu      []Step // steps from CPU markers, in start order
	cpuSets  map[threadKey]*Innermost
	procSets map[int32]*Innermost
	mirrors  []mirror
	byStream map[streamKey][]int // mirrors of each stream, by start
	maxDur   map[streamKey]trace.Time
	resolved bool
	steps    []Step // after Resolve
	gpuSets  map[streamKey]*Innermost
	devSets  map[int32]*Innermost
	// tooMany counts the markers claiming more than maxTokens tokens
	// (their count ignored); tooManyAt is the first.
	tooMany   int64
	tooManyAt string
}

// mirror is one GPU-side marker range and what Observe found inside it.
type mirror struct {
	start, end     trace.Time
	device, stream int32
	name           string
	best           candidate
	step           int32 // after Resolve; -1 for a mirror of no step
}

// candidate is an activity Observe saw inside a mirror.
type candidate struct {
	ok    bool
	start trace.Time
	dur   int64
	corr  int64
	proc  int32
	kind  trace.Kind
	step  int32
}

func (c *candidate) before(d candidate) bool {
	if !c.ok {
		return false
	}
	if !d.ok {
		return true
	}
	if x := cmp.Compare(c.start, d.start); x != 0 {
		return x < 0
	}
	if x := cmp.Compare(c.dur, d.dur); x != 0 {
		return x < 0
	}
	if x := cmp.Compare(c.corr, d.corr); x != 0 {
		return x < 0
	}
	if x := cmp.Compare(c.proc, d.proc); x != 0 {
		return x < 0
	}
	if x := cmp.Compare(c.kind, d.kind); x != 0 {
		return x < 0
	}
	return c.step < d.step
}

// NewAttributor chooses the step markers among the ranges of t (only
// t.Ranges and t.Names are read) and builds the steps from them. It
// returns nil, and no error, when t has no step marker.
func NewAttributor(t *trace.Trace, opt Options) (*Attributor, error) {
	var re *regexp.Regexp
	if opt.Pattern != "" {
		var err error
		re, err = regexp.Compile(opt.Pattern)
		if err != nil {
			return nil, &PatternError{opt.Pattern, err}
		}
	}
	cpu, gpu := chooseMarkers(t, re)
	if len(cpu) == 0 && len(gpu) == 0 {
		return nil, nil
	}
	a := &Attributor{cpuSets: map[threadKey]*Innermost{}, procSets: map[int32]*Innermost{},
		byStream: map[streamKey][]int{}, maxDur: map[streamKey]trace.Time{}}
	var prev *trace.Range
	for _, r := range cpu {
		// The same range recorded twice (a cpu_op and a user_annotation
		// ProfilerStep#N, say: adjacent in this order) is one step.
		if prev != nil && r.Start == prev.Start && r.Dur == prev.Dur && r.Proc == prev.Proc &&
			r.Thread == prev.Thread && t.Names[r.Name] == t.Names[prev.Name] {
			continue
		}
		prev = r
		name := t.Names[r.Name]
		s := int32(len(a.cpu))
		a.cpu = append(a.cpu, a.newStep(int(s), name, r.Start, r.End(), r.Proc))
		k := threadKey{r.Proc, r.Thread}
		if a.cpuSets[k] == nil {
			a.cpuSets[k] = &Innermost{}
		}
		a.cpuSets[k].Add(r.Start, r.End(), s)
		if a.procSets[r.Proc] == nil {
			a.procSets[r.Proc] = &Innermost{}
		}
		a.procSets[r.Proc].Add(r.Start, r.End(), s)
	}
	for _, v := range a.cpuSets {
		v.Build()
	}
	for _, v := range a.procSets {
		v.Build()
	}
	for _, r := range gpu {
		m := mirror{start: r.Start, end: r.End(), device: r.Device, stream: r.Stream, name: t.Names[r.Name], step: -1}
		k := streamKey{r.Device, r.Stream}
		a.byStream[k] = append(a.byStream[k], len(a.mirrors))
		a.maxDur[k] = max(a.maxDur[k], trace.Time(r.Dur))
		a.mirrors = append(a.mirrors, m)
	}
	return a, nil
}

// maxTokens bounds the tokens of one step: no engine computes a billion
// tokens in one forward pass, so a marker claiming more is corrupt (its
// count is ignored, and counted as odd input).
const maxTokens = 1_000_000_000

// newStep is a step of a marker: the kind and token count its text says,
// else Generic and -1.
func (a *Attributor) newStep(index int, name string, start, end trace.Time, proc int32) Step {
	s := Step{Index: index, Kind: Generic, Marker: name, Start: start, End: end, Proc: proc, Tokens: -1}
	if m, ok := parseMarker(name); ok {
		s.Kind, s.Tokens = m.Kind, m.Tokens
	}
	if s.Tokens > maxTokens {
		s.Tokens = -1
		if a.tooMany == 0 {
			a.tooManyAt = name
		}
		a.tooMany++
	}
	return s
}

// HasCPUMarkers reports whether the steps come from CPU ranges; without
// them, every activity is attributed by the mirrors.
func (a *Attributor) HasCPUMarkers() bool { return len(a.cpu) > 0 }

// HasMirrors reports whether the trace has GPU-side mirrors of its markers.
func (a *Attributor) HasMirrors() bool { return len(a.mirrors) > 0 }

// LaunchStep returns the step of a launch call (an index in Steps), or -1.
func (a *Attributor) LaunchStep(l *trace.Launch) int32 {
	s := a.cpuSets[threadKey{l.Proc, l.Thread}].Find(l.Start)
	if s < 0 {
		s = a.procSets[l.Proc].Find(l.Start)
	}
	return s
}

// Observe takes an activity that its launch call placed in step (>= 0),
// for the mirrors around it.
func (a *Attributor) Observe(act *trace.Activity, step int32) {
	if step < 0 || int(step) >= len(a.cpu) {
		return
	}
	k := streamKey{act.Device, act.Stream}
	list := a.byStream[k]
	if len(list) == 0 {
		return
	}
	// The mirrors containing act.Start started no earlier than maxDur
	// before it.
	i, _ := slices.BinarySearchFunc(list, act.Start+1, func(mi int, x trace.Time) int { return cmp.Compare(a.mirrors[mi].start, x) })
	c := candidate{ok: true, start: act.Start, dur: act.Dur, corr: act.Corr, proc: act.Proc, kind: act.Kind, step: step}
	for j := i - 1; j >= 0; j-- {
		m := &a.mirrors[list[j]]
		if m.start+a.maxDur[k] <= act.Start {
			break
		}
		if act.Start < m.end && m.name == a.cpu[step].Marker && c.before(m.best) {
			m.best = c
		}
	}
}

// Resolve maps the mirrors to steps, after every Observe.
func (a *Attributor) Resolve() {
	if a.resolved {
		return
	}
	a.resolved = true
	a.steps = a.cpu
	a.gpuSets, a.devSets = map[streamKey]*Innermost{}, map[int32]*Innermost{}
	if len(a.cpu) > 0 {
		byName := map[string][]int32{} // CPU steps of each text, by start
		for i := range a.cpu {
			byName[a.cpu[i].Marker] = append(byName[a.cpu[i].Marker], int32(i))
		}
		for i := range a.mirrors {
			m := &a.mirrors[i]
			if m.best.ok {
				m.step = m.best.step
				continue
			}
			list := byName[m.name]
			j, _ := slices.BinarySearchFunc(list, m.start+1, func(si int32, x trace.Time) int {
				return cmp.Compare(a.cpu[si].Start, x)
			})
			if j > 0 {
				m.step = list[j-1]
			}
		}
	} else {
		// The mirrors are the steps.
		last := map[string]int32{} // the last step of each text
		for i := range a.mirrors {
			m := &a.mirrors[i]
			if ls, ok := last[m.name]; ok && m.start < a.steps[ls].End {
				m.step = ls
				a.steps[ls].End = max(a.steps[ls].End, m.end)
				continue
			}
			m.step = int32(len(a.steps))
			a.steps = append(a.steps, a.newStep(len(a.steps), m.name, m.start, m.end, 0))
			last[m.name] = m.step
		}
		a.renumber()
	}
	for i := range a.mirrors {
		m := &a.mirrors[i]
		if m.step < 0 {
			continue // a mirror of a range the trace does not hold
		}
		k := streamKey{m.device, m.stream}
		if a.gpuSets[k] == nil {
			a.gpuSets[k] = &Innermost{}
		}
		a.gpuSets[k].Add(m.start, m.end, m.step)
		if a.devSets[m.device] == nil {
			a.devSets[m.device] = &Innermost{}
		}
		a.devSets[m.device].Add(m.start, m.end, m.step)
	}
	for _, v := range a.gpuSets {
		v.Build()
	}
	for _, v := range a.devSets {
		v.Build()
	}
}

// renumber sorts mirror-made steps by (Start, End, Marker) and remaps
// the mirrors' steps, so that Index follows start order.
func (a *Attributor) renumber() {
	perm := make([]int32, len(a.steps))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(x, y int32) int {
		p, q := &a.steps[x], &a.steps[y]
		if c := cmp.Compare(p.Start, q.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(p.End, q.End); c != 0 {
			return c
		}
		return cmp.Compare(p.Marker, q.Marker)
	})
	newIndex := make([]int32, len(perm))
	steps := make([]Step, len(perm))
	for ni, oi := range perm {
		newIndex[oi] = int32(ni)
		steps[ni] = a.steps[oi]
		steps[ni].Index = ni
	}
	a.steps = steps
	for i := range a.mirrors {
		if s := a.mirrors[i].step; s >= 0 {
			a.mirrors[i].step = newIndex[s]
		}
	}
}

// MirrorStep returns the step of an activity without a launch call: the
// mirror containing its start on its device and stream, or else on any
// stream of the device; -1 for none. Call Resolve first.
func (a *Attributor) MirrorStep(act *trace.Activity) int32 {
	s := a.gpuSets[streamKey{act.Device, act.Stream}].Find(act.Start)
	if s < 0 {
		s = a.devSets[act.Device].Find(act.Start)
	}
	return s
}

// Steps returns the steps: from the start for a trace with CPU markers,
// after Resolve for one whose mirrors are the steps.
func (a *Attributor) Steps() []Step {
	if !a.resolved {
		return a.cpu
	}
	return a.steps
}

// chooseMarkers picks the step marker ranges of t: those matching re, or
// else the built-in family of highest rank that has a CPU range (or, when
// none has, a GPU mirror). One family per trace: SGLang traces carry both
// an execute_…_context_… range and a step[…] range per forward, nested,
// and counting both would make two steps of one. The ranges come in
// trace.CompareRanges' order, with names compared as text so that the
// order does not depend on how names were numbered.
func chooseMarkers(t *trace.Trace, re *regexp.Regexp) (cpu, gpu []*trace.Range) {
	// Classify each distinct name once.
	fam := make([]string, len(t.Names))
	seen := make([]bool, len(t.Names))
	famOf := func(id trace.NameID) string {
		if !seen[id] {
			seen[id] = true
			name := t.Names[id]
			switch {
			case re != nil:
				if re.MatchString(name) {
					fam[id] = familyCustom
				}
			default:
				if m, ok := parseMarker(name); ok {
					fam[id] = m.Family
				}
			}
		}
		return fam[id]
	}
	best, bestGPU := familyNone, familyNone
	better := func(f, cur string) bool {
		return cur == familyNone || familyRank[f] < familyRank[cur]
	}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		f := famOf(r.Name)
		if f == familyNone {
			continue
		}
		if r.Kind == trace.RangeCPU {
			if better(f, best) {
				best = f
			}
		} else if better(f, bestGPU) {
			bestGPU = f
		}
	}
	family := best
	if best == familyNone {
		family = bestGPU
	}
	if family == familyNone {
		return nil, nil
	}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if famOf(r.Name) != family {
			continue
		}
		if r.Kind == trace.RangeCPU {
			cpu = append(cpu, r)
		} else {
			gpu = append(gpu, r)
		}
	}
	order := func(x, y *trace.Range) int {
		if c := trace.CompareRanges(x, y); c == 0 || x.Name == y.Name {
			return c
		}
		// CompareRanges ends with the names' ids; compare the names.
		p, q := *x, *y
		p.Name, q.Name = 0, 0
		if c := trace.CompareRanges(&p, &q); c != 0 {
			return c
		}
		return strings.Compare(t.Names[x.Name], t.Names[y.Name])
	}
	slices.SortStableFunc(cpu, order)
	slices.SortStableFunc(gpu, order)
	return cpu, gpu
}

// pending is the step of an activity without a launch call: left to
// the mirrors.
const pending = -3

// attribute sets the step of activities [from, to) of t by their launch
// calls (launchStep memoises them, atomically: runs share it), pending
// for those without; it returns how many are pending.
func (a *Attributor) attribute(t *trace.Trace, of, launchStep []int32, from, to int) int {
	npending := 0
	lastProc, lastCorr, lastStep := int32(-1), int64(0), int32(-1)
	launches := trace.NewLaunchFinder(t.Launches) // a run's own: it keeps where it is
	for i := from; i < to; i++ {
		act := &t.Activities[i]
		if act.Corr != 0 && act.Proc == lastProc && act.Corr == lastCorr {
			of[i] = lastStep
			continue
		}
		li := -1
		if act.Corr != 0 {
			li = launches.Find(act.Proc, act.Corr)
		}
		if li < 0 || !a.HasCPUMarkers() {
			of[i] = pending
			npending++
			continue
		}
		s := atomic.LoadInt32(&launchStep[li]) - 2
		if s == -2 {
			s = a.LaunchStep(&t.Launches[li])
			atomic.StoreInt32(&launchStep[li], s+2)
		}
		of[i] = s
		lastProc, lastCorr, lastStep = act.Proc, act.Corr, s
	}
	return npending
}

// runMin is the fewest activities eachRun gives a goroutine of their
// own, and runMax, when set, the runs whatever the cores: variables for
// the tests.
var runMin, runMax = 1 << 16, 0

// eachRun calls f on runs [from, to) that cover [0, n), one per core, on
// their own goroutines, and returns when every call has.
func eachRun(n int, f func(from, to int)) {
	runs := runtime.GOMAXPROCS(0)
	if runMax > 0 {
		runs = runMax
	}
	runs = max(1, min(runs, n/runMin))
	var wg sync.WaitGroup
	for j := 1; j < runs; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(j*n/runs, (j+1)*n/runs)
		}()
	}
	f(0, n/runs)
	wg.Wait()
}

// Find finds the step markers of t and assigns every activity to a
// step by the Attributor's rule. It returns nil (and no error) when t has
// no step marker.
//
// Cost: O((N+L) log M) for N activities, L launches, M markers; each
// launch's step is found once, however many kernels it has.
func Find(t *trace.Trace, opt Options) (*Steps, error) {
	a, err := NewAttributor(t, opt)
	if a == nil || err != nil {
		return nil, err
	}
	st := &Steps{Of: make([]int32, len(t.Activities))}
	// launchStep is, per launch call, its step + 2 once looked up (0:
	// not yet); the runs of activities share it.
	launchStep := make([]int32, len(t.Launches))
	var npending atomic.Int64
	eachRun(len(t.Activities), func(from, to int) {
		npending.Add(int64(a.attribute(t, st.Of, launchStep, from, to)))
	})
	if npending.Load() > 0 && a.HasMirrors() && a.HasCPUMarkers() {
		for i := range t.Activities {
			if st.Of[i] >= 0 {
				a.Observe(&t.Activities[i], st.Of[i])
			}
		}
	}
	a.Resolve()
	if npending.Load() > 0 {
		eachRun(len(t.Activities), func(from, to int) {
			for i := from; i < to; i++ {
				if st.Of[i] == pending {
					st.Of[i] = a.MirrorStep(&t.Activities[i])
				}
			}
		})
	}
	st.List = a.Steps()
	if a.tooMany > 0 {
		st.Anomalies = append(st.Anomalies, trace.Anomaly{What: "step marker claiming more than 10⁹ tokens: its count ignored",
			Count: a.tooMany, Example: a.tooManyAt})
	}
	return st, nil
}
