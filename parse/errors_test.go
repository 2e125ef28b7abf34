package parse

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestDisplayName(t *testing.T) {
	tests := []struct{ path, want string }{
		{"rank0.json.gz", "rank0.json.gz"},
		{"runs/a b/rank 0.json", "runs/a b/rank 0.json"},
		{"ü/données.json", "ü/données.json"},
		{"-", "standard input"},
		{"./-", "./-"},
		{"a\nb.json", `"a\nb.json"`},
		{"a\rb", `"a\rb"`},
		{"\x1b[31mred.json", `"\x1b[31mred.json"`},
		{" lead.json", `" lead.json"`},
		{"trail.json ", `"trail.json "`},
		{"tab\t.json", `"tab\t.json"`},
		{"bad\xff.json", `"bad\xff.json"`},
		{"nb\u00a0sp", `"nb\u00a0sp"`},
		{"", `""`},
	}
	for _, tc := range tests {
		if got := DisplayName(tc.path); got != tc.want {
			t.Errorf("DisplayName(%q) = %s, want %s", tc.path, got, tc.want)
		}
	}
}

// TestFileErrorOnce: wrapping an error twice with the same path names the
// file once; os's own copy of the path is dropped, its cause kept.
func TestFileErrorOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	_, err := File(missing, Options{})
	if want := missing + ": no such file or directory"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(%v, fs.ErrNotExist) = false", err)
	}
	if again := fileError(missing, err); again != err {
		t.Errorf("wrapped again: %v", again)
	}
	other := fileError("other.json", err)
	if want := "other.json: " + err.Error(); other.Error() != want {
		t.Errorf("another path: %q, want %q", other, want)
	}
}

// TestFileErrorQuotesOddNames: a file name with a newline keeps the error
// on one line.
func TestFileErrorQuotesOddNames(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "two\nlines.json")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Skip(err)
	}
	_, err := File(p, Options{})
	want := `"` + dir + `/two\nlines.json": not a trace: neither JSON, gzip nor SQLite (starts with "hello")`
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
}
