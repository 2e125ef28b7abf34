package slice

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/traceq/traceq/parse/chrometrace"
)

// Reread is what a copy read of its input: the events it split and
// skimmed, and the bytes of JSON text they came from.
type Reread struct {
	// Indexed says a chunk index guided it (CopyIndexed).
	Indexed bool
	// Chunks and ChunksRead count the index's chunks and those whose
	// events were read (a chunk read only for its metadata, held by the
	// index, is not).
	Chunks, ChunksRead int
	Events, Bytes      int64
}

// ErrStaleIndex is CopyIndexed's error when the input is not what its
// index says (changed since, or read differently): nothing it wrote
// stands, and the copy is to be made again by CopyTo.
var ErrStaleIndex = errors.New("the input does not match its chunk index")

// CopyIndexed is CopyTo for an input whose chunk index a parse left
// (chrometrace.Options.Index): it reads only the chunks that can hold an
// event sel keeps — by their times, correlation and flow ids, and their
// metadata, which the index may hold itself — and passes over the others
// (seeking, or for gzip decompressing and discarding their bytes), up to
// the last chunk it needs. The events written, their order and the Stats
// are CopyTo's: the events it does not read are counted from the index.
// The top-level values are the index's.
//
// Any error is ErrStaleIndex (wrapping its cause): what it wrote to out
// is to be dropped, and the copy made by CopyTo.
func CopyIndexed(out *Writer, open Opener, sel *Selection, edit Edit, idx *chrometrace.Index) (*Stats, []TopValue, Reread, error) {
	c := newCopier(out, sel, edit)
	st, rr := &c.st, &c.reread
	rr.Indexed, rr.Chunks = true, len(idx.Chunks)
	var corr []int64
	if sel.Corr != nil {
		corr = make([]int64, 0, len(sel.Corr))
		for id := range sel.Corr {
			corr = append(corr, id)
		}
		slices.Sort(corr)
	}
	// The pieces of a document that holds the events to read: ranges of
	// the input, and metadata the index holds.
	var pieces []piece
	var want int64 // the events in them
	for i := range idx.Chunks {
		ch := &idx.Chunks[i]
		switch {
		case ch.Events == 0:
		case !ch.Exact || c.all.mayHold(ch) || mayHoldCorr(corr, ch):
			rr.ChunksRead++
			want += ch.Events
			if n := len(pieces); n > 0 && pieces[n-1].next == i {
				pieces[n-1].end, pieces[n-1].next = ch.End, i+1
				break
			}
			pieces = append(pieces, piece{start: ch.Start, end: ch.End, next: i + 1})
		case ch.Meta > 0 && ch.MetaStored:
			want += ch.Meta
			st.Read += ch.Events - ch.Meta
			st.Untimed += ch.Untimed
			pieces = append(pieces, piece{raw: ch.MetaRaw})
		case ch.Meta > 0:
			rr.ChunksRead++
			want += ch.Events
			pieces = append(pieces, piece{start: ch.Start, end: ch.End, next: i + 1})
		default:
			st.Read += ch.Events
			st.Untimed += ch.Untimed
		}
	}
	stale := func(err error) (*Stats, []TopValue, Reread, error) {
		return nil, nil, Reread{}, fmt.Errorf("%w: %w", ErrStaleIndex, err)
	}
	if len(pieces) > 0 {
		in, err := open()
		if err != nil {
			return stale(err)
		}
		defer in.Close()
		sec, err := chrometrace.NewSections(in)
		if err != nil {
			return stale(err)
		}
		defer sec.Close()
		err = c.read(&document{sec: sec, pieces: pieces})
		switch {
		case err != nil:
			return stale(err)
		case st.Truncated != "":
			return stale(errors.New(st.Truncated))
		case rr.Events != want:
			return stale(fmt.Errorf("%d events where the index has %d", rr.Events, want))
		case len(c.tops) > 0:
			return stale(errors.New("a top-level value among the events"))
		}
	}
	if err := c.writeFlows(); err != nil {
		return nil, nil, Reread{}, err
	}
	c.tops = append(c.tops, idx.Tops...)
	return st, c.tops, *rr, nil
}

// mayHold reports whether a chunk may hold an event with its ts inside
// iv, as every event a selection keeps by time has.
func (iv Interval) mayHold(ch *chrometrace.ChunkSummary) bool {
	return ch.Timed && ch.MaxTS >= iv.Start && ch.MinTS <= iv.End
}

// mayHoldCorr reports whether a chunk may hold an event whose
// correlation or flow id is one of ids (sorted).
func mayHoldCorr(ids []int64, ch *chrometrace.ChunkSummary) bool {
	if len(ids) == 0 || !ch.Corr {
		return false
	}
	i, _ := slices.BinarySearch(ids, ch.MinCorr)
	return i < len(ids) && ids[i] <= ch.MaxCorr
}

// piece is a part of the document CopyIndexed reads: the input's bytes
// [start, end) — whole events, from the chunks before next — or raw, the
// metadata events an index holds.
type piece struct {
	start, end int64
	next       int
	raw        []byte
}

// document reads as a Chrome trace whose events are those of its pieces:
// {"traceEvents":[piece,piece,...]}.
type document struct {
	sec    *chrometrace.Sections
	pieces []piece
	i      int       // the next piece
	cur    io.Reader // the piece being read
	lit    []byte    // text to give before anything else
	begun  bool
	ended  bool
}

func (d *document) Read(p []byte) (int, error) {
	for {
		if len(d.lit) > 0 {
			n := copy(p, d.lit)
			d.lit = d.lit[n:]
			return n, nil
		}
		if d.cur != nil {
			n, err := d.cur.Read(p)
			if err == io.EOF {
				d.cur = nil
				if n > 0 {
					return n, nil
				}
				continue
			}
			return n, err
		}
		switch {
		case !d.begun:
			d.begun, d.lit = true, []byte(`{"traceEvents":[`)
			continue
		case d.i == len(d.pieces) && !d.ended:
			d.ended, d.lit = true, []byte("]}")
			continue
		case d.i == len(d.pieces):
			return 0, io.EOF
		}
		pc := d.pieces[d.i]
		if d.i > 0 {
			d.lit = []byte{','}
		}
		d.i++
		if pc.raw != nil {
			d.cur = bytes.NewReader(pc.raw)
			continue
		}
		r, err := d.sec.Range(pc.start, pc.end-pc.start)
		if err != nil {
			return 0, err
		}
		d.cur = r
	}
}
