// Package golden compares test output with files under testdata and
// rewrites them when tests run with -update.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Update reports whether -update was given.
func Update() bool { return *update }

// Check compares got with the file at path; with -update it writes got
// there instead.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: output differs from golden file (run with -update to accept):\n%s", path, Diff(string(want), string(got)))
	}
}

// Diff returns a unified diff of want and got (an anchored diff, the
// algorithm of Go's own internal/diff): one inserted line shows as one
// line, not as every line after it differing.
func Diff(want, got string) string {
	return string(diff.Diff("want", []byte(want), "got", []byte(got)))
}
