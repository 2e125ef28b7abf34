package chrometrace

import (
	"bytes"
	"errors"
	"math"

	"github.com/traceq/traceq/trace"
)

// Speculative chunks: Parse's fast path (issue 21). The splitter finds
// every event boundary on one goroutine, reading every byte once more
// than the decoders do; at 1.4 GB/s on one core it was half the CPU of a
// parse and its ceiling. Instead, the input is cut into chunks of a few MB
// at places that look like the start of an event (a '{' after '},' and
// blanks), and each chunk is read whole by a decoder on any core: the
// decoder finds each event's end in the pass that reads its keys
// (eventAt). A guess is checked when the chunks are merged in order: the
// chunk before must end exactly where the next begins, between two
// events. A wrong guess (a '},{' inside a string), a syntax error, a cut
// file or anything else unusual makes Parse read the input again through
// the splitter, which says what is wrong exactly as before: the fast path
// only ever gives the splitter's result, or gives up.

// Chunk states at their end.
const (
	chunkBetween   = iota // between two events, after a comma: the next chunk starts here
	chunkClosed           // the events array closed (']'): what follows is the document's tail
	chunkAfterItem        // after an event, before its separator
	chunkBad              // a syntax error, or the chunk ends inside an element
)

// errSpeculation says the fast path gave up; the input is read again.
var errSpeculation = errors.New("speculative chunks gave up")

// minChunk is the least a chunk holds before the chunker looks for its end.
const minChunk = 256 << 10

// nextChunk cuts the next chunk of the events array, reading more input as
// needed; it returns nil at the end of the input. The first chunk starts
// right after '['; the others at a guessed event start. A chunk is a
// block's worth of input, cut at the last guessed event start in it.
func (s *splitter) nextChunk() *batch {
	for {
		region := s.buf[s.pos:]
		if !s.eof && len(region) < s.blockSize {
			s.more(s.pos) // fill a block
			continue
		}
		if len(region) == 0 {
			return nil
		}
		cut := len(region)
		if !s.eof {
			cut = eventStartBefore(region, len(region))
			if cut <= 0 {
				if len(region) > math.MaxInt32/2 {
					cut = len(region) // no event start in 1 GiB: the decoder gives up
				} else {
					s.more(s.pos) // one element larger than a block: a bigger one
					continue
				}
			}
		}
		s.blk.hold() // the worker's hold
		s.blk.hold() // the merger's
		b := &batch{seq: s.seq, data: s.buf[s.pos : s.pos+cut : s.pos+cut], base: s.base + int64(s.pos),
			blk: s.blk, chunk: true, firstChunk: s.seq == 0, lastChunk: s.eof && cut == len(region)}
		s.seq++
		s.pos += cut
		return b
	}
}

// eventStartBefore returns the last index before end of b that looks like
// the start of an event — a '{' after a ',' after a '}', blanks allowed
// between — or -1.
func eventStartBefore(b []byte, end int) int {
	for end > 0 {
		i := bytes.LastIndexByte(b[:end], '{')
		if i <= 0 {
			return -1
		}
		j := i - 1
		for j >= 0 && isSpace(b[j]) {
			j--
		}
		if j > 0 && b[j] == ',' {
			j--
			for j >= 0 && isSpace(b[j]) {
				j--
			}
			if j >= 0 && b[j] == '}' {
				return i
			}
		}
		end = i
	}
	return -1
}

// decodeChunk decodes the elements of a chunk, finding their ends itself,
// and records where and how the chunk ends.
func (d *decoder) decodeChunk(b *batch) *result {
	d.res = d.result()
	r := d.res
	r.seq, r.worker, r.bytes = b.seq, d.worker, len(b.data)
	r.chunk = b
	before := d.names.Len()
	mark := d.loc.mark()
	s := unsafeString(b.data)
	want := wantItem
	if b.firstChunk {
		want = wantFirst
	}
	i := 0
	r.endState = chunkBad
	if d.sum != nil {
		d.sum.reset()
	}
	var idx int64
	for {
		i = skipSpace(s, i)
		if i == len(s) {
			switch want {
			case wantItem:
				r.endState = chunkBetween
			case wantFirst:
				if b.lastChunk {
					r.endState = chunkBad // no ']': a cut file
				} else {
					r.endState = chunkBetween
				}
			default:
				r.endState = chunkAfterItem
			}
			break
		}
		c := s[i]
		if c == ']' && want != wantItem {
			r.endState, r.tail = chunkClosed, i+1
			break
		}
		if want == wantComma {
			if c != ',' {
				break // a syntax error: the splitter will say which
			}
			i++
			want = wantItem
			continue
		}
		d.idx, d.off = idx, b.base+int64(i)
		var kind EventKind
		end := -1
		exact := true
		if c == '{' {
			kind, end, exact = d.eventAt(s, i)
		} else {
			e, err := valueEnd(s, i)
			if err == nil && e >= 0 && !(e == len(s) && c != '"' && c != '[') {
				end = e
				kind = d.event(s[i:end])
			}
		}
		if end < 0 {
			break // ends inside the element, or a bad literal
		}
		d.keep(kind)
		if d.sum != nil {
			d.sum.add(d, kind, s[i:end], b.base+int64(i), exact)
		}
		idx++
		r.lastGood = b.base + int64(end)
		i = end
		want = wantComma
	}
	r.events = idx
	if d.sum != nil {
		r.sum = d.sum.summary()
	}
	d.lastActs = len(r.acts)
	if n := d.names.Len(); n > before {
		r.newNames = append([]string(nil), d.names.Names()[before:n]...)
	}
	r.newLocals = d.loc.since(mark)
	return r
}

// speculation is what the merger checks of the chunks, in order.
type speculation struct {
	next   int64 // where the next chunk must start
	closed bool  // a chunk closed the events array
	failed bool
	// tail is the text after the events array, from the chunk that
	// closed it and every chunk after it.
	tail    []byte
	tailOff int64 // offset of tail[0]
	events  int64
	last    int64 // lastGood: the end of the last complete event
}

// check takes the next chunk's result in order, and releases the
// merger's hold on its block. It reports whether the result's records
// are the trace's.
func (sp *speculation) check(r *result) bool {
	b := r.chunk
	defer b.blk.release()
	if sp.failed {
		return false
	}
	if sp.closed {
		sp.tail = append(sp.tail, b.data...)
		return false
	}
	if b.base != sp.next {
		sp.failed = true
		return false
	}
	sp.next = b.base + int64(len(b.data))
	switch r.endState {
	case chunkBetween:
		if b.lastChunk {
			sp.failed = true // the input ends without ']': cut
		}
	case chunkClosed:
		sp.closed = true
		sp.tailOff = b.base + int64(r.tail)
		sp.tail = append(sp.tail, b.data[r.tail:]...)
	default:
		sp.failed = true
	}
	if sp.failed {
		return false
	}
	sp.events += r.events
	if r.events > 0 {
		sp.last = r.lastGood
	}
	return true
}

// finishTail reads the document after the events array (its remaining
// top-level keys into s.meta, then only whitespace), as the splitter
// would have; any error or cut there gives up.
func (sp *speculation) finishTail(s *splitter) error {
	t := &splitter{r: bytes.NewReader(sp.tail), blockSize: max(len(sp.tail), 1), eof: false,
		state: inObject, want: wantComma, sawArray: true, closed: true, meta: s.meta,
		base: sp.tailOff, top: s.top}
	if s.topArray {
		t.state = inEnd
	}
	if err := t.each(func(*batch) {}); err != nil || t.state != inDone {
		return errSpeculation
	}
	s.sawArray, s.closed, s.nevents, s.lastGood = true, true, sp.events, sp.last
	return nil
}

// keep adds the decoding of the last event, of kind, to the result.
func (d *decoder) keep(kind EventKind) {
	r := d.res
	if kind == KindSkipped && !d.out.hasOp {
		return
	}
	out := &d.out
	proc := d.loc.pid(out.pid)
	switch kind {
	case KindActivity:
		out.act.Proc = proc
		if out.act.Attr != 0 {
			r.pend = append(r.pend, out.pend)
			out.act.Attr = trace.AttrID(len(r.pend))
		}
		r.acts = append(r.acts, out.act)
	case KindLaunch:
		out.launch.Proc = proc
		if out.launch.Attr != 0 {
			r.pend = append(r.pend, out.pend)
			out.launch.Attr = trace.AttrID(len(r.pend))
		}
		r.launches = append(r.launches, out.launch)
	case KindRange:
		out.rng.Proc = proc
		r.ranges = append(r.ranges, out.rng)
	}
	if out.hasColl {
		out.coll.Proc = proc
		r.colls = append(r.colls, out.coll)
	}
	if out.hasOp {
		out.op.proc = proc
		r.ops = append(r.ops, out.op)
	}
}
