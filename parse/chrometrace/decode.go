package chrometrace

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"unsafe"

	"github.com/traceq/traceq/trace"
)

// catKind is what traceq keeps of an event category.
type catKind uint8

const (
	catIgnore   catKind = iota
	catGPU              // kernel, memcpy, memset
	catLaunch           // cuda_runtime / cuda_driver
	catCPURange         // user_annotation
	catGPURange         // gpu_user_annotation
	catOp               // cpu_op: kept only for ProfilerStep#N
)

func classifyCat(cat string) (catKind, trace.Kind) {
	switch cat {
	case "kernel", "Kernel":
		return catGPU, trace.KindKernel
	case "gpu_memcpy", "Memcpy":
		return catGPU, trace.KindMemcpy
	case "gpu_memset", "Memset":
		return catGPU, trace.KindMemset
	case "cuda_runtime", "cuda_driver", "Runtime", "Driver", "hip_runtime":
		return catLaunch, 0
	case "user_annotation":
		return catCPURange, 0
	case "gpu_user_annotation":
		return catGPURange, 0
	case "cpu_op", "Operator":
		return catOp, 0
	}
	return catIgnore, 0
}

// Anomalies that say an element is not an event at all.
const (
	anomNotObject = "non-object element in traceEvents skipped"
	anomNoPhase   = "event without ph skipped"
)

// otherCat reports whether cat is a category that profilers write and
// traceq does not use (Kineto's ActivityType names, old and new).
func otherCat(cat string) bool {
	switch cat {
	case "traceq": // the annotation tracks of a merged trace (traceq merge)
		return true
	case "python_function", "Trace", "ac2g", "fwdbwd", "overhead", "cuda_sync", "cuda_profiler_range",
		"cpu_instant_event", "external_correlation", "async", "async_gpu", "async_cpu_to_gpu",
		"mtia_runtime", "mtia_ccp_events", "mtia_insight", "glow_runtime", "hpu_op", "xpu_runtime", "xpu_driver",
		"privateuse1_runtime", "privateuse1_driver", "collective_comm", "gpu_pm_counter", "Python", "Memory",
		"cpu_memcpy", "gpu_mem", "cuda_event", "":
		return true
	}
	return false
}

// isLaunchCall reports whether a runtime/driver call enqueues GPU work.
// Other calls (synchronize, event record, malloc) are not kept: they are
// as many as the kernels and analysis needs none of them.
func isLaunchCall(name string) bool {
	return strings.Contains(name, "Launch") || strings.Contains(name, "Memcpy") ||
		strings.Contains(name, "Memset") || strings.Contains(name, "memcpy") || strings.Contains(name, "memset")
}

// knownPhases are the Chrome trace event phases; others are counted.
const knownPhases = "XBEiIsftbenCPONDMRcv"

// phaseTable marks the bytes of knownPhases.
var phaseTable = func() (t [256]bool) {
	for i := range len(knownPhases) {
		t[knownPhases[i]] = true
	}
	return t
}()

func knownPhase(ph string) bool { return len(ph) == 1 && phaseTable[ph[0]] }

// fields holds the parts of one event that decoding looks at. The first
// occurrence of a key counts, so that where the scanner stops (fields.done)
// never changes what an event decodes to.
type fields struct {
	ph, cat, name, pid, tid, ts, dur, id val
	device, stream, corr                 val
	attr                                 attrFields
	seen                                 uint64 // seen* bits: keys read so far
	need                                 uint64 // the bits done waits for; 0 until known
	// past is set once done() held: keys read after it (by a Reader,
	// which reads every key) must not change the decoding.
	past bool
	// ctx is 1 + the catKind of the category, once read: the context of
	// the key caches' predictions.
	ctx uint8
	// nameID is the id of name when the name memo knew it (0: intern it).
	nameID trace.NameID
}

// take reads the value at s[i] into dst, unless the key was seen before
// (the first occurrence counts), and returns the index just past it.
func (f *fields) take(bit uint64, dst *val, s string, i int) int {
	if f.seen&bit != 0 {
		return skipValue(s, i)
	}
	f.seen |= bit
	return readValueInto(s, i, dst)
}

// value is take, or skipValue when dst is nil (a key the decoder does not
// read), through the value memo of the key's cache entry e when there is
// one (keys.go).
func (f *fields) value(bit uint64, dst *val, e *keyEntry, s string, i int) int {
	take := dst != nil && f.seen&bit == 0
	if e != nil && e.memoLen != 0 && i+memoSlack <= len(s) && e.memoMatch(s, i) && (!take || e.memoVal) {
		end := i + int(e.memoLen) - 1
		if take {
			f.seen |= bit
			e.memoInto(dst, s, i, end)
		}
		return end
	}
	var end int
	if take {
		f.seen |= bit
		end = readValueInto(s, i, dst)
	} else {
		end = skipValue(s, i)
	}
	if e != nil && (take || dst == nil) {
		e.learnValue(s, i, end, dst)
	}
	return end
}

// EventKind says what Parse makes of an event.
type EventKind uint8

const (
	// KindSkipped: nothing. Another category (python_function, flows,
	// most cpu_ops), or an odd event Parse counts as an anomaly.
	KindSkipped    EventKind = iota
	KindActivity             // a kernel, memcpy or memset: Event.Activity
	KindLaunch               // a runtime call that enqueued GPU work: Event.Launch
	KindRange                // an annotation or step marker: Event.Range
	KindCollective           // a record_param_comms op: Event.Collective alone
	KindMetadata             // a metadata event (ph "M": process and thread names)
	// KindTopLevel is not an event but a top-level value other than
	// traceEvents (Event.Key and Event.Raw).
	KindTopLevel
)

var eventKindNames = [...]string{KindSkipped: "skipped", KindActivity: "activity", KindLaunch: "launch",
	KindRange: "range", KindCollective: "collective", KindMetadata: "metadata", KindTopLevel: "top-level value"}

func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// record is what the decoder made of its last event: the field that its
// EventKind names, a collective when hasColl is set, and a CPU op when
// hasOp is set. pend holds the attributes of an activity or launch as
// read (Attr is 1 when there are any, to be replaced by an index of the
// batch's table).
type record struct {
	act     trace.Activity
	launch  trace.Launch
	rng     trace.Range
	coll    trace.Collective
	hasColl bool
	op      rawOp
	hasOp   bool
	pend    pendAttr
	pid     int64 // the event's pid, read as threadID reads a tid
}

// decoder turns batches of raw events into model records. Each parallel
// worker owns one; its interner is local, and result.newNames tells the
// merger which names it saw first in each batch.
type decoder struct {
	worker int
	names  *trace.Interner
	launch map[trace.NameID]bool // cache of isLaunchCall per name
	f      fields
	coll   collArgs // the collective args of the event (fields.seen says which)
	out    record   // what the last event decoded to
	// full makes the scanner read every key of every event (a Reader
	// reports ts, dur and id of events Parse skips); the decoding is the
	// same.
	full bool
	res  *result
	// sum, when set, summarises each chunk for Options.Index.
	sum *chunkSum
	idx int64 // current event index
	off int64 // current event offset

	lastActs int          // activities of the previous batch: a size hint
	free     chan *result // results the merger is done with
	loc      *localTables // the worker's configs, signatures and pids
	key      []byte       // a signature key being built
	// nameCache holds recently interned names (intern).
	nameCache [nameCacheSize]cachedName
	// topKeys and argKeys are the keys met at the top level of events
	// and in their args (keys.go).
	topKeys, argKeys *keyCache
	// nameMemo holds names recently interned, to recognise them in the
	// text (memoName).
	nameMemo [nameMemoSize]memoName
	// fields is where each key's value goes (fieldRefs).
	fields [256]fieldRef
}

type result struct {
	seq       int
	bytes     int   // size of the batch's JSON
	events    int64 // elements of a chunk (0 for a batch: its indices are absolute)
	worker    int
	newNames  []string
	newLocals locals // the worker's configs, signatures and pids first seen in the batch
	acts      []trace.Activity
	launches  []trace.Launch
	ranges    []trace.Range
	colls     []trace.Collective
	ops       []rawOp
	// pend holds the attributes of acts and launches: a record's Attr
	// is 1 + its index here (0: none).
	pend      []pendAttr
	anomalies []trace.Anomaly
	// anomAt is, per anomaly, its first event: the example, formatted by
	// whoever merges the result (examples), who knows where the batch's
	// events start.
	anomAt  []evPos
	anomIdx map[string]int // index of anomalies by What, once there are many
	// A chunk's result (chunk.go): the chunk, how it ends (chunk*), where
	// its tail starts when it closed the array, and the end of its last
	// complete element.
	chunk    *batch
	endState int
	tail     int
	lastGood int64
	// sum is the chunk's summaries when indexing (Options.Index).
	sum []ChunkSummary
	// faulted marks the empty result of a decoder that faulted on data
	// read in place (guard.decode).
	faulted bool
}

// evPos is an event's index (in its batch or chunk, plus the batch's
// first index when known) and byte offset.
type evPos struct{ idx, off int64 }

// examples returns r's anomalies with their examples written, the
// event indices counted from base.
func (r *result) examples(base int64) []trace.Anomaly {
	for i := range r.anomalies {
		p := r.anomAt[i]
		r.anomalies[i].Example = fmt.Sprintf("event %d at byte %d", base+p.idx, p.off)
	}
	return r.anomalies
}

func newDecoder(worker int) *decoder {
	d := &decoder{worker: worker, names: trace.NewInterner(), launch: map[trace.NameID]bool{}, loc: newLocalTables(),
		topKeys: newKeyCache(), argKeys: newKeyCache()}
	d.fields = d.fieldRefs()
	return d
}

// unsafeString views b as a string without copying. The decoder never
// keeps such a string: the interner clones what it stores.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func (d *decoder) decode(b *batch) *result {
	if b.chunk {
		return d.decodeChunk(b)
	}
	// Size the records like the previous batch's: the blocks are alike.
	d.res = d.result()
	d.res.seq, d.res.worker, d.res.bytes = b.seq, d.worker, len(b.data)
	before := d.names.Len()
	mark := d.loc.mark()
	for i, sp := range b.spans {
		d.idx = b.first + int64(i)
		d.off = b.base + int64(sp.start)
		d.keep(d.event(unsafeString(b.data[sp.start:sp.end])))
	}
	d.lastActs = len(d.res.acts)
	if n := d.names.Len(); n > before {
		d.res.newNames = append([]string(nil), d.names.Names()[before:n]...)
	}
	d.res.newLocals = d.loc.since(mark)
	return d.res
}

func (d *decoder) anomaly(what string) {
	r := d.res
	if r.anomIdx != nil {
		if i, ok := r.anomIdx[what]; ok {
			r.anomalies[i].Count++
			return
		}
	} else {
		for i := range r.anomalies {
			if r.anomalies[i].What == what {
				r.anomalies[i].Count++
				return
			}
		}
	}
	r.anomalies = append(r.anomalies, trace.Anomaly{What: what, Count: 1})
	r.anomAt = append(r.anomAt, evPos{d.idx, d.off})
	// Past a few kinds, index them: thousands of distinct unknown phases
	// or categories would otherwise take quadratic time.
	if n := len(r.anomalies); n > 8 {
		if r.anomIdx == nil {
			r.anomIdx = make(map[string]int, 2*n)
			for i := range r.anomalies {
				r.anomIdx[r.anomalies[i].What] = i
			}
		}
		r.anomIdx[what] = n - 1
	}
}

// num reads a JSON number, or a string holding one (some exporters quote
// ids), as an integer.
func num(v *val) (int64, bool) {
	switch v.Type {
	case vNumber:
		switch v.fixed {
		case fixedInt:
			return v.n / 1000, true
		case fixedFrac:
			return 0, false
		}
		return parseInt(v.Raw)
	case vString:
		return parseInt(v.Str)
	}
	return 0, false
}

func micros(v *val) (int64, bool) {
	switch v.Type {
	case vNumber:
		if v.fixed != notFixed {
			return v.n, true
		}
		return parseMicros(v.Raw)
	case vString:
		return parseMicros(v.Str)
	}
	return 0, false
}

// threadID returns a numeric tid, or a stable synthetic negative id for a
// named one ("stream 7" is handled by the caller; "" is thread 0).
func threadID(v val) int64 {
	if n, ok := num(&v); ok {
		return n
	}
	if v.Type != vString || v.Str == "" {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(v.Str))
	return -int64(h.Sum64() >> 2)
}

// streamID reads a stream from a tid such as 7, "7" or "stream 7".
func streamID(v val) (int64, bool) {
	if n, ok := num(&v); ok {
		return n, true
	}
	if v.Type == vString {
		s := strings.TrimPrefix(v.Str, "stream ")
		if i := strings.IndexByte(s, ' '); i >= 0 {
			s = s[:i]
		}
		return parseInt(s)
	}
	return 0, false
}

// event decodes one event into d.out and says what it is.
func (d *decoder) event(ev string) EventKind {
	d.out.hasColl, d.out.hasOp = false, false
	d.f = fields{}
	if len(ev) == 0 || ev[0] != '{' {
		d.anomaly(anomNotObject)
		return KindSkipped
	}
	d.scanEvent(ev) // fills d.f, args included
	return d.interpret()
}

// eventAt decodes the event object starting at s[i] ('{') and returns
// what it is and the index just past it, finding its end in the same
// pass that reads its keys (the speculative chunks of Parse have no
// splitter that found it first): the keys it needs, then the rest of the
// object skipped by its brackets and strings alone, as compositeEnd would.
// An object the key scanner cannot read (malformed inside) is measured by
// compositeEnd and decoded as event does, so the outcome is the
// splitter's (exact false: the keys were not all read as a Reader reads
// them). end is -1 when s ends inside the object.
func (d *decoder) eventAt(s string, i int) (kind EventKind, end int, exact bool) {
	d.out.hasColl, d.out.hasOp = false, false
	d.f = fields{}
	e, stop := d.scanEvent(s[i:])
	if e < 0 && stop >= 0 {
		e = objectRestEnd(s[i:], stop)
	}
	if e >= 0 {
		return d.interpret(), i + e, true
	}
	if e = compositeEnd(s, i); e < 0 {
		return KindSkipped, -1, false
	}
	return d.event(s[i:e]), e, false
}

// interpret decides what the event whose keys were just scanned is, and
// fills d.out.
func (d *decoder) interpret() EventKind {
	f := &d.f
	ph := f.ph.Str
	if !knownPhase(ph) {
		if f.ph.Exists() {
			d.anomaly(fmt.Sprintf("unknown phase %q skipped", truncate(f.ph.String(), 16)))
		} else {
			d.anomaly(anomNoPhase)
		}
		return KindSkipped
	}
	kind, akind := classifyCat(f.cat.Str)
	if kind == catIgnore {
		// A complete event of a category no profiler is known to write
		// may be GPU work under a new name: say so rather than drop it
		// silently.
		if ph == "X" && !otherCat(f.cat.Str) {
			d.anomaly(fmt.Sprintf("complete event of unknown category %q skipped", truncate(f.cat.Str, 24)))
		}
		return KindSkipped
	}
	commOp, isOp := false, false
	if kind == catOp && !strings.HasPrefix(f.name.Str, "ProfilerStep#") {
		commOp = f.name.Str == commsOp && d.hasCollective()
		isOp = true
	}
	if ph != "X" {
		if kind == catGPU {
			d.anomaly(fmt.Sprintf("GPU activity with phase %q skipped", ph))
		}
		return KindSkipped
	}
	ts, ok := micros(&f.ts)
	if !ok {
		d.anomaly("event with missing or unreadable ts skipped")
		return KindSkipped
	}
	dur, ok := micros(&f.dur)
	if !ok {
		if kind == catGPU {
			d.anomaly("GPU activity without dur skipped")
			return KindSkipped
		}
		dur = 0
		d.anomaly("event without dur read as zero length")
	}
	if dur < 0 {
		d.anomaly("negative dur read as zero length")
		dur = 0
	}
	if dur > trace.MaxActivityDur && kind == catGPU {
		d.anomaly("GPU activity longer than 1 h skipped")
		return KindSkipped
	}
	d.out.pid = threadID(f.pid)
	if isOp {
		// The op is not a range (it is no step marker); it is kept for
		// the activities it launched, and a record_param_comms op's args
		// are a collective.
		thread := threadID(f.tid)
		d.op(trace.Time(ts), dur, thread)
		if commOp {
			d.collective(trace.CollectiveOnCPUOp, trace.Time(ts), dur, 0, thread)
			return KindCollective
		}
		return KindSkipped
	}
	if f.name.Type != vString {
		d.anomaly("event without a name")
	}
	name := f.nameID
	if name == 0 {
		name = d.intern(f.name.Str)
		d.learnName(name)
	}
	switch kind {
	case catGPU:
		a := trace.Activity{Start: trace.Time(ts), Dur: dur, Name: name, Kind: akind, Device: -1, Stream: -1}
		dev, ok := d.device(&f.device, &f.pid)
		if !ok {
			return KindSkipped
		}
		a.Device = dev
		if n, ok := num(&f.stream); ok {
			a.Stream = d.stream(n)
		} else if n, ok := streamID(f.tid); ok {
			a.Stream = d.stream(n)
		}
		if n, ok := num(&f.corr); ok && n != 0 {
			a.Corr = n
		} else {
			d.anomaly("GPU activity without correlation id")
		}
		if d.attrs(akind == trace.KindKernel, false) {
			a.Attr = 1
		}
		d.out.act = a
		if mayBeCollective(f.name.Str) && d.hasCollective() {
			d.collective(trace.CollectiveOnKernel, a.Start, 0, a.Corr, 0)
		}
		return KindActivity
	case catLaunch:
		corr, ok := num(&f.corr)
		if !ok || corr == 0 {
			return KindSkipped
		}
		isL, seen := d.launch[name]
		if !seen {
			isL = isLaunchCall(f.name.Str)
			d.launch[name] = isL
		}
		if !isL {
			return KindSkipped
		}
		d.out.launch = trace.Launch{Start: trace.Time(ts), Dur: dur, Corr: corr, Thread: threadID(f.tid), Name: name}
		if d.attrs(true, true) {
			d.out.launch.Attr = 1
		}
		return KindLaunch
	case catCPURange, catOp:
		d.out.rng = trace.Range{
			Start: trace.Time(ts), Dur: dur, Thread: threadID(f.tid), Name: name,
			Device: -1, Stream: -1, Kind: trace.RangeCPU, Domain: d.names.ID(f.cat.Str),
		}
		return KindRange
	default: // catGPURange
		r := trace.Range{Start: trace.Time(ts), Dur: dur, Name: name, Device: -1, Stream: -1,
			Kind: trace.RangeGPU, Domain: d.names.ID(f.cat.Str)}
		dev, ok := d.device(nil, &f.pid)
		if !ok {
			return KindSkipped
		}
		r.Device = dev
		if n, ok := streamID(f.tid); ok {
			r.Stream = d.stream(n)
		}
		d.out.rng = r
		return KindRange
	}
}

// anomBadDevice is the anomaly of a GPU event whose device id is not an
// int32 ordinal.
const anomBadDevice = "GPU event with an unreadable or out-of-range device id skipped"

// device reads a GPU event's device: args.device, else its pid (Kineto
// writes the device there). Neither present is device -1 (unknown); one
// present but not an integer ordinal up to 2^31-1 ("gpu 3", 1e30,
// 99999999999, -2) makes the event odd: it is skipped and counted rather
// than put on a made-up device.
func (d *decoder) device(dev, pid *val) (int32, bool) {
	v := dev // pointers: a val is 40 bytes, and this is per GPU event
	if v == nil || !v.Exists() {
		v = pid
	}
	if !v.Exists() {
		return -1, true
	}
	n, ok := num(v)
	if !ok || n < 0 || n > math.MaxInt32 {
		d.anomaly(anomBadDevice)
		return 0, false
	}
	return int32(n), true
}

// stream converts a stream id, -1 (unknown) when it does not fit an
// int32, with an anomaly: nsys does the same.
func (d *decoder) stream(n int64) int32 {
	if n < math.MinInt32 || n > math.MaxInt32 {
		d.anomaly("stream id out of range; set to -1")
		return -1
	}
	return int32(n)
}

// maxName is trace.MaxNameLen, the longest name kept.
const maxName = trace.MaxNameLen

// intern returns the id of s, cut to trace.MaxNameLen bytes.
func (d *decoder) intern(s string) trace.NameID {
	s, cut := trace.CutName(s)
	if cut {
		d.anomaly(trace.AnomLongName)
	}
	// A trace repeats a few hundred names millions of times: a small
	// table in front of the interner's map compares a name with the one
	// last seen in its slot instead of hashing it whole.
	c := &d.nameCache[nameSlot(s)]
	if c.id != 0 && c.s == s {
		return c.id
	}
	id := d.names.ID(s)
	c.s, c.id = d.names.Names()[id], id
	return id
}

// The name memo. A kernel's name is a few hundred bytes that the decoder
// found the end of (stringEnd), then looked up in the name cache
// (intern); most are one of a few dozen. The memo holds names of 16 to
// maxName bytes without escapes, by their first 16 bytes, with their id:
// a name in the text that is one of them, between quotes, is known by
// one comparison.
type memoName struct {
	s  string // the interner's copy
	id trace.NameID
}

// nameMemoSize is the number of slots of the name memo.
const nameMemoSize = 64

func nameMemoSlot(a, b uint64) int {
	return int(((a ^ b*0xC2B2AE3D27D4EB4F) * 0x9E3779B97F4A7C15) >> (64 - 6))
}

// readName reads the event's name at s[i] when it is one of the memo's
// and returns the index just past it, else -1.
func (d *decoder) readName(s string, i int) int {
	if i+17 > len(s) || s[i] != '"' {
		return -1
	}
	m := &d.nameMemo[nameMemoSlot(le64(s[i+1:i+9]), le64(s[i+9:i+17]))]
	n := len(m.s)
	if m.id == 0 || i+n+2 > len(s) || s[i+1+n] != '"' || s[i+1:i+1+n] != m.s {
		return -1
	}
	// A name without escapes has neither '"' nor '\\': the string in the
	// text is the name, as stringEnd and readValueInto would read it.
	d.f.name = val{Type: vString, Raw: s[i : i+n+2], Str: s[i+1 : i+1+n]}
	d.f.nameID = m.id
	return i + n + 2
}

// learnName puts the event's name, just interned as id, in the name memo
// when it can be there.
func (d *decoder) learnName(id trace.NameID) {
	v := &d.f.name
	if n := len(v.Str); !d.topKeys.general && n >= 16 && n <= maxName && len(v.Raw) == n+2 {
		m := &d.nameMemo[nameMemoSlot(le64(v.Str[:8]), le64(v.Str[8:16]))]
		m.s, m.id = d.names.Names()[id], id
	}
}

// nameCacheSize is the number of slots of a decoder's name cache.
const nameCacheSize = 1024

type cachedName struct {
	s  string // the interner's copy
	id trace.NameID
}

// nameSlot hashes a name's length and its first and last bytes into a
// slot of the name cache (names of a trace differ in length or at their
// ends, templated C++ kernel names at their end).
func nameSlot(s string) int {
	n := len(s)
	h := uint64(n)
	if n >= 8 {
		h ^= le64(s[:8]) * 0x9E3779B97F4A7C15
		h ^= le64(s[n-8:]) * 0xC2B2AE3D27D4EB4F
	} else {
		for i := range n {
			h = h*31 + uint64(s[i])
		}
	}
	return int((h ^ h>>29) % nameCacheSize)
}

func le64(s string) uint64 {
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
