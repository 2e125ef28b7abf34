package chrometrace

import (
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// The chunk index (Options.Index): what a parse that read its input in
// verified speculative chunks learnt of where the events lie, so that a
// second read of the same file (traceq merge's copy) can skip the chunks
// that hold nothing it keeps instead of splitting and skimming every
// event again. It says of each chunk what a skimming Reader would read of
// its events (Reader.Skim: ph, ts, args.correlation, id): the decoder
// reads at least those keys of every event while it indexes (stop), with
// the first occurrence of a key counting for both.

// Index is the chunk index of one input.
type Index struct {
	Chunks []ChunkSummary
	// Tops are the top-level values other than traceEvents, in file
	// order (before and after the array), as a Reader returns them.
	Tops []TopLevel
	meta int  // bytes of MetaRaw
	full bool // too many chunks: not given
}

// TopLevel is a top-level value of the document other than traceEvents.
type TopLevel struct {
	Key string
	Raw []byte
}

// ChunkSummary is what an index says of one chunk of the events array,
// or of a part of one (partBytes of its input).
type ChunkSummary struct {
	// Start and End are the chunk's elements, [Start, End) of the JSON
	// text: from the start of its first to the end of its last (no
	// separator after it). Both 0 when it has none.
	Start, End int64
	// Events counts its elements (Reader events); Untimed those other
	// than metadata without a readable ts; Meta the metadata (ph "M")
	// events.
	Events, Untimed, Meta int64
	// MinTS and MaxTS bound the ts (ns) of its other events with a
	// readable ts; Timed says there is one.
	MinTS, MaxTS int64
	Timed        bool
	// MinCorr and MaxCorr bound the correlation ids (args.correlation,
	// not 0) and launch flow ids (the "id" of ph s, t, f events of a
	// LaunchFlow category, read as an integer) of its timed events; Corr
	// says there is one.
	MinCorr, MaxCorr int64
	Corr             bool
	// MetaRaw holds its metadata events, each's text in file order joined
	// by commas, when they fit (MetaStored): a copy that keeps nothing
	// else of the chunk need not read it.
	MetaRaw    []byte
	MetaStored bool
	// Exact is false when the decoder could not read an event as far as
	// a Reader would (malformed inside): the chunk must be read.
	Exact bool
}

// Chunk index limits: the metadata text a chunk keeps, and an index
// altogether (Kineto writes a few hundred process and thread names).
const (
	maxChunkMeta = 64 << 10
	maxIndexMeta = 4 << 20
)

// partBytes is the size of the parts a chunk is summarised in: a
// chunk's events often span more time than a step (Kineto writes each
// thread's events in turn), a part's less.
const partBytes = 256 << 10

// chunkSum accumulates a chunk's summaries in its decoder: one a part.
type chunkSum struct {
	ChunkSummary
	parts []ChunkSummary
}

func (c *chunkSum) reset() {
	c.parts = nil
	c.start()
}

// start begins a part.
func (c *chunkSum) start() {
	c.ChunkSummary = ChunkSummary{MetaRaw: c.MetaRaw[:0], MetaStored: true, Exact: true,
		MinTS: math.MaxInt64, MaxTS: math.MinInt64, MinCorr: math.MaxInt64, MaxCorr: math.MinInt64}
}

// add takes the element just decoded by d, of kind, raw its text at
// offset off; exact is false when the decoder did not read its keys as a
// Reader does.
func (c *chunkSum) add(d *decoder, kind EventKind, raw string, off int64, exact bool) {
	f := &d.f
	if c.Events > 0 && off-c.Start >= partBytes {
		c.parts = append(c.parts, c.part())
		c.start()
	}
	if c.Events == 0 {
		c.Start = off
	}
	c.Exact = c.Exact && exact
	c.Events++
	c.End = off + int64(len(raw))
	if f.ph.Str == "M" {
		c.Meta++
		if c.MetaStored && len(c.MetaRaw)+len(raw)+1 <= maxChunkMeta {
			if len(c.MetaRaw) > 0 {
				c.MetaRaw = append(c.MetaRaw, ',')
			}
			c.MetaRaw = append(c.MetaRaw, raw...)
		} else {
			c.MetaStored = false
		}
		return
	}
	// An activity or launch call has its ts and correlation id decoded
	// (micros(f.ts) and num(f.corr), not 0); others are read here.
	var ts, corr int64
	ok := true
	switch kind {
	case KindActivity:
		ts, corr = int64(d.out.act.Start), d.out.act.Corr
	case KindLaunch:
		ts, corr = int64(d.out.launch.Start), d.out.launch.Corr
	default:
		if ts, ok = micros(&f.ts); ok && f.corr.Type != vNone {
			corr, _ = num(&f.corr)
		}
	}
	if !ok {
		c.Untimed++
		return
	}
	c.Timed = true
	c.MinTS, c.MaxTS = min(c.MinTS, ts), max(c.MaxTS, ts)
	if corr != 0 {
		c.corr(corr)
	}
	if flowPhase(f.ph.Str) && LaunchFlow(f.cat.Str) {
		if id, ok := LaunchFlowID(f.id.Raw); ok {
			c.corr(id)
		}
	}
}

func (c *chunkSum) corr(n int64) {
	c.Corr = true
	c.MinCorr, c.MaxCorr = min(c.MinCorr, n), max(c.MaxCorr, n)
}

// summary returns the chunk's summaries, one a part.
func (c *chunkSum) summary() []ChunkSummary {
	return append(c.parts, c.part())
}

// part returns the current part's summary, its own copy.
func (c *chunkSum) part() ChunkSummary {
	s := c.ChunkSummary
	s.MetaRaw = nil
	if c.Meta > 0 && c.MetaStored {
		s.MetaRaw = append([]byte(nil), c.MetaRaw...)
	}
	s.MetaStored = s.MetaStored && c.Meta > 0
	return s
}

func flowPhase(ph string) bool { return ph == "s" || ph == "t" || ph == "f" }

// LaunchFlow reports whether cat is a flow category linking a launch call
// to its kernel (Kineto's ac2g, async before 2022): such a flow's id is
// the correlation id.
func LaunchFlow(cat string) bool { return cat == "ac2g" || cat == "async" }

// LaunchFlowID reads the id of a launch flow event (Event.ID: its JSON
// text, a number or a string) as the correlation id it is.
func LaunchFlowID(id string) (int64, bool) {
	n, err := strconv.ParseInt(strings.Trim(id, `"`), 10, 64)
	return n, err == nil
}

// indexed reports whether an indexing decoder has read what an index
// needs of the event: its ts, and a flow event's id (its ph and cat are
// read before anything decides to stop).
func (f *fields) indexed() bool {
	return f.seen&seenTs != 0 && (f.seen&seenID != 0 || !flowPhase(f.ph.Str))
}

// Sections reads byte ranges of the JSON text of a trace, plain or gzip,
// in increasing order: a second read that an Index guides. Plain JSON in
// a file is sought; gzip is decompressed, the bytes between ranges
// discarded.
type Sections struct {
	in  *input
	r   io.Reader
	sk  io.Seeker // plain JSON that can seek; nil otherwise
	pos int64     // offset of the next byte r gives
}

// ErrSections is the error of a range that the input does not hold (it
// ends before, or a range starts before the previous one's end).
var ErrSections = errors.New("the input does not hold the indexed range")

// NewSections opens r (at its start) for reading ranges of its JSON text.
func NewSections(r io.Reader) (*Sections, error) {
	if sk, ok := r.(io.ReadSeeker); ok {
		var head [2]byte
		n, err := io.ReadFull(sk, head[:])
		if _, serr := sk.Seek(0, io.SeekStart); serr == nil && (err == nil || n < 2) && !IsGzip(head[:n]) {
			return &Sections{r: sk, sk: sk}, nil
		}
	}
	in, err := openInput(r)
	if err != nil {
		return nil, err
	}
	return &Sections{in: in, r: in.r}, nil
}

// Range returns a reader of the n bytes at off.
func (s *Sections) Range(off, n int64) (io.Reader, error) {
	if off < s.pos {
		return nil, ErrSections
	}
	if off > s.pos {
		if s.sk != nil {
			if _, err := s.sk.Seek(off, io.SeekStart); err != nil {
				return nil, err
			}
		} else if m, err := io.CopyN(io.Discard, s.r, off-s.pos); err != nil {
			if m < off-s.pos && (err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)) {
				return nil, ErrSections
			}
			return nil, err
		}
	}
	s.pos = off + n
	return &exactReader{r: io.LimitReader(s.r, n), left: n}, nil
}

// Close stops the decompression.
func (s *Sections) Close() {
	if s.in != nil {
		s.in.close()
	}
}

// exactReader is a range's reader: the input ending inside it is
// ErrSections.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		return n, ErrSections
	}
	if err != nil && err != io.EOF {
		return n, err
	}
	return n, nil
}

// maxIndexChunks bounds an index (parts of 256 kB: 1 TB of input).
const maxIndexChunks = 1 << 22

// add appends a chunk's summaries; past the limit on stored metadata the
// parts keep none, and past maxIndexChunks the index is not given.
func (x *Index) add(parts []ChunkSummary) {
	for _, c := range parts {
		if x.full {
			return
		}
		if x.meta+len(c.MetaRaw) > maxIndexMeta {
			c.MetaRaw, c.MetaStored = nil, false
		}
		x.meta += len(c.MetaRaw)
		x.Chunks = append(x.Chunks, c)
		x.full = len(x.Chunks) >= maxIndexChunks
	}
}
