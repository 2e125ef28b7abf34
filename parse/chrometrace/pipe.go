package chrometrace

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/traceq/traceq/trace"
)

// readAhead runs the reads of r (gzip decompression, the single-threaded
// floor of a .json.gz) on a goroutine of its own, a few blocks ahead of
// the splitter, so that decompressing overlaps with splitting and decoding
// instead of alternating with them. Errors come out exactly as r returned
// them, after the data read before them.
//
// A parse's splitter takes the blocks whole (take, splitter.moreFilled):
// the decompressor writes into the splitter's own blocks, after a
// headroom where the splitter copies the few bytes it carries over from
// the block before (the event cut at the end of a chunk), instead of
// every byte being copied out of a buffer of the reader's (memmove, 0.06
// CPU-s a GB). Anything else reads it as an io.Reader, through blocks of
// its own.
type readAhead struct {
	r     io.Reader
	pool  *blocks // the blocks it fills
	head  int     // the headroom before the data in each block
	full  chan filled
	done  chan struct{}
	start sync.Once
	exit  sync.WaitGroup
	cur   filled // the block Read copies from; its blk is held by readAhead
	off   int
	ended bool
}

// filled is a block the decompressor filled: data is blk.buf[head:head+n].
type filled struct {
	blk  *block
	data []byte
	err  error
}

const (
	aheadChunk  = 1 << 20 // a block of a readAhead that no splitter attached
	aheadBlocks = 2       // blocks filled ahead
	// aheadHead is the headroom of an attached splitter's blocks: more
	// than the part of an event a chunk leaves over, nearly always.
	aheadHead = 64 << 10
)

func newReadAhead(r io.Reader) *readAhead {
	return &readAhead{r: r, pool: newBlocks(aheadChunk, aheadBlocks+2), full: make(chan filled, aheadBlocks),
		done: make(chan struct{})}
}

// attach makes the decompressor fill blocks of pool, each after head
// bytes, for the splitter to take. Call it before the first read.
func (ra *readAhead) attach(pool *blocks, head int) { ra.pool, ra.head = pool, head }

// run starts the decompressing goroutine, once.
func (ra *readAhead) run() {
	ra.start.Do(func() {
		ra.exit.Add(1)
		go ra.fill()
	})
}

func (ra *readAhead) fill() {
	defer ra.exit.Done()
	for {
		blk := ra.pool.get(ra.pool.size)
		b := blk.buf[ra.head:]
		// Fill the block, keeping a short read's error with its data.
		n := 0
		var err error
		for n < len(b) && err == nil {
			var m int
			m, err = ra.r.Read(b[n:])
			n += m
		}
		select {
		case ra.full <- filled{blk, b[:n], err}:
		case <-ra.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// next waits for the next filled block, which the caller then holds.
func (ra *readAhead) next() filled {
	ra.run()
	f := <-ra.full
	if f.err != nil {
		ra.ended = true
	}
	return f
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for ra.off == len(ra.cur.data) {
		if ra.ended {
			return 0, ra.cur.err
		}
		ra.cur.blk.release()
		ra.cur, ra.off = ra.next(), 0
	}
	n := copy(p, ra.cur.data[ra.off:])
	ra.off += n
	return n, nil
}

// take returns the next filled block, held once by the caller, or false
// after the block that carried the end of the input or an error.
func (ra *readAhead) take() (filled, bool) {
	if ra.ended {
		return filled{}, false
	}
	ra.cur.blk.release()
	ra.cur, ra.off = filled{}, 0
	f := ra.next()
	if f.err != nil {
		ra.cur = filled{err: f.err} // what Read returns from now on
	}
	return f, true
}

// stop ends the reading goroutine and waits for it, so that the caller may
// close r.
func (ra *readAhead) stop() {
	close(ra.done)
	ra.exit.Wait()
}

// blocks recycles the splitter's input blocks once the decoders are done
// with them, so that a multi-GB input does not allocate (and the runtime
// does not zero) a fresh block every 4 MiB. Only blocks of the standard
// size are kept; the few that fit an unusually large event are left to the
// GC.
type blocks struct {
	size int
	free chan *block
}

// block is one input buffer, or a window of input read in place (done
// set). refs counts its holders: the splitter while it reads from it, and
// each batch cut from it until decoded.
type block struct {
	buf  []byte
	refs atomic.Int32
	pool *blocks
	// done, for a window of data read in place, is told where buf lies
	// in the data (from at) when the last hold is dropped.
	done func(from, to int64)
	at   int64
}

func newBlocks(size, keep int) *blocks { return &blocks{size: size, free: make(chan *block, keep)} }

// get returns a block of at least size bytes, held once (by the caller).
func (p *blocks) get(size int) *block {
	var b *block
	if size <= p.size {
		select {
		case b = <-p.free:
		default:
			b = &block{buf: make([]byte, p.size), pool: p}
		}
	} else {
		b = &block{buf: make([]byte, size)}
	}
	b.refs.Store(1)
	return b
}

func (b *block) hold() {
	if b != nil {
		b.refs.Add(1)
	}
}

// release drops one hold; the last one returns the block to its pool.
func (b *block) release() {
	if b == nil || b.refs.Add(-1) != 0 {
		return
	}
	if b.done != nil {
		b.done(b.at, b.at+int64(len(b.buf)))
	}
	if b.pool == nil {
		return
	}
	select {
	case b.pool.free <- b:
	default:
	}
}

// result returns an empty result for a batch: one the merger is done
// with (its buffers recycled: no fresh memory to fault in), else a new one
// with room for as many activities as the previous batch had.
func (d *decoder) result() *result {
	select {
	case r := <-d.free:
		return r
	default:
		return &result{acts: make([]trace.Activity, 0, d.lastActs+d.lastActs/8)}
	}
}

// recycle empties r and hands it back to the decoders.
func (r *result) recycle(free chan *result) {
	*r = result{acts: r.acts[:0], launches: r.launches[:0], ranges: r.ranges[:0], colls: r.colls[:0],
		ops: r.ops[:0], pend: r.pend[:0], anomalies: r.anomalies[:0], anomAt: r.anomAt[:0]}
	select {
	case free <- r:
	default:
	}
}

// grow makes room for add more elements in s. When the total input size
// is known (hint), the new capacity is what the density of the seen bytes
// predicts for the whole input, plus 2%; otherwise, or if that is not
// enough, append's doubling.
func grow[T any](s []T, add int, seen, hint int64) []T {
	need := len(s) + add
	if need <= cap(s) {
		return s
	}
	if hint > seen && seen > 0 {
		est := float64(need) + float64(need)/float64(seen)*float64(hint-seen)*1.02
		if est < float64(1<<40) && int(est) > need {
			ns := make([]T, len(s), int(est)+64)
			copy(ns, s)
			return ns
		}
	}
	return s // append doubles
}
