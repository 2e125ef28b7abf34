//go:build linux || darwin || freebsd

package parse

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/traceq/traceq/parse/chrometrace"
)

// kernels returns a trace of n kernels, plain JSON.
func kernels(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"traceEvents": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": %d}}`, i%7, 10*i, i)
	}
	b.WriteString("]}\n")
	return []byte(b.String())
}

// TestMappedFileShrinks: a file cut short while it is mapped faults
// where it is read past its new end; the parse says the file changed,
// whichever goroutine read there (the splitter, a decoder, the merger),
// instead of the process dying of SIGBUS.
func TestMappedFileShrinks(t *testing.T) {
	data := kernels(40000) // ~5 MB
	path := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := mapFile(f, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	if err := os.Truncate(path, int64(len(data)/3)); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []chrometrace.Options{
		{Data: m.data},
		{Data: m.data, Workers: 1},
		{Data: m.data, Workers: 3, BlockSize: 64 << 10},
		{Data: m.data, NoChunks: true, Workers: 2, BlockSize: 64 << 10},
		{Data: m.data, NoChunks: true, Workers: 1},
	} {
		tr, err := chrometrace.Parse(nil, opt)
		if !errors.Is(err, chrometrace.ErrChanged) {
			t.Errorf("workers %d, chunks %v: got %v (trace %v), want ErrChanged", opt.Workers, !opt.NoChunks, err, tr != nil)
		}
	}
}

// TestMappedFile: a plain JSON file is read in place, and gives the trace
// read from a stream; progress counts the whole file.
func TestMappedFile(t *testing.T) {
	data := kernels(20000)
	path := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int64 // told from the decoders' goroutines
	got, err := File(path, Options{Progress: func(size int64) func(int64) {
		if size != int64(len(data)) {
			t.Errorf("progress told of size %d, want %d", size, len(data))
		}
		return func(n int64) { seen.Add(n) }
	}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := Read("stream", struct{ *os.File }{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mapped file and stream give different traces: %d and %d activities", len(got.Activities), len(want.Activities))
	}
	if n := seen.Load(); n < int64(len(data)) {
		t.Errorf("progress counted %d of %d bytes", n, len(data))
	}
}
