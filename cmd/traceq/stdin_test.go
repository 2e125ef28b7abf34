package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdinExportAndSlice: "-" reads standard input in export (with
// --run: standard input has no directory to name the run after) and in
// slice, which spools it to a temporary file it removes (issue 19 item
// 19).
func TestStdinExportAndSlice(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(tmp, "tmp"))
	os.Mkdir(filepath.Join(tmp, "tmp"), 0o755)
	b, err := os.ReadFile(filepath.Join(dlrm8, "rank0.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	ds := filepath.Join(tmp, "ds")
	var out, errb bytes.Buffer
	code := run([]string{"traceq", "export", "-o", ds, "--run", "piped", "-"}, bytes.NewReader(b), &out, &errb)
	if code != 0 {
		t.Fatalf("export -: exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(ds, "activities", "run=piped", "rank=0", "part-0.parquet")); err != nil {
		t.Error(err)
	}
	errb.Reset()
	if code := run([]string{"traceq", "export", "-o", filepath.Join(tmp, "ds2"), "-"}, bytes.NewReader(b), &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--run") {
		t.Errorf("export - without --run: exit %d, %q; want exit 2 asking for --run", code, errb.String())
	}

	// slice - gives what slice FILE gives.
	file := filepath.Join(tmp, "rank0.json.gz")
	os.WriteFile(file, b, 0o644)
	for _, sel := range [][]string{{"--time", "0:2ms"}, {"--steps", "0"}} {
		fromFile, fromStdin := filepath.Join(tmp, "f.json"), filepath.Join(tmp, "s.json")
		if code, _, stderr := runCLI(append([]string{"slice", "-o", fromFile}, append(sel, file)...)...); code != 0 {
			t.Fatalf("slice %v FILE: exit %d: %s", sel, code, stderr)
		}
		errb.Reset()
		out.Reset()
		if code := run(append([]string{"traceq", "slice", "-o", fromStdin}, append(sel, "-")...), bytes.NewReader(b), &out, &errb); code != 0 {
			t.Fatalf("slice %v -: exit %d: %s", sel, code, errb.String())
		}
		want, _ := os.ReadFile(fromFile)
		got, _ := os.ReadFile(fromStdin)
		if len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("slice %v -: %d bytes, slice FILE %d bytes: not the same", sel, len(got), len(want))
		}
		if es, _ := os.ReadDir(filepath.Join(tmp, "tmp")); len(es) != 0 {
			t.Errorf("slice - left %s in TMPDIR", es[0].Name())
		}
	}
	// A failure after the spool removes it too.
	errb.Reset()
	if code := run([]string{"traceq", "slice", "-o", filepath.Join(tmp, "x.json"), "--steps", "99", "-"}, bytes.NewReader(b), &out, &errb); code == 0 {
		t.Error("slice --steps 99 of a one-step trace succeeded")
	}
	if es, _ := os.ReadDir(filepath.Join(tmp, "tmp")); len(es) != 0 {
		t.Errorf("a failed slice - left %s in TMPDIR", es[0].Name())
	}
}

// TestSliceDirectory: slice takes one file; given a directory it says so
// and names the rank files there (issue 19 item 20).
func TestSliceDirectory(t *testing.T) {
	code, _, stderr := runCLI("slice", "--time", "0:1ms", "-o", filepath.Join(t.TempDir(), "x.json"), dlrm8)
	if code != exitUsage || !strings.Contains(stderr, "slice takes one trace file") ||
		!strings.Contains(stderr, "rank0.json.gz") || !strings.Contains(stderr, "rank7.json.gz") {
		t.Errorf("slice DIR: exit %d, %q; want exit 2 naming the rank files", code, stderr)
	}
	if strings.Count(stderr, "\n") != 1 {
		t.Errorf("want one line, got %q", stderr)
	}
}
