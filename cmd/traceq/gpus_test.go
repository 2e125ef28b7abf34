package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/golden"
)

// TestGoldenGPUs pins the GPU table in every format.
func TestGoldenGPUs(t *testing.T) {
	for _, format := range []string{"text", "markdown", "csv", "json"} {
		t.Run(format, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"traceq", "gpus", "--format", format}, nil, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			golden.Check(t, filepath.Join("testdata", "gpus."+format+".golden"), out.Bytes())
		})
	}
}

// What gpus --spec prints, --gpu-spec reads back to the same table.
func TestGPUsSpecRoundTrip(t *testing.T) {
	var spec, errb bytes.Buffer
	if code := run([]string{"traceq", "gpus", "--spec"}, nil, &spec, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	p := filepath.Join(t.TempDir(), "gpus.txt")
	os.WriteFile(p, append([]byte("!replace\n"), spec.Bytes()...), 0o644)
	var a, b bytes.Buffer
	if code := run([]string{"traceq", "gpus", "--format", "json"}, nil, &a, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	if code := run([]string{"traceq", "gpus", "--format", "json", "--gpu-spec", p}, nil, &b, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("the table read back from --spec differs")
	}
}

func TestGPUsErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("gpu X\nsms 10\nmemory fast\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"traceq", "gpus", "--gpu-spec", filepath.Join(dir, "none.txt")}, 1, filepath.Join(dir, "none.txt") + ": no such file or directory"},
		{[]string{"traceq", "gpus", "--gpu-spec", bad}, 1, bad + `:3: memory: "fast": want a positive decimal number`},
		{[]string{"traceq", "gpus", "--format", "xml"}, 2, `unknown format "xml"`},
		{[]string{"traceq", "gpus", "extra"}, 2, "gpus takes no arguments"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, nil, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) || strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 {
			t.Errorf("%v: exit %d %q, want %d and %q on one line", c.args[1:], code, errb.String(), c.code, c.want)
		}
	}
}

// The GPU table in docs/efficiency.md, between <!-- gpus --> and
// <!-- /gpus -->, is what `traceq gpus --format markdown` prints (-update
// rewrites it).
func TestGPUsTableInDocs(t *testing.T) {
	const path = "../../docs/efficiency.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"traceq", "gpus", "--format", "markdown"}, nil, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	open, shut := []byte("<!-- gpus -->\n"), []byte("<!-- /gpus -->\n")
	i, j := bytes.Index(doc, open), bytes.Index(doc, shut)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q … %q section", path, open, shut)
	}
	got := append(append(append([]byte{}, doc[:i+len(open)]...), out.Bytes()...), doc[j:]...)
	if golden.Update() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(doc, got) {
		t.Errorf("%s: the GPU table differs from 'traceq gpus --format markdown' (run with -update):\n%s", path, golden.Diff(string(doc), string(got)))
	}
}
