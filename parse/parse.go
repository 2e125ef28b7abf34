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
	"path/filepath"
	"slices"
	"strings"

	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/parse/nsyssqlite"
	"github.com/traceq/traceq/trace"
)

// Options configures File.
type Options struct {
	// Format forces a format ("chrome", "nsys"); "" sniffs the content.
	Format string
	// Names picks nsys kernel names: "demangled" (default) or "short".
	Names string
	// Workers bounds the decoding goroutines of one file (0: GOMAXPROCS).
	Workers int
	// Progress, if set, wraps the file reader to report bytes read.
	Progress func(r io.Reader, size int64) io.Reader
}

// ErrNoGPU is returned for a trace that holds no GPU activity at all.
var ErrNoGPU = errors.New("no GPU activity (kernels, memcpys, memsets) in the trace: was it captured with CUDA activities enabled (torch.profiler activities=[ProfilerActivity.CUDA])?")

// File reads one trace. Errors name the file once.
func File(path string, opt Options) (*trace.Trace, error) {
	t, err := file(path, opt)
	if err == nil {
		Demangle(t)
	}
	if err != nil {
		// nsyssqlite.Open takes the path and names it itself.
		if strings.HasPrefix(err.Error(), path+": ") {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func file(path string, opt Options) (*trace.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if st.IsDir() {
		return nil, errors.New("is a directory (give the trace files in it, or use a command that takes directories)")
	}
	br := bufio.NewReaderSize(f, 64<<10)
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
		if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
			return nil, unwrapPathError(err)
		}
		if len(bytes.TrimLeft(more, " \t\r\n")) == 0 && len(more) < br.Size() {
			return nil, errors.New("empty file (only whitespace)")
		}
		head = more
	}
	format := opt.Format
	if format == "" {
		switch {
		case nsyssqlite.Sniff(head):
			format = "nsys"
		case chrometrace.IsGzip(head) && gzippedSQLite(path):
			return openGzippedNsys(path, opt)
		case chrometrace.IsGzip(head) || looksJSON(head):
			format = "chrome"
		case strings.HasSuffix(path, ".nsys-rep") || strings.HasSuffix(path, ".qdrep"):
			return nil, errors.New("an nsys report file: export it first with 'nsys export --type sqlite FILE'")
		default:
			return nil, fmt.Errorf("not a trace: neither JSON, gzip nor SQLite (starts with \"%s\")", printable(head))
		}
	}
	var t *trace.Trace
	switch format {
	case "nsys":
		t, err = nsyssqlite.Open(path, nsyssqlite.Options{Names: opt.Names})
		if err != nil {
			return nil, err
		}
	case "chrome":
		var r io.Reader = br
		if opt.Progress != nil {
			r = opt.Progress(br, st.Size())
		}
		t, err = chrometrace.Parse(r, chrometrace.Options{Workers: opt.Workers, SizeHint: jsonSize(f, head, st.Size())})
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown input format %q (want chrome or nsys)", format)
	}
	if len(t.Activities) == 0 {
		if t.Truncated != nil {
			events := "events"
			if t.Truncated.Events == 1 {
				events = "event"
			}
			return nil, fmt.Errorf("truncated before any GPU activity (%d complete %s read): %s", t.Truncated.Events, events, t.Truncated.Reason)
		}
		return nil, ErrNoGPU
	}
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

// Expand turns the command-line arguments into input files: a directory
// stands for the trace files directly inside it (*.json, *.json.gz,
// *.sqlite, *.sqlite.gz), sorted by name, so a directory of rank files is a rank set.
func Expand(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, unwrapPathError(err))
		}
		var files []string
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() {
				continue
			}
			if strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.gz") || strings.HasSuffix(n, ".sqlite") || strings.HasSuffix(n, ".sqlite.gz") {
				files = append(files, filepath.Join(a, n))
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: directory holds no trace files (*.json, *.json.gz, *.sqlite)", a)
		}
		slices.Sort(files)
		out = append(out, files...)
	}
	return out, nil
}

// gzippedSQLite reports whether the gzip file at path holds an SQLite
// database (an nsys export compressed for storage or transfer).
func gzippedSQLite(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return false
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(zr, head)
	return nsyssqlite.Sniff(head[:n])
}

// openGzippedNsys decompresses a gzipped nsys export to a temporary file,
// since SQLite reads files, not streams, and removes it once read.
func openGzippedNsys(path string, opt Options) (*trace.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("corrupt gzip header: %w", err)
	}
	tmp, err := os.CreateTemp("", "traceq-*.sqlite")
	if err != nil {
		return nil, fmt.Errorf("decompressing the nsys export: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, zr)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("decompressing the nsys export: %w", err)
	}
	t, err := nsyssqlite.Open(tmp.Name(), nsyssqlite.Options{Names: opt.Names})
	if err != nil {
		// Name the user's file, not the temporary copy.
		return nil, errors.New(strings.ReplaceAll(err.Error(), tmp.Name(), path))
	}
	if len(t.Activities) == 0 {
		return nil, ErrNoGPU
	}
	return t, nil
}

// jsonSize guesses the size of the JSON in a file, for sizing the model's
// slices: the file size, or for gzip the size its trailer records (exact
// for a single-member file under 4 GiB, a hint otherwise).
func jsonSize(f *os.File, head []byte, size int64) int64 {
	if !chrometrace.IsGzip(head) {
		return size
	}
	var tail [4]byte
	if size < 18 {
		return 0
	}
	if _, err := f.ReadAt(tail[:], size-4); err != nil {
		return 0
	}
	return int64(binary.LittleEndian.Uint32(tail[:]))
}
