package chrometrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// The splitter streams the top-level JSON document without holding it:
// it reads fixed-size blocks, finds the boundaries of the elements of the
// "traceEvents" array, and hands out blocks of whole events (next).
// Everything outside traceEvents (distributedInfo, deviceProperties, ...)
// is small and is kept raw for the metadata decoder.

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
	// spanFree takes spans back for the splitter's next batches.
	spanFree chan []span
	// A chunk (Parse's fast path, chunk.go) has no spans: its decoder
	// finds its elements. firstChunk starts right after '[', lastChunk
	// ends at the end of the input.
	chunk, firstChunk, lastChunk bool
}

// release gives the batch's block and spans back once its events are
// decoded: a long input reuses them instead of allocating more.
func (b *batch) release() {
	b.blk.release()
	if b.chunk {
		return
	}
	select {
	case b.spanFree <- b.spans[:0]:
	default:
	}
}

var (
	// errTruncated marks input that ended before the document closed.
	errTruncated = errors.New("unexpected end of input")
	errEmpty     = errors.New("empty input")
)

// Where the splitter is in the document.
const (
	inStart  = iota // before the document
	inObject        // in the top-level object
	inEvents        // in the events array
	inEnd           // after the document: only whitespace may follow
	inDone
)

// What the splitter expects next inside a container.
const (
	wantFirst = iota // a member or element, or the container's end
	wantComma        // a comma, or the container's end
	wantItem         // a member or element (a comma was read)
)

type splitter struct {
	r         io.Reader
	blockSize int
	buf       []byte // buf[pos:] is unconsumed
	pos       int
	base      int64 // offset of buf[0]
	eof       bool
	readErr   error // a read error other than io.EOF

	state    uint8
	want     uint8
	topArray bool // the document is a bare array of events
	bomDone  bool

	seq     int
	nevents int64  // events handed out so far
	spans   []span // events found in buf and not handed out yet,
	bstart  int    // relative to this offset of buf
	err     error  // an error found while spans were pending

	meta     map[string][]byte // raw top-level values other than traceEvents
	sawArray bool              // traceEvents (or a top-level array) was found
	closed   bool              // and its closing ']' was read
	// lastGood is the offset just past the last complete event; on
	// truncation everything before it has been handed out.
	lastGood int64

	// top, when set, receives every top-level value but traceEvents, and
	// its offset.
	top func(key string, raw []byte, off int64)

	// pool, when set, recycles blocks; blk is the one buf lies in.
	pool *blocks
	blk  *block
	// ra, when set, is r, filling pool's blocks after a headroom (take).
	ra *readAhead
	// spanFree holds span buffers of released batches.
	spanFree chan []span
	// data, when set, is the whole input, read in place (moreData); done
	// is told of each stretch of it that is no longer held.
	data []byte
	done func(from, to int64)
}

// more reads more input, keeping buf[keep:]. The old block is never
// written again (a decoder may own it). At end of input it sets eof.
func (s *splitter) more(keep int) {
	if s.eof {
		return
	}
	left := len(s.buf) - keep
	if s.ra != nil {
		s.moreFilled(keep)
		return
	}
	if s.data != nil {
		s.moreData(keep)
		return
	}
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
	s.bstart -= keep
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
	s.buf = nb
}

// moreFilled is more for a splitter whose decompressor fills its blocks
// (readAhead.take): the next block is taken whole, the bytes kept copied
// into its headroom. What does not fit there (the first block's rest, an
// event longer than the headroom) is copied with the new data into a
// block of twice its size, filled with whole blocks, as more does.
func (s *splitter) moreFilled(keep int) {
	left := len(s.buf) - keep
	f, ok := s.ra.take()
	if !ok {
		s.eof = true
		return
	}
	var blk *block
	var nb []byte
	if head := len(f.blk.buf) - cap(f.data); left <= head {
		blk, nb = f.blk, f.blk.buf[head-left:head+len(f.data)]
		copy(nb, s.buf[keep:])
	} else {
		blk = s.pool.get(max(s.blockSize, 2*left, left+len(f.data)))
		nb = append(blk.buf[:0], s.buf[keep:]...)
		for {
			nb = append(nb, f.data...)
			f.blk.release()
			if f.err != nil || len(nb)+len(f.data) > cap(nb) {
				break
			}
			if f, ok = s.ra.take(); !ok {
				break
			}
		}
	}
	s.blk.release()
	s.blk = blk
	s.base += int64(keep)
	s.pos -= keep
	s.bstart -= keep
	s.buf = nb
	if f.err != nil {
		s.eof = true
		if f.err != io.EOF {
			s.readErr = f.err
		}
	}
}

// moreData is more for a splitter reading its input in place: the next
// window of the data, from buf[keep:] on, as big as a block (or twice
// what is kept), held by a block of its own that tells done of the window
// once nothing holds it.
func (s *splitter) moreData(keep int) {
	left := len(s.buf) - keep
	s.base += int64(keep)
	s.pos -= keep
	s.bstart -= keep
	end := min(s.base+int64(max(s.blockSize, 2*left)), int64(len(s.data)))
	s.buf = s.data[s.base:end:end]
	blk := &block{buf: s.buf, done: s.done, at: s.base}
	blk.refs.Store(1)
	s.blk.release()
	s.blk = blk
	if end == int64(len(s.data)) {
		s.eof = true
	}
}

func (s *splitter) failAt(i int, msg string, args ...any) error {
	return &SyntaxError{Offset: s.base + int64(i), Msg: fmt.Sprintf(msg, args...)}
}

// next returns the next batch of whole events, or nil at the end of the
// document; an error comes after the batch of the events before it.
func (s *splitter) next() (*batch, error) {
	if s.meta == nil {
		s.meta = map[string][]byte{}
	}
	for s.err == nil {
		var b *batch
		var err error
		switch s.state {
		case inStart:
			err = s.start()
		case inObject:
			err = s.member()
		case inEvents:
			b, err = s.events()
		case inEnd:
			err = s.end()
		case inDone:
			return nil, nil
		}
		if b != nil {
			s.err = err
			return b, nil
		}
		s.err = err
	}
	return nil, s.err
}

// each hands every batch to fn, in order, and returns the error that
// ended the document, if any.
func (s *splitter) each(fn func(*batch)) error {
	for {
		b, err := s.next()
		if b == nil {
			return err
		}
		fn(b)
	}
}

// start reads the opening bracket of the document.
func (s *splitter) start() error {
	for {
		i := skipSpace(unsafeString(s.buf), s.pos)
		s.pos = i
		if i == len(s.buf) {
			if s.eof {
				return errEmpty
			}
			s.more(i)
			continue
		}
		// A UTF-8 byte order mark (some Windows tools write one) is not
		// JSON. Skipping it keeps byte offsets those of the file.
		if !s.bomDone {
			s.bomDone = true
			if s.base == 0 && i == 0 && bytes.HasPrefix(s.buf, []byte("\xef\xbb\xbf")) {
				s.pos = 3
				continue
			}
		}
		s.pos = i + 1
		s.want = wantFirst
		switch s.buf[i] {
		case '[': // the JSON Array Format of the Chrome trace spec
			s.sawArray, s.topArray = true, true
			s.state = inEvents
		case '{':
			s.state = inObject
		default:
			return s.failAt(i, "expected a JSON object or array, found %q", s.buf[i])
		}
		return nil
	}
}

// member reads one member of the top-level object (or its end), reading
// more input until the whole member is in buf.
func (s *splitter) member() error {
	for {
		str := unsafeString(s.buf)
		i := skipSpace(str, s.pos)
		s.pos = i
		if i == len(str) {
			if s.eof {
				return errTruncated
			}
			s.more(i)
			continue
		}
		c := str[i]
		if c == '}' && s.want != wantItem {
			s.pos = i + 1
			s.state = inEnd
			return nil
		}
		if s.want == wantComma {
			if c != ',' {
				return s.failAt(i, "expected ',' or '}' after a top-level value, found %q", c)
			}
			s.pos = i + 1
			s.want = wantItem
			continue
		}
		if c != '"' {
			return s.failAt(i, "expected a key, found %q", c)
		}
		ke, _ := stringEnd(str, i)
		if ke < 0 {
			if s.eof {
				return errTruncated
			}
			s.more(i)
			continue
		}
		key := str[i+1 : ke-1]
		j := skipSpace(str, ke)
		if j < len(str) && str[j] != ':' {
			return s.failAt(j, "expected ':' after key %q", key)
		}
		if j < len(str) {
			j = skipSpace(str, j+1)
		}
		if j < len(str) && key == "traceEvents" && !s.sawArray {
			if str[j] != '[' {
				return &notArrayError{offset: s.base + int64(j)}
			}
			s.sawArray = true
			s.pos = j + 1
			s.state, s.want = inEvents, wantFirst
			return nil
		}
		ve := -1
		if j < len(str) {
			var err error
			if ve, err = valueEnd(str, j); err != nil {
				return s.failAt(j, "%v", err)
			}
			if ve == len(str) && !s.eof && str[j] != '"' && str[j] != '{' && str[j] != '[' {
				ve = -1 // a literal that may go on
			}
		}
		if ve < 0 {
			if s.eof {
				return errTruncated
			}
			s.more(i)
			continue
		}
		raw := s.buf[j:ve]
		if metaKeys[key] {
			s.meta[strings.Clone(key)] = bytes.Clone(raw)
		}
		if s.top != nil {
			s.top(strings.Clone(key), raw, s.base+int64(j))
		}
		s.pos = ve
		s.want = wantComma
	}
}

// end checks that only whitespace follows the document.
func (s *splitter) end() error {
	for {
		i := skipSpace(unsafeString(s.buf), s.pos)
		s.pos = i
		if i < len(s.buf) {
			return s.failAt(i, "unexpected %q after the end of the document", s.buf[i])
		}
		if s.eof {
			s.state = inDone
			return nil
		}
		s.more(i)
	}
}

// events finds the elements of the events array, up to the end of the
// block or of the array, and returns them as a batch (nil when none).
func (s *splitter) events() (*batch, error) {
	for {
		str := unsafeString(s.buf)
		i := skipSpace(str, s.pos)
		s.pos = i
		if i == len(str) {
			if len(s.spans) > 0 {
				return s.flush(), nil
			}
			if s.eof {
				return nil, errTruncated
			}
			s.more(i)
			continue
		}
		c := str[i]
		if c == ']' && s.want != wantItem {
			s.pos = i + 1
			s.lastGood = s.base + int64(s.pos)
			s.closed = true
			if s.topArray {
				s.state = inEnd
			} else {
				s.state, s.want = inObject, wantComma
			}
			return s.flush(), nil
		}
		if s.want == wantComma {
			if c != ',' {
				return s.flush(), s.failAt(i, "expected ',' or ']' between events, found %q", c)
			}
			s.pos = i + 1
			s.want = wantItem
			continue
		}
		end, err := valueEnd(str, i)
		if err != nil {
			return s.flush(), s.failAt(i, "%v", err)
		}
		if end == len(str) && !s.eof && c != '"' && c != '{' && c != '[' {
			end = -1 // a literal that may go on
		}
		if end >= 0 && len(s.spans) > 0 && end-s.bstart > math.MaxInt32 {
			end = -1 // too far for this batch: start the next one
		}
		if end < 0 {
			// The block ends inside the element: hand out what is
			// complete, then continue in a new block that starts
			// with it.
			if len(s.spans) > 0 {
				return s.flush(), nil
			}
			if s.eof {
				return nil, errTruncated
			}
			s.more(i)
			continue
		}
		if len(s.spans) == 0 {
			if s.spans == nil {
				s.spans = s.spanBuf()
			}
			s.bstart = i
			if end-i > math.MaxInt32 {
				return nil, s.failAt(i, "event larger than 2 GiB")
			}
		}
		s.spans = append(s.spans, span{int32(i - s.bstart), int32(end - s.bstart)})
		s.pos = end
		s.lastGood = s.base + int64(end)
		s.want = wantComma
	}
}

// flush hands out the pending events as a batch, or returns nil.
func (s *splitter) flush() *batch {
	if len(s.spans) == 0 {
		return nil
	}
	last := s.bstart + int(s.spans[len(s.spans)-1].end)
	s.blk.hold()
	b := &batch{seq: s.seq, data: s.buf[s.bstart:last:last], spans: s.spans, base: s.base + int64(s.bstart),
		first: s.nevents, blk: s.blk, spanFree: s.spanFree}
	s.seq++
	s.nevents += int64(len(s.spans))
	s.spans = nil
	return b
}

// spanBuf returns an empty span buffer, a released batch's when there is
// one.
func (s *splitter) spanBuf() []span {
	if s.spanFree == nil {
		n := 1
		if s.pool != nil {
			n = cap(s.pool.free) + 1
		}
		s.spanFree = make(chan []span, n)
	}
	select {
	case b := <-s.spanFree:
		return b
	default:
		return nil
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
	"host_name":            true, // Meta's internal builds of Kineto write it
	"hostname":             true,
	"traceq":               true, // traceq merge's record of the ranks it merged
}
