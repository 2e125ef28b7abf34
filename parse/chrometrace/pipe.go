package chrometrace

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/traceq/traceq/trace"
)

// readAhead runs the reads of r (gzip decompression, the single-threaded
// floor of a .json.gz) on a goroutine of its own, a few chunks ahead of the
// splitter, so that decompressing overlaps with splitting and decoding
// instead of alternating with them. Errors come out exactly as r returned
// them, after the data read before them.
type readAhead struct {
	full  chan chunk
	free  chan []byte
	done  chan struct{}
	exit  sync.WaitGroup
	cur   chunk
	off   int
	ended bool
}

type chunk struct {
	b   []byte
	err error
}

const (
	aheadChunk  = 1 << 20
	aheadChunks = 4
)

func newReadAhead(r io.Reader) *readAhead {
	ra := &readAhead{full: make(chan chunk, aheadChunks), free: make(chan []byte, aheadChunks), done: make(chan struct{})}
	for range aheadChunks {
		ra.free <- make([]byte, aheadChunk)
	}
	ra.exit.Add(1)
	go func() {
		defer ra.exit.Done()
		for {
			var b []byte
			select {
			case b = <-ra.free:
			case <-ra.done:
				return
			}
			// Fill the chunk, keeping a short read's error with its data.
			n := 0
			var err error
			for n < len(b) && err == nil {
				var m int
				m, err = r.Read(b[n:])
				n += m
			}
			select {
			case ra.full <- chunk{b[:n], err}:
			case <-ra.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ra
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for ra.off == len(ra.cur.b) {
		if ra.ended {
			return 0, ra.cur.err
		}
		if ra.cur.b != nil {
			ra.free <- ra.cur.b[:cap(ra.cur.b)]
		}
		ra.cur, ra.off = <-ra.full, 0
		if ra.cur.err != nil {
			ra.ended = true
		}
	}
	n := copy(p, ra.cur.b[ra.off:])
	ra.off += n
	return n, nil
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

// block is one input buffer. refs counts its holders: the splitter while
// it reads from it, and each batch cut from it until decoded.
type block struct {
	buf  []byte
	refs atomic.Int32
	pool *blocks
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
	if b == nil || b.refs.Add(-1) != 0 || b.pool == nil {
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
