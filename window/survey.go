package window

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/traceq/traceq/trace"
)

// survey is what the table learns of an input's activities before its
// pass, in one read of them split across the cores: whether its sums fit
// (checkSums), its devices, processes and names, its steps' summary and
// where the pass may be cut (passCuts). It was five reads, one after
// another, 17 ms a GB of trace before the pass could start.
type survey struct {
	ranges []surveyRange
	// For the launch calls: their summed durations overflow, and the
	// first and last start; the processes that made some.
	callsOver          bool
	callFirst, callEnd trace.Time
	callProcs          []bool
}

// surveyRange is what one run of the activities holds.
type surveyRange struct {
	from, to int
	// over is set when an activity's end, or the summed durations of the
	// run, overflow; total is that sum, end the latest end.
	over  bool
	total int64
	end   trace.Time
	// devices are the run's distinct devices; acts its activities per
	// process; firsts the activities that are the first of their name in
	// the run, in order.
	devices []int32
	acts    []int64
	firsts  []int32
	// The activities outside any step (stepped inputs) and their summed
	// durations; has, per step, whether some activity is in it.
	unattributed, unattributedNS int64
	has                          []bool
}

// surveyOf surveys in's activities in parts runs of about as many.
func surveyOf(in *Input, parts int) *survey {
	tr := in.Trace
	n := len(tr.Activities)
	if n < 2*passSplitMin {
		parts = 1
	}
	s := &survey{ranges: make([]surveyRange, max(parts, 1))}
	var wg sync.WaitGroup
	for j := range s.ranges {
		r := &s.ranges[j]
		r.from, r.to = j*n/len(s.ranges), (j+1)*n/len(s.ranges)
		if j == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.read(in)
		}()
	}
	s.ranges[0].read(in)
	s.readCalls(tr)
	wg.Wait()
	return s
}

// read surveys the range's activities.
func (r *surveyRange) read(in *Input) {
	tr := in.Trace
	r.acts = make([]int64, max(len(tr.Procs), 1))
	seen := make([]bool, len(tr.Names))
	var of []int32
	if in.Steps != nil {
		of = in.Steps.Of[r.from:r.to]
		r.has = make([]bool, len(in.Steps.List))
	}
	r.end = math.MinInt64
	lastDev, some := int32(0), false
	acts := tr.Activities[r.from:r.to]
	for i := range acts {
		a := &acts[i]
		if a.Dur > math.MaxInt64-r.total || int64(a.Start) > math.MaxInt64-a.Dur {
			r.over = true
			return
		}
		r.total += a.Dur
		r.end = max(r.end, a.End())
		// Runs of one device are common: a lookup per activity cost
		// 10 ms of a GB of trace's serial tail.
		if !some || a.Device != lastDev {
			lastDev, some = a.Device, true
			if !slices.Contains(r.devices, a.Device) {
				r.devices = append(r.devices, a.Device)
			}
		}
		r.acts[a.Proc]++
		if !seen[a.Name] {
			seen[a.Name] = true
			r.firsts = append(r.firsts, int32(r.from+i))
		}
		if of != nil {
			if s := of[i]; s >= 0 {
				r.has[s] = true
			} else {
				r.unattributed++
				r.unattributedNS += a.Dur
			}
		}
	}
}

// readCalls surveys the launch calls.
func (s *survey) readCalls(tr *trace.Trace) {
	s.callProcs = make([]bool, max(len(tr.Procs), 1))
	var calls int64
	for i := range tr.Launches {
		l := &tr.Launches[i]
		if l.Dur > math.MaxInt64-calls {
			s.callsOver = true
		}
		calls += l.Dur
		if i == 0 {
			s.callFirst, s.callEnd = l.Start, l.Start
		}
		s.callFirst, s.callEnd = min(s.callFirst, l.Start), max(s.callEnd, l.Start)
		s.callProcs[l.Proc] = true
	}
}

// checkSums reports whether every figure the analyses compute fits an
// int64: the summed durations of all activities of all inputs (every
// kernel, busy and per-category time is a sum of a subset of them), each
// activity's end, each input's span, and the summed durations of its
// launch calls and the time from any call to any activity (launch CPU
// time, launch-to-start latency). Durations are not negative
// (trace.CheckValid): a sum overflows when the whole does.
func (t *Table) checkSums(in *Input, s *survey) error {
	acts := in.Trace.Activities
	if len(acts) == 0 {
		return nil
	}
	total := t.total
	first, last := acts[0].Start, acts[0].Start
	for _, r := range s.ranges {
		if r.over || r.total > math.MaxInt64-total {
			return fmt.Errorf("%s: %w", in.Path, ErrOverflow)
		}
		total += r.total
		if r.to > r.from {
			last = max(last, r.end)
		}
	}
	if s.callsOver {
		return fmt.Errorf("%s: %w", in.Path, ErrOverflow)
	}
	if len(in.Trace.Launches) > 0 {
		first, last = min(first, s.callFirst), max(last, s.callEnd)
	}
	if first < 0 && last > math.MaxInt64+first {
		return fmt.Errorf("%s: %w", in.Path, ErrOverflow)
	}
	t.total = total
	return nil
}

// deviceIDs are the distinct devices of the activities, ascending
// (trace.Trace.DeviceIDs).
func (s *survey) deviceIDs() []int32 {
	var ids []int32
	for _, r := range s.ranges {
		for _, d := range r.devices {
			if !slices.Contains(ids, d) {
				ids = append(ids, d)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// procActs returns the activities per process, and whether each process
// has activities or launch calls.
func (s *survey) procActs() (acts []int64, used []bool) {
	acts = make([]int64, len(s.callProcs))
	used = slices.Clone(s.callProcs)
	for _, r := range s.ranges {
		for p, n := range r.acts {
			acts[p] += n
			used[p] = used[p] || n > 0
		}
	}
	return acts, used
}

// rangeEnds are the latest ends of the survey's runs, for passCuts.
func (s *survey) rangeEnds() []trace.Time {
	ends := make([]trace.Time, len(s.ranges))
	for j, r := range s.ranges {
		ends[j] = r.end
	}
	return ends
}
