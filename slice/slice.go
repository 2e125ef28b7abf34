// Package slice cuts a window out of a Chrome trace and writes it as a
// smaller Chrome trace that a viewer (Perfetto, chrome://tracing) can open.
//
// It copies raw events and never builds the model of the whole input:
// events stream through chrometrace.Reader, and memory holds only the
// window's unmatched flow events. A caller that has parsed the file
// already (traceq merge) may pass its chunk index (CopyIndexed): only the
// parts of the file that can hold a kept event are then read. The input is read several times, so it
// must be a file: for a time window the first pass finds where the trace
// starts (Start: its first GPU activity, the zero point of every time
// traceq prints or takes), the second copies (Copy); for steps, Steps'
// passes find the steps and the kernels they own.
//
// What a slice keeps (docs/diff-slice.md says it for users):
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
	"math"
	"slices"

	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/trace"
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

// TimeWindow selects [origin + from, origin + to] (ParseRange's from and
// to, from Start's origin), each bound held at the int64 limits; a to of
// math.MaxInt64 (ParseRange's open end) is the largest time. toEnd
// reports that the end is the largest time: the window runs to the end
// of the trace.
func TimeWindow(origin, from, to int64) (sel *Selection, toEnd bool) {
	end := int64(math.MaxInt64)
	if to != math.MaxInt64 {
		end = trace.AddSat(origin, to)
	}
	return Window(trace.AddSat(origin, from), end), end == math.MaxInt64
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

// Start reads the input once and returns the start of its first GPU
// activity, in ns on the trace clock: the zero point of --time, as of the
// start times `traceq steps` prints.
func Start(open Opener) (int64, error) {
	var start int64
	found := false
	err := each(open, func(ev *chrometrace.Event, _ func(trace.NameID) string) {
		if ev.Kind == chrometrace.KindActivity && (!found || int64(ev.Activity.Start) < start) {
			start, found = int64(ev.Activity.Start), true
		}
	})
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, parse.ErrNoGPU
	}
	return start, nil
}

// gpuCats are the event categories Kineto puts on the GPU timeline.
var gpuCats = map[string]bool{
	"kernel": true, "gpu_memcpy": true, "gpu_memset": true, "gpu_user_annotation": true,
	"Kernel": true, "Memcpy": true, "Memset": true,
}

// flowGroup holds the in-window events of one flow until the whole input
// has been seen.
type flowGroup struct {
	events      [][]byte
	start, done bool
}

// What Copy does with an event.
const (
	actDrop      = iota
	actKeep      // write it
	actMeta      // a metadata event: write it
	actUntimed   // no ts: drop it, and count it
	actFlow      // a flow event kept by its correlation id: write it
	actFlowMaybe // a flow event inside the window: write it if its flow has both ends inside
)

// verdict is decide's answer for one event.
type verdict struct {
	act  uint8
	ph   byte
	flow string // actFlowMaybe: the flow's key, category and id
}

// decide says what to do with one event.
func (s *Selection) decide(ev *chrometrace.Event, all Interval) verdict {
	if ev.Ph == "M" {
		return verdict{act: actMeta}
	}
	if !ev.HasTS {
		return verdict{act: actUntimed}
	}
	end := ev.TS
	if ev.HasDur && ev.Dur > 0 {
		end = trace.AddSat(end, ev.Dur)
	}
	switch ev.Ph {
	case "s", "t", "f":
		if s.Corr != nil && chrometrace.LaunchFlow(ev.Cat) {
			id, ok := chrometrace.LaunchFlowID(ev.ID)
			if !ok || !s.Corr[id] {
				return verdict{}
			}
			return verdict{act: actFlow}
		}
		if !all.holds(ev.TS, ev.TS) {
			return verdict{}
		}
		return verdict{act: actFlowMaybe, ph: ev.Ph[0], flow: ev.Cat + "\x00" + ev.ID}
	}
	if s.Corr != nil && ev.Corr != 0 {
		if s.Corr[ev.Corr] {
			return verdict{act: actKeep}
		}
		if gpuCats[ev.Cat] {
			return verdict{} // a kernel of another step
		}
		// A runtime call of another step, or one that launched
		// nothing: the CPU window decides.
	}
	if gpuCats[ev.Cat] {
		if s.GPU.holds(ev.TS, end) {
			return verdict{act: actKeep}
		}
		return verdict{}
	}
	if s.cpuHolds(ev.TS, end) {
		return verdict{act: actKeep}
	}
	return verdict{}
}

// Copy reads the input and writes the events that sel keeps to w as a
// Chrome trace (plain JSON). Top-level values come after traceEvents,
// whatever their place in the input: the viewer does not care, and it
// keeps the copy a single pass.
func Copy(open Opener, sel *Selection, w io.Writer) (*Stats, error) {
	out := NewWriter(w)
	st, tops, err := CopyTo(out, open, sel, nil)
	if err != nil {
		return nil, err
	}
	st.TopKeys = len(tops)
	if err := out.Close(tops); err != nil {
		return nil, err
	}
	return st, nil
}

// Edit rewrites an event a copy keeps: it appends the event to write to
// dst and returns it, or returns keep false to drop it. ev is the event
// as a skimming Reader reads it (chrometrace.Reader.Skim: what it says of
// itself, no decoding), raw its text. A merge rewrites the processes, threads and
// times of each rank's events this way.
type Edit func(ev *chrometrace.Event, raw, dst []byte) (out []byte, keep bool)

// CopyTo reads the input and writes the events that sel keeps to out,
// each rewritten by edit when it is not nil. It returns the input's
// top-level values other than traceEvents, for the caller to write (or
// not) when it closes out.
func CopyTo(out *Writer, open Opener, sel *Selection, edit Edit) (*Stats, []TopValue, error) {
	st, tops, _, err := CopyToReread(out, open, sel, edit)
	return st, tops, err
}

// CopyToReread is CopyTo that also says what it read of the input.
func CopyToReread(out *Writer, open Opener, sel *Selection, edit Edit) (*Stats, []TopValue, Reread, error) {
	in, err := open()
	if err != nil {
		return nil, nil, Reread{}, err
	}
	defer in.Close()
	c := newCopier(out, sel, edit)
	if err := c.read(in); err != nil {
		return nil, nil, Reread{}, err
	}
	if err := c.writeFlows(); err != nil {
		return nil, nil, Reread{}, err
	}
	return &c.st, c.tops, c.reread, nil
}

// copier is one copy's state: what it kept and the flows it holds until
// the end.
type copier struct {
	out  *Writer
	sel  *Selection
	edit Edit
	all  Interval
	buf  []byte
	// held holds the in-window flow events, by flow; order their keys
	// in first-seen order, for deterministic output.
	held   map[string]*flowGroup
	order  []string
	tops   []TopValue
	st     Stats
	reread Reread
}

func newCopier(out *Writer, sel *Selection, edit Edit) *copier {
	return &copier{out: out, sel: sel, edit: edit, all: sel.span(), held: map[string]*flowGroup{}}
}

// rewrite is the kept event to write, rewritten.
func (c *copier) rewrite(ev *chrometrace.Event, raw []byte) ([]byte, bool) {
	if c.edit == nil {
		return raw, true
	}
	var keep bool
	c.buf, keep = c.edit(ev, raw, c.buf[:0])
	return c.buf, keep
}

// read copies the events of the Chrome trace in, in file order.
func (c *copier) read(in io.Reader) error {
	st := &c.st
	r, err := chrometrace.NewReader(in)
	if err != nil {
		return err
	}
	defer r.Close()
	// The copy decides by ph, cat, ts, dur, id and the correlation id
	// alone: each event is read only so far.
	r.Skim()
	// One event for the whole copy: edit takes its address, which would
	// otherwise move every event to the heap.
	var ev chrometrace.Event
	for {
		var err error
		ev, err = r.ReadEvent()
		if errors.Is(err, chrometrace.ErrTruncated) {
			st.Truncated = err.Error()
			break
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		c.reread.Bytes = max(c.reread.Bytes, ev.Offset+int64(len(ev.Raw)))
		if ev.Kind == chrometrace.KindTopLevel {
			c.tops = append(c.tops, TopValue{Key: ev.Key, Raw: slices.Clone(ev.Raw)})
			continue
		}
		st.Read++
		c.reread.Events++
		v := c.sel.decide(&ev, c.all)
		if v.act == actUntimed {
			st.Untimed++
			continue
		}
		if v.act == actDrop {
			continue
		}
		raw, keep := c.rewrite(&ev, ev.Raw)
		if !keep {
			continue
		}
		switch v.act {
		case actMeta:
			st.Metadata++
			err = c.out.event(st, raw)
		case actKeep:
			err = c.out.event(st, raw)
		case actFlow:
			st.Flows++
			err = c.out.event(st, raw)
		case actFlowMaybe:
			g := c.held[v.flow]
			if g == nil {
				g = &flowGroup{}
				c.held[v.flow] = g
				c.order = append(c.order, v.flow)
			}
			g.events = append(g.events, slices.Clone(raw))
			g.start = g.start || v.ph == 's'
			g.done = g.done || v.ph == 'f'
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeFlows writes the held flow events of the flows with both ends inside
// the window.
func (c *copier) writeFlows() error {
	for _, k := range c.order {
		g := c.held[k]
		if !g.start || !g.done {
			continue
		}
		for _, raw := range g.events {
			c.st.Flows++
			if err := c.out.event(&c.st, raw); err != nil {
				return err
			}
		}
	}
	return nil
}

// TopValue is a top-level value of a Chrome trace other than traceEvents
// (deviceProperties, distributedInfo, …): its key and raw JSON text, as a
// chunk index holds them too.
type TopValue = chrometrace.TopLevel

// Writer writes a Chrome trace one event at a time: the events of one
// copy (a slice), or of several and its caller's own (a merge).
type Writer struct {
	bw       *bufio.Writer
	first    bool
	fragment bool
	err      error
}

// NewWriter starts a Chrome trace on w.
func NewWriter(w io.Writer) *Writer {
	out := &Writer{bw: bufio.NewWriterSize(w, 1<<20), first: true}
	_, out.err = out.bw.WriteString("{\"traceEvents\":[")
	return out
}

// NewEvents writes events alone on w, without the document around them:
// a fragment that Append puts into a Writer (a merge copies the ranks on
// several cores, each into a fragment of its own). Flush ends it.
func NewEvents(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 1<<20), first: true, fragment: true}
}

// Empty reports whether no event was written.
func (w *Writer) Empty() bool { return w.first }

// Flush writes out what is buffered.
func (w *Writer) Flush() error {
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

// Append copies a fragment NewEvents wrote (its events, if it has any)
// into w, after w's events.
func (w *Writer) Append(fragment io.Reader, empty bool) error {
	if w.err != nil || empty {
		return w.err
	}
	if !w.first {
		w.bw.WriteString(",")
	}
	w.first = false
	_, w.err = io.Copy(w.bw, fragment)
	return w.err
}

// Event writes one event, raw JSON text.
func (w *Writer) Event(raw []byte) error {
	if w.err != nil {
		return w.err
	}
	if !w.first {
		w.bw.WriteString(",\n")
	} else {
		w.bw.WriteByte('\n')
	}
	w.first = false
	_, w.err = w.bw.Write(raw)
	return w.err
}

func (w *Writer) event(st *Stats, raw []byte) error {
	st.Kept++
	return w.Event(raw)
}

// Close ends traceEvents, writes the top-level values after it and
// flushes.
func (w *Writer) Close(tops []TopValue) error {
	if w.err != nil {
		return w.err
	}
	w.bw.WriteString("\n]")
	for _, t := range tops {
		fmt.Fprintf(w.bw, ",\n\"%s\":", t.Key)
		w.bw.Write(t.Raw)
	}
	w.bw.WriteString("\n}\n")
	w.err = w.bw.Flush()
	return w.err
}
