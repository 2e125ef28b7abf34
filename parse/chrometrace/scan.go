package chrometrace

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// Scan is the raw side of the parser, for tools that copy events rather
// than model them (traceq slice): it streams a Chrome trace (plain or
// gzip JSON) through the same splitter as Parse and hands over each
// element of traceEvents as raw JSON text, in file order, and each other
// top-level value with its key. Memory stays at a few blocks whatever the
// input size.
//
// The raw slices are valid only during the call. Either callback may be
// nil. An error from a callback stops the scan and is returned as is.
// Input that ends early returns an error wrapping ErrTruncated, after every
// complete event has been handed over.
func Scan(r io.Reader, event func(raw []byte) error, top func(key string, raw []byte) error) error {
	return scanWith(r, top, func(stop *stopReader) (func(*batch), func()) {
		return func(b *batch) {
			if stop.failed() || event == nil {
				b.blk.release()
				return
			}
			for _, sp := range b.spans {
				if err := event(b.data[sp.start:sp.end]); err != nil {
					stop.fail(err)
					break
				}
			}
			b.blk.release()
		}, func() {}
	}, 1)
}

// ScanParallel is Scan with the per-event work spread over workers
// goroutines (0: GOMAXPROCS): decide runs on each event concurrently, in
// any order, and emit then receives each event with decide's verdict on
// one goroutine, in file order. top runs on the reading goroutine,
// concurrently with emit. The raw slices (and anything decide derives from
// them without copying) are valid until emit returns.
func ScanParallel[T any](r io.Reader, workers int, decide func(raw []byte) T, emit func(raw []byte, v T) error,
	top func(key string, raw []byte) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers == 1 {
		return Scan(r, func(raw []byte) error { return emit(raw, decide(raw)) }, top)
	}
	type decided struct {
		b  *batch
		vs []T
	}
	return scanWith(r, top, func(stop *stopReader) (func(*batch), func()) {
		batches := make(chan *batch, workers)
		results := make(chan decided, workers*2)
		// inflight bounds the batches read but not yet emitted: without it
		// a stalled worker lets the others (and memory) run ahead.
		inflight := make(chan struct{}, 3*workers)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := range batches {
					vs := make([]T, len(b.spans))
					if !stop.failed() {
						for i, sp := range b.spans {
							vs[i] = decide(b.data[sp.start:sp.end])
						}
					}
					results <- decided{b, vs}
				}
			}()
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			pending := map[int]decided{}
			next := 0
			for d := range results {
				pending[d.b.seq] = d
				for p, ok := pending[next]; ok; p, ok = pending[next] {
					delete(pending, next)
					next++
					if !stop.failed() {
						for i, sp := range p.b.spans {
							if err := emit(p.b.data[sp.start:sp.end], p.vs[i]); err != nil {
								stop.fail(err)
								break
							}
						}
					}
					p.b.blk.release()
					<-inflight
				}
			}
		}()
		return func(b *batch) {
				inflight <- struct{}{}
				batches <- b
			}, func() {
				close(batches)
				wg.Wait()
				close(results)
				<-done
			}
	}, workers)
}

// scanWith runs the splitter over r, handing each batch to the emit
// function that setup returns; the wait function it returns is called once
// the splitter is done and must wait for every batch to be handled.
func scanWith(r io.Reader, top func(key string, raw []byte) error, setup func(*stopReader) (emit func(*batch), wait func()), workers int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(2)
	var in io.Reader = br
	if IsGzip(head) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("corrupt gzip header: %w", err)
		}
		defer zr.Close()
		// Decompress on a goroutine of its own, ahead of the splitter.
		ra := newReadAhead(zr)
		defer ra.stop()
		in = ra
	}
	// A callback cannot make the splitter return, so it fails the reader
	// instead: the splitter stops at its next read and the callback's
	// error is returned. No callback runs after the first error.
	stop := &stopReader{r: in}
	// Blocks are recycled once their events are handed over; at most
	// 3·workers batches are in flight (ScanParallel), plus the splitter's.
	s := &splitter{r: stop, blockSize: defaultBlockSize, pool: newBlocks(defaultBlockSize, 3*workers+2)}
	emit, wait := setup(stop)
	if top != nil {
		s.top = func(key string, raw []byte) {
			if !stop.failed() {
				if err := top(key, raw); err != nil {
					stop.fail(err)
				}
			}
		}
	}
	err := s.each(emit)
	wait()
	if err := stop.error(); err != nil {
		return err
	}
	var se *SyntaxError
	switch {
	case err == nil && !s.sawArray:
		return ErrNotTrace
	case err == nil:
		return nil
	case errors.As(err, &se):
		return se
	case err == errEmpty && s.readErr == nil:
		return errors.New("empty input")
	case s.readErr != nil && !errors.Is(s.readErr, io.ErrUnexpectedEOF):
		return fmt.Errorf("read error after byte %d of decompressed data: %w", s.base+int64(len(s.buf)), s.readErr)
	}
	return fmt.Errorf("%w: input ends at byte %d, after %d complete events", ErrTruncated, s.base+int64(len(s.buf)), s.nevents)
}

// ErrTruncated is wrapped by Scan's error for input that ends before the
// document closes.
var ErrTruncated = errors.New("truncated trace")

// stopReader fails every read once a callback has failed. The callbacks
// may run on another goroutine than the reads.
type stopReader struct {
	r   io.Reader
	mu  sync.Mutex
	err error
}

func (s *stopReader) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *stopReader) error() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *stopReader) failed() bool { return s.error() != nil }

func (s *stopReader) Read(p []byte) (int, error) {
	if err := s.error(); err != nil {
		return 0, err
	}
	return s.r.Read(p)
}

// Event is what a raw-event tool needs of one event. Its strings point into
// the raw text: they are valid only as long as it is.
type Event struct {
	Ph, Cat, Name string
	// TS and Dur are in integer nanoseconds; HasTS and HasDur say whether
	// the event had them in a readable form.
	TS, Dur       int64
	HasTS, HasDur bool
	// Corr is args.correlation (0 when absent): it links a launch call, its
	// kernel and the flow events between them.
	Corr int64
	// ID is the raw text of the event's "id" (flow and async events), ""
	// when absent.
	ID string
}

// ReadEvent decodes the fields of Event from one raw event.
//
// It walks the event's top-level keys with the decoder's own scanner and
// decodes only the values it keeps.
func ReadEvent(raw []byte, ev *Event) {
	*ev = Event{}
	s := unsafeString(raw)
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return
	}
	scanObject(s[i:], func(key, s string, i int) (int, bool) {
		e := skipValue(s, i)
		if e < 0 {
			return -1, false
		}
		val := s[i:e]
		switch key {
		case "ph":
			ev.Ph = rawString(val)
		case "cat":
			ev.Cat = rawString(val)
		case "name":
			ev.Name = rawString(val)
		case "ts":
			ev.TS, ev.HasTS = rawNumber(val, parseMicros)
		case "dur":
			ev.Dur, ev.HasDur = rawNumber(val, parseMicros)
		case "id":
			ev.ID = val
		case "args":
			if val[0] == '{' {
				scanObject(val, func(key, s string, i int) (int, bool) {
					if key != "correlation" {
						return skipValue(s, i), true
					}
					v, e := readValue(s, i)
					ev.Corr, _ = num(v)
					return e, false
				})
			}
		}
		return e, true
	})
}

// rawString returns the text of a JSON string value, "" for any other
// value. Only a string with escapes is copied.
func rawString(v string) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	if strings.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1]
	}
	return gjson.Parse(v).Str
}

// rawNumber reads a number, or a string holding one, with parse.
func rawNumber(v string, parse func(string) (int64, bool)) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	if v[0] == '"' {
		return parse(rawString(v))
	}
	if v[0] == '-' || (v[0] >= '0' && v[0] <= '9') {
		return parse(v)
	}
	return 0, false
}

// ParseMicros converts the text of a number of microseconds to integer
// nanoseconds without going through a float, as the parser does for ts.
func ParseMicros(s string) (int64, bool) { return parseMicros(s) }
