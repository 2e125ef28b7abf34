package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const (
	sglangGz    = torchDir + "/sglang_decode.json.gz"
	smallExport = "../../testdata/traces/nsys/nsys2022.1.3_dlprof-rtx2070-cudnn.sqlite"
)

// runStdin runs traceq in process with stdin.
func runStdin(stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(append([]string{"traceq"}, args...), stdin, &out, &errb)
	return code, out.String(), errb.String()
}

// copyFile copies src to dir/name.
func copyFile(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDirectorySkipsNonTraces: a rank directory that also holds a
// non-trace file (truth.json, TraceLens's execution_details.json, a
// README, a FIFO) is read, each skipped file named in one stderr line;
// the same file named explicitly is an error.
func TestDirectorySkipsNonTraces(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, sglangGz, dir, "rank0.json.gz")
	truth := filepath.Join(dir, "truth.json")
	os.WriteFile(truth, []byte(`{"decode_ms": 12.5}`), 0o644)
	os.WriteFile(filepath.Join(dir, "execution_details.json"), []byte(`[{"file": "rank0.json.gz", "batch_size": 32, "mode": "FULL"}]`), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("runs\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "live.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("kernels", "--format", "csv", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, want, _ := runCLI("kernels", "--format", "csv", sglangGz)
	if out != want {
		t.Errorf("output differs from the trace's alone:\n%s\nwant:\n%s", out, want)
	}
	wantErr := "traceq: " + dir + "/README: skipped: not a trace (named neither *.json, *.json.gz, *.sqlite nor *.sqlite.gz)\n" +
		"traceq: " + dir + "/execution_details.json: skipped: not a trace (a JSON array without events (objects with a ph))\n" +
		"traceq: " + dir + "/live.json: skipped: not a regular file (a FIFO)\n" +
		"traceq: " + dir + "/truth.json: skipped: not a trace (a JSON object without traceEvents)\n"
	if errs != wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", errs, wantErr)
	}
	code, _, errs = runCLI("kernels", truth)
	if code != 1 || errs != "traceq: "+truth+": not a Chrome trace: no traceEvents array\n" {
		t.Errorf("explicit truth.json: exit %d, stderr %q", code, errs)
	}
}

// TestSameFileTwice: a file given twice (directly, through its
// directory, through a link) is read once, with a warning naming both.
func TestSameFileTwice(t *testing.T) {
	dir := t.TempDir()
	p := copyFile(t, sglangGz, dir, "rank0.json.gz")
	link := filepath.Join(t.TempDir(), "link.json.gz")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	_, want, _ := runCLI("kernels", "--format", "csv", p)
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{p, p}, "traceq: warning: " + p + " is given twice: read once\n"},
		{[]string{p, dir}, "traceq: warning: " + p + " is given twice: read once\n"},
		{[]string{dir, link}, "traceq: warning: " + link + " is the same file as " + p + ": read once\n"},
		{[]string{dir, dir + "/"}, "traceq: warning: " + dir + "/ is the same file as " + dir + ": read once\n"},
	}
	for _, tc := range tests {
		code, out, errs := runCLI(append([]string{"kernels", "--format", "csv"}, tc.args...)...)
		if code != 0 || out != want {
			t.Errorf("%v: exit %d, output:\n%s\nwant (the file once):\n%s", tc.args, code, out, want)
		}
		if errs != tc.wantErr {
			t.Errorf("%v: stderr %q\nwant %q", tc.args, errs, tc.wantErr)
		}
	}
}

// TestEveryUnreadableReported: each input that cannot be read gets its
// own line, then exit 1.
func TestEveryUnreadableReported(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, sglangGz, dir, "rank0.json.gz")
	os.Symlink("gone.json.gz", filepath.Join(dir, "rank1.json.gz"))
	missing := filepath.Join(t.TempDir(), "missing.json")
	code, out, errs := runCLI("kernels", missing, dir, sglangGz)
	want := "traceq: " + missing + ": no such file or directory\n" +
		"traceq: " + dir + "/rank1.json.gz: no such file or directory\n"
	if code != 1 || out != "" || errs != want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and:\n%s", code, out, errs, want)
	}
}

// TestStdin: "-" reads standard input, a Chrome trace or an nsys export
// (copied to a temporary file, removed after).
func TestStdin(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, p := range []string{sglangGz, smallExport} {
		_, want, _ := runCLI("kernels", "--format", "csv", p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		code, out, errs := runStdin(bytes.NewReader(b), "kernels", "--format", "csv", "-")
		if code != 0 || out != want {
			t.Errorf("%s on stdin: exit %d (%s), output:\n%s\nwant:\n%s", p, code, errs, out, want)
		}
	}
	code, _, errs := runStdin(strings.NewReader("hello"), "kernels", "-")
	if code != 1 || errs != "traceq: standard input: not a trace: neither JSON, gzip nor SQLite (starts with \"hello\")\n" {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if es, _ := os.ReadDir(tmp); len(es) != 0 {
		t.Errorf("left %d files in TMPDIR", len(es))
	}
}

// TestFIFOInput: a FIFO named as input is read (the input is opened
// once); gzip on a FIFO used to hang.
func TestFIFOInput(t *testing.T) {
	for _, p := range []string{sglangGz, smallExport} {
		_, want, _ := runCLI("kernels", "--format", "csv", p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fifo := filepath.Join(t.TempDir(), "in")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		go func() {
			if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				w.Write(b)
				w.Close()
			}
		}()
		code, out, errs := runCLI("kernels", "--format", "csv", fifo)
		if code != 0 || out != want {
			t.Errorf("%s through a FIFO: exit %d (%s), output:\n%s\nwant:\n%s", p, code, errs, out, want)
		}
	}
}

// TestOddFileNameQuoted: a file name with a newline keeps the error on
// one line.
func TestOddFileNameQuoted(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a\nb.json")
	os.WriteFile(p, []byte("hello"), 0o644)
	code, _, errs := runCLI("kernels", p)
	want := "traceq: \"" + dir + "/a\\nb.json\": not a trace: neither JSON, gzip nor SQLite (starts with \"hello\")\n"
	if code != 1 || errs != want {
		t.Errorf("exit %d, stderr %q\nwant %q", code, errs, want)
	}
}
