package analyze

import (
	"cmp"
	"regexp"
	"slices"

	"github.com/traceq/traceq/trace"
)

// Steps segments one input into steps and assigns activities to them.
type Steps struct {
	List []Step
	// Of holds, for each activity (by index in Trace.Activities), the
	// index in List of the step it belongs to, or -1 for none.
	Of []int32
}

// Step is one step window found from a marker range.
type Step struct {
	Index  int // position among the input's steps, from 0
	Kind   StepKind
	Marker string
	// Tokens is the number of tokens the step computed, from its marker
	// (Marker.Tokens); -1 when the marker does not say.
	Tokens int64
	// Start and End bound the marker range (CPU side, or the GPU mirror
	// for a trace without CPU markers).
	Start trace.Time
	End   trace.Time
	Proc  int32
}

// PatternError reports a --step pattern that is not a regular expression.
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string { return "--step " + e.Pattern + ": " + e.Err.Error() }
func (e *PatternError) Unwrap() error { return e.Err }

// StepOptions configures FindSteps.
type StepOptions struct {
	// Pattern, when set, is a regular expression naming the step marker
	// ranges; it replaces the built-in markers. A matching range whose text
	// is also a built-in marker keeps that marker's kind; others are kind
	// "step".
	Pattern string
}

// stepSource is the marker ranges FindSteps chose.
type stepSource struct {
	family string
	cpu    []int // indices in t.Ranges
	gpu    []int
}

// FindSteps finds the step markers of t and assigns every activity to a
// step. It returns nil (and no error) when t has no step marker.
//
// Attribution: an activity belongs to the step whose CPU marker range
// contains the start of the CPU call that launched it: the correlation id
// leads to the launch call (t.FindLaunch's lookup), then to the innermost
// marker range open at the launch's start on the launching thread, or else
// on any other thread of the same process (training launches backward
// kernels from the autograd thread while ProfilerStep#N is open on the main
// thread). Every kernel of a CUDA-graph replay shares the cudaGraphLaunch's
// correlation id and so its step; kernels still running after the range
// closed stay in it. An activity whose launch is not in the trace (no
// correlation id, or its launch call lost) falls back to the GPU-side
// mirror of a marker (gpu_user_annotation) containing its start on the
// same device and stream, or else any stream of the device (mirrorSteps
// says which step a mirror stands for). Anything else belongs to no step
// (-1).
//
// Cost: O((N+L) log M) for N activities, L launches, M markers.
func FindSteps(t *trace.Trace, opt StepOptions) (*Steps, error) {
	var re *regexp.Regexp
	if opt.Pattern != "" {
		var err error
		re, err = regexp.Compile(opt.Pattern)
		if err != nil {
			return nil, &PatternError{opt.Pattern, err}
		}
	}
	src := chooseMarkers(t, re)
	if len(src.cpu) == 0 && len(src.gpu) == 0 {
		return nil, nil
	}
	st := &Steps{Of: make([]int32, len(t.Activities))}
	newStep := func(index int, name string, start, end trace.Time, proc int32) Step {
		s := Step{Index: index, Kind: KindStep, Marker: name, Start: start, End: end, Proc: proc, Tokens: -1}
		if m, ok := ParseMarker(name); ok {
			s.Kind, s.Tokens = m.Kind, m.Tokens
		}
		return s
	}
	// Steps come from the CPU ranges; GPU mirrors map onto them. A trace
	// with mirrors only (its CPU side cut off) gets its steps from them.
	cpuSets := map[threadKey]*Innermost{}
	procSets := map[int32]*Innermost{}
	var prev *trace.Range
	var stepName []trace.NameID // each step's marker text
	for _, ri := range src.cpu {
		r := &t.Ranges[ri]
		// The same range recorded twice (a cpu_op and a user_annotation
		// ProfilerStep#N, say: adjacent in the canonical order) is one step.
		if prev != nil && r.Start == prev.Start && r.Dur == prev.Dur && r.Proc == prev.Proc &&
			r.Thread == prev.Thread && r.Name == prev.Name {
			continue
		}
		prev = r
		stepName = append(stepName, r.Name)
		s := int32(len(st.List))
		st.List = append(st.List, newStep(int(s), t.Names[r.Name], r.Start, r.End(), r.Proc))
		k := threadKey{r.Proc, r.Thread}
		if cpuSets[k] == nil {
			cpuSets[k] = &Innermost{}
		}
		cpuSets[k].Add(r.Start, r.End(), s)
		if procSets[r.Proc] == nil {
			procSets[r.Proc] = &Innermost{}
		}
		procSets[r.Proc].Add(r.Start, r.End(), s)
	}
	for _, v := range cpuSets {
		v.Build()
	}
	for _, v := range procSets {
		v.Build()
	}

	// Each launch's step is computed once, however many kernels it has.
	launchStep := make([]int32, len(t.Launches))
	for i := range launchStep {
		launchStep[i] = -2
	}
	const pending = -3 // no launch: left to the GPU mirrors
	npending := 0
	lastProc, lastCorr, lastStep := int32(-1), int64(0), int32(-1)
	for i := range t.Activities {
		a := &t.Activities[i]
		if a.Corr != 0 && a.Proc == lastProc && a.Corr == lastCorr {
			st.Of[i] = lastStep
			continue
		}
		li := -1
		if a.Corr != 0 {
			li = launchIndex(t, a.Proc, a.Corr)
		}
		if li < 0 || len(src.cpu) == 0 {
			st.Of[i] = pending
			npending++
			continue
		}
		if launchStep[li] == -2 {
			l := &t.Launches[li]
			ls := cpuSets[threadKey{l.Proc, l.Thread}].Find(l.Start)
			if ls < 0 {
				ls = procSets[l.Proc].Find(l.Start)
			}
			launchStep[li] = ls
		}
		st.Of[i] = launchStep[li]
		lastProc, lastCorr, lastStep = a.Proc, a.Corr, launchStep[li]
	}
	if npending > 0 {
		mirrorSteps(t, st, stepName, src, newStep)
	}
	// Mirror-only steps were appended in mirror order; CPU steps are in
	// start order already. Renumber so that Index follows start order.
	if len(src.cpu) == 0 {
		reorder(st)
	}
	return st, nil
}

// mirrorSteps attributes the activities FindSteps left pending (-3) by the
// GPU-side mirrors of the markers: the mirror containing the activity's
// start on its device and stream, or else on any stream of the device.
//
// A mirror belongs to the step of the activities inside it (on its device
// and stream) that were attributed by their launch and carry the mirror's
// marker text; vLLM's markers repeat their text from step to step, so the
// text alone does not say which step. Failing that, to the latest step of
// that text started before the mirror. Without CPU markers at all the
// mirrors are the steps; mirrors of one annotation on several streams
// (overlapping in time) make one step.
func mirrorSteps(t *trace.Trace, st *Steps, stepName []trace.NameID, src stepSource,
	newStep func(index int, name string, start, end trace.Time, proc int32) Step) {
	const pending = -3
	ncpu := len(st.List)
	byName := map[string][]int32{} // CPU steps of each text, by start
	for i := range st.List {
		byName[st.List[i].Marker] = append(byName[st.List[i].Marker], int32(i))
	}
	gpuSets := map[streamKey]*Innermost{}
	devSets := map[int32]*Innermost{}
	lastMirror := map[string]int32{} // mirror-only steps: the last step of a text
	for _, ri := range src.gpu {
		r := &t.Ranges[ri]
		name := t.Names[r.Name]
		k := streamKey{r.Device, r.Stream}
		s := int32(-1)
		if ncpu > 0 {
			// The first activity in the mirror, on its stream, already
			// placed by its launch in a step of the mirror's text.
			j, _ := slices.BinarySearchFunc(t.Activities, r.Start, func(a trace.Activity, v trace.Time) int { return cmp.Compare(a.Start, v) })
			for ; j < len(t.Activities) && t.Activities[j].Start < r.End(); j++ {
				a := &t.Activities[j]
				if a.Device == r.Device && a.Stream == r.Stream && st.Of[j] >= 0 && stepName[st.Of[j]] == r.Name {
					s = st.Of[j]
					break
				}
			}
			if s < 0 {
				list := byName[name]
				j, _ := slices.BinarySearchFunc(list, r.Start+1, func(si int32, x trace.Time) int {
					return cmp.Compare(st.List[si].Start, x)
				})
				if j == 0 {
					continue // a mirror of a range the trace does not hold
				}
				s = list[j-1]
			}
		} else if ls, ok := lastMirror[name]; ok && r.Start < st.List[ls].End {
			s = ls
			st.List[s].End = max(st.List[s].End, r.End())
		} else {
			s = int32(len(st.List))
			st.List = append(st.List, newStep(int(s), name, r.Start, r.End(), 0))
			lastMirror[name] = s
		}
		if gpuSets[k] == nil {
			gpuSets[k] = &Innermost{}
		}
		gpuSets[k].Add(r.Start, r.End(), s)
		if devSets[r.Device] == nil {
			devSets[r.Device] = &Innermost{}
		}
		devSets[r.Device].Add(r.Start, r.End(), s)
	}
	for _, v := range gpuSets {
		v.Build()
	}
	for _, v := range devSets {
		v.Build()
	}
	for i := range t.Activities {
		if st.Of[i] != pending {
			continue
		}
		a := &t.Activities[i]
		s := gpuSets[streamKey{a.Device, a.Stream}].Find(a.Start)
		if s < 0 {
			s = devSets[a.Device].Find(a.Start)
		}
		st.Of[i] = s
	}
}

// reorder sorts st.List by (Start, End, Marker) and remaps st.Of.
func reorder(st *Steps) {
	perm := make([]int32, len(st.List))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int {
		x, y := &st.List[a], &st.List[b]
		if c := cmp.Compare(x.Start, y.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(x.End, y.End); c != 0 {
			return c
		}
		return cmp.Compare(x.Marker, y.Marker)
	})
	newOf := make([]int32, len(perm))
	list := make([]Step, len(perm))
	for ni, oi := range perm {
		newOf[oi] = int32(ni)
		list[ni] = st.List[oi]
		list[ni].Index = ni
	}
	st.List = list
	for i, s := range st.Of {
		if s >= 0 {
			st.Of[i] = newOf[s]
		}
	}
}

// launchIndex is t.FindLaunch's lookup, returning the index so that the
// launch's step can be memoised.
func launchIndex(t *trace.Trace, proc int32, corr int64) int {
	i, ok := slices.BinarySearchFunc(t.Launches, corr, func(l trace.Launch, c int64) int {
		if x := cmp.Compare(l.Proc, proc); x != 0 {
			return x
		}
		return cmp.Compare(l.Corr, c)
	})
	if !ok {
		return -1
	}
	return i
}

type threadKey struct {
	proc   int32
	thread int64
}

type streamKey struct{ device, stream int32 }

// chooseMarkers picks the step marker ranges of t: those matching re, or
// else the built-in family of highest rank that has a CPU range (or, when
// none has, a GPU mirror). One family per trace: SGLang traces carry both
// an execute_…_context_… range and a step[…] range per forward, nested,
// and counting both would make two steps of one.
func chooseMarkers(t *trace.Trace, re *regexp.Regexp) stepSource {
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
					fam[id] = FamilyCustom
				}
			default:
				if m, ok := ParseMarker(name); ok {
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
	src := stepSource{family: best}
	if best == familyNone {
		src.family = bestGPU
	}
	if src.family == familyNone {
		return src
	}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if famOf(r.Name) != src.family {
			continue
		}
		if r.Kind == trace.RangeCPU {
			src.cpu = append(src.cpu, i)
		} else {
			src.gpu = append(src.gpu, i)
		}
	}
	return src
}

// Innermost answers "which interval open at time x started last" (the
// innermost one, for nested intervals) in O(log M + depth). The zero value
// is empty; Add intervals, Build once, then Find. Intervals are
// half-open [start, end) and added in start order, enclosing first at
// equal starts (trace.CompareRanges' order).
type Innermost struct {
	start, end []trace.Time
	step       []int32
	// parent[i] is the latest-started interval before i still open at
	// start[i], or -1: the chain to walk when i has closed.
	parent []int32
}

// Add appends [s, e) labelled step; intervals come in start order.
func (v *Innermost) Add(s, e trace.Time, step int32) {
	v.start = append(v.start, s)
	v.end = append(v.end, e)
	v.step = append(v.step, step)
}

// Build links each interval to the one enclosing it.
func (v *Innermost) Build() {
	v.parent = make([]int32, len(v.start))
	for i := range v.start {
		c := int32(i) - 1
		for c >= 0 && v.end[c] <= v.start[i] {
			c = v.parent[c]
		}
		v.parent[i] = c
	}
}

// Find returns the step of the latest-started interval containing x, or
// -1. A nil set holds nothing.
func (v *Innermost) Find(x trace.Time) int32 {
	if v == nil {
		return -1
	}
	// The last interval with start <= x.
	i, _ := slices.BinarySearch(v.start, x+1)
	c := int32(i) - 1
	// Every interval containing x is open at start[c] (it started no later
	// and ends after x >= start[c]), so the parent chain visits it.
	for c >= 0 && v.end[c] <= x {
		c = v.parent[c]
	}
	if c < 0 {
		return -1
	}
	return v.step[c]
}
