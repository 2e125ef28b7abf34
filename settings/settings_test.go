package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFind checks the order flags, environment, nearest traceq.toml, and
// that each setting says where it came from.
func TestFind(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "traceq.toml"), "# the box\nlink = \"nccl/all_reduce.txt\"\nbytes_per_token = 14336\ngpu = \"H200\"\n")
	write(t, filepath.Join(root, "runs", "fix", "traceq.toml"), "link = 31.5 # measured\n")
	write(t, filepath.Join(root, "runs", "base", "traceq.toml"), "link = \"pcie4\"\n")
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	dir := filepath.Join(root, "runs", "fix")

	s, conflicts, err := Find(nil, getenv, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(conflicts) != 1 || !strings.Contains(conflicts[0], "link = nccl/all_reduce.txt") {
		t.Errorf("conflicts %q", conflicts)
	}
	l, _ := s.Get(Link)
	if l.Value != "31.5" || l.Source != FromFile || l.File != filepath.Join(dir, "traceq.toml") {
		t.Errorf("link %+v", l)
	}
	b, _ := s.Get(BytesPerToken)
	if b.Value != "14336" || b.File != filepath.Join(root, "traceq.toml") || b.From() != b.File {
		t.Errorf("bytes per token %+v", b)
	}
	if len(s.Files) < 2 || s.Files[0] != filepath.Join(dir, "traceq.toml") {
		t.Errorf("files %q", s.Files)
	}
	// A relative path in a file is relative to the file.
	s, _, err = Find(nil, getenv, []string{filepath.Join(root, "elsewhere")})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := s.Get(Link); l.Path() != filepath.Join(root, "nccl", "all_reduce.txt") {
		t.Errorf("path %q", l.Path())
	}
	// The environment before the files, the flags before both.
	env["TRACEQ_LINK"], env["TRACEQ_GPU"] = "nvlink4", " B200 "
	s, _, _ = Find(map[Name]string{GPU: "H100"}, getenv, []string{dir})
	if l, _ := s.Get(Link); l.Value != "nvlink4" || l.From() != "TRACEQ_LINK" {
		t.Errorf("env link %+v", l)
	}
	if g, _ := s.Get(GPU); g.Value != "H100" || g.From() != "--gpu" {
		t.Errorf("flag gpu %+v", g)
	}
	if got := len(s.List()); got != 3 {
		t.Errorf("%d settings listed", got)
	}
}

// TestFindBadFiles: a file that is not a settings file is an error naming
// it.
func TestFindBadFiles(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"link = \n", "line 1"},
		{"lnk = \"pcie4\"\n", `unknown key "lnk"`},
		{"bytes_per_token = \"14336\"\n", "want a whole number"},
		{"bytes_per_token = 1.5\n", "want a whole number"},
		{"gpu = 3\n", "GPU's name"},
		{"link = [1, 2]\n", "want a string or a number"},
	} {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "traceq.toml"), tc.text)
		_, _, err := Find(nil, func(string) string { return "" }, []string{dir})
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) || !strings.HasSuffix(fe.Path, "traceq.toml") {
			t.Errorf("%q: %v, want a FileError with %q", tc.text, err, tc.want)
		}
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "traceq.toml"), "lnk = 1\n")
	if _, _, err := Find(nil, func(string) string { return "" }, []string{dir}); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
}

func TestNames(t *testing.T) {
	if BytesPerToken.Flag() != "--bytes-per-token" || BytesPerToken.Env() != "TRACEQ_BYTES_PER_TOKEN" || Link.Env() != "TRACEQ_LINK" {
		t.Error(BytesPerToken.Flag(), BytesPerToken.Env())
	}
}
