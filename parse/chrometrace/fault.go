package chrometrace

import (
	"errors"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// ErrChanged says the input read in place (Options.Data, a mapped file)
// could not be read to its end: the file became shorter while it was
// read, which faults where reading it would have come up short.
var ErrChanged = errors.New("the file changed while it was read: it became shorter (another program truncated or rewrote it); read it again once it is complete")

// guard turns a fault on the data read in place into ErrChanged, in each
// goroutine that reads it (onFault). A nil guard (input read through a
// reader) does nothing.
type guard struct {
	lo, hi uintptr // the data's addresses
	fault  atomic.Bool
}

func newGuard(data []byte) *guard {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return &guard{lo: lo, hi: lo + uintptr(len(data))}
}

// onFault makes a fault of the calling goroutine a panic; call the
// function it returns (deferred) to restore what was set.
func (g *guard) onFault() func() {
	if g == nil {
		return func() {}
	}
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}

// catch recovers a panic that is a fault on the data, and records it; any
// other panic goes on. Call it deferred.
func (g *guard) catch() {
	e := recover()
	if e == nil {
		return
	}
	if f, ok := e.(interface{ Addr() uintptr }); ok && f.Addr() >= g.lo && f.Addr() < g.hi {
		g.fault.Store(true)
		return
	}
	panic(e)
}

// failed reports whether a fault was caught.
func (g *guard) failed() bool { return g != nil && g.fault.Load() }

// run calls fn, a fault in it being ErrChanged; the goroutine that calls
// run is made to panic on faults while fn runs.
func (g *guard) run(fn func() error) (err error) {
	if g == nil {
		return fn()
	}
	defer g.onFault()()
	defer func() {
		if g.failed() && err == nil {
			err = ErrChanged
		}
	}()
	defer g.catch() // first of the three: a caught fault returns nil, then ErrChanged
	return fn()
}

// decode is d.decode(b), in a goroutine that called onFault. Once a fault
// was caught, by this decoder or another, it decodes nothing more (its
// state may be half-updated): the result is empty, and marked so.
func (g *guard) decode(d *decoder, b *batch) (r *result) {
	if g == nil {
		return d.decode(b)
	}
	if !g.failed() {
		func() {
			defer g.catch()
			r = d.decode(b)
		}()
	}
	if g.failed() {
		r = &result{seq: b.seq, worker: d.worker, faulted: true, endState: chunkBad}
		if b.chunk {
			r.chunk = b
		}
	}
	return r
}

// merge is merge(r), in a goroutine that called onFault. An empty result
// of a decoder that faulted is only merged when it is a chunk's (whose
// check gives it up and lets go of the chunk).
func (g *guard) merge(merge func(*result), r *result) {
	if g == nil {
		merge(r)
		return
	}
	if r.faulted && r.chunk == nil {
		return
	}
	defer g.catch()
	merge(r)
}
