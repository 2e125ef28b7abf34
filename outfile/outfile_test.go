package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func writeFile(path string, data []byte) error {
	return WriteWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func TestFailedWriteKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteWith(p, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap boom", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("content %q, want the old file untouched", b)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v, want out.txt only", got)
	}
	if Temps() != 0 {
		t.Errorf("%d temporary files still tracked", Temps())
	}
}

func TestCommitReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("got %q mode %v, want \"new\" mode 0600", b, st.Mode().Perm())
	}
	q := filepath.Join(dir, "fresh.txt")
	if err := writeFile(q, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(q); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}
	if got := entries(t, dir); len(got) != 2 {
		t.Errorf("directory holds %v, want the two files only", got)
	}
}

// TestWriteFollowsSymlink: an output named by a symlink replaces the file
// the link points at (made when it does not exist); the link stays.
func TestWriteFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	for _, tc := range []struct{ link, target string }{
		{"l1", "real/a.svg"}, // exists
		{"l2", "real/b.svg"}, // does not exist yet
	} {
		link := filepath.Join(dir, tc.link)
		if tc.link == "l1" {
			os.WriteFile(filepath.Join(dir, tc.target), []byte("old"), 0o644)
		}
		if err := os.Symlink(tc.target, link); err != nil {
			t.Skip(err)
		}
		if err := writeFile(link, []byte("new")); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: the link was replaced", tc.link)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, tc.target)); string(b) != "new" {
			t.Errorf("%s: target holds %q", tc.target, b)
		}
	}
}

func TestDeviceWrittenDirectly(t *testing.T) {
	if err := writeFile(os.DevNull, []byte("x")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(os.DevNull)
	if err != nil || st.Mode().IsRegular() {
		t.Fatalf("%s replaced by a regular file", os.DevNull)
	}
}

// TestErrorsNameTarget: creating, writing and committing errors name the
// file asked for, not its temporary name (issue 19 item 16).
func TestErrorsNameTarget(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "missing", "x.svg")
	err := writeFile(p, []byte("x"))
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != p || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("create in a missing directory: %v, want an error naming %s", err, p)
	}
	q := filepath.Join(dir, "y.svg")
	err = WriteWith(q, func(w io.Writer) error {
		w.(*file).f.Close() // any write now fails
		_, err := w.Write([]byte("data"))
		return err
	})
	if !errors.As(err, &pe) || pe.Path != q || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("write: %v, want an error naming %s", err, q)
	}
	if got := entries(t, dir); len(got) != 0 {
		t.Errorf("left %v", got)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	var g Group
	if err := g.MkdirAll(filepath.Join(dir, "made", "deeper")); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Create(filepath.Join(dir, "made", "deeper", "a")); err != nil {
		t.Fatal(err)
	}
	f, err := Temp(dir, "x-*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	tr, err := NewTree(filepath.Join(dir, "ds"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Create("t/p=1/f"); err != nil {
		t.Fatal(err)
	}
	if Temps() != 3 {
		t.Fatalf("tracking %d, want 3", Temps())
	}
	removeAll() // what RemoveTemps does, without keeping commits out
	if got := entries(t, dir); len(got) != 0 {
		t.Errorf("left %v", got)
	}
	g.Abort() // after the handler ran: harmless
	tr.Abort()
}

// TestRemoveTempsWaitsForCommit: a signal during a commit waits for it to
// end, so that it leaves the new files or the old, never half of them.
func TestRemoveTempsWaitsForCommit(t *testing.T) {
	dir := t.TempDir()
	tr, err := NewTree(filepath.Join(dir, "ds"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"a/p=1/f", "b/p=1/f"} {
		w, _ := tr.Create(rel)
		w.Close()
	}
	var removed atomic.Bool
	done := make(chan bool)
	testHook = func(step string) error {
		if step == "leaf a/p=1" {
			go func() { RemoveTemps(); removed.Store(true); done <- true }()
			time.Sleep(50 * time.Millisecond) // time enough to remove everything, were it not waiting
			if removed.Load() {
				t.Error("RemoveTemps ran in the middle of the commit")
			}
		}
		return nil
	}
	defer func() { testHook = nil }()
	if err := tr.Commit(nil); err != nil {
		t.Fatal(err)
	}
	<-done
	commitMu.Unlock() // RemoveTemps keeps it: let the other tests commit
	want := []string{"a/p=1/f", "b/p=1/f"}
	if got := tree(t, filepath.Join(dir, "ds")); !slices.Equal(filesOf(got), want) {
		t.Errorf("after a signal during the commit: %v, want %v", got, want)
	}
}

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	os.WriteFile(a, []byte("x"), 0o644)
	l := filepath.Join(dir, "link")
	h := filepath.Join(dir, "hard")
	if err := os.Symlink(a, l); err != nil {
		t.Skip(err)
	}
	if err := os.Link(a, h); err != nil {
		t.Skip(err)
	}
	for _, p := range []string{a, l, h, filepath.Join(dir, ".", "a")} {
		if got, ok := SameFile(p, []string{"nope", a}); !ok || got != a {
			t.Errorf("SameFile(%s) = %q, %v; want %s", p, got, ok, a)
		}
	}
	if _, ok := SameFile(filepath.Join(dir, "new"), []string{a}); ok {
		t.Error("a missing path matched")
	}
}

func TestSameTarget(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "r"), 0o755)
	os.Symlink("r", filepath.Join(dir, "l"))
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"r/report.md", "l/report.md", true},
		{"r/report.md", "r/../r/report.md", true},
		{"r/report.md", "r/other.md", false},
	} {
		if got := SameTarget(filepath.Join(dir, tc.a), filepath.Join(dir, tc.b)); got != tc.want {
			t.Errorf("SameTarget(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

func TestClipName(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	got := ClipName(long)
	if len(got) > MaxName || len(got) < MaxName-1 || !strings.HasPrefix(long, got) || strings.ToValidUTF8(got, "?") != got {
		t.Errorf("ClipName: %d bytes %q", len(got), got)
	}
	if ClipName("short") != "short" {
		t.Error("a short name changed")
	}
}
