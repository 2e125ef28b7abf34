package parse

import (
	"bytes"
	"errors"
	"fmt"
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

// TestLaunchesOnly: a trace whose launch calls ran no GPU work in it (a
// CUDA-graph capture trace) is refused with ErrNoGPU and one line naming
// the file, unless the caller asks for launch-only traces; one with
// neither launches nor GPU work is refused either way.
func TestLaunchesOnly(t *testing.T) {
	dir := t.TempDir()
	launches := filepath.Join(dir, "capture.json")
	none := filepath.Join(dir, "cpu.json")
	for p, body := range map[string]string{
		launches: `{"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 9, "tid": 1, "ts": 100, "dur": 50, "args": {"External id": 1, "Input Dims": [[32, 64], [64, 128]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
{"ph": "X", "cat": "cuda_runtime", "name": "hipExtModuleLaunchKernel", "pid": 9, "tid": 1, "ts": 110, "dur": 5, "args": {"External id": 1, "kernel": "Cijk_gemm", "correlation": 7, "grid": [2048, 1, 1], "block": [256, 1, 1], "shared memory": 0}},
{"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 9, "tid": 1, "ts": 120, "dur": 5, "args": {"kernel": "rope", "correlation": 8, "grid": [4, 1, 1], "block": [64, 1, 1], "shared memory": 0}}]}`,
		none: `{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 9, "tid": 1, "ts": 100, "dur": 50, "args": {}}]}`,
	} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{launches, none} {
		_, err := File(p, Options{})
		if !errors.Is(err, ErrNoGPU) || !strings.HasPrefix(err.Error(), p+": no GPU activity") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want the one-line ErrNoGPU", filepath.Base(p), err)
		}
	}
	if _, err := File(none, Options{LaunchesOnly: true}); !errors.Is(err, ErrNoGPU) {
		t.Errorf("no launches, LaunchesOnly: %v, want ErrNoGPU", err)
	}
	tr, err := File(launches, Options{LaunchesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range tr.Launches {
		at := tr.AttrOf(l.Attr)
		s := fmt.Sprintf("%s %s %v", tr.Name(l.Name), tr.Name(at.Kernel), tr.ConfigOf(at.Config).Grid)
		if op := tr.OpOf(at.Op); op != nil {
			s += " " + tr.Name(tr.SigOf(op.Sig).Name)
		}
		got = append(got, s)
	}
	want := []string{"hipExtModuleLaunchKernel Cijk_gemm [8 1 1] aten::mm", "hipLaunchKernel rope [4 1 1] aten::mm"}
	if len(tr.Activities) != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("%d activities, launches %q; want 0, %q", len(tr.Activities), got, want)
	}
}
