package chrometrace

import "math/bits"

// The keys of events. A trace writes the same few dozen keys millions of
// times, each the same way (Kineto: `"name": `), and reading one was a
// quarter of a parse: finding its closing quote, the blanks and the
// colon, then comparing it with every key the decoder knows. A key
// cache remembers the exact text of each key the decoder met, up to its
// value, with what the key is (its keyID); a key whose text is the
// remembered one is known from one comparison. The slow path,
// objectKey, reads the others and fills the cache.

// keyID is what a key of an event or of its args is to the decoder.
type keyID uint8

const (
	keyOther keyID = iota // not one the decoder reads
	// top-level keys
	keyPh
	keyCat
	keyName
	keyPid
	keyTid
	keyTs
	keyDur
	keyID_
	keyArgs
	// args
	keyDevice
	keyStream
	keyCorr
	keyExt
	keyGrid
	keyBlock
	keyRegs
	keySmem
	keyKernel
	keyDims
	keyTypes
	keyConcrete
	keyStrides
	// collective args (collective.go)
	keyCollName
	keyInElems
	keyOutElems
	keyGroupSize
	keyDType
	keyGroup
	keyRanks
	keyInSplit
	keyOutSplit
)

// keyIDOf is what key is at the top level of an event, or in its args.
func keyIDOf(key string, args bool) keyID {
	if args {
		return argKeyID(key)
	}
	return topKeyID(key)
}

// topKeyID is what key is at the top level of an event.
func topKeyID(key string) keyID {
	switch key {
	case "ph":
		return keyPh
	case "cat":
		return keyCat
	case "name":
		return keyName
	case "pid":
		return keyPid
	case "tid":
		return keyTid
	case "ts":
		return keyTs
	case "dur":
		return keyDur
	case "id":
		return keyID_
	case "args":
		return keyArgs
	}
	return keyOther
}

// argKeyID is what key is in an event's args.
func argKeyID(key string) keyID {
	switch key {
	case "device":
		return keyDevice
	case "stream":
		return keyStream
	case "correlation":
		return keyCorr
	case "External id", "external id": // "external id" before 2022
		return keyExt
	case "grid":
		return keyGrid
	case "block":
		return keyBlock
	case "registers per thread":
		return keyRegs
	case "shared memory":
		return keySmem
	case "kernel":
		return keyKernel
	case "Input Dims":
		return keyDims
	case "Input type":
		return keyTypes
	case "Concrete Inputs":
		return keyConcrete
	case "Input Strides":
		return keyStrides
	case "Collective name":
		return keyCollName
	case "In msg nelems":
		return keyInElems
	case "Out msg nelems":
		return keyOutElems
	case "Group size":
		return keyGroupSize
	case "dtype":
		return keyDType
	case "Process Group Name":
		return keyGroup
	case "Process Group Ranks":
		return keyRanks
	case "In split size":
		return keyInSplit
	case "Out split size":
		return keyOutSplit
	}
	return keyOther
}

// keySlots is the number of entries of a key cache (a power of 2).
const keySlots = 128

// keyWords is the number of 8-byte words of the longest key text a cache
// entry holds: Kineto's longest, `, "est. achieved occupancy %": `, is
// 31 bytes.
const keyWords = 5

// keyCtxs is the number of contexts of key predictions: the category's
// catKind + 1, 0 before it is read.
const keyCtxs = 8

// keyStart is the slot before the first key of an object: an entry that
// holds no text, only predictions.
const keyStart = keySlots

// keyProbes is the number of slots from its hash where a key's text may
// be.
const keyProbes = 4

// keyCache remembers the text of the keys a decoder met, from the end of
// what came before (the object's '{' or the value before and the ','),
// up to the key's value: `, "name": `. Each is in a slot indexed by a hash
// of the key's first eight bytes (or fewer, up to its closing quote),
// and says which slot followed it last in an object of each context. The
// predicted text is checked first: it is at hand before the event's bytes
// are, where hashing them to find a slot would make the CPU wait for
// each key before it may look for the next.
type keyCache struct {
	// ent has 256 entries, of which keySlots+1 are used, so that an
	// index of one byte needs no bounds check.
	ent [256]keyEntry
	// general makes the cache learn nothing, so that every key is read
	// by the slow path (tests compare the two).
	general bool
}

type keyEntry struct {
	// words is the text in little-endian words, the bytes past it zero;
	// masks has the bits of its bytes set.
	words [keyWords]uint64
	masks [keyWords]uint64
	n     uint8 // length of the text; 0: empty
	id    keyID
	first bool           // the text is of an object's first key (no ',')
	slot  uint8          // its index
	next  [keyCtxs]uint8 // the slot predicted after it, by context

	// The value memo: the text of the key's last value and the byte
	// after it (memoLen bytes, 0: none), in little-endian words, and
	// what readValueInto made of it (memoVal: the memo was learnt from
	// a skipped value, which only tells its end).
	memo      [2]uint64
	memoMask  [2]uint64
	memoLen   uint8
	memoVal   bool
	memoType  valType
	memoFixed fixedKind
	memoN     int64
}

// memoSlack is how far before the end of s a value must start for the
// memo: readFixed then never stops for want of bytes (it looks at most
// 25 bytes past the start of a number of 15), so that what it made of
// the same text is made of it again.
const memoSlack = 32

// memoMatch reports whether the memo's text is at s[i:]; i+memoSlack <=
// len(s).
func (e *keyEntry) memoMatch(s string, i int) bool {
	t := s[i : i+16]
	return le64(t[0:8])&e.memoMask[0] == e.memo[0] && le64(t[8:16])&e.memoMask[1] == e.memo[1]
}

// memoInto sets *dst to what readValueInto makes of the memo's text,
// which ends at s[end].
func (e *keyEntry) memoInto(dst *val, s string, i, end int) {
	*dst = val{Type: e.memoType, fixed: e.memoFixed, n: e.memoN}
	switch e.memoType {
	case vNone:
	case vString:
		dst.Raw, dst.Str = s[i:end], s[i+1:end-1]
	default:
		dst.Raw = s[i:end]
	}
}

// learnValue makes the value s[i:end], and the byte after it, the memo of
// the entry, when it is short and not near the end of s: v is what
// readValueInto made of it, or nil when it was skipped. A string with
// escapes is not learnt (its text is not a part of s).
func (e *keyEntry) learnValue(s string, i, end int, v *val) {
	n := end + 1 - i
	if end <= i || n > 16 || i+memoSlack > len(s) ||
		v != nil && v.Type == vString && len(v.Str) != end-i-2 {
		e.memoLen = 0
		return
	}
	m0, m1 := ^uint64(0), ^uint64(0)>>(128-8*n)
	if n < 8 {
		m0, m1 = ^uint64(0)>>(64-8*n), 0
	}
	e.memoMask = [2]uint64{m0, m1}
	e.memo = [2]uint64{le64(s[i:i+8]) & m0, le64(s[i+8:i+16]) & m1}
	e.memoLen, e.memoVal = uint8(n), v != nil
	if v != nil {
		e.memoType, e.memoFixed, e.memoN = v.Type, v.fixed, v.n
	}
}

// match reports whether the text of e is at s[i:], with a byte after it:
// away from the end of s, its first four words at once, without a
// branch.
func (e *keyEntry) match(s string, i int) bool {
	n := int(e.n)
	if i+8*keyWords > len(s) {
		return e.matchNearEnd(s, i)
	}
	t := s[i : i+8*keyWords] // one bounds check for the five words
	x := (le64(t[0:8])&e.masks[0] ^ e.words[0]) | (le64(t[8:16])&e.masks[1] ^ e.words[1]) |
		(le64(t[16:24])&e.masks[2] ^ e.words[2]) | (le64(t[24:32])&e.masks[3] ^ e.words[3])
	return x == 0 && n != 0 && (n <= 32 || le64(t[32:40])&e.masks[4] == e.words[4])
}

// matchNearEnd is match within 8·keyWords bytes of the end of s, byte by
// byte.
func (e *keyEntry) matchNearEnd(s string, i int) bool {
	n := int(e.n)
	if n == 0 || n >= len(s)-i {
		return false
	}
	for b := range n {
		if s[i+b] != byte(e.words[b>>3]>>(8*(b&7))) {
			return false
		}
	}
	return true
}

// set makes text the entry's.
func (e *keyEntry) set(text string, id keyID, first bool) {
	e.words, e.masks, e.n, e.id, e.first = [keyWords]uint64{}, [keyWords]uint64{}, uint8(len(text)), id, first
	for b := range len(text) {
		e.words[b>>3] |= uint64(text[b]) << (8 * (b & 7))
		e.masks[b>>3] |= 0xFF << (8 * (b & 7))
	}
}

func newKeyCache() *keyCache {
	c := &keyCache{general: generalKeys}
	for i := range c.ent {
		c.ent[i].slot = uint8(i)
	}
	return c
}

// generalKeys makes new decoders read every key by the slow path: a
// switch for tests, which compare the two.
var generalKeys = false

// keySlot returns the slot of the key whose text starts at s[i] ('"'),
// or -1 when s is too short to tell (the slow path reads it).
func keySlot(s string, i int) int {
	if i+9 > len(s) {
		return -1
	}
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := le64(s[i+1 : i+9])
	// Only the key's bytes: a short key is followed by its value.
	q := x ^ ones*'"'
	if m := (q - ones) &^ q & highs; m != 0 {
		x &= 1<<(bits.TrailingZeros64(m)&^7) - 1
	}
	return int((x * 0x9E3779B97F4A7C15) >> (64 - 7))
}

// predicted returns the entry predicted after slot prev in context ctx
// when its text is at s[from:] (and is of a first key when first), and
// the index of the key's value.
func (c *keyCache) predicted(s string, from int, first bool, ctx uint8, prev int) (*keyEntry, int) {
	e := &c.ent[c.ent[uint8(prev)].next[ctx&(keyCtxs-1)]]
	if e.first != first || !e.match(s, from) {
		return nil, 0
	}
	// The slow path would read the same key and find its value at the
	// first non-blank after the text (which ends before one when
	// learnt).
	v := from + int(e.n)
	if isSpace(s[v]) {
		if v = skipSpace(s, v); v == len(s) {
			return nil, 0 // the slow path says so
		}
	}
	return e, v
}

// readKey is the slow path of reading the next key of an object: from is
// the index just past its '{' (first) or past the value before. It
// returns what the key is (top-level or args ids, by args), the index of
// its value and its slot; or, when the object ends there, v = -1 and end
// the index just past its '}', or -1 when the object is malformed. It
// learns the key's text, and that it followed prev in context ctx.
func (c *keyCache) readKey(s string, from int, first, args bool, ctx uint8, prev int) (id keyID, v, slot, end int) {
	var i int
	var done bool
	if first {
		i, done = objectStart(s)
	} else {
		i, done = objectNext(s, from)
	}
	if done {
		return keyOther, -1, 0, i
	}
	i = skipSpace(s, i)
	slot = keyStart
	if i < len(s) && s[i] == '"' {
		if h := keySlot(s, i); h >= 0 {
			slot = h
			for p := range keyProbes {
				if e := &c.ent[(h+p)%keySlots]; e.first == first && e.match(s, from) {
					if v = from + int(e.n); isSpace(s[v]) {
						if v = skipSpace(s, v); v == len(s) {
							return keyOther, -1, 0, -1
						}
					}
					c.ent[prev].next[ctx] = e.slot
					return e.id, v, int(e.slot), 0
				}
			}
		}
	}
	key, v := objectKey(s, i)
	if v < 0 {
		return keyOther, -1, 0, -1
	}
	id = keyIDOf(key, args)
	// Learn the text when the key is in it as it is (no escapes) and it
	// fits.
	if !c.general && slot != keyStart && v-from <= 8*keyWords && s[i+1:i+1+len(key)] == key && s[i+1+len(key)] == '"' {
		for p := range keyProbes {
			if c.ent[(slot+p)%keySlots].n == 0 {
				slot = (slot + p) % keySlots
				break
			}
		}
		c.ent[slot].set(s[from:v], id, first)
		c.ent[prev].next[ctx] = uint8(slot)
	}
	return id, v, slot, 0
}
