package chrometrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// The splitter streams the top-level JSON document without holding it:
// it reads fixed-size blocks, finds the boundaries of the elements of the
// "traceEvents" array, and hands blocks of whole events to the decoders.
// Everything outside traceEvents (distributedInfo, deviceProperties, ...)
// is small and is returned raw for the metadata decoder.

const defaultBlockSize = 4 << 20

// span is one event: [start, end) within its batch's data.
type span struct{ start, end int32 }

// batch is a block of whole events, in file order.
type batch struct {
	seq   int
	data  []byte
	spans []span
	base  int64  // offset of data[0] in the decompressed stream
	first int64  // index of the first event in traceEvents
	blk   *block // holds data's block; release after decoding (nil: not pooled)
}

// errTruncated marks input that ended before the document closed.
var errTruncated = errors.New("unexpected end of input")

type splitter struct {
	r         io.Reader
	blockSize int
	buf       []byte // buf[pos:] is unconsumed
	pos       int
	base      int64 // offset of buf[0]
	eof       bool
	readErr   error // a read error other than io.EOF

	emit    func(*batch) // receives each batch; owns batch.data after the call
	seq     int
	nevents int64 // events emitted so far

	meta     map[string][]byte // raw top-level values other than traceEvents
	sawArray bool              // traceEvents (or a top-level array) was found
	closed   bool              // and its closing ']' was read
	// lastGood is the offset just past the last complete event; on
	// truncation everything before it has been emitted.
	lastGood int64

	// top, when set (by Scan), receives every top-level value but traceEvents.
	top func(key string, raw []byte)

	// pool, when set, recycles blocks; blk is the one buf lies in.
	pool *blocks
	blk  *block
}

// more reads more input, keeping buf[keep:]; it reports false at end of
// input. The old block is never written again (a decoder may own it).
func (s *splitter) more(keep int) bool {
	if s.eof {
		return false
	}
	left := len(s.buf) - keep
	size := s.blockSize
	if left*2 > size {
		size = left * 2
	}
	var nb []byte
	if s.pool != nil {
		blk := s.pool.get(size)
		nb = blk.buf[:left]
		copy(nb, s.buf[keep:])
		s.blk.release()
		s.blk = blk
	} else {
		nb = make([]byte, left, size)
		copy(nb, s.buf[keep:])
	}
	s.base += int64(keep)
	s.pos -= keep
	for len(nb) < cap(nb) {
		n, err := s.r.Read(nb[len(nb):cap(nb)])
		nb = nb[:len(nb)+n]
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.readErr = err
			}
			break
		}
	}
	grew := len(nb) > left
	s.buf = nb
	return grew
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// skipSpace advances pos past whitespace, reading more as needed.
func (s *splitter) skipSpace() bool {
	for {
		for s.pos < len(s.buf) && isSpace(s.buf[s.pos]) {
			s.pos++
		}
		if s.pos < len(s.buf) {
			return true
		}
		if !s.more(s.pos) {
			return false
		}
	}
}

func (s *splitter) fail(msg string, args ...any) error {
	return &SyntaxError{Offset: s.base + int64(s.pos), Msg: fmt.Sprintf(msg, args...)}
}

// scanValue returns the end of the JSON value starting at b[i], or -1 if b
// ends before it does. It checks structure (brackets, strings) only: the
// decoder checks the contents of the values it uses.
func scanValue(b []byte, i int) (int, error) {
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := scanString(b, j)
				if e < 0 || err != nil {
					return e, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return -1, nil
	default: // number, true, false, null
		j := i
		for j < len(b) {
			c := b[j]
			if c == ',' || c == '}' || c == ']' || isSpace(c) {
				return j, nil
			}
			if c == '{' || c == '[' || c == '"' || c == ':' {
				return 0, fmt.Errorf("unexpected %q in a literal", c)
			}
			j++
		}
		return -1, nil
	}
}

// scanString returns the end of the string starting at b[i] (a quote).
func scanString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1, nil
		}
		q := j + k
		// The quote is escaped iff an odd run of backslashes precedes it.
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// value scans a whole value at pos, reading more as needed, and returns its
// bounds in buf.
func (s *splitter) value() (int, int, error) {
	for {
		end, err := scanValue(s.buf, s.pos)
		if err != nil {
			return 0, 0, s.fail("%v", err)
		}
		if end >= 0 {
			// A literal that ends exactly at the end of the buffer may go on.
			if end < len(s.buf) || s.eof || s.buf[s.pos] == '"' || s.buf[s.pos] == '{' || s.buf[s.pos] == '[' {
				start := s.pos
				s.pos = end
				return start, end, nil
			}
		}
		if !s.more(s.pos) {
			if end >= 0 {
				start := s.pos
				s.pos = end
				return start, end, nil
			}
			return 0, 0, errTruncated
		}
	}
}

// run parses the whole document.
func (s *splitter) run() error {
	s.meta = map[string][]byte{}
	if !s.skipSpace() {
		return errEmpty
	}
	// A UTF-8 byte order mark (some Windows tools write one) is not JSON.
	// Skipping it keeps byte offsets those of the file.
	if s.base == 0 && s.pos == 0 && bytes.HasPrefix(s.buf, []byte("\xef\xbb\xbf")) {
		s.pos = 3
		if !s.skipSpace() {
			return errEmpty
		}
	}
	switch s.buf[s.pos] {
	case '[': // the JSON Array Format of the Chrome trace spec
		s.sawArray = true
		s.pos++
		if err := s.events(); err != nil {
			return err
		}
		return s.end()
	case '{':
		s.pos++
	default:
		return s.fail("expected a JSON object or array, found %q", s.buf[s.pos])
	}
	for first := true; ; first = false {
		if !s.skipSpace() {
			return errTruncated
		}
		if s.buf[s.pos] == '}' {
			s.pos++
			return s.end()
		}
		if !first {
			if s.buf[s.pos] != ',' {
				return s.fail("expected ',' or '}' after a top-level value, found %q", s.buf[s.pos])
			}
			s.pos++
			if !s.skipSpace() {
				return errTruncated
			}
		}
		if s.buf[s.pos] != '"' {
			return s.fail("expected a key, found %q", s.buf[s.pos])
		}
		ks, ke, err := s.value()
		if err != nil {
			return err
		}
		key := string(s.buf[ks+1 : ke-1])
		if !s.skipSpace() {
			return errTruncated
		}
		if s.buf[s.pos] != ':' {
			return s.fail("expected ':' after key %q", key)
		}
		s.pos++
		if !s.skipSpace() {
			return errTruncated
		}
		if key == "traceEvents" && !s.sawArray {
			if s.buf[s.pos] != '[' {
				return s.fail("traceEvents is not an array")
			}
			s.sawArray = true
			s.pos++
			if err := s.events(); err != nil {
				return err
			}
			continue
		}
		vs, ve, err := s.value()
		if err != nil {
			return err
		}
		if metaKeys[key] {
			s.meta[key] = bytes.Clone(s.buf[vs:ve])
		}
		if s.top != nil {
			s.top(key, s.buf[vs:ve])
		}
	}
}

// end checks that only whitespace follows the document.
func (s *splitter) end() error {
	if s.skipSpace() {
		return s.fail("unexpected %q after the end of the document", s.buf[s.pos])
	}
	return nil
}

var errEmpty = errors.New("empty input")

// events scans the elements of an array whose '[' was consumed, emitting
// batches of whole events.
func (s *splitter) events() error {
	start := s.pos // first byte of the current batch
	var spans []span
	flush := func() {
		if len(spans) > 0 {
			last := int(spans[len(spans)-1].end)
			for i := range spans {
				spans[i].start -= int32(start)
				spans[i].end -= int32(start)
			}
			s.blk.hold()
			s.emit(&batch{seq: s.seq, data: s.buf[start:last:last], spans: spans, base: s.base + int64(start), first: s.nevents, blk: s.blk})
			s.seq++
			s.nevents += int64(len(spans))
			spans = nil
		}
	}
	// need makes at least one unread byte available, flushing the batch
	// first when a new block must be read.
	need := func() bool {
		if s.pos < len(s.buf) {
			return true
		}
		flush()
		ok := s.more(s.pos)
		start = s.pos
		return ok
	}
	for first := true; ; first = false {
		for {
			for s.pos < len(s.buf) && isSpace(s.buf[s.pos]) {
				s.pos++
			}
			if !need() {
				return errTruncated
			}
			if !isSpace(s.buf[s.pos]) {
				break
			}
		}
		c := s.buf[s.pos]
		if c == ']' {
			s.pos++
			flush()
			s.lastGood = s.base + int64(s.pos)
			s.closed = true
			return nil
		}
		if !first {
			if c != ',' {
				flush()
				return s.fail("expected ',' or ']' between events, found %q", c)
			}
			s.pos++
			for {
				for s.pos < len(s.buf) && isSpace(s.buf[s.pos]) {
					s.pos++
				}
				if !need() {
					return errTruncated
				}
				if !isSpace(s.buf[s.pos]) {
					break
				}
			}
		}
		// Scan one element; if the block ends inside it, flush what is
		// complete and continue in a new block that starts with it.
		for {
			end, err := scanValue(s.buf, s.pos)
			if err != nil {
				flush()
				return s.fail("%v", err)
			}
			if end >= 0 && (end < len(s.buf) || s.eof) {
				if end-start > 1<<31-1 {
					return s.fail("event larger than 2 GiB")
				}
				spans = append(spans, span{int32(s.pos), int32(end)})
				s.pos = end
				s.lastGood = s.base + int64(end)
				break
			}
			flush()
			elem := s.pos
			ok := s.more(elem)
			start = s.pos
			if !ok {
				if end >= 0 { // a literal at the very end
					continue
				}
				return errTruncated
			}
		}
	}
}

// metaKeys are the top-level keys whose values describe the trace.
var metaKeys = map[string]bool{
	"schemaVersion":        true,
	"distributedInfo":      true,
	"deviceProperties":     true,
	"baseTimeNanoseconds":  true,
	"displayTimeUnit":      true,
	"cuda_runtime_version": true,
	"cuda_driver_version":  true,
	"hip_runtime_version":  true,
	"pytorch_version":      true,
	"torch_version":        true,
	"traceName":            true,
}
