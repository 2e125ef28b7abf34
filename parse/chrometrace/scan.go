package chrometrace

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

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
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(2)
	var in io.Reader = br
	if IsGzip(head) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("corrupt gzip header: %w", err)
		}
		defer zr.Close()
		in = zr
	}
	// A callback cannot make the splitter return, so it fails the reader
	// instead: the splitter stops at its next read and the callback's
	// error is returned. No callback runs after the first error.
	sr := &stopReader{r: in}
	s := &splitter{r: sr, blockSize: defaultBlockSize}
	s.emit = func(b *batch) {
		if sr.err != nil || event == nil {
			return
		}
		for _, sp := range b.spans {
			if err := event(b.data[sp.start:sp.end]); err != nil {
				sr.err = err
				return
			}
		}
	}
	if top != nil {
		s.top = func(key string, raw []byte) {
			if sr.err == nil {
				if err := top(key, raw); err != nil {
					sr.err = err
				}
			}
		}
	}
	err := s.run()
	if sr.err != nil {
		return sr.err
	}
	var se *syntaxError
	switch {
	case err == nil && !s.sawArray:
		return ErrNotTrace
	case err == nil:
		return nil
	case errors.As(err, &se):
		return &SyntaxError{Offset: se.off, Msg: se.msg}
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

// stopReader fails every read once err is set.
type stopReader struct {
	r   io.Reader
	err error
}

func (s *stopReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
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
func ReadEvent(raw []byte, ev *Event) {
	*ev = Event{}
	gjson.ParseBytes(raw).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "ph":
			ev.Ph = v.Str
		case "cat":
			ev.Cat = v.Str
		case "name":
			ev.Name = v.Str
		case "ts":
			ev.TS, ev.HasTS = rawMicros(v)
		case "dur":
			ev.Dur, ev.HasDur = rawMicros(v)
		case "id":
			ev.ID = v.Raw
		case "args":
			if c := v.Get("correlation"); c.Exists() {
				switch c.Type {
				case gjson.Number:
					ev.Corr, _ = parseInt(c.Raw)
				case gjson.String:
					ev.Corr, _ = parseInt(c.Str)
				}
			}
		}
		return true
	})
}

func rawMicros(v gjson.Result) (int64, bool) {
	switch v.Type {
	case gjson.Number:
		return parseMicros(v.Raw)
	case gjson.String:
		return parseMicros(v.Str)
	}
	return 0, false
}

// ParseMicros converts the text of a number of microseconds to integer
// nanoseconds without going through a float, as the parser does for ts.
func ParseMicros(s string) (int64, bool) { return parseMicros(s) }
