// Package merge writes the ranks of a run as one Chrome trace that
// Perfetto and chrome://tracing open: every rank a process (named
// "host · rank N"), its CPU threads and its GPU streams as threads, the
// chosen steps or time window only, the clocks aligned, and annotation
// tracks that say where each GPU sat idle and why (docs/diff-slice.md,
// "merge").
//
// Memory holds one rank's model at a time. Each rank is read twice: once
// parsed (load.Load with a Reduce hook: its steps, its selection, its
// idle gaps, its clock), the model then dropped; once streamed through
// slice, which copies the raw events the selection keeps, each rewritten
// (edit.rewrite) into the rank's process and the common clock. The parse
// leaves, when it read the file in speculative chunks that all held
// (parse.Options.Index), a chunk index: per 256 kB of its events, where
// they lie, the bounds of their times and correlation ids, their
// metadata. The second pass (slice.CopyIndexed) then reads only the
// parts that can hold an event the selection keeps, passing over the
// others (sought in a plain file; decompressed and discarded in a .gz)
// and stopping after the last it needs; its output and counts are those
// of reading the whole file (slice.CopyTo), which it falls back to for a
// rank without an index (its parse gave up on chunks, a cut file) or
// whose file changed since. Either way it skims (each event read only as
// far as the selection needs). The second pass runs on two ranks at a
// time, each into a fragment of its own that the output then takes in
// rank order, so the output is the same whatever the order the passes
// end in.
package merge

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/outfile"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/slice"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// Align is how the ranks' clocks are put on one.
type Align uint8

const (
	// AlignAuto: by baseTimeNanoseconds when every rank has one, else
	// none.
	AlignAuto Align = iota
	// AlignBase: by Kineto's baseTimeNanoseconds (base + ts is the
	// host's wall clock); a rank without one is left as it is.
	AlignBase
	// AlignNone: the timestamps as they are.
	AlignNone
	// AlignCollectives: by the collectives' ends (merge/align.go): on
	// top of the base alignment where every rank has a base, each rank
	// moved so that the kernels of every matched collective end together.
	AlignCollectives
)

var alignNames = [...]string{AlignAuto: "auto", AlignBase: "base", AlignNone: "none", AlignCollectives: "collectives"}

func (a Align) String() string {
	if int(a) < len(alignNames) {
		return alignNames[a]
	}
	return "align(" + strconv.Itoa(int(a)) + ")"
}

// ParseAlign reads --align.
func ParseAlign(s string) (Align, error) {
	for i, n := range alignNames {
		if n == s {
			return Align(i), nil
		}
	}
	return 0, fmt.Errorf("unknown alignment %q: want auto, base, collectives or none", s)
}

// Options configures Merge.
type Options struct {
	// Load reads each rank (parser options, classifier, step pattern,
	// warnings). Merge sets its Steps and Gaps.
	Load load.Options
	// Steps, when set, selects these steps of every rank (From, To,
	// Filter); else From and To bound the window, in ns from the merged
	// trace's first GPU activity (To math.MaxInt64: to the end).
	Steps    *slice.StepOptions
	From, To int64
	Align    Align
	// FullPass makes the second pass read every rank whole (slice.CopyTo)
	// even where the first left a chunk index: tests compare the two.
	FullPass bool
}

// Rank is what the merge did with one rank.
type Rank struct {
	Path, Host string
	Number     *int
	// Label names the rank's process: "node1 · rank 9", "rank 3", else
	// the file's name.
	Label string
	// PID is the rank's process in the merged trace.
	PID int64
	// ShiftNS is what was added to the rank's timestamps; AlignedBy says
	// why: "base" (baseTimeNanoseconds), "none".
	ShiftNS   int64
	AlignedBy string
	// Steps are the steps selected (with Options.Steps).
	Steps []step.Step
	// Copy counts the rank's events read and kept.
	Copy slice.Stats
	// Reread is what the second pass read of the rank's file: with the
	// first pass's chunk index, only the parts that can hold an event the
	// selection keeps.
	Reread slice.Reread
	// Gaps and Waits count the idle-gap and waiting annotations written.
	Gaps, Waits int64
	// Joined says, with collectives alignment, that the rank's shift
	// came from collectives chaining it to the first rank; a rank none
	// reaches keeps its base alignment.
	Joined bool
}

// Result is what Merge wrote.
type Result struct {
	Ranks []Rank
	// Align is the alignment used (AlignAuto resolved).
	Align Align
	// BaseTime is the merged trace's baseTimeNanoseconds (0: none).
	BaseTime int64
	// Origin is the merged trace's first GPU activity, on its clock: the
	// zero of From and To.
	Origin int64
	// Instances counts the collective instances matched across the
	// ranks in (or, for a time window, within a second of) the window;
	// SpreadP50 and SpreadMax are, over them, the median and the largest
	// time between the first and the last end once aligned.
	Instances            int
	SpreadP50, SpreadMax int64
	// Events counts the events written, annotations and names included.
	Events int64
}

// plan is one rank between the passes.
type plan struct {
	Rank
	first   int64 // the first GPU activity, on the rank's own clock
	base    int64
	devices map[int64]bool
	sel     *slice.Selection
	gaps    []window.Gap   // with Options.Steps: those in the selection
	log     gapLog         // with a time window: every gap, compactly
	input   int            // index in the loader's table
	idx     *indexed       // the first pass's chunk index of the file; nil: none
	chosen  map[int32]bool // with Options.Steps: the chosen steps, by position
	devMap  map[int64]int64
	waits   []wait
	index   int
	threads int // thread names written for GPU streams and idle tracks
}

// Merger is a merge between its passes: every rank read once, its model
// gone.
type Merger struct {
	plans []*plan
	res   *Result
}

// Prepare is the first pass: the runs args name read through the loader
// (two files parsed at once, each reduced to the window table's records
// and what the merge needs of it, its model then dropped); the clocks
// aligned and the window placed on every rank; the collectives matched.
// Errors here come before any output.
func Prepare(args []string, opt Options) (*Merger, error) {
	lo := opt.Load
	lo.Steps = opt.Steps != nil
	// Refused before it is read: the copy streams raw Chrome-trace
	// events, which an nsys export has none of.
	lo.Parse.Accept = func(f trace.Format) error {
		if f == trace.FormatNsys {
			return ErrNsys
		}
		return nil
	}
	lo.SkipDurations, lo.SkipCollectives, lo.Keep = true, false, nil
	// Each input's gaps come while the table adds it, before its Reduce.
	var log gapLog
	lo.Gaps = log.add
	// Each input's chunk index comes while it is parsed, before its
	// Reduce.
	var indexes indexSet
	if !opt.FullPass {
		lo.Parse.Index = indexes.add
	}
	var byInput []*plan
	lo.Reduce = func(tbl *window.Table, i int) error {
		p, err := prepare(tbl, i, log, opt)
		if err != nil {
			return err
		}
		p.idx = indexes.take(p.Path)
		log = gapLog{}
		byInput = append(byInput, p)
		return nil
	}
	tbl, err := load.Load(args, lo)
	if err != nil {
		return nil, err
	}
	if len(byInput) == 0 {
		return nil, errors.New("no trace files")
	}
	plans := slices.Clone(byInput)
	slices.SortStableFunc(plans, func(a, b *plan) int {
		switch {
		case a.Number != nil && b.Number != nil:
			return cmp.Compare(*a.Number, *b.Number)
		case a.Number != nil:
			return -1
		case b.Number != nil:
			return 1
		}
		return 0
	})
	res := &Result{Align: opt.Align}
	align(plans, res)
	name(plans)
	renumberDevices(plans)
	origin(plans, res)
	matchCollectives(tbl, byInput, plans, opt, res)
	if opt.Steps == nil {
		window0(plans, opt, res)
	}
	return &Merger{plans: plans, res: res}, nil
}

// Write is the second pass: every rank streamed into w, as one trace.
func (m *Merger) Write(w io.Writer) (*Result, error) {
	plans, res := m.plans, m.res
	out := slice.NewWriter(w)
	if err := copyRanks(out, plans, res); err != nil {
		return nil, err
	}
	var tops []slice.TopValue
	if res.BaseTime != 0 {
		tops = append(tops, slice.TopValue{Key: "baseTimeNanoseconds", Raw: strconv.AppendInt(nil, res.BaseTime, 10)})
	}
	tops = append(tops, slice.TopValue{Key: "traceq", Raw: summary(plans, res)})
	if err := out.Close(tops); err != nil {
		return nil, err
	}
	res.Ranks = res.Ranks[:0]
	for _, p := range plans {
		res.Ranks = append(res.Ranks, p.Rank)
	}
	return res, nil
}

// prepare takes what the merge needs of input i of tbl while its model is
// held (the loader's Reduce): its clock, its GPUs, its selection and its
// idle gaps (log).
func prepare(tbl *window.Table, i int, log gapLog, opt Options) (*plan, error) {
	in := &tbl.Inputs[i]
	t := in.Trace
	path := in.Path
	p := &plan{Rank: Rank{Path: path, Host: in.Host, Number: in.Rank}, input: i, first: int64(in.Origin), base: t.Meta.BaseTime,
		devices: map[int64]bool{}}
	for _, d := range in.DeviceIDs {
		p.devices[int64(d)] = true
	}
	for _, pr := range t.Procs {
		delete(p.devices, pr.PID)
	}
	if opt.Steps == nil {
		p.log = log
		return p, nil
	}
	sel, steps, err := slice.FromModel(t, in.Steps, *opt.Steps)
	if errors.Is(err, slice.ErrNoSteps) {
		what := "no step markers (ProfilerStep#N, vLLM execute_…, SGLang step[…], ATOM prefill[…]/decode[…])"
		if opt.Load.Pattern != "" {
			what = fmt.Sprintf("no annotation range matches the step pattern %q", opt.Load.Pattern)
		}
		return nil, &parse.FileError{Path: path, Err: fmt.Errorf("%s: %w", what, ErrNoSteps)}
	}
	if err != nil {
		return nil, &parse.FileError{Path: path, Err: err}
	}
	p.sel, p.Steps = sel, steps
	p.gaps = log.within(sel.GPU.Start, sel.GPU.End)
	p.chosen = chosenSteps(in.Steps, *opt.Steps)
	return p, nil
}

// nearWindow is how far from a time window the collectives that align
// the clocks may lie (on the clocks aligned by the base).
const nearWindow = int64(1e9)

// chosenSteps marks the steps of st that opt selects, by position.
func chosenSteps(st *step.Steps, opt slice.StepOptions) map[int32]bool {
	out := map[int32]bool{}
	to := opt.To
	if to < 0 {
		to = len(st.List)
	}
	for i, s := range st.List {
		if s.Index >= opt.From && s.Index < to && opt.Filter.Keeps(step.ClassOf(s.Kind)) {
			out[int32(i)] = true
		}
	}
	return out
}

// ErrNsys refuses an nsys export as a merge input (its path is on the
// *parse.FileError that wraps it): the merge copies each rank's raw
// Chrome-trace events, which an nsys export does not have
// (docs/diff-slice.md, "merge").
var ErrNsys = errors.New("an nsys export: traceq merge reads torch.profiler (Kineto) Chrome traces only")

// ErrNoSteps is the error for a rank without step markers when steps are
// selected.
var ErrNoSteps = errors.New("use a time window")

// align sets each rank's shift.
func align(plans []*plan, res *Result) {
	mode := res.Align
	if mode == AlignAuto || mode == AlignCollectives {
		base := true
		for _, p := range plans {
			base = base && p.base != 0
		}
		switch {
		case mode == AlignAuto && base:
			mode = AlignBase
		case mode == AlignAuto:
			mode = AlignNone
		}
		res.Align = mode
		if mode == AlignCollectives && !base {
			mode = AlignNone // the collectives' shifts start from the clocks as recorded
		}
	}
	for _, p := range plans {
		p.AlignedBy = "none"
	}
	if mode == AlignNone {
		return
	}
	// The first rank with a base is the reference: base + ts is the
	// host's wall clock, so the others move by the difference of bases.
	for _, p := range plans {
		if p.base == 0 {
			continue
		}
		if res.BaseTime == 0 {
			res.BaseTime = p.base
		}
		p.ShiftNS, p.AlignedBy = p.base-res.BaseTime, "base"
	}
}

// name gives each rank its process and label.
func name(plans []*plan) {
	hosts := map[string]bool{}
	for _, p := range plans {
		if p.Host != "" {
			hosts[p.Host] = true
		}
	}
	for i, p := range plans {
		p.index, p.PID = i, int64(i+1)
		switch {
		case p.Number != nil:
			p.Label = "rank " + strconv.Itoa(*p.Number)
		default:
			p.Label = filepath.Base(p.Path)
		}
		if len(hosts) > 1 && p.Host != "" {
			p.Label = p.Host + " · " + p.Label
		}
	}
}

// renumberDevices gives the GPUs of the ranks new numbers in the merged
// trace's args when two ranks have one of the same number (ranks on
// different hosts: cuda:0 on each), so that a reader of the merged trace
// (traceq itself) does not take them for one GPU: a rank of one GPU gets
// its rank's number (its index when the trace does not say its rank),
// else each of its GPUs index × 1000 + its ordinal. Thread names keep the
// ordinals ("GPU 0 · stream 7").
func renumberDevices(plans []*plan) {
	seen := map[int64]int{}
	clash := false
	for i, p := range plans {
		for d := range p.devices {
			if j, ok := seen[d]; ok && j != i {
				clash = true
			}
			seen[d] = i
		}
	}
	if !clash {
		return
	}
	one, numbered := true, true
	for _, p := range plans {
		one = one && len(p.devices) == 1
		numbered = numbered && p.Number != nil
	}
	for _, p := range plans {
		p.devMap = map[int64]int64{}
		for d := range p.devices {
			switch {
			case one && numbered:
				p.devMap[d] = int64(*p.Number)
			case one:
				p.devMap[d] = int64(p.index)
			default:
				p.devMap[d] = int64(p.index)*1000 + d
			}
		}
	}
}

// origin sets the merged trace's origin: the first GPU activity of any
// rank, on the common clock.
func origin(plans []*plan, res *Result) {
	res.Origin = math.MaxInt64
	for _, p := range plans {
		res.Origin = min(res.Origin, p.first+p.ShiftNS)
	}
}

// window0 sets, for a time window, each rank's selection and gaps: the
// window on the common clock, [origin + From, origin + To], on each
// rank's own.
func window0(plans []*plan, opt Options, res *Result) {
	start, end := trace.AddSat(res.Origin, opt.From), trace.AddSat(res.Origin, opt.To)
	for _, p := range plans {
		s, e := start-p.ShiftNS, end-p.ShiftNS
		if end == math.MaxInt64 {
			e = math.MaxInt64
		}
		p.sel = slice.Window(s, e)
		p.gaps = p.log.within(s, e)
		p.log = gapLog{}
	}
}

// sat is a + b, saturated at the int64 bounds.

// copyRanks writes the process of each rank: its names, its events (the
// second pass, two ranks at a time into fragments), its annotations.
// Its pipeline has the shape of load's parsing (a bounded number in
// flight, results taken in order, a quit on the first error) but not its
// lifetimes: a slot here is freed when a fragment file is complete, and
// what an error leaves behind is fragment files to remove, where load
// frees a slot when its consumer has reduced a model and drops models;
// one helper for both would take both sets of hooks.
func copyRanks(out *slice.Writer, plans []*plan, res *Result) error {
	type done struct {
		path  string
		empty bool
		err   error
	}
	labels := make([]string, len(plans))
	for i, p := range plans {
		labels[i] = p.Label
	}
	results := make([]chan done, len(plans))
	for i := range results {
		results[i] = make(chan done, 1)
	}
	sem := make(chan struct{}, min(2, max(1, runtime.GOMAXPROCS(0))))
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, p := range plans {
			select {
			case sem <- struct{}{}:
			case <-quit:
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				path, empty, err := p.copy(labels)
				results[i] <- done{path, empty, err}
			}()
		}
	}()
	var first error
	for i, p := range plans {
		d := <-results[i]
		if d.err == nil {
			d.err = appendFragment(out, d.path, d.empty)
			res.Events += p.Copy.Kept + p.Gaps + p.Waits + 2 + int64(p.threads)
		}
		if d.path != "" {
			outfile.Remove(d.path)
		}
		if d.err != nil {
			first = d.err
			break
		}
	}
	close(quit)
	wg.Wait()
	// The fragments of copies that ended after an error.
	for _, r := range results {
		select {
		case d := <-r:
			if d.path != "" {
				outfile.Remove(d.path)
			}
		default:
		}
	}
	return first
}

func appendFragment(out *slice.Writer, path string, empty bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return out.Append(f, empty)
}

// copy is the second pass over one rank: its process's names, the events
// its selection keeps, rewritten, and its annotations, into a temporary
// fragment whose path it returns. With the first pass's chunk index it
// reads only the parts that can hold a kept event; should the file not
// match its index, it starts again reading the whole file.
func (p *plan) copy(labels []string) (path string, empty bool, err error) {
	if ix := p.idx; ix != nil {
		p.idx = nil // for good: the index is memory, and stale or used once
		if ix.same(p.Path) {
			path, empty, err = p.copyOnce(labels, ix.idx)
			if !errors.Is(err, slice.ErrStaleIndex) {
				return path, empty, err
			}
		}
	}
	return p.copyOnce(labels, nil)
}

// copyOnce is copy, guided by idx when it is not nil.
func (p *plan) copyOnce(labels []string, idx *chrometrace.Index) (path string, empty bool, err error) {
	f, err := outfile.Temp("", "traceq-merge-*")
	if err != nil {
		return "", false, fmt.Errorf("a temporary file for the merge: %w", err)
	}
	path = f.Name()
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			outfile.Remove(path)
			path = ""
		}
	}()
	fw := slice.NewEvents(f)
	e := &edit{pid: p.PID, shift: p.ShiftNS, idBase: int64(p.index+1) << 40, idTag: "r" + strconv.Itoa(p.index), devices: p.devices,
		devMap: p.devMap}
	meta := &metaWriter{w: fw, pid: p.PID}
	meta.process(p.Label, p.index)
	type stream struct{ dev, s int64 }
	streams := map[stream]bool{}
	var scratch []member
	open := func() (io.ReadCloser, error) { return os.Open(p.Path) }
	rewrite := func(ev *chrometrace.Event, raw, dst []byte) ([]byte, bool) {
		if ev.Ph == "M" && dropMeta[ev.Name] {
			return dst, false
		}
		out, dev, s, gpu, ms := e.rewrite(dst, raw, ev.TS, ev.HasTS, ev.Ph == "M", scratch)
		scratch = ms
		if gpu {
			if ev.Ph == "M" {
				return dst, false // its thread gets the name written below
			}
			streams[stream{dev, s}] = true
		}
		return out, true
	}
	var st *slice.Stats
	if idx != nil {
		st, _, p.Reread, err = slice.CopyIndexed(fw, open, p.sel, rewrite, idx)
		if err != nil {
			return "", false, err // stale: copy starts again
		}
	} else {
		st, _, p.Reread, err = slice.CopyToReread(fw, open, p.sel, rewrite)
		if err != nil {
			return "", false, &parse.FileError{Path: p.Path, Err: err}
		}
	}
	p.Copy = *st
	keys := slices.Collect(func(yield func(stream) bool) {
		for k := range streams {
			if !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(keys, func(a, b stream) int { return cmp.Or(cmp.Compare(a.dev, b.dev), cmp.Compare(a.s, b.s)) })
	for _, k := range keys {
		meta.thread(gpuTid(k.dev, k.s), "GPU "+strconv.FormatInt(k.dev, 10)+" · stream "+strconv.FormatInt(k.s, 10))
	}
	p.threads = len(keys)
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if p.sel.Corr == nil { // a time window: the waits inside it
		lo, hi = p.sel.GPU.Start, p.sel.GPU.End
	}
	p.Waits = p.annotateWaits(meta, labels, lo, hi)
	p.Gaps = p.annotateGaps(meta)
	if meta.err != nil {
		return "", false, meta.err
	}
	return path, fw.Empty(), fw.Flush()
}

// dropMeta are the metadata events of a rank's own processes that the
// merged process replaces with its own.
var dropMeta = map[string]bool{"process_name": true, "process_labels": true, "process_sort_index": true, "process_uptime_seconds": true}

// idleTid is the thread of device d's idle gaps: after its streams.
func idleTid(d int64) int64 { return gpuTid(d, 1<<20-1) }

// annotateGaps writes the rank's idle gaps as slices on a track per
// device, named by their cause.
func (p *plan) annotateGaps(m *metaWriter) int64 {
	var n int64
	named := map[int64]bool{}
	for _, g := range p.gaps {
		d := int64(g.Device)
		if !named[d] {
			named[d] = true
			m.thread(idleTid(d), "GPU "+strconv.FormatInt(d, 10)+" · idle")
			p.threads++
		}
		m.slice(idleTid(d), "idle: "+g.Cause.String(), int64(g.Start)+p.ShiftNS, int64(g.End-g.Start), "traceq",
			`"cause": "`+g.Cause.String()+`"`)
		n++
	}
	return n
}

// metaWriter writes the merge's own events into a rank's fragment.
type metaWriter struct {
	w   *slice.Writer
	pid int64
	buf []byte
	err error
}

func (m *metaWriter) emit() {
	if m.err == nil {
		m.err = m.w.Event(m.buf)
	}
	m.buf = m.buf[:0]
}

func (m *metaWriter) process(label string, sort int) {
	m.buf = fmt.Appendf(m.buf[:0], `{"ph": "M", "name": "process_name", "pid": %d, "tid": 0, "args": {"name": %s}}`, m.pid, quote(label))
	m.emit()
	m.buf = fmt.Appendf(m.buf[:0], `{"ph": "M", "name": "process_sort_index", "pid": %d, "tid": 0, "args": {"sort_index": %d}}`, m.pid, sort)
	m.emit()
}

func (m *metaWriter) thread(tid int64, label string) {
	m.buf = fmt.Appendf(m.buf[:0], `{"ph": "M", "name": "thread_name", "pid": %d, "tid": %d, "args": {"name": %s}}`, m.pid, tid, quote(label))
	m.emit()
}

// slice writes a complete event; args is the inside of its args object.
func (m *metaWriter) slice(tid int64, name string, ts, dur int64, cat, args string) {
	m.buf = fmt.Appendf(m.buf[:0], `{"ph": "X", "cat": %q, "name": %s, "pid": %d, "tid": %d, "ts": `, cat, quote(name), m.pid, tid)
	m.buf = appendMicros(m.buf, ts)
	m.buf = append(m.buf, `, "dur": `...)
	m.buf = appendMicros(m.buf, dur)
	m.buf = append(m.buf, `, "args": {`...)
	m.buf = append(m.buf, args...)
	m.buf = append(m.buf, "}}"...)
	m.emit()
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// summary is the merged trace's "traceq" value: what the merge did, for
// a reader of the file.
func summary(plans []*plan, res *Result) []byte {
	type rank struct {
		PID       int64  `json:"pid"`
		Label     string `json:"label"`
		Path      string `json:"path"`
		Host      string `json:"host,omitempty"`
		Rank      *int   `json:"rank"`
		ShiftNS   int64  `json:"shift_ns"`
		AlignedBy string `json:"aligned_by"`
	}
	doc := struct {
		Align string `json:"align"`
		Ranks []rank `json:"ranks"`
		// The collectives matched across the ranks, and how far apart
		// their ends are on the merged clock.
		Instances   int   `json:"collective_instances"`
		SpreadP50NS int64 `json:"collective_end_spread_p50_ns"`
		SpreadMaxNS int64 `json:"collective_end_spread_max_ns"`
	}{Align: res.Align.String(), Instances: res.Instances, SpreadP50NS: res.SpreadP50, SpreadMaxNS: res.SpreadMax}
	for _, p := range plans {
		doc.Ranks = append(doc.Ranks, rank{p.PID, p.Label, p.Path, p.Host, p.Number, p.ShiftNS, p.AlignedBy})
	}
	b, _ := json.Marshal(doc)
	return b
}

// gapLog holds a rank's idle gaps compactly (a few bytes each, varints
// of the differences), for a time window placed once every rank is read.
type gapLog struct {
	buf  []byte
	prev int64
	n    int
}

func (l *gapLog) add(g window.Gap) {
	l.buf = binary.AppendVarint(l.buf, int64(g.Device))
	l.buf = append(l.buf, byte(g.Cause))
	l.buf = binary.AppendVarint(l.buf, int64(g.Start)-l.prev)
	l.buf = binary.AppendUvarint(l.buf, uint64(g.End-g.Start))
	l.prev = int64(g.Start)
	l.n++
}

// within returns the gaps inside [start, end].
func (l *gapLog) within(start, end int64) []window.Gap {
	var out []window.Gap
	var prev int64
	b := l.buf
	for len(b) > 0 {
		d, n := binary.Varint(b)
		b = b[n:]
		c := window.Cause(b[0])
		b = b[1:]
		ds, n := binary.Varint(b)
		b = b[n:]
		dur, n := binary.Uvarint(b)
		b = b[n:]
		s := prev + ds
		prev = s
		if s >= start && int64(dur) <= end-s {
			out = append(out, window.Gap{Device: int32(d), Start: trace.Time(s), End: trace.Time(s + int64(dur)), Cause: c})
		}
	}
	return out
}
