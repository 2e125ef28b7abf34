package chrometrace

import (
	"fmt"
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
	// few bytes long: a plain loop beats the calls into IndexByte.
	for lim := min(len(s), j+16); j < lim; j++ {
		switch s[j] {
		case '"':
			return j + 1, esc
		case '\\':
			esc = true
			j++
		}
	}
	// Long strings (kernel names): find the next quote, then look for an
	// escape before it. q is kept across escapes so that each byte is
	// searched once, however many escapes the string holds.
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
func compositeEnd(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		c := s[j]
		if !structural[c] {
			continue
		}
		switch c {
		case '"':
			e, _ := stringEnd(s, j)
			if e < 0 {
				return -1
			}
			j = e - 1
		case '{', '[':
			depth++
		default: // '}', ']'
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// delim marks the bytes that end a literal (number, true, false, null).
var delim = [256]bool{',': true, '}': true, ']': true, ' ': true, '\t': true, '\n': true, '\r': true}

// scalarEnd returns the index of the first byte at or after i that ends
// the literal starting at s[i], or len(s) when s ends first (the literal
// may go on). bad is a byte that cannot be in a literal and stopped it
// ('{', '[', '"' or ':'), or 0.
func scalarEnd(s string, i int) (end int, bad byte) {
	for j := i; j < len(s); j++ {
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
