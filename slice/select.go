package slice

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
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
