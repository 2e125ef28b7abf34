package analyze

import (
	"errors"
	"fmt"
	"math"

	"github.com/traceq/traceq/trace"
)

// Input is one parsed trace and the name the user gave it.
type Input struct {
	Path string
	// Run names the run the input belongs to (Runs); "" until assigned.
	Run   string
	Trace *trace.Trace
	// Steps is the input's step segmentation; nil when the trace has no
	// step markers, and the whole trace is then one window.
	Steps *Steps
}

// InputInfo describes one input in a report.
type InputInfo struct {
	Path      string
	Run       string
	Format    trace.Format
	Rank      *int // nil when the trace does not say
	WorldSize *int // nil when the trace does not say
	// Activities is the number of GPU activities read.
	Activities int
	// Truncated is set when the input ended early; its text says where.
	Truncated string
}

// Describe says what an input is: path, format, rank, size, truncation.
func Describe(in Input) InputInfo {
	t := in.Trace
	info := InputInfo{Path: in.Path, Run: in.Run, Format: t.Meta.Format, Activities: len(t.Activities)}
	if t.Meta.Rank >= 0 {
		v := t.Meta.Rank
		info.Rank = &v
	}
	if t.Meta.WorldSize >= 0 {
		v := t.Meta.WorldSize
		info.WorldSize = &v
	}
	if t.Truncated != nil {
		info.Truncated = t.Truncated.Reason
	}
	return info
}

// Rank is the distributed rank of a process of t: its own (an nsys
// export's process list), or the trace's when it has one process; nil
// when unknown.
func Rank(t *trace.Trace, proc int32) *int {
	if int(proc) < len(t.Procs) && t.Procs[proc].Rank >= 0 {
		v := t.Procs[proc].Rank
		return &v
	}
	if t.Meta.Rank >= 0 && len(t.Procs) <= 1 {
		v := t.Meta.Rank
		return &v
	}
	return nil
}

func procPID(t *trace.Trace, proc int32) int64 {
	if int(proc) < len(t.Procs) {
		return t.Procs[proc].PID
	}
	return 0
}

// ErrOverflow is returned by CheckSums for inputs whose times cannot be
// summed in 64 bits.
var ErrOverflow = errors.New("the summed GPU time overflows 64-bit nanoseconds (292 years): the trace's durations or timestamps are corrupt")

// CheckSums reports whether every figure the analyses compute fits an
// int64: the summed durations of all activities of all inputs (every
// kernel, busy and per-category time is a sum of a subset of them), each
// activity's end, each input's span, and the summed durations of its
// launch calls and the time from any call to any activity (launch CPU
// time, launch-to-start latency). Analyses can then add without checking.
// Called once on the inputs, before any analysis.
func CheckSums(inputs []Input) error {
	var total int64
	for _, in := range inputs {
		acts := in.Trace.Activities
		if len(acts) == 0 {
			continue
		}
		first, last := acts[0].Start, acts[0].Start
		for i := range acts {
			a := &acts[i]
			if a.Dur > math.MaxInt64-total || int64(a.Start) > math.MaxInt64-a.Dur {
				return fmt.Errorf("%s: %w", in.Path, ErrOverflow)
			}
			total += a.Dur
			last = max(last, a.End())
		}
		var calls int64
		for i := range in.Trace.Launches {
			l := &in.Trace.Launches[i]
			if l.Dur > math.MaxInt64-calls {
				return fmt.Errorf("%s: %w", in.Path, ErrOverflow)
			}
			calls += l.Dur
			first, last = min(first, l.Start), max(last, l.Start)
		}
		if first < 0 && last > math.MaxInt64+first {
			return fmt.Errorf("%s: %w", in.Path, ErrOverflow)
		}
	}
	return nil
}
