package chrometrace

import (
	"bufio"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/gzip"

	"github.com/traceq/traceq/trace"
)

// input is the JSON text that Parse and Reader read: the file itself, or
// the stream a gzip file decompresses to.
type input struct {
	r  io.Reader    // what the splitter reads
	zr *gzip.Reader // nil for plain JSON
	ra *readAhead
	// hdrLen is the size of the gzip header on disk, where the deflate
	// data starts.
	hdrLen int64
}

// maxGzipString is the longest file name or comment compress/gzip reads
// from a header (its buffer holds 512 bytes with the terminating NUL).
const maxGzipString = 511

var (
	errGzipHeaderCut = errors.New("truncated: the file ends inside the gzip header, before any data")
	errGzipHeader    = errors.New("corrupt gzip header (the file starts like gzip but is not valid gzip)")
)

// openInput sniffs r: gzip (by its magic bytes) is decompressed on a
// goroutine of its own (readAhead), ahead of the splitter.
func openInput(r io.Reader) (*input, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(2)
	if !IsGzip(head) {
		return &input{r: br}, nil
	}
	in := &input{}
	h, err := peekGzipHeader(br)
	var src io.Reader = br
	switch {
	case errors.Is(err, errLongGzipHeader):
		// compress/gzip refuses a stored name or comment longer than
		// its buffer: read the header here and hand it an equivalent
		// one without them.
		if h, err = readGzipHeader(br); err != nil {
			return nil, err
		}
		src = io.MultiReader(bytes.NewReader(h.short[:]), br)
	case err != nil:
		return nil, err
	}
	in.hdrLen = h.size
	zr, err := gzip.NewReader(src)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errGzipHeaderCut
		}
		return nil, errGzipHeader
	}
	in.zr = zr
	in.ra = newReadAhead(zr)
	in.r = in.ra
	return in, nil
}

// close stops the decompressing goroutine. It may be called twice.
func (in *input) close() {
	if in.ra != nil {
		in.ra.stop()
		in.ra = nil
		in.zr.Close()
	}
}

// gzipHeader is what openInput needs of a gzip member header (RFC 1952).
type gzipHeader struct {
	size  int64    // bytes on disk
	short [10]byte // the same header without optional fields
}

const (
	gzipFHCRC    = 1 << 1
	gzipFEXTRA   = 1 << 2
	gzipFNAME    = 1 << 3
	gzipFCOMMENT = 1 << 4
)

var errLongGzipHeader = errors.New("gzip header with a long name or comment")

// peekGzipHeader measures the header at the start of br without reading
// it. It returns errLongGzipHeader when compress/gzip would refuse it
// (a name or comment too long) or when it does not fit in br's buffer.
func peekGzipHeader(br *bufio.Reader) (gzipHeader, error) {
	var h gzipHeader
	b, _ := br.Peek(br.Size())
	if len(b) < 10 {
		return h, errGzipHeaderCut
	}
	if b[2] != 8 {
		return h, errGzipHeader
	}
	flg := b[3]
	i := 10
	if flg&gzipFEXTRA != 0 {
		if len(b) < i+2 {
			return h, cutOrLong(len(b), br)
		}
		i += 2 + int(b[i]) | int(b[i+1])<<8
	}
	for _, f := range []byte{gzipFNAME, gzipFCOMMENT} {
		if flg&f == 0 {
			continue
		}
		if i > len(b) {
			return h, cutOrLong(len(b), br)
		}
		n := bytes.IndexByte(b[i:], 0)
		if n < 0 {
			return h, cutOrLong(len(b), br)
		}
		if n > maxGzipString {
			return h, errLongGzipHeader
		}
		i += n + 1
	}
	if flg&gzipFHCRC != 0 {
		i += 2
	}
	if i > len(b) {
		return h, cutOrLong(len(b), br)
	}
	h.size = int64(i)
	return h, nil
}

// cutOrLong says why a header did not fit in the n bytes peeked: the file
// ends there, or the header is longer than the buffer.
func cutOrLong(n int, br *bufio.Reader) error {
	if n < br.Size() {
		return errGzipHeaderCut
	}
	return errLongGzipHeader
}

// readGzipHeader reads and checks the header at the start of br, however
// long its name or comment, without holding them.
func readGzipHeader(br *bufio.Reader) (gzipHeader, error) {
	var h gzipHeader
	crc := crc32.NewIEEE()
	read := func(n int) ([]byte, error) {
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, errGzipHeaderCut
		}
		crc.Write(b)
		h.size += int64(n)
		return b, nil
	}
	fixed, err := read(10)
	if err != nil {
		return h, err
	}
	copy(h.short[:], fixed)
	h.short[3] = 0 // no optional fields
	flg := fixed[3]
	if fixed[2] != 8 {
		return h, errGzipHeader
	}
	if flg&gzipFEXTRA != 0 {
		xlen, err := read(2)
		if err != nil {
			return h, err
		}
		if _, err := read(int(xlen[0]) | int(xlen[1])<<8); err != nil {
			return h, err
		}
	}
	for _, f := range []byte{gzipFNAME, gzipFCOMMENT} {
		if flg&f == 0 {
			continue
		}
		for {
			chunk, err := br.ReadSlice(0)
			crc.Write(chunk)
			h.size += int64(len(chunk))
			if err == nil {
				break
			}
			if err != bufio.ErrBufferFull {
				return h, errGzipHeaderCut
			}
		}
	}
	if flg&gzipFHCRC != 0 {
		sum := crc.Sum32()
		b := make([]byte, 2)
		if _, err := io.ReadFull(br, b); err != nil {
			return h, errGzipHeaderCut
		}
		h.size += 2
		if uint16(b[0])|uint16(b[1])<<8 != uint16(sum) {
			return h, errGzipHeader
		}
	}
	return h, nil
}

// notArrayError is the splitter's error for a traceEvents that is valid
// JSON but not an array: the input is not a trace, rather than bad JSON.
type notArrayError struct{ offset int64 }

func (e *notArrayError) Error() string {
	return fmt.Sprintf("not a Chrome trace: traceEvents is not an array (byte %d)", e.offset)
}

// finish says what the end of the splitter's run means, the same for
// Parse and Reader: the input was complete (nil, nil), it ended early
// after the events array began (a truncation), or it is an error.
func (in *input) finish(s *splitter, runErr error) (*trace.Truncation, error) {
	if runErr == nil {
		if !s.sawArray {
			return nil, ErrNotTrace
		}
		if s.readErr != nil && in.zr != nil {
			// The JSON is complete but the gzip stream is not right
			// after it.
			switch {
			case errors.Is(s.readErr, io.ErrUnexpectedEOF), errors.Is(s.readErr, gzip.ErrHeader):
				// Every event was read. The stream was cut in its 8-byte
				// trailer (so the checksum could not be checked, as for
				// any plain file), or stray bytes follow it, which gzip
				// -d also ignores ("trailing garbage ignored"); the two
				// look alike.
			default:
				return nil, in.readError(s.readErr, s.base+int64(len(s.buf)))
			}
		}
		return nil, nil
	}
	var se *SyntaxError
	var na *notArrayError
	switch {
	case errors.As(runErr, &na):
		return nil, na
	case errors.As(runErr, &se):
		se.Gzip = in.zr != nil
		if in.zr != nil {
			// Damaged deflate data often decompresses to garbage before
			// the gzip layer notices: read the stream to its end to tell
			// a damaged file from bad JSON.
			n, err := io.Copy(io.Discard, in.r)
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, gzip.ErrHeader) {
				err := in.readError(err, s.base+int64(len(s.buf))+n).(*corruptGzip)
				err.msg += fmt.Sprintf(" (the damage shows as invalid JSON at byte %d of the decompressed data)", se.Offset)
				return nil, err
			}
		}
		return nil, se
	case runErr == errEmpty && s.readErr == nil:
		return nil, errors.New("empty input")
	}
	end := s.base + int64(len(s.buf))
	// Input ended early: a short file or a cut gzip stream. Any other
	// read error (a corrupt deflate block, a bad checksum) is fatal.
	if s.readErr != nil && !errors.Is(s.readErr, io.ErrUnexpectedEOF) {
		return nil, in.readError(s.readErr, end)
	}
	where := fmt.Sprintf("the file ends at byte %d", end)
	if in.zr != nil {
		where = fmt.Sprintf("the gzip stream ends early, after %d bytes of decompressed JSON", end)
	}
	if !s.sawArray {
		return nil, fmt.Errorf("truncated: %s, before the traceEvents array", where)
	}
	// Say roughly what was lost: the partial value after the last
	// complete event, and everything after it.
	if s.closed {
		where += fmt.Sprintf(", after the traceEvents array (which ends at byte %d): every event was read, only metadata after it was lost", s.lastGood)
	} else if s.nevents == 0 {
		where += ", before the first complete event"
	} else if s.lastGood < end {
		where += fmt.Sprintf("; the %d bytes after the last complete event (which ends at byte %d) were lost, with whatever followed", end-s.lastGood, s.lastGood)
	} else {
		where += ", right after a complete event; whatever followed was lost"
	}
	return &trace.Truncation{Offset: end, Reason: where, Events: s.nevents}, nil
}

// ErrCorruptGzip is wrapped by the errors for a damaged gzip stream (with
// the cause: gzip.ErrChecksum, a flate.CorruptInputError, ...).
var ErrCorruptGzip = errors.New("corrupt gzip data")

type corruptGzip struct {
	msg   string
	cause error
}

func (e *corruptGzip) Error() string   { return e.msg }
func (e *corruptGzip) Unwrap() []error { return []error{ErrCorruptGzip, e.cause} }

// readError describes a read error other than a cut: for gzip, corrupt
// compressed data or a checksum that does not match.
func (in *input) readError(err error, end int64) error {
	if in.zr == nil {
		return fmt.Errorf("read error after byte %d: %w", end, err)
	}
	if errors.Is(err, gzip.ErrChecksum) {
		return &corruptGzip{"corrupt gzip data: the checksum does not match (the file is damaged)", err}
	}
	var ce flate.CorruptInputError
	if errors.As(err, &ce) {
		// ce counts bytes of deflate data, which start after the header
		// (exact for the usual single-member file).
		return &corruptGzip{fmt.Sprintf("corrupt gzip data near byte %d of the file, after %d bytes of decompressed JSON", int64(ce)+in.hdrLen, end), err}
	}
	return &corruptGzip{fmt.Sprintf("corrupt gzip data after %d bytes of decompressed JSON: %v", end, err), err}
}

// notEventsError is the error for an input none of whose n elements is an
// event: a JSON list of records (a config, a results file) reads as the
// Array Format. It says so rather than "no GPU activity".
func notEventsError(n int64) error {
	if n == 1 {
		return errors.New("not a Chrome trace: its only element is not an event (an object with a ph)")
	}
	return fmt.Errorf("not a Chrome trace: none of its %d elements is an event (an object with a ph)", n)
}
