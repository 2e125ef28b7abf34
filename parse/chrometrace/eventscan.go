package chrometrace

import (
	"strings"

	"github.com/tidwall/gjson"
)

// The event scanner reads one event object in a single pass and fills the
// decoder's fields. It replaces gjson's ForEach on the hot path because
// gjson converts every number it meets to a float64 (strconv.ParseFloat was
// a tenth of the parse time) and must walk the whole event even when its
// category says it is to be skipped: python_function and cpu_op events,
// often most of a trace, are left after their first three keys. Values are
// handed on as val, the raw text and what gjson would make of it without
// the float (half the size of a gjson.Result, which the decoder copied a
// dozen times an event). gjson stays for the small metadata values and
// for strings with escapes, so the unescaping rules are gjson's.

// valType is the JSON type of a val.
type valType uint8

const (
	vNone valType = iota // absent, or not JSON
	vNull
	vFalse
	vNumber
	vString
	vTrue
	vJSON // an object or array
)

// val is one value of an event as the scanner read it.
type val struct {
	Raw  string // its text
	Str  string // a string's text, unescaped; "" for other types
	Type valType
}

// Exists reports whether the value was there.
func (v val) Exists() bool { return v.Type != vNone }

// String returns a string's text, or another value's raw text.
func (v val) String() string {
	if v.Type == vString {
		return v.Str
	}
	return v.Raw
}

// readValue reads the value at s[i] (not whitespace) and returns it and the
// index just past it; end is -1 when s ends inside it. Literals that are not
// JSON read as a missing value.
func readValue(s string, i int) (v val, end int) {
	end = readValueInto(s, i, &v)
	return v, end
}

// readValueInto is readValue writing into *v (the decoder's fields: no
// copy of the value).
func readValueInto(s string, i int, v *val) (end int) {
	*v = val{}
	switch c := s[i]; {
	case c == '"':
		e, esc := stringEnd(s, i)
		if e < 0 {
			return -1
		}
		v.Type, v.Raw = vString, s[i:e]
		if esc {
			v.Str = unescape(v.Raw)
		} else {
			v.Str = s[i+1 : e-1]
		}
		return e
	case c == '{' || c == '[':
		e := compositeEnd(s, i)
		if e < 0 {
			return -1
		}
		v.Type, v.Raw = vJSON, s[i:e]
		return e
	default:
		j, _ := scalarEnd(s, i)
		raw := s[i:j]
		switch {
		case raw == "true":
			v.Type = vTrue
		case raw == "false":
			v.Type = vFalse
		case raw == "null":
			v.Type = vNull
		case c == '-' || c == '+' || (c >= '0' && c <= '9'):
			v.Type = vNumber
		default:
			v.Type = vNone
			return j
		}
		v.Raw = raw
		return j
	}
}

// unescape returns the text of the JSON string raw (quotes included),
// which holds escapes. Of a string longer than any name the model keeps
// (maxName), only a prefix that holds more than maxName bytes of text is
// unescaped: a name of hundreds of MB is not copied whole.
func unescape(raw string) string {
	// An escape turns at most 6 bytes (\u0041) into 1.
	const enough = 6*maxName + 64
	if len(raw) > enough+8 {
		cut := 1
		for cut < enough { // keep escapes whole
			switch {
			case raw[cut] != '\\':
				cut++
			case raw[cut+1] == 'u':
				cut += 6
			default:
				cut += 2
			}
		}
		raw = raw[:cut] + `"`
	}
	return gjson.Parse(raw).Str
}

// scanObject calls fn with each key of the object starting at s[0] ('{')
// and the position of its value, in order, until fn says no more or the
// object ends; fn returns the index just past the value. scanObject
// returns the index just past the object's '}', or -1 when fn stopped it
// or the object is malformed (the splitter has checked the structure, so
// the decoder is lenient here, as gjson was).
func scanObject(s string, fn func(key, s string, i int) (end int, more bool)) int {
	i, done := objectStart(s)
	for !done {
		key, v := objectKey(s, i)
		if v < 0 {
			return -1
		}
		end, more := fn(key, s, v)
		if end < 0 || !more {
			return -1
		}
		i, done = objectNext(s, end)
	}
	return i
}

// The steps of scanObject, which the decoder's hot loops (scanEvent,
// scanArgs) take with direct calls instead of a function value per key.
// objectStart and objectNext return the index of the next key, or, done,
// the index just past the object's '}', or -1 when it is malformed or s
// ends first.

// objectStart starts reading the object at s[0] ('{').
func objectStart(s string) (i int, done bool) {
	i = skipSpace(s, 1)
	if i < len(s) && s[i] == '}' {
		return i + 1, true
	}
	return i, false
}

// objectKey reads the key at s[i] (or after blanks there) and returns it
// and the index of its value, or -1 when the object is malformed there.
func objectKey(s string, i int) (key string, v int) {
	i = skipSpace(s, i)
	if i >= len(s) || s[i] != '"' {
		return "", -1
	}
	ke, esc := stringEnd(s, i)
	if ke < 0 {
		return "", -1
	}
	key = s[i+1 : ke-1]
	if esc {
		if ke-i > 1024 {
			key = "\x00" // no key the decoder reads is that long
		} else {
			key = gjson.Parse(s[i:ke]).Str
		}
	}
	i = skipSpace(s, ke)
	if i >= len(s) || s[i] != ':' {
		return "", -1
	}
	i = skipSpace(s, i+1)
	if i >= len(s) {
		return "", -1
	}
	return key, i
}

// objectNext reads on after a value that ends at s[end].
func objectNext(s string, end int) (i int, done bool) {
	i = skipSpace(s, end)
	if i < len(s) {
		switch s[i] {
		case '}':
			return i + 1, true
		case ',':
			return i + 1, false
		}
	}
	return -1, true
}

// scanEvent is scanObject(s, d.eventKey) with direct calls. stop is the
// end of the value after which eventKey said no more (end is then -1),
// or -1.
func (d *decoder) scanEvent(s string) (end, stop int) {
	i, done := objectStart(s)
	for !done {
		key, v := objectKey(s, i)
		if v < 0 {
			return -1, -1
		}
		e, more := d.eventKey(key, s, v)
		if e < 0 {
			return -1, -1
		}
		if !more {
			return -1, e
		}
		i, done = objectNext(s, e)
	}
	return i, -1
}

// scanArgs is scanObject(s, d.argKey) with direct calls.
func (d *decoder) scanArgs(s string) int {
	i, done := objectStart(s)
	for !done {
		key, v := objectKey(s, i)
		if v < 0 {
			return -1
		}
		e := d.argKey(key, s, v)
		if e < 0 {
			return -1
		}
		i, done = objectNext(s, e)
	}
	return i
}

// Bits of fields.seen: which keys of the event have been read.
const (
	seenPh uint64 = 1 << iota
	seenCat
	seenName
	seenPid
	seenTid
	seenTs
	seenDur
	seenArgs
	seenID
	seenDevice
	seenStream
	seenCorr
	seenCollName
	seenInElems
	seenOutElems
	seenGroupSize
	seenDType
	seenGroup
	seenRanks
	seenArgsEnd // the args object was read to its end
	seenExt
	seenGrid
	seenBlock
	seenRegs
	seenSmem
	seenKernel
	seenDims
	seenTypes
	seenConcrete
	seenStrides
	seenInSplit
	seenOutSplit

	seenTop = seenPh | seenCat | seenName | seenPid | seenTid | seenTs | seenDur
)

// done reports whether every key that the event's kind uses has been
// read, so that the rest of it need not be: skipped categories after
// their first keys, step markers and annotations after their top-level
// keys. GPU activities, launch calls and CPU ops are read to the end of
// their args, where the attributes are (a kernel's launch configuration
// comes after its correlation id, an op's shapes anywhere).
func (f *fields) done() bool {
	if f.need == 0 {
		if f.need = f.needs(); f.need == 0 {
			return false // not known yet
		}
	}
	return f.seen&f.need == f.need
}

// needNever is a need no event meets: read on to the end.
const needNever = 1 << 63

// needs returns the keys the event's kind uses (seen* bits), or 0 while
// its kind cannot be told (done asks again after the next key, but
// classifies the category once).
func (f *fields) needs() uint64 {
	if f.seen&(seenPh|seenCat) != seenPh|seenCat {
		return 0
	}
	if f.ph.Type != vString || f.cat.Type != vString || !knownPhase(f.ph.Str) {
		return needNever // read on: the anomaly names what is there
	}
	switch kind, _ := classifyCat(f.cat.Str); kind {
	case catIgnore:
		return seenPh | seenCat
	case catOp:
		if f.seen&seenName == 0 {
			return 0
		}
		if f.name.Type != vString {
			return needNever
		}
		if strings.HasPrefix(f.name.Str, "ProfilerStep#") {
			return seenTop
		}
		return seenTop | seenArgsEnd
	case catGPU, catLaunch:
		return seenTop | seenArgsEnd
	default: // ranges use no args
		return seenTop
	}
}

// stop reports whether the scanner may stop after a key: Parse stops as
// soon as the event's kind has what it uses (and, indexing, what the
// index needs); a Reader reads on but marks the rest past (args read then
// are not the event's).
func (d *decoder) stop() bool {
	if !d.f.past {
		if !d.f.done() {
			return false
		}
		d.f.past = true
	}
	// An indexing decoder reads on to what the index needs (its ts, a
	// flow's id); keys read past done never change the decoding.
	return !d.full && (d.sum == nil || d.f.indexed())
}

// eventKey stores the value of one top-level key of an event and says
// whether the rest of the event can still matter.
func (d *decoder) eventKey(key, s string, i int) (int, bool) {
	f := &d.f
	if key == "args" && s[i] == '{' && f.seen&seenArgs == 0 {
		// Read the args the decoder uses in the same pass that finds the
		// end of args.
		f.seen |= seenArgs
		e := d.scanArgs(s[i:])
		if e < 0 {
			return -1, false // done, or malformed
		}
		f.seen |= seenArgsEnd
		return i + e, !d.stop()
	}
	var e int
	switch key {
	case "ph":
		e = f.take(seenPh, &f.ph, s, i)
	case "cat":
		e = f.take(seenCat, &f.cat, s, i)
	case "name":
		e = f.take(seenName, &f.name, s, i)
	case "pid":
		e = f.take(seenPid, &f.pid, s, i)
	case "tid":
		e = f.take(seenTid, &f.tid, s, i)
	case "ts":
		e = f.take(seenTs, &f.ts, s, i)
	case "dur":
		e = f.take(seenDur, &f.dur, s, i)
	case "id":
		e = f.take(seenID, &f.id, s, i)
	default:
		e = skipValue(s, i)
	}
	return e, !d.stop()
}

// argKey keeps the args the decoder uses: device, stream, correlation,
// the attributes and the collective args.
func (d *decoder) argKey(key, s string, i int) int {
	f := &d.f
	var bit uint64
	var dst *val
	switch key {
	case "device":
		bit, dst = seenDevice, &f.device
	case "stream":
		bit, dst = seenStream, &f.stream
	case "correlation":
		bit, dst = seenCorr, &f.corr
	case "External id", "external id": // "external id" before 2022
		bit, dst = seenExt, &f.attr.ext
	case "grid":
		bit, dst = seenGrid, &f.attr.grid
	case "block":
		bit, dst = seenBlock, &f.attr.block
	case "registers per thread":
		bit, dst = seenRegs, &f.attr.regs
	case "shared memory":
		bit, dst = seenSmem, &f.attr.smem
	case "kernel":
		bit, dst = seenKernel, &f.attr.kernel
	case "Input Dims":
		bit, dst = seenDims, &f.attr.dims
	case "Input type":
		bit, dst = seenTypes, &f.attr.types
	case "Concrete Inputs":
		bit, dst = seenConcrete, &f.attr.concrete
	case "Input Strides":
		bit, dst = seenStrides, &f.attr.strides
	default:
		// The collective args, in the same switch (one comparison of
		// the key), are read up to where the event is done.
		if bit, dst = d.collArg(key); bit == 0 || f.past {
			return skipValue(s, i)
		}
	}
	return f.take(bit, dst, s, i)
}
