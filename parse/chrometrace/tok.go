package chrometrace

import (
	"fmt"
	"math/bits"
	"strings"
)

// The tokenizer: the few JSON rules that the splitter (finding events in
// the stream), the event scanner (reading an event's keys on the hot path)
// and ReadEvent share, so that they agree on where every value ends. It
// checks structure only (brackets and strings); the decoder checks the
// contents of the values it uses. Text is a string: the splitter and the
// decoder view their blocks through unsafeString, which never outlives
// the block.

// isSpace reports JSON whitespace (RFC 8259: space, tab, line feed and
// carriage return; no other control byte).
func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// skipSpace returns the index of the first byte at or after i that is not
// whitespace, or len(s).
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just past the closing quote of the string
// whose opening quote is s[i], or -1 when s ends first, and whether the
// string holds escapes. A backslash escapes the byte after it.
func stringEnd(s string, i int) (int, bool) {
	j := i + 1
	esc := false
	// Most strings of an event (keys, categories, numbers as text) are a
	// few bytes long: eight bytes at a time in registers beat the call
	// into IndexByte, which wins on long ones (kernel names).
	for lim := min(len(s)-8, j+32); j <= lim; {
		// SWAR: a zero byte of x^c marks a byte c; the lowest set bit of
		// the mask marks the first exactly.
		const ones, highs = 0x0101010101010101, 0x8080808080808080
		x := le64(s[j : j+8])
		q, b := x^(ones*'"'), x^(ones*'\\')
		m := ((q-ones)&^q | (b-ones)&^b) & highs
		if m == 0 {
			j += 8
			continue
		}
		j += bits.TrailingZeros64(m) >> 3
		if s[j] == '"' {
			return j + 1, esc
		}
		esc = true
		j += 2
	}
	// Find the next quote, then look for an escape before it. q is kept
	// across escapes so that each byte is searched once, however many
	// escapes the string holds.
	q := -1
	for j < len(s) {
		if q < j {
			k := strings.IndexByte(s[j:], '"')
			if k < 0 {
				return -1, esc
			}
			q = j + k
		}
		b := strings.IndexByte(s[j:q], '\\')
		if b < 0 {
			return q + 1, esc
		}
		esc = true
		j += b + 2
	}
	return -1, esc
}

// structural marks the bytes compositeEnd stops at.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// compositeEnd returns the index just past the object or array starting at
// s[i], or -1 when s ends first.
func compositeEnd(s string, i int) int { return nestEnd(s, i, 0) }

// nestEnd returns the index just past the bracket that brings the nesting
// depth, depth at s[i], to 0, or -1 when s ends first.
func nestEnd(s string, i, depth int) int {
	for j := i; j < len(s); {
		if j+8 <= len(s) {
			// SWAR, as in stringEnd: x|0x20 folds '[' and ']' onto '{'
			// and '}', and no other byte onto them.
			const ones, highs = 0x0101010101010101, 0x8080808080808080
			x := le64(s[j : j+8])
			y := x | ones*0x20
			q, o, c := x^(ones*'"'), y^(ones*'{'), y^(ones*'}')
			m := ((q-ones)&^q | (o-ones)&^o | (c-ones)&^c) & highs
			if m == 0 {
				j += 8
				continue
			}
			j += bits.TrailingZeros64(m) >> 3
		} else if !structural[s[j]] {
			j++
			continue
		}
		switch s[j] {
		case '"':
			e, _ := stringEnd(s, j)
			if e < 0 {
				return -1
			}
			j = e
			continue
		case '{', '[':
			depth++
		default: // '}', ']'
			depth--
			if depth == 0 {
				return j + 1
			}
		}
		j++
	}
	return -1
}

// objectRestEnd returns the index just past the '}' that closes the
// object s[i] is inside of (at depth 1: past a member, or inside its
// members), or -1 when s ends first: compositeEnd for an object whose
// start was already read.
func objectRestEnd(s string, i int) int { return nestEnd(s, i, 1) }

// delim marks the bytes that end a literal (number, true, false, null).
var delim = [256]bool{',': true, '}': true, ']': true, ' ': true, '\t': true, '\n': true, '\r': true}

// scalarEnd returns the index of the first byte at or after i that ends
// the literal starting at s[i], or len(s) when s ends first (the literal
// may go on). bad is a byte that cannot be in a literal and stopped it
// ('{', '[', '"' or ':'), or 0.
func scalarEnd(s string, i int) (end int, bad byte) {
	j := i
	// Numbers are most of the literals: skip eight bytes at a time while
	// they are all in '.'..'9' (digits, '.', '/'), none of which ends a
	// literal, then to the first that is not (SWAR, as in stringEnd:
	// x-c borrows into the high bit of a byte below c, x+(127-c) carries
	// into that of a byte above c; the lowest bit set marks the first
	// exactly), where the byte loop goes on.
	for ; j+8 <= len(s); j += 8 {
		const ones, highs = 0x0101010101010101, 0x8080808080808080
		x := le64(s[j : j+8])
		if m := ((x-ones*'.')&^x | (x + ones*(127-'9')) | x) & highs; m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			break
		}
	}
	for ; j < len(s); j++ {
		c := s[j]
		if delim[c] {
			return j, 0
		}
		if c == '{' || c == '[' || c == '"' || c == ':' {
			return j, c
		}
	}
	return len(s), 0
}

// valueEnd returns the index just past the value starting at s[i] (not
// whitespace), or -1 when s ends inside a string or composite; a literal
// that reaches the end of s ends there (more text may extend it: the
// caller decides). A literal must not be empty nor run into a byte that
// cannot be part of it.
func valueEnd(s string, i int) (int, error) {
	switch s[i] {
	case '"':
		e, _ := stringEnd(s, i)
		return e, nil
	case '{', '[':
		return compositeEnd(s, i), nil
	}
	e, bad := scalarEnd(s, i)
	if bad != 0 {
		return 0, literalError(bad)
	}
	if e == i {
		return 0, literalError(s[i])
	}
	return e, nil
}

// skipValue returns the index just past the value starting at s[i] (not
// whitespace), or -1 when s ends inside a string or composite. Unlike
// valueEnd it does not judge literals: the decoder reads them leniently.
func skipValue(s string, i int) int {
	switch s[i] {
	case '"':
		e, _ := stringEnd(s, i)
		return e
	case '{', '[':
		return compositeEnd(s, i)
	}
	e, _ := scalarEnd(s, i)
	return e
}

// literalError is valueEnd's complaint; the splitter adds the offset.
type literalError byte

func (e literalError) Error() string {
	switch c := byte(e); c {
	case ',', '}', ']':
		return fmt.Sprintf("expected a value, found %q", c)
	default:
		return fmt.Sprintf("unexpected %q in a literal", c)
	}
}
