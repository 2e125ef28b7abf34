package parse

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/traceq/traceq/outfile"
	"github.com/traceq/traceq/parse/nsyssqlite"
	"github.com/traceq/traceq/trace"
)

// The decompressed size of a gzipped nsys export is capped, so that a gzip
// bomb (deflate reaches about 1000:1) cannot fill the temporary directory:
// at most maxRatio times the compressed bytes read so far, and never less
// than minSpool. Real exports compress 3.4:1 to 7.2:1 (gzip -1 to -9 on
// the eleven exports in ../shared/traces/nsys; the highest is an export
// of almost empty tables), so 32:1 leaves more than four times that
// margin, while a 4 MB bomb stops after 128 MiB. The floor keeps small,
// sparse exports (empty tables compress best) clear of the ratio.
const (
	maxRatio = 32
	minSpool = 64 << 20
)

// ErrTooLarge is wrapped by the error for a gzipped export that
// decompresses to more than the cap allows.
var ErrTooLarge = errors.New("decompresses to too much data")

// readNsysGzip reads a gzipped nsys export from r: SQLite reads files,
// not streams, so it is decompressed to a temporary file first, removed
// once read (or by a signal, through outfile).
func readNsysGzip(r io.Reader, opt Options) (*trace.Trace, error) {
	in := &counter{r: r}
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, errors.New("corrupt gzip header (the file starts like gzip but is not valid gzip)")
	}
	defer zr.Close()
	return spoolNsys(&capped{r: zr, in: in}, opt)
}

// spoolNsys copies an nsys export from r (a pipe, standard input, a
// decompressor) to a temporary file and reads it from there.
func spoolNsys(r io.Reader, opt Options) (*trace.Trace, error) {
	tmp, err := outfile.Temp("", "traceq-*.sqlite")
	if err != nil {
		return nil, fmt.Errorf("copying the nsys export to a temporary file: %w", err)
	}
	defer outfile.Remove(tmp.Name())
	_, err = io.Copy(tmp, r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var re *readError
		if errors.As(err, &re) {
			return nil, re.err
		}
		return nil, fmt.Errorf("copying the nsys export to a temporary file: %w", err)
	}
	return nsyssqlite.Open(tmp.Name(), nsyssqlite.Options{Names: opt.Names})
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// capped reads a gzip stream, failing once it outgrows the cap; its
// errors say what is wrong with the input in the user's words.
type capped struct {
	r  io.Reader
	in *counter // the compressed bytes read so far
	n  int64
}

func (c *capped) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if limit := max(minSpool, maxRatio*c.in.n); c.n > limit {
		return n, &readError{&tooLarge{in: c.in.n}}
	}
	var ce flate.CorruptInputError
	switch {
	case err == nil || err == io.EOF:
		return n, err
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = fmt.Errorf("truncated: the gzip data ends after %d bytes of the decompressed export (the file is cut)", c.n)
	case errors.Is(err, gzip.ErrChecksum):
		err = errors.New("corrupt gzip data: the checksum does not match (the file is damaged)")
	case errors.As(err, &ce):
		err = fmt.Errorf("corrupt gzip data after %d bytes of the decompressed export", c.n)
	}
	return n, &readError{err}
}

// readError marks an error of the input (not of the temporary file).
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

// tooLarge is the error past the cap.
type tooLarge struct{ in int64 }

func (e *tooLarge) Error() string {
	return fmt.Sprintf("gzip data decompresses to more than %d MiB from %.1f MiB (over %d:1, real nsys exports compress about 4:1): a gzip bomb or a damaged file; if it is a genuine export, decompress it with gunzip and give the .sqlite",
		max(minSpool, maxRatio*e.in)>>20, float64(e.in)/(1<<20), maxRatio)
}

func (e *tooLarge) Unwrap() error { return ErrTooLarge }
