package main

import (
	"os"
	"strings"
	"testing"
)

// TestDoubleDash: "--" ends the flags of every command; it is not an
// input, and what follows it is read as input names even when it starts
// with '-' (issue 19 item 18).
func TestDoubleDash(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, dir, "-x.json")
	writeTrace(t, dir, "-y.json")
	chdir(t, dir)
	for _, args := range [][]string{
		{"kernels", "./-x.json", "--", "-y.json"},
		{"kernels", "--format", "csv", "--", "-x.json", "-y.json"},
		{"kernels", "--", "-x.json"},
		{"breakdown", "./-x.json", "--", "--format"},
	} {
		code, _, stderr := runCLI(args...)
		want := 0
		if args[len(args)-1] == "--format" {
			want = exitInput // a file named --format, which does not exist
		}
		if code != want || strings.Contains(stderr, "traceq: --:") {
			t.Errorf("%v: exit %d, %q; want %d and no file named --", args, code, stderr, want)
		}
		if want != 0 && !strings.Contains(stderr, "--format: no such file") {
			t.Errorf("%v: %q; want the missing file --format named", args, stderr)
		}
	}
}

// chdir changes the working directory for the test.
func chdir(t *testing.T, dir string) {
	t.Helper()
	old, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(old) })
}
