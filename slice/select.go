package slice

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/trace"
)

// ParseDuration reads a duration such as "1500", "1.5ms", "250us", "90ns"
// or "2s" into integer nanoseconds without a float: a bare number counts
// microseconds, the unit of Chrome-trace timestamps.
func ParseDuration(s string) (int64, error) {
	num := strings.TrimSpace(s)
	scale := int64(1000) // µs
	for _, u := range []struct {
		suffix string
		ns     int64
	}{{"ns", 1}, {"us", 1000}, {"µs", 1000}, {"ms", 1e6}, {"s", 1e9}} {
		if strings.HasSuffix(num, u.suffix) {
			num, scale = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.ns
			break
		}
	}
	ip, fp, _ := strings.Cut(num, ".")
	if ip == "" && fp == "" {
		return 0, fmt.Errorf("bad time %q: want a number with an optional unit (ns, us, ms, s)", s)
	}
	if ip == "" {
		ip = "0"
	}
	whole, err := strconv.ParseInt(ip, 10, 64)
	if err != nil || whole < 0 || strings.HasPrefix(ip, "+") {
		return 0, fmt.Errorf("bad time %q: want a non-negative number with an optional unit (ns, us, ms, s)", s)
	}
	if whole > (1<<63-1)/scale {
		return 0, fmt.Errorf("bad time %q: too large", s)
	}
	ns := whole * scale
	// Fraction digits beyond the nanosecond are dropped.
	unit := scale
	for _, c := range fp {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad time %q: want a number with an optional unit (ns, us, ms, s)", s)
		}
		unit /= 10
		ns += int64(c-'0') * unit
	}
	return ns, nil
}

// ParseRange reads "A:B" (either side may be empty: from the start, to the
// end) with ParseDuration. An empty end means "to the end".
func ParseRange(s string) (from, to int64, err error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("bad range %q: want START:END", s)
	}
	to = 1<<63 - 1
	if strings.TrimSpace(a) != "" {
		if from, err = ParseDuration(a); err != nil {
			return 0, 0, err
		}
	}
	if strings.TrimSpace(b) != "" {
		if to, err = ParseDuration(b); err != nil {
			return 0, 0, err
		}
	}
	if to < from {
		return 0, 0, fmt.Errorf("bad range %q: the end is before the start", s)
	}
	return from, to, nil
}

// ParseSteps reads a step range "K:M" (steps K to M-1, like a Go slice),
// "K:" (K to the last), ":M", or "K" (step K alone). Indices are the step
// indices 'traceq steps' prints, from 0.
func ParseSteps(s string) (from, to int, err error) {
	bad := fmt.Errorf("bad step range %q: want K:M (steps K to M-1), K: or K", s)
	a, b, ok := strings.Cut(s, ":")
	to = -1 // open
	if strings.TrimSpace(a) != "" {
		if from, err = strconv.Atoi(strings.TrimSpace(a)); err != nil || from < 0 {
			return 0, 0, bad
		}
	}
	if !ok {
		return from, from + 1, nil
	}
	if strings.TrimSpace(b) != "" {
		if to, err = strconv.Atoi(strings.TrimSpace(b)); err != nil || to <= from {
			return 0, 0, bad
		}
	}
	return from, to, nil
}

// Steps builds the selection of the steps with index in [from, to) (to < 0:
// to the last) and, when kind is not "", of that kind, from the parsed
// trace t and its step segmentation st. It returns the chosen steps too.
//
// The kept kernels are exactly those st assigns to the chosen steps, so a
// slice reparsed and segmented the same way gives the same per-step
// figures; their correlation ids carry the launch calls and flows along.
func Steps(t *trace.Trace, st *analyze.Steps, from, to int, kind string) (*Selection, []analyze.Step, error) {
	if st == nil || len(st.List) == 0 {
		return nil, nil, errors.New("the trace has no step markers: use --time")
	}
	if to < 0 {
		to = len(st.List)
	}
	chosen := map[int32]bool{}
	var steps []analyze.Step
	sel := &Selection{Corr: map[int64]bool{}}
	for i, s := range st.List {
		if s.Index < from || s.Index >= to || (kind != "" && s.Kind.String() != kind) {
			continue
		}
		chosen[int32(i)] = true
		steps = append(steps, s)
		sel.CPU = append(sel.CPU, Interval{int64(s.Start), int64(s.End)})
	}
	if len(steps) == 0 {
		what := "steps"
		if kind != "" {
			what = kind + " steps"
		}
		return nil, nil, fmt.Errorf("no %s with index in [%d, %d): the trace has %d steps (indices %d to %d)",
			what, from, to, len(st.List), st.List[0].Index, st.List[len(st.List)-1].Index)
	}
	sel.CPU = merge(sel.CPU)
	gpu := false
	for i := range t.Activities {
		if !chosen[st.Of[i]] {
			continue
		}
		a := &t.Activities[i]
		if a.Corr != 0 {
			sel.Corr[a.Corr] = true
		}
		if !gpu || int64(a.Start) < sel.GPU.Start {
			sel.GPU.Start = int64(a.Start)
		}
		if !gpu || int64(a.End()) > sel.GPU.End {
			sel.GPU.End = int64(a.End())
		}
		gpu = true
	}
	if !gpu {
		// Steps without GPU work: GPU-side events come from the CPU window.
		sel.GPU = Interval{sel.CPU[0].Start, sel.CPU[len(sel.CPU)-1].End}
	}
	return sel, steps, nil
}

// merge sorts intervals and joins those that overlap or touch.
func merge(ivs []Interval) []Interval {
	slices.SortFunc(ivs, func(a, b Interval) int {
		if a.Start != b.Start {
			return compare(a.Start, b.Start)
		}
		return compare(a.End, b.End)
	})
	out := ivs[:0]
	for _, iv := range ivs {
		if n := len(out); n > 0 && iv.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, iv.End)
			continue
		}
		out = append(out, iv)
	}
	return out
}

func compare(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
