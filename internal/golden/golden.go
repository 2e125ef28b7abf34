// Package golden compares test output with files under testdata and
// rewrites them when tests run with -update.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// Diff returns a short line diff of want and got: the first differing
// lines with some context.
func Diff(want, got string) string {
	wl := strings.Split(want, "\n")
	gl := strings.Split(got, "\n")
	var sb strings.Builder
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < 20; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&sb, "line %d:\n- %s\n+ %s\n", i+1, w, g)
			shown++
		}
	}
	if len(wl) != len(gl) {
		fmt.Fprintf(&sb, "(want %d lines, got %d)\n", len(wl), len(gl))
	}
	return sb.String()
}
