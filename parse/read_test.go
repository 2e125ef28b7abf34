package parse

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/traceq/traceq/trace"
)

// readAll reads a test input file.
func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameTrace(t *testing.T, got, want *trace.Trace) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("model differs from the file's: %d activities, %d names; want %d, %d",
			len(got.Activities), len(got.Names), len(want.Activities), len(want.Names))
	}
}

// TestReadStream: a trace read from a stream (standard input, a pipe)
// gives the model its file gives, for every format; an nsys export is
// copied to a temporary file that is removed afterwards.
func TestReadStream(t *testing.T) {
	emptyTempDir(t)
	dir := t.TempDir()
	files := []string{
		torchDir + "sglang_decode.json.gz",
		torchDir + "dlrm_rank0_plain.json",
		smallExport,
		gzipFile(t, dir, "export.sqlite.gz", readAll(t, smallExport)),
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			want, err := File(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// A plain io.Reader: no Stat, no ReadAt, no path.
			got, err := Read(Stdin, struct{ io.Reader }{bytes.NewReader(readAll(t, p))}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sameTrace(t, got, want)
		})
	}
}

// TestReadErrorsName: Read names its input in errors, standard input in
// words.
func TestReadErrorsName(t *testing.T) {
	_, err := Read(Stdin, strings.NewReader("hello world"), Options{})
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != Stdin {
		t.Fatalf("error %v (%T): want a *FileError for %q", err, err, Stdin)
	}
	if want := `standard input: not a trace: neither JSON, gzip nor SQLite (starts with "hello wo")`; err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	_, err = Read("pipe", strings.NewReader(""), Options{})
	if err == nil || err.Error() != "pipe: empty file" {
		t.Errorf("error %v, want %q", err, "pipe: empty file")
	}
}
