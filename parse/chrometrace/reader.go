package chrometrace

import (
	"errors"
	"io"
	"slices"

	"github.com/traceq/traceq/trace"
)

// Event is one element of traceEvents as a Reader returns it: its raw
// text, and what Parse makes of it. Its strings and Raw point into the
// Reader's buffer: they are valid until the next call to ReadEvent.
type Event struct {
	// Kind says which record below holds the decoding.
	Kind EventKind
	// Raw is the event's JSON text as in the input (for KindTopLevel, the
	// value's), for copying it out verbatim.
	Raw []byte
	// Offset is where Raw starts in the (decompressed) input; Index is
	// the event's index in traceEvents, -1 for a top-level value.
	Offset, Index int64
	// Key is the key of a KindTopLevel value.
	Key string

	// The decoding, as Parse puts it in the model (before it sorts the
	// records and drops exact duplicates). Names are ids of the Reader's
	// table (Reader.Name); Proc is 0 (a Reader does not tell the
	// processes of a file that holds several apart) and Attr is 0: the
	// attributes are below, as read.
	Activity   trace.Activity // KindActivity
	Launch     trace.Launch   // KindLaunch
	Range      trace.Range    // KindRange
	Collective trace.Collective
	// HasCollective is set when Collective holds the collective args of
	// a KindActivity kernel or of a KindCollective op.
	HasCollective bool

	// What the event says of itself, whatever its kind, for tools that
	// select raw events by time or correlation (read as Parse reads them;
	// the first of a repeated key counts).
	Ph, Cat, Name string
	// TS and Dur are in integer nanoseconds; HasTS and HasDur say whether
	// the event had them in a readable form.
	TS, Dur       int64
	HasTS, HasDur bool
	// Corr is args.correlation (0 when absent): it links a launch call, its
	// kernel and the flow events between them.
	Corr int64
	// ID is the raw text of the event's "id" (flow and async events), ""
	// when absent.
	ID string

	// The attributes of a KindActivity or KindLaunch record, as read
	// (which op they link to is decided on the whole trace, by Parse):
	// ExtID is args "External id" (0 when absent), Config the launch
	// configuration (trace.NoConfig when absent) and Kernel, on a launch
	// call, the kernel it names (args.kernel).
	ExtID  int64
	Config trace.Config
	Kernel string
}

// Reader reads a Chrome trace (plain or gzip JSON) one event at a time, in
// file order, and decodes each with Parse's own decoder: a GPU activity,
// launch call, range or collective there is the same record here. Memory
// stays at a few blocks of input and the names of the records returned,
// whatever the input size. golang.org/x/exp/trace's Reader is the model.
//
// A Reader does not sort, nor drop exact duplicates (Parse does both on
// the whole model), nor count those duplicates as anomalies.
type Reader struct {
	in    *input
	s     *splitter
	d     *decoder
	b     *batch // the batch being returned, and the next event in it
	i     int
	tops  []Event // top-level values found but not returned yet
	anoms anomalies
	end   error // what ReadEvent returns once the events are exhausted
	done  bool
	skim  bool // Skim: what each event says of itself, read only so far
}

// readerBlockSize is a Reader's block: large enough that splitting is
// not its cost, small enough to open many Readers.
const readerBlockSize = 256 << 10

// NewReader returns a Reader of r. It reads only the first bytes of r, to
// tell gzip from JSON; it fails only for a gzip header that is cut or
// corrupt.
func NewReader(r io.Reader) (*Reader, error) {
	in, err := openInput(r)
	if err != nil {
		return nil, err
	}
	rd := &Reader{in: in, d: newDecoder(0)}
	rd.d.full = true
	rd.d.res = &result{}
	rd.s = &splitter{r: in.r, blockSize: readerBlockSize, pool: newBlocks(readerBlockSize, 2)}
	rd.s.top = func(key string, raw []byte, off int64) {
		rd.tops = append(rd.tops, Event{Kind: KindTopLevel, Key: key, Raw: slices.Clone(raw), Offset: off, Index: -1})
	}
	return rd, nil
}

// ReadEvent returns the next event, or the next top-level value other
// than traceEvents, in file order.
//
// After the last one it returns io.EOF, or, when the input ended early
// after traceEvents began (Parse's trace.Truncated), a *TruncatedError
// (errors.Is ErrTruncated) carrying the truncation Parse reports. Input
// that Parse refuses gives Parse's error, after the events before the
// fault.
func (r *Reader) ReadEvent() (Event, error) {
	for {
		if len(r.tops) > 0 {
			ev := r.tops[0]
			r.tops = r.tops[1:]
			return ev, nil
		}
		if r.b != nil && r.i < len(r.b.spans) {
			return r.decode(), nil
		}
		if r.b != nil {
			r.b.release()
			r.b = nil
			r.mergeAnomalies()
		}
		if r.done {
			return Event{}, r.end
		}
		b, err := r.s.next()
		if b != nil {
			r.b, r.i = b, 0
			continue
		}
		r.done = true
		r.end = r.finish(err)
		r.in.close()
	}
}

// Skim makes ReadEvent read of each event only what it says of itself,
// and only as far as it must: Ph, Cat, Name, TS, Dur, ID and Corr (read
// in args only where Kineto writes a correlation id: GPU activities and
// launch calls), with Raw, Offset and Index. Kind is KindMetadata for a
// "ph": "M" event, KindTopLevel for a top-level value, KindSkipped
// otherwise; the decoding records are left empty. A complete event is
// read no further than those keys: a copy that selects raw events by
// time and correlation id (slice.CopyTo) pays for the keys it uses, not
// for every argument of every event. Call it before the first ReadEvent.
func (r *Reader) Skim() { r.skim = true }

// skimEvent is decode's Skim: the keys an event selection uses.
func (d *decoder) skimEvent(ev *Event) {
	d.f = fields{}
	raw := unsafeString(ev.Raw)
	if len(raw) == 0 || raw[0] != '{' {
		d.anomaly(anomNotObject)
		ev.Kind = KindSkipped
		return
	}
	scanObject(raw, d.skimKey)
	if d.f.seen&seenPh == 0 {
		d.anomaly(anomNoPhase)
	}
	d.fill(ev)
	ev.Kind = KindSkipped
	if ev.Ph == "M" {
		ev.Kind = KindMetadata
	}
}

// skimNeed are the keys a complete event must have given before Skim
// stops reading it; a GPU activity or launch call its correlation id
// too.
const skimNeed = seenPh | seenCat | seenName | seenTs | seenDur

// skimKey is skimEvent's key scanner: the top-level keys an event
// selection uses, args.correlation where the category carries one, and a
// stop once a complete event has given them.
func (d *decoder) skimKey(key, s string, i int) (int, bool) {
	f := &d.f
	var e int
	switch key {
	case "ph":
		e = f.take(seenPh, &f.ph, s, i)
	case "cat":
		e = f.take(seenCat, &f.cat, s, i)
	case "name":
		e = f.take(seenName, &f.name, s, i)
	case "ts":
		e = f.take(seenTs, &f.ts, s, i)
	case "dur":
		e = f.take(seenDur, &f.dur, s, i)
	case "id":
		e = f.take(seenID, &f.id, s, i)
	case "args":
		if f.seen&seenArgs == 0 && s[i] == '{' && d.skimCorr() {
			f.seen |= seenArgs
			e = scanObject(s[i:], d.skimArg)
			if e < 0 {
				// Stopped at the correlation id (or malformed: the
				// splitter has checked the syntax, so it is not).
				return -1, false
			}
			f.seen |= seenArgsEnd
			e += i
			break
		}
		e = skipValue(s, i)
	default:
		e = skipValue(s, i)
	}
	if f.seen&skimNeed == skimNeed && f.ph.Str == "X" && (f.seen&seenArgsEnd != 0 || !d.skimCorr()) {
		return e, false
	}
	return e, true
}

// skimCorr reports whether Skim reads the event's args for its
// correlation id: a GPU activity or launch call, or a category not read
// yet.
func (d *decoder) skimCorr() bool {
	if d.f.seen&seenCat == 0 {
		return true
	}
	k, _ := classifyCat(d.f.cat.Str)
	return k == catGPU || k == catLaunch
}

// skimArg reads args.correlation and stops the event there once its
// top-level keys are in.
func (d *decoder) skimArg(key, s string, i int) (int, bool) {
	f := &d.f
	if key != "correlation" {
		return skipValue(s, i), true
	}
	e := f.take(seenCorr, &f.corr, s, i)
	return e, f.seen&skimNeed != skimNeed
}

// decode decodes the next event of the batch.
func (r *Reader) decode() Event {
	sp := r.b.spans[r.i]
	d := r.d
	d.idx = r.b.first + int64(r.i)
	d.off = r.b.base + int64(sp.start)
	r.i++
	raw := r.b.data[sp.start:sp.end]
	if r.skim {
		ev := Event{Raw: raw, Offset: d.off, Index: d.idx, Config: trace.NoConfig}
		d.skimEvent(&ev)
		return ev
	}
	ev := Event{Kind: d.event(unsafeString(raw)), Raw: raw, Offset: d.off, Index: d.idx}
	d.fill(&ev)
	ev.Config = trace.NoConfig
	switch ev.Kind {
	case KindActivity:
		ev.Activity = d.out.act
		if ev.Activity.Attr != 0 {
			ev.Activity.Attr = 0
			d.fillAttrs(&ev)
		}
	case KindLaunch:
		ev.Launch = d.out.launch
		if ev.Launch.Attr != 0 {
			ev.Launch.Attr = 0
			d.fillAttrs(&ev)
		}
	case KindRange:
		ev.Range = d.out.rng
	case KindSkipped:
		if ev.Ph == "M" {
			ev.Kind = KindMetadata
		}
	}
	if d.out.hasColl {
		ev.Collective, ev.HasCollective = d.out.coll, true
	}
	return ev
}

// finish turns the end of the input into ReadEvent's last error.
func (r *Reader) finish(runErr error) error {
	trunc, err := r.in.finish(r.s, runErr)
	if err != nil {
		return err
	}
	r.mergeAnomalies()
	if n := notEvents(r.anoms.list); r.s.nevents > 0 && n == r.s.nevents {
		return notEventsError(n)
	}
	if trunc != nil {
		return &TruncatedError{Truncation: *trunc}
	}
	return io.EOF
}

// Close releases the Reader's input (it stops decompressing). It need not
// be called once ReadEvent has returned an error.
func (r *Reader) Close() error {
	r.in.close()
	if r.b != nil {
		r.b.release()
		r.b = nil
	}
	r.done, r.tops = true, nil
	if r.end == nil {
		r.end = errors.New("chrometrace: Reader closed")
	}
	return nil
}

// Name returns the string of a name id of the records returned so far.
func (r *Reader) Name(id trace.NameID) string { return r.d.names.Names()[id] }

// meta returns what the top-level values read so far say of the trace
// (all of them once ReadEvent has returned its last error), as Parse reads
// them.
func (r *Reader) meta() trace.Meta { return readMeta(r.s.meta) }

// anomalies returns the odd events met so far, counted as Parse counts
// them (duplicates apart), in Parse's order.
func (r *Reader) anomalies() []trace.Anomaly {
	r.mergeAnomalies()
	t := trace.Trace{Anomalies: slices.Clone(r.anoms.list)}
	t.SortAnomalies()
	return t.Anomalies
}

// mergeAnomalies moves the decoder's counts into the Reader's.
func (r *Reader) mergeAnomalies() {
	for _, a := range r.d.res.examples(0) {
		r.anoms.add(a)
	}
	r.d.res.anomalies, r.d.res.anomAt, r.d.res.anomIdx = r.d.res.anomalies[:0], r.d.res.anomAt[:0], nil
}

// TruncatedError is a Reader's last error for input that ended early,
// after the events before the cut were returned.
type TruncatedError struct {
	Truncation trace.Truncation
}

func (e *TruncatedError) Error() string { return "truncated: " + e.Truncation.Reason }

// Is makes errors.Is(err, ErrTruncated) hold.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// ErrTruncated is matched (errors.Is) by a Reader's error for input that
// ends before the document closes.
var ErrTruncated = errors.New("truncated trace")

// fillAttrs copies the attributes read into ev.
func (d *decoder) fillAttrs(ev *Event) {
	p := d.out.pend
	ev.ExtID, ev.Config = p.ext, d.loc.configs.Configs()[p.config]
	if p.kernel != 0 {
		ev.Kernel = d.names.Names()[p.kernel]
	}
}

// fill copies what the scanned event says of itself into ev.
func (d *decoder) fill(ev *Event) {
	f := &d.f
	ev.Ph, ev.Cat, ev.Name = f.ph.Str, f.cat.Str, f.name.Str
	ev.TS, ev.HasTS = micros(&f.ts)
	ev.Dur, ev.HasDur = micros(&f.dur)
	ev.Corr, _ = num(&f.corr)
	ev.ID = f.id.Raw
}
