// Package slice cuts a window out of a Chrome trace and writes it as a
// smaller Chrome trace that a viewer (Perfetto, chrome://tracing) can open.
//
// It copies raw events and never builds the model of the whole input:
// events stream through chrometrace.Scan, and memory holds only the
// window's unmatched flow events. The input is read twice, so it must be a
// file: the first pass finds where the trace starts (Start), the second
// copies (Copy).
//
// What a slice keeps (the README repeats it):
//   - every metadata event (ph "M": process and thread names and sort
//     indices) and every top-level value other than traceEvents
//     (deviceProperties, distributedInfo, schemaVersion, ...), so the
//     viewer still labels its tracks;
//   - every other event that lies entirely inside the window: ts >= start
//     and ts+dur <= end (instant and counter events: start <= ts <= end);
//   - flow events (ph s, t, f) of the flows whose start and finish both
//     lie inside the window.
//
// A step selection (Steps) refines this for the way kernels are attributed
// to steps: the kernels of the chosen steps, their launch calls and the
// flows between them are kept by correlation id wherever they lie in time
// (a kernel often runs after its step's CPU range has closed), kernels of
// other steps are dropped even when they run inside the window, and other
// CPU events must lie inside one chosen step's marker range.
package slice

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/parse/chrometrace"
)

// Opener opens the input afresh for each pass.
type Opener func() (io.ReadCloser, error)

// Selection says which events a slice keeps. Times are absolute
// nanoseconds on the trace's clock.
type Selection struct {
	// CPU lists the windows for events on the CPU side, sorted and
	// disjoint; an event is kept when it lies entirely inside one.
	CPU []Interval
	// GPU is the window for GPU-side events (kernels, memcpys, memsets,
	// gpu_user_annotation) that Corr does not decide.
	GPU Interval
	// Corr, when set, decides every event that has a correlation id (launch
	// calls, kernels) and every launch-to-kernel flow (categories ac2g and
	// async, whose id is the correlation id): kept iff the id is in Corr.
	Corr map[int64]bool
}

// Interval is [Start, End], closed.
type Interval struct{ Start, End int64 }

func (iv Interval) holds(ts, end int64) bool { return ts >= iv.Start && end <= iv.End }

// Window selects [start, end] for every event: the --time selection.
func Window(start, end int64) *Selection {
	return &Selection{CPU: []Interval{{start, end}}, GPU: Interval{start, end}}
}

// span is the smallest interval holding every window of s.
func (s *Selection) span() Interval {
	iv := s.GPU
	for _, c := range s.CPU {
		iv.Start = min(iv.Start, c.Start)
		iv.End = max(iv.End, c.End)
	}
	return iv
}

func (s *Selection) cpuHolds(ts, end int64) bool {
	// The last window starting at or before ts is the only candidate.
	i, _ := slices.BinarySearchFunc(s.CPU, ts, func(iv Interval, t int64) int {
		if iv.Start <= t {
			return -1
		}
		return 1
	})
	return i > 0 && s.CPU[i-1].holds(ts, end)
}

// Stats describes a written slice.
type Stats struct {
	// TraceStart is the earliest ts of any event but metadata, in ns.
	TraceStart int64 `json:"trace_start_ns"`
	// Read counts the events of the input; Kept those written, of which
	// Metadata are ph "M" events and Flows are flow events.
	Read     int64 `json:"events_read"`
	Kept     int64 `json:"events_kept"`
	Metadata int64 `json:"metadata_kept"`
	Flows    int64 `json:"flow_events_kept"`
	// Untimed counts events other than metadata without a readable ts,
	// which no window can hold: they are dropped.
	Untimed int64 `json:"untimed_dropped"`
	// TopKeys is the number of top-level values copied.
	TopKeys int `json:"top_level_values"`
	// Truncated is set when the input ended early; the slice holds the
	// complete events before the cut.
	Truncated string `json:"truncated,omitempty"`
}

// Start reads the input once and returns the earliest ts of any event but
// metadata (whose ts Kineto sets arbitrarily), in ns: the origin of --time.
func Start(open Opener) (int64, error) {
	var start int64
	found := false
	var ev chrometrace.Event
	err := scan(open, func(raw []byte) error {
		chrometrace.ReadEvent(raw, &ev)
		if ev.Ph == "M" || !ev.HasTS {
			return nil
		}
		if !found || ev.TS < start {
			start, found = ev.TS, true
		}
		return nil
	}, nil)
	if err != nil && !errors.Is(err, chrometrace.ErrTruncated) {
		return 0, err
	}
	if !found {
		return 0, errors.New("no timed events")
	}
	return start, nil
}

func scan(open Opener, event func([]byte) error, top func(string, []byte) error) error {
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	return chrometrace.Scan(r, event, top)
}

// gpuCats are the event categories Kineto puts on the GPU timeline.
var gpuCats = map[string]bool{
	"kernel": true, "gpu_memcpy": true, "gpu_memset": true, "gpu_user_annotation": true,
	"Kernel": true, "Memcpy": true, "Memset": true,
}

// launchFlowCats are the flow categories linking a launch call to its
// kernel; their id is the correlation id.
var launchFlowCats = map[string]bool{"ac2g": true, "async": true}

// flowGroup holds the in-window events of one flow until the whole input
// has been seen.
type flowGroup struct {
	events      [][]byte
	start, done bool
}

// Copy reads the input and writes the events that sel keeps to w as a
// Chrome trace (plain JSON). Top-level values come after traceEvents,
// whatever their place in the input: the viewer does not care, and it
// keeps the copy a single pass.
func Copy(open Opener, sel *Selection, w io.Writer) (*Stats, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	st := &Stats{}
	if _, err := bw.WriteString("{\"traceEvents\":["); err != nil {
		return nil, err
	}
	all := sel.span()
	first := true
	write := func(raw []byte) error {
		if !first {
			bw.WriteString(",\n")
		} else {
			bw.WriteByte('\n')
		}
		first = false
		st.Kept++
		_, err := bw.Write(raw)
		return err
	}
	flows := map[string]*flowGroup{}
	var order []string // flow keys in first-seen order, for deterministic output
	type topValue struct {
		key string
		raw []byte
	}
	var tops []topValue
	var ev chrometrace.Event
	err := scan(open, func(raw []byte) error {
		st.Read++
		chrometrace.ReadEvent(raw, &ev)
		if ev.Ph == "M" {
			st.Metadata++
			return write(raw)
		}
		if !ev.HasTS {
			st.Untimed++
			return nil
		}
		end := ev.TS
		if ev.HasDur && ev.Dur > 0 {
			end += ev.Dur
		}
		switch ev.Ph {
		case "s", "t", "f":
			if sel.Corr != nil && launchFlowCats[ev.Cat] {
				id, err := strconv.ParseInt(strings.Trim(ev.ID, `"`), 10, 64)
				if err != nil || !sel.Corr[id] {
					return nil
				}
				st.Flows++
				return write(raw)
			}
			if !all.holds(ev.TS, ev.TS) {
				return nil
			}
			k := ev.Cat + "\x00" + ev.ID
			g := flows[k]
			if g == nil {
				g = &flowGroup{}
				flows[k] = g
				order = append(order, k)
			}
			g.events = append(g.events, append([]byte(nil), raw...))
			g.start = g.start || ev.Ph == "s"
			g.done = g.done || ev.Ph == "f"
			return nil
		}
		if sel.Corr != nil && ev.Corr != 0 {
			if sel.Corr[ev.Corr] {
				return write(raw)
			}
			if gpuCats[ev.Cat] {
				return nil // a kernel of another step
			}
			// A runtime call of another step, or one that launched
			// nothing: the CPU window decides.
		}
		if gpuCats[ev.Cat] {
			if sel.GPU.holds(ev.TS, end) {
				return write(raw)
			}
			return nil
		}
		if sel.cpuHolds(ev.TS, end) {
			return write(raw)
		}
		return nil
	}, func(key string, raw []byte) error {
		tops = append(tops, topValue{key, append([]byte(nil), raw...)})
		return nil
	})
	if err != nil {
		if !errors.Is(err, chrometrace.ErrTruncated) {
			return nil, err
		}
		st.Truncated = err.Error()
	}
	for _, k := range order {
		g := flows[k]
		if !g.start || !g.done {
			continue
		}
		for _, raw := range g.events {
			st.Flows++
			if err := write(raw); err != nil {
				return nil, err
			}
		}
	}
	bw.WriteString("\n]")
	for _, t := range tops {
		fmt.Fprintf(bw, ",\n\"%s\":", t.key)
		bw.Write(t.raw)
	}
	st.TopKeys = len(tops)
	bw.WriteString("\n}\n")
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	return st, nil
}
