package parse

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/parse/nsyssqlite"
	"github.com/traceq/traceq/trace"
)

// Options configures File and Read.
type Options struct {
	// Format forces a format; "" sniffs the content.
	Format trace.Format
	// Names picks nsys kernel names: "demangled" (default) or "short".
	Names string
	// Workers bounds the decoding goroutines of one file (0: GOMAXPROCS).
	Workers int
	// Progress, if set, is called with the size of the input (-1 for a
	// stream) before it is read, and returns the function told of each
	// number of bytes of it read (of the file: compressed bytes of a
	// .gz).
	Progress func(size int64) func(n int64)
	// Accept, if set, is called with the input's format as soon as its
	// first bytes tell it, before the input is read: its error refuses
	// the input (a command that reads one format says so without
	// parsing a large export first).
	Accept func(trace.Format) error
	// LaunchesOnly accepts a trace that holds launch calls but no GPU
	// activity: a CUDA-graph capture trace, whose kernels ran in the
	// replays. Without it such a trace is refused with ErrNoGPU, as a
	// trace with neither always is.
	LaunchesOnly bool
	// Index, when set, receives the chunk index of a Chrome trace read
	// from a regular file in verified speculative chunks
	// (chrometrace.Options.Index), with the name it was read as; a merge
	// reads the file again guided by it.
	Index func(name string, idx *chrometrace.Index)
}

// ErrNoGPU is returned for a trace that holds no GPU activity at all.
var ErrNoGPU = errors.New("no GPU activity (kernels, memcpys, memsets) in the trace: was it captured with CUDA activities enabled (torch.profiler activities=[ProfilerActivity.CUDA])?")

// File reads the trace at path. The file is opened once and its format
// recognised from the first bytes read, so a FIFO works as well as a
// file. Errors are *FileError naming path.
func File(path string, opt Options) (*trace.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fileError(path, err)
	}
	if st.IsDir() {
		return nil, fileError(path, errors.New("is a directory (give the trace files in it, or use a command that takes directories)"))
	}
	in := input{r: f, name: path, size: -1}
	if st.Mode().IsRegular() {
		in = input{r: f, name: path, path: path, file: f, size: st.Size()}
	}
	t, err := read(in, opt)
	return t, fileError(path, err)
}

// Read reads a trace from r (standard input, a pipe); name names it in
// errors (Stdin: "standard input"). An nsys export read this way is
// copied to a temporary file first, since SQLite reads only files.
func Read(name string, r io.Reader, opt Options) (*trace.Trace, error) {
	t, err := read(input{r: r, name: name, size: -1}, opt)
	return t, fileError(name, err)
}

// input is what read knows of its input.
type input struct {
	r    io.Reader
	name string   // what the user called it
	path string   // a regular file's path, which SQLite can open; "" for a stream
	file *os.File // a regular file: read again, its gzip trailer, mapped; nil for a stream
	size int64    // -1 when unknown
}

func read(in input, opt Options) (*trace.Trace, error) {
	br := bufio.NewReaderSize(in.r, 64<<10)
	head, err := br.Peek(16)
	if err != nil && err != io.EOF {
		return nil, unwrapPathError(err)
	}
	if len(head) == 0 {
		return nil, errors.New("empty file")
	}
	if len(bytes.TrimLeft(head, " \t\r\n")) == 0 {
		// Only whitespace so far: look further, so that JSON indented
		// by more than len(head) bytes is still recognised.
		more, err := br.Peek(br.Size())
		if err != nil && err != io.EOF {
			return nil, unwrapPathError(err)
		}
		if len(bytes.TrimLeft(more, " \t\r\n")) == 0 && len(more) < br.Size() {
			return nil, errors.New("empty file (only whitespace)")
		}
		head = more
	}
	var seen func(int64)
	if opt.Progress != nil {
		seen = opt.Progress(in.size)
	}
	progress := func(r io.Reader) io.Reader {
		if seen != nil {
			return &countingReader{r: r, seen: seen}
		}
		return r
	}
	format := opt.Format
	if format == "" {
		switch {
		case nsyssqlite.Sniff(head):
			format = trace.FormatNsys
		case chrometrace.IsGzip(head) && gzippedSQLite(br):
			if err := accept(opt, trace.FormatNsys); err != nil {
				return nil, err
			}
			t, err := readNsysGzip(progress(br), opt)
			return opt.gpu(t, err)
		case chrometrace.IsGzip(head) || looksJSON(head):
			format = trace.FormatChrome
		case strings.HasSuffix(in.name, ".nsys-rep") || strings.HasSuffix(in.name, ".qdrep"):
			return nil, errors.New("an nsys report file: export it first with 'nsys export --type sqlite FILE'")
		default:
			return nil, fmt.Errorf("not a trace: neither JSON, gzip nor SQLite (starts with \"%s\")", printable(head))
		}
	}
	if err := accept(opt, format); err != nil {
		return nil, err
	}
	switch format {
	case trace.FormatNsys:
		if in.path == "" {
			return opt.gpu(spoolNsys(br, opt))
		}
		return opt.gpu(nsyssqlite.Open(in.path, nsyssqlite.Options{Names: opt.Names}))
	case trace.FormatChrome:
		copt := chrometrace.Options{Workers: opt.Workers, SizeHint: jsonSize(in, head)}
		if in.file != nil {
			// A file can be read again: the parser may then read it in
			// speculative chunks on every core (and again, should a
			// guess fail).
			copt.Reopen = func() (io.Reader, error) { return progress(io.NewSectionReader(in.file, 0, in.size)), nil }
			if opt.Index != nil {
				copt.Index = func(idx *chrometrace.Index) { opt.Index(in.name, idx) }
			}
		}
		if in.file != nil && !chrometrace.IsGzip(head) {
			// Plain JSON in a file: read in place.
			if m, err := mapFile(in.file, in.size); err == nil {
				defer m.close()
				copt.Data = m.data
				copt.Done = func(from, to int64) {
					m.drop(from, to)
					if seen != nil {
						seen(to - from)
					}
				}
			}
		}
		return opt.gpu(chrometrace.Parse(progress(br), copt))
	}
	return nil, fmt.Errorf("unknown input format %q (want %s or %s)", format, trace.FormatChrome, trace.FormatNsys)
}

// countingReader tells seen of the bytes read through it.
type countingReader struct {
	r    io.Reader
	seen func(int64)
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.seen(int64(n))
	return n, err
}

// gpu passes on a parser's outcome, refusing a trace without GPU activity
// (unless LaunchesOnly and it launched some); every trace read leaves
// here, with its mangled names demangled.
func (opt Options) gpu(t *trace.Trace, err error) (*trace.Trace, error) {
	if err != nil {
		return nil, err
	}
	if len(t.Activities) == 0 && !(opt.LaunchesOnly && len(t.Launches) > 0) {
		if t.Truncated != nil {
			events := "events"
			if t.Truncated.Events == 1 {
				events = "event"
			}
			return nil, fmt.Errorf("truncated before any GPU activity (%d complete %s read): %s", t.Truncated.Events, events, t.Truncated.Reason)
		}
		return nil, ErrNoGPU
	}
	Demangle(t)
	return t, nil
}

// unwrapPathError drops the path os adds, since File adds it once.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func looksJSON(b []byte) bool {
	b = []byte(strings.TrimLeft(string(b), " \t\r\n\ufeff"))
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

func printable(b []byte) string {
	var sb strings.Builder
	for _, c := range b[:min(len(b), 8)] {
		if c >= 0x20 && c < 0x7f {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, "\\x%02x", c)
		}
	}
	return sb.String()
}

// gzippedSQLite reports whether the gzip stream at the start of br holds
// an SQLite database (an nsys export compressed for storage or transfer).
// It decompresses only what br has buffered, so nothing is consumed.
func gzippedSQLite(br *bufio.Reader) bool {
	buf, _ := br.Peek(br.Size())
	zr, err := gzip.NewReader(bytes.NewReader(buf))
	if err != nil {
		return false
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(zr, head)
	return nsyssqlite.Sniff(head[:n])
}

// jsonSize guesses the size of the JSON in the input, for sizing the
// model's slices: the file size, or for gzip the size its trailer records
// (exact for a single-member file under 4 GiB, a hint otherwise); 0 for a
// stream.
func jsonSize(in input, head []byte) int64 {
	if in.size < 0 {
		return 0
	}
	if !chrometrace.IsGzip(head) {
		return in.size
	}
	var tail [4]byte
	if in.size < 18 {
		return 0
	}
	if _, err := in.file.ReadAt(tail[:], in.size-4); err != nil {
		return 0
	}
	return int64(binary.LittleEndian.Uint32(tail[:]))
}

// accept asks Options.Accept about format.
func accept(opt Options, format trace.Format) error {
	if opt.Accept == nil {
		return nil
	}
	return opt.Accept(format)
}
