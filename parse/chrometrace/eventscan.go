package chrometrace

import (
	"math/bits"
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
	// fixed says that a number was read as it was found (readFixed):
	// n is its value in thousandths (nanoseconds when it counts µs).
	fixed fixedKind
	n     int64
}

// fixedKind says whether and how readFixed read a number.
type fixedKind uint8

const (
	notFixed  fixedKind = iota
	fixedInt            // an integer, or one with a zero fraction ("7.0")
	fixedFrac           // a nonzero fraction of up to three digits
)

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
		if c == '-' || c-'0' < 10 {
			if e := readFixed(s, i, v); e >= 0 {
				v.Type, v.Raw = vNumber, s[i:e]
				return e
			}
		}
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

// readFixed reads the number at s[i] into v.n and v.fixed, in the pass
// that finds its end, when it is written as Kineto writes its numbers:
// -?D{1,15}(.D{1,3})? up to a byte that ends a literal (or the end of s),
// which parseMicros and parseInt read exactly (no rounding, no
// overflow). It returns the end, or -1 (v untouched) for any other text,
// which the caller reads as before.
func readFixed(s string, i int, v *val) int {
	if i+32 > len(s) {
		return -1 // near the end of s: the caller reads it
	}
	t := s[i : i+32] // a number it reads ends within 21 bytes, its words within 26
	j := 0
	if t[0] == '-' {
		j = 1
	}
	// The digits eight at a time (SWAR): up to two words of them.
	x := le64(t[j : j+8])
	k := digitRun(x)
	ip, nd := parseDigits(x, k), k
	j += k
	if k == 8 {
		x = le64(t[j : j+8])
		if k = digitRun(x); k == 8 {
			return -1
		}
		ip = ip*pow10[k] + parseDigits(x, k)
		nd += k
		j += k
	}
	if nd == 0 || nd > 15 {
		return -1
	}
	n, kind := int64(ip)*1000, fixedInt
	if t[j] == '.' {
		x = le64(t[j+1 : j+9])
		if k = digitRun(x); k == 0 || k > 3 {
			return -1
		}
		if frac := int64(parseDigits(x, k) * pow10[3-k]); frac != 0 {
			n += frac
			kind = fixedFrac
		}
		j += 1 + k
	}
	if !delim[t[j]] {
		return -1
	}
	if t[0] == '-' {
		n = -n
	}
	v.n, v.fixed = n, kind
	return i + j
}

var pow10 = [...]uint64{1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7, 1e8}

// digitRun returns the number of ASCII digits x starts with (its bytes
// little-endian), 0 to 8. A byte's high nibble must be 3 and stay 3
// when 6 is added to it; adding may carry into the next byte only from a
// byte that is not a digit, past the first such byte, which is all that
// is looked for.
func digitRun(x uint64) int {
	const nibbles, threes, sixes = 0xF0F0F0F0F0F0F0F0, 0x3030303030303030, 0x0606060606060606
	const lows, highs = 0x7F7F7F7F7F7F7F7F, 0x8080808080808080
	m := (x&nibbles ^ threes) | ((x+sixes)&nibbles ^ threes)
	// The high bit of each byte of m that is not zero.
	nz := (m | (m&lows + lows)) & highs
	return bits.TrailingZeros64(nz) >> 3
}

// parseDigits is the value of the first k ASCII digits of x (k ≤ 8): they
// are moved to the top of the word, below them '0's, for parseEight.
func parseDigits(x uint64, k int) uint64 {
	return parseEight(x<<(64-8*k) | 0x3030303030303030>>(8*k))
}

// parseEight is the value of the eight ASCII digits of x, the first in
// its lowest byte: pairs, then quads, then the eight, each step by one
// multiplication of the lanes.
func parseEight(x uint64) uint64 {
	x -= 0x3030303030303030
	x = x*10 + x>>8
	return ((x&0x000000FF000000FF)*(100+1000000<<32) + (x>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
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

// scanEvent is scanObject(s, d.eventKey) with direct calls, its keys
// read through the decoder's key cache. stop is the end of the value
// after which eventKey said no more (end is then -1), or -1.
func (d *decoder) scanEvent(s string) (end, stop int) {
	c := d.topKeys
	from, slot, first := 1, keyStart, true
	for {
		var key keyID
		var v int
		e, v := c.predicted(s, from, first, d.f.ctx, slot)
		if e != nil {
			key, slot = e.id, int(e.slot)
		} else if key, v, slot, end = c.readKey(s, from, first, false, d.f.ctx, slot); v < 0 {
			return end, -1 // the end of the object, or malformed (-1)
		}
		first = false
		end, more := d.eventKey(key, e, s, v)
		if end < 0 {
			return -1, -1
		}
		if !more {
			return -1, end
		}
		from = end
	}
}

// scanArgs is scanObject(s, d.argKey) with direct calls and the key
// cache.
func (d *decoder) scanArgs(s string) int {
	c := d.argKeys
	from, slot, first := 1, keyStart, true
	for {
		var key keyID
		e, v := c.predicted(s, from, first, d.f.ctx, slot)
		if e != nil {
			key, slot = e.id, int(e.slot)
		} else {
			var end int
			if key, v, slot, end = c.readKey(s, from, first, true, d.f.ctx, slot); v < 0 {
				return end
			}
		}
		first = false
		end := d.argKey(key, e, s, v)
		if end < 0 {
			return -1
		}
		from = end
	}
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
// whether the rest of the event can still matter. e is the key's cache
// entry when the key was predicted, else nil.
func (d *decoder) eventKey(key keyID, e *keyEntry, s string, i int) (int, bool) {
	f := &d.f
	if key == keyArgs && s[i] == '{' && f.seen&seenArgs == 0 {
		// Read the args the decoder uses in the same pass that finds the
		// end of args.
		f.seen |= seenArgs
		end := d.scanArgs(s[i:])
		if end < 0 {
			return -1, false // done, or malformed
		}
		f.seen |= seenArgsEnd
		return i + end, !d.stop()
	}
	if key == keyName && f.seen&seenName == 0 {
		if end := d.readName(s, i); end >= 0 {
			f.seen |= seenName
			return end, !d.stop()
		}
	}
	ref := &d.fields[key]
	end := f.value(ref.bit, ref.dst, e, s, i)
	if key == keyCat && f.ctx == 0 && f.cat.Type == vString {
		kind, _ := classifyCat(f.cat.Str)
		f.ctx = 1 + uint8(kind)
	}
	if !f.past && f.need != 0 && f.seen&f.need != f.need {
		return end, true // stop's first test, inline: not done
	}
	return end, !d.stop()
}

// argKey keeps the args the decoder uses: device, stream, correlation,
// the attributes and the collective args.
func (d *decoder) argKey(key keyID, e *keyEntry, s string, i int) int {
	ref := &d.fields[key]
	dst := ref.dst
	if key >= keyCollName && d.f.past {
		dst = nil // the collective args are read up to where the event is done
	}
	return d.f.value(ref.bit, dst, e, s, i)
}

// fieldRef is where the decoder keeps the value of a key: its seen bit
// and its field (nil: a key it does not read).
type fieldRef struct {
	bit uint64
	dst *val
}

// fieldRefs returns d's fieldRef of each keyID (a key's field is found
// by one index, not a switch per key).
func (d *decoder) fieldRefs() (t [256]fieldRef) {
	f, c := &d.f, &d.coll
	for id, ref := range map[keyID]fieldRef{
		keyPh: {seenPh, &f.ph}, keyCat: {seenCat, &f.cat}, keyName: {seenName, &f.name}, keyPid: {seenPid, &f.pid},
		keyTid: {seenTid, &f.tid}, keyTs: {seenTs, &f.ts}, keyDur: {seenDur, &f.dur}, keyID_: {seenID, &f.id},
		keyDevice: {seenDevice, &f.device}, keyStream: {seenStream, &f.stream}, keyCorr: {seenCorr, &f.corr},
		keyExt: {seenExt, &f.attr.ext}, keyGrid: {seenGrid, &f.attr.grid}, keyBlock: {seenBlock, &f.attr.block},
		keyRegs: {seenRegs, &f.attr.regs}, keySmem: {seenSmem, &f.attr.smem}, keyKernel: {seenKernel, &f.attr.kernel},
		keyDims: {seenDims, &f.attr.dims}, keyTypes: {seenTypes, &f.attr.types}, keyConcrete: {seenConcrete, &f.attr.concrete},
		keyStrides:  {seenStrides, &f.attr.strides},
		keyCollName: {seenCollName, &c.name}, keyInElems: {seenInElems, &c.inElems}, keyOutElems: {seenOutElems, &c.outElems},
		keyGroupSize: {seenGroupSize, &c.groupSize}, keyDType: {seenDType, &c.dtype}, keyGroup: {seenGroup, &c.group},
		keyRanks: {seenRanks, &c.ranks}, keyInSplit: {seenInSplit, &c.inSplit}, keyOutSplit: {seenOutSplit, &c.outSplit},
	} {
		t[id] = ref
	}
	return t
}
