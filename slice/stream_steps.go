package slice

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/trace"
)

// ErrNoSteps is StepsStream's error for a trace without step markers.
var ErrNoSteps = errors.New("no step markers")

// ErrNoGPU is StepsStream's error for a trace without any GPU activity,
// and ErrInput wraps its errors reading the input: parse.File says more.
var (
	ErrNoGPU = errors.New("no GPU activity")
	ErrInput = errors.New("unreadable input")
)

// rangesAndGPU reads the annotation ranges (pass 1), and checks that the
// trace holds a GPU activity, parsing its GPU events until one is found.
func rangesAndGPU(open Opener) (*trace.Trace, error) {
	var rbuf, gbuf bytes.Buffer
	hasGPU := false
	add := func(b *bytes.Buffer, raw []byte) {
		if b.Len() == 0 {
			b.WriteString(`{"traceEvents":[`)
		} else {
			b.WriteByte(',')
		}
		b.Write(raw)
	}
	parseBuf := func(b *bytes.Buffer) (*trace.Trace, error) {
		if b.Len() == 0 {
			return &trace.Trace{Procs: []trace.Proc{{Rank: -1}}}, nil
		}
		b.WriteString("]}")
		t, err := chrometrace.Parse(bytes.NewReader(b.Bytes()), chrometrace.Options{SizeHint: int64(b.Len())})
		b.Reset()
		return t, err
	}
	err := scan(open, func(raw []byte) uint8 {
		var ev chrometrace.Event
		chrometrace.ReadEvent(raw, &ev)
		switch {
		case ev.Ph != "X":
		case isRangeEvent(&ev):
			return 1
		case isGPUEvent(&ev):
			return 2
		}
		return 0
	}, func(raw []byte, k uint8) error {
		switch {
		case k == 1:
			add(&rbuf, raw)
		case k == 2 && !hasGPU:
			add(&gbuf, raw)
			if gbuf.Len() >= 64<<10 {
				t, err := parseBuf(&gbuf)
				if err != nil {
					return err
				}
				hasGPU = len(t.Activities) > 0
			}
		}
		return nil
	}, nil)
	if err != nil && !errors.Is(err, chrometrace.ErrTruncated) {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if !hasGPU {
		t, err := parseBuf(&gbuf)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
		if len(t.Activities) == 0 {
			return nil, ErrNoGPU
		}
	}
	rt, err := parseBuf(&rbuf)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return rt, nil
}

// StepsStream is Steps without the model of the whole input: it reads the
// input several times and holds only the annotation ranges, the launches
// and kernels of the chosen steps, and a few kernels per GPU-side marker
// mirror. It returns the same selection as Steps on the parsed trace and
// its analyze.FindSteps segmentation (pattern is StepOptions.Pattern).
//
// Records are made by the parser itself (chrometrace.Parse) from chunks of
// the raw events, so times, threads, streams and correlation ids read as
// they do in the model; attribution is FindSteps' own, run on the marker
// ranges and one chunk of launches or kernels at a time:
//
//  1. the annotation ranges: the step list (FindSteps on the ranges alone);
//  2. the launch calls: the correlation ids of the chosen steps' launches;
//  3. only when the chosen family has GPU-side mirrors: the first kernels
//     inside each mirror and, in a launch pass, their steps, which say
//     which step each mirror stands for (FindSteps' mirrorSteps);
//  4. the kernels: those of chosen launches, and those a chosen step's
//     mirror holds (kept if their launch is not in the trace);
//  5. the launch calls again: which of those have a launch, and whether an
//     earlier launch with the same correlation id decides instead.
//
// Without CPU markers (mirrors only) every kernel is attributed by the
// mirrors, and one pass over the kernels does it.
func StepsStream(open Opener, pattern string, from, to int, kind string) (*Selection, []analyze.Step, error) {
	rt, err := rangesAndGPU(open)
	if err != nil {
		return nil, nil, err
	}
	var re *regexp.Regexp
	if pattern != "" {
		if re, err = regexp.Compile(pattern); err != nil {
			return nil, nil, errors.New("--step: " + err.Error())
		}
	}
	opt := analyze.StepOptions{Pattern: pattern}
	st0, err := analyze.FindSteps(rt, opt)
	if err != nil {
		return nil, nil, err
	}
	if st0 == nil {
		return nil, nil, ErrNoSteps
	}
	if len(st0.List) == 0 {
		return mirrorOnly(open, rt, opt, from, to, kind)
	}
	list := st0.List
	chosen, steps, cpu, err := choose(list, from, to, kind)
	if err != nil {
		return nil, nil, err
	}
	sel := &Selection{CPU: cpu, Corr: map[int64]bool{}}

	// The step of each launch call, one chunk at a time.
	launchSteps := func(f func(l *trace.Launch, step int32)) error {
		_, err := parseChunks(open, isLaunchEvent, chunkBytes, func(ct *trace.Trace) error {
			return eachLaunchStep(rt, ct.Launches, opt, f)
		})
		return err
	}
	// known holds, for the correlation ids of interest, the launch that
	// decides (the first in trace.CompareLaunches' order) and its step. An
	// entry is exact after a launch pass that began with it in the map.
	known := map[int64]*launchEntry{}
	update := func(l *trace.Launch, step int32) {
		if e := known[l.Corr]; e != nil && (!e.found || launchLess(l, &e.l)) {
			e.l, e.step, e.found = *l, step, true
		}
	}
	// Pass 2: the chosen launches.
	err = launchSteps(func(l *trace.Launch, step int32) {
		if step >= 0 && chosen[step] {
			if known[l.Corr] == nil {
				known[l.Corr] = &launchEntry{}
			}
			update(l, step)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	cands := make(map[int64]bool, len(known)) // launch-attributed candidates
	for c := range known {
		cands[c] = true
	}

	// Pass 3: which step each mirror stands for.
	mirrors := mirrorsOf(rt, re, list)
	if len(mirrors) > 0 {
		if err := resolveMirrors(open, rt, list, mirrors, known, launchSteps, update); err != nil {
			return nil, nil, err
		}
	}
	gpuSets := map[[2]int32]*analyze.Innermost{}
	devSets := map[int32]*analyze.Innermost{}
	for i := range mirrors {
		m := &mirrors[i]
		if m.step < 0 {
			continue
		}
		k := [2]int32{m.r.Device, m.r.Stream}
		if gpuSets[k] == nil {
			gpuSets[k] = &analyze.Innermost{}
		}
		gpuSets[k].Add(m.r.Start, m.r.End(), m.step)
		if devSets[m.r.Device] == nil {
			devSets[m.r.Device] = &analyze.Innermost{}
		}
		devSets[m.r.Device].Add(m.r.Start, m.r.End(), m.step)
	}
	for _, v := range gpuSets {
		v.Build()
	}
	for _, v := range devSets {
		v.Build()
	}

	// Pass 4: the kernels.
	type span struct {
		corr       int64
		start, end trace.Time
	}
	var byLaunch, byMirror []span
	_, err = parseChunks(open, isGPUEvent, chunkBytes, func(ct *trace.Trace) error {
		for i := range ct.Activities {
			a := &ct.Activities[i]
			sp := span{a.Corr, a.Start, a.End()}
			if a.Corr != 0 && cands[a.Corr] {
				byLaunch = append(byLaunch, sp)
				continue
			}
			if len(mirrors) == 0 {
				continue
			}
			s := gpuSets[[2]int32{a.Device, a.Stream}].Find(a.Start)
			if s < 0 {
				s = devSets[a.Device].Find(a.Start)
			}
			if s >= 0 && chosen[s] {
				byMirror = append(byMirror, sp)
				if a.Corr != 0 && known[a.Corr] == nil {
					known[a.Corr] = &launchEntry{}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	// Pass 5: the launches that decide.
	if err := launchSteps(update); err != nil {
		return nil, nil, err
	}
	gpu := false
	keep := func(sp span) {
		if sp.corr != 0 {
			sel.Corr[sp.corr] = true
		}
		if !gpu || int64(sp.start) < sel.GPU.Start {
			sel.GPU.Start = int64(sp.start)
		}
		if !gpu || int64(sp.end) > sel.GPU.End {
			sel.GPU.End = int64(sp.end)
		}
		gpu = true
	}
	for _, sp := range byLaunch {
		if e := known[sp.corr]; e.found && e.step >= 0 && chosen[e.step] {
			keep(sp)
		}
	}
	for _, sp := range byMirror {
		if sp.corr == 0 || !known[sp.corr].found {
			keep(sp) // no launch: the mirror decides
		}
	}
	if !gpu {
		sel.GPU = Interval{sel.CPU[0].Start, sel.CPU[len(sel.CPU)-1].End}
	}
	return sel, steps, nil
}

// mirrorOnly handles a trace whose markers are GPU-side mirrors only: the
// mirrors are the steps and attribute every kernel.
func mirrorOnly(open Opener, rt *trace.Trace, opt analyze.StepOptions, from, to int, kind string) (*Selection, []analyze.Step, error) {
	var list []analyze.Step
	var spans []struct {
		s          int32
		corr       int64
		start, end trace.Time
	}
	_, err := parseChunks(open, isGPUEvent, chunkBytes, func(ct *trace.Trace) error {
		if len(ct.Activities) == 0 {
			return nil
		}
		t := &trace.Trace{Names: rt.Names, Ranges: rt.Ranges, Procs: rt.Procs, Activities: ct.Activities}
		st, err := analyze.FindSteps(t, opt)
		if err != nil {
			return err
		}
		list = st.List
		for i := range ct.Activities {
			if s := st.Of[i]; s >= 0 {
				a := &ct.Activities[i]
				spans = append(spans, struct {
					s          int32
					corr       int64
					start, end trace.Time
				}{s, a.Corr, a.Start, a.End()})
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(list) == 0 {
		return nil, nil, errors.New("the trace has no step markers: use --time")
	}
	chosen, steps, cpu, err := choose(list, from, to, kind)
	if err != nil {
		return nil, nil, err
	}
	sel := &Selection{CPU: cpu, Corr: map[int64]bool{}}
	gpu := false
	for _, sp := range spans {
		if !chosen[sp.s] {
			continue
		}
		if sp.corr != 0 {
			sel.Corr[sp.corr] = true
		}
		if !gpu || int64(sp.start) < sel.GPU.Start {
			sel.GPU.Start = int64(sp.start)
		}
		if !gpu || int64(sp.end) > sel.GPU.End {
			sel.GPU.End = int64(sp.end)
		}
		gpu = true
	}
	if !gpu {
		sel.GPU = Interval{sel.CPU[0].Start, sel.CPU[len(sel.CPU)-1].End}
	}
	return sel, steps, nil
}

// choose picks the steps of list with index in [from, to) (to < 0: to the
// last) and, when kind is not "", of that kind.
func choose(list []analyze.Step, from, to int, kind string) (map[int32]bool, []analyze.Step, []Interval, error) {
	if len(list) == 0 {
		return nil, nil, nil, errors.New("the trace has no step markers: use --time")
	}
	if to < 0 {
		to = len(list)
	}
	chosen := map[int32]bool{}
	var steps []analyze.Step
	var cpu []Interval
	for i, s := range list {
		if s.Index < from || s.Index >= to || (kind != "" && s.Kind.String() != kind) {
			continue
		}
		chosen[int32(i)] = true
		steps = append(steps, s)
		cpu = append(cpu, Interval{int64(s.Start), int64(s.End)})
	}
	if len(steps) == 0 {
		what := "steps"
		if kind != "" {
			what = kind + " steps"
		}
		return nil, nil, nil, fmt.Errorf("no %s with index in [%d, %d): the trace has %d steps (indices %d to %d)",
			what, from, to, len(list), list[0].Index, list[len(list)-1].Index)
	}
	return chosen, steps, merge(cpu), nil
}

// chunkBytes is the raw JSON parsed at a time.
var chunkBytes = 1 << 20

// Event filters: supersets of what the parser turns into ranges, launches
// and activities (it makes the final call on each event).
func isRangeEvent(ev *chrometrace.Event) bool {
	switch ev.Cat {
	case "user_annotation", "gpu_user_annotation":
		return true
	case "cpu_op", "Operator":
		return strings.HasPrefix(ev.Name, "ProfilerStep#")
	}
	return false
}

func isLaunchEvent(ev *chrometrace.Event) bool {
	switch ev.Cat {
	case "cuda_runtime", "cuda_driver", "Runtime", "Driver", "hip_runtime":
		return true
	}
	return false
}

func isGPUEvent(ev *chrometrace.Event) bool {
	return gpuCats[ev.Cat] && ev.Cat != "gpu_user_annotation"
}

// parseChunks reads the input once and parses the events keep accepts
// with chrometrace.Parse, limit bytes of raw JSON at a time, handing each
// chunk's trace to each. With each nil it parses everything in one chunk
// and returns that trace.
func parseChunks(open Opener, keep func(*chrometrace.Event) bool, limit int, each func(*trace.Trace) error) (*trace.Trace, error) {
	var buf bytes.Buffer
	n := 0
	var last *trace.Trace
	flush := func() error {
		buf.WriteString("]}")
		t, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{SizeHint: int64(buf.Len())})
		if err != nil {
			return err
		}
		buf.Reset()
		n = 0
		last = t
		if each != nil {
			return each(t)
		}
		return nil
	}
	err := scan(open, func(raw []byte) bool {
		var ev chrometrace.Event
		chrometrace.ReadEvent(raw, &ev)
		return ev.Ph == "X" && keep(&ev)
	}, func(raw []byte, ok bool) error {
		if !ok {
			return nil
		}
		if n == 0 {
			if buf.Cap() == 0 && limit < 1<<30 {
				buf.Grow(limit + 64<<10)
			}
			buf.WriteString(`{"traceEvents":[`)
		} else {
			buf.WriteByte(',')
		}
		buf.Write(raw)
		n++
		if buf.Len() >= limit {
			return flush()
		}
		return nil
	}, nil)
	if err != nil && !errors.Is(err, chrometrace.ErrTruncated) {
		return nil, err
	}
	if n > 0 {
		if err := flush(); err != nil {
			return nil, err
		}
	} else if each == nil {
		last = &trace.Trace{Procs: []trace.Proc{{Rank: -1}}}
	}
	return last, nil
}

// launchEntry is the deciding launch of one correlation id.
type launchEntry struct {
	l     trace.Launch
	step  int32
	found bool
}

// launchLess is trace.CompareLaunches within one process and correlation
// id, except that ties on start, thread and duration are broken by the
// name's text rather than its id in the whole trace's table.
func launchLess(a, b *trace.Launch) bool {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(a.Thread, b.Thread); c != 0 {
		return c < 0
	}
	return a.Dur < b.Dur
}

// eachLaunchStep calls f with every launch of ls and its step by FindSteps'
// rule, computed on the marker ranges of rt.
func eachLaunchStep(rt *trace.Trace, ls []trace.Launch, opt analyze.StepOptions, f func(*trace.Launch, int32)) error {
	if len(ls) == 0 {
		return nil
	}
	// One fake kernel per launch. Launches sharing a correlation id (the
	// first decides in FindSteps) are done in layers: the first of each
	// id, then the second, ...
	for len(ls) > 0 {
		var layer, rest []trace.Launch
		for i := range ls {
			if i > 0 && ls[i].Corr == ls[i-1].Corr {
				rest = append(rest, ls[i])
				continue
			}
			layer = append(layer, ls[i])
		}
		acts := make([]trace.Activity, len(layer))
		for i := range layer {
			acts[i] = trace.Activity{Corr: layer[i].Corr, Device: -1, Stream: -1}
		}
		t := &trace.Trace{Names: rt.Names, Ranges: rt.Ranges, Procs: rt.Procs, Launches: layer, Activities: acts}
		st, err := analyze.FindSteps(t, opt)
		if err != nil {
			return err
		}
		for i := range layer {
			f(&layer[i], st.Of[i])
		}
		ls = rest
	}
	return nil
}

// mirror is a GPU-side marker mirror and the step it stands for (-2: not
// known yet, -1: none).
type mirror struct {
	r     trace.Range
	name  string
	step  int32
	cands []trace.Activity // the first kernels inside it, in order
	after *trace.Activity  // kernels up to this one were looked at
}

// mirrorsOf returns the GPU-side ranges of the marker family FindSteps
// chose for list (the family of its markers, or the pattern's), in the
// canonical order of ranges.
func mirrorsOf(rt *trace.Trace, re *regexp.Regexp, list []analyze.Step) []mirror {
	fam := ""
	if re == nil {
		m, _ := analyze.ParseMarker(list[0].Marker)
		fam = m.Family
	}
	var out []mirror
	for i := range rt.Ranges {
		r := &rt.Ranges[i]
		if r.Kind != trace.RangeGPU {
			continue
		}
		name := rt.Names[r.Name]
		if re != nil {
			if !re.MatchString(name) {
				continue
			}
		} else if m, ok := analyze.ParseMarker(name); !ok || m.Family != fam {
			continue
		}
		out = append(out, mirror{r: *r, name: name, step: -2})
	}
	return out
}

// actCompare is trace.CompareActivities without the name (whose id differs
// between a chunk and the whole trace) and the process (always 0).
func actCompare(a, b *trace.Activity) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Device, b.Device); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Stream, b.Stream); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Dur, b.Dur); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Corr, b.Corr); c != 0 {
		return c
	}
	return cmp.Compare(a.Kind, b.Kind)
}

// resolveMirrors finds the step each mirror stands for, as FindSteps'
// mirrorSteps does: the step of the first kernel inside it on its device
// and stream that its launch placed in a step of the mirror's text, or
// else the latest step of that text started no later than the mirror. It
// looks at the first k kernels of each mirror at a time (k growing), so
// that memory stays proportional to the number of mirrors.
func resolveMirrors(open Opener, rt *trace.Trace, list []analyze.Step, mirrors []mirror, known map[int64]*launchEntry,
	launchSteps func(func(*trace.Launch, int32)) error, update func(*trace.Launch, int32)) error {
	byStream := map[[2]int32][]int{}
	maxDur := map[[2]int32]int64{}
	for i := range mirrors {
		k := [2]int32{mirrors[i].r.Device, mirrors[i].r.Stream}
		byStream[k] = append(byStream[k], i) // in start order
		maxDur[k] = max(maxDur[k], mirrors[i].r.Dur)
	}
	for k := mirrorFirst; ; k *= 4 {
		open1 := 0
		for i := range mirrors {
			if mirrors[i].step == -2 {
				open1++
			}
		}
		if open1 == 0 {
			return nil
		}
		_, err := parseChunks(open, isGPUEvent, chunkBytes, func(ct *trace.Trace) error {
			for ai := range ct.Activities {
				a := ct.Activities[ai]
				key := [2]int32{a.Device, a.Stream}
				idx := byStream[key]
				j, _ := slices.BinarySearchFunc(idx, a.Start+1, func(mi int, x trace.Time) int { return cmp.Compare(mirrors[mi].r.Start, x) })
				for j--; j >= 0 && int64(a.Start-mirrors[idx[j]].r.Start) < maxDur[key]+1; j-- {
					m := &mirrors[idx[j]]
					if m.step != -2 || a.Start >= m.r.End() || (m.after != nil && actCompare(&a, m.after) <= 0) {
						continue
					}
					p, _ := slices.BinarySearchFunc(m.cands, &a, func(x trace.Activity, y *trace.Activity) int { return actCompare(&x, y) })
					if p >= k {
						continue
					}
					m.cands = slices.Insert(m.cands, p, a)
					if len(m.cands) > k {
						m.cands = m.cands[:k]
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i := range mirrors {
			for _, a := range mirrors[i].cands {
				if a.Corr != 0 && known[a.Corr] == nil {
					known[a.Corr] = &launchEntry{}
				}
			}
		}
		if err := launchSteps(update); err != nil {
			return err
		}
		for i := range mirrors {
			m := &mirrors[i]
			if m.step != -2 {
				continue
			}
			for _, a := range m.cands {
				if a.Corr == 0 {
					continue
				}
				if e := known[a.Corr]; e.found && e.step >= 0 && list[e.step].Marker == m.name {
					m.step = e.step
					break
				}
			}
			if m.step == -2 && len(m.cands) < k {
				m.step = fallbackStep(list, m)
			}
			if m.step == -2 {
				last := m.cands[len(m.cands)-1]
				m.after = &last
			}
			m.cands = nil
		}
	}
}

// mirrorFirst is the number of kernels per mirror looked at first.
var mirrorFirst = 4

// fallbackStep is the latest step of the mirror's text started no later
// than the mirror, or -1.
func fallbackStep(list []analyze.Step, m *mirror) int32 {
	s := int32(-1)
	for i := range list {
		if list[i].Marker == m.name && list[i].Start <= m.r.Start {
			s = int32(i)
		}
	}
	return s
}
