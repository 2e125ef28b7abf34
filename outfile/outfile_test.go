package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
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
	if err := WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("got %q mode %v, want \"new\" mode 0600", b, st.Mode().Perm())
	}
	q := filepath.Join(dir, "fresh.txt")
	if err := WriteFile(q, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(q); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}
	if got := entries(t, dir); len(got) != 2 {
		t.Errorf("directory holds %v, want the two files only", got)
	}
}

func TestDeviceWrittenDirectly(t *testing.T) {
	if err := WriteFile(os.DevNull, []byte("x")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(os.DevNull)
	if err != nil || st.Mode().IsRegular() {
		t.Fatalf("%s replaced by a regular file", os.DevNull)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Temp(dir, "x-*")
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if Temps() != 2 {
		t.Fatalf("tracking %d, want 2", Temps())
	}
	RemoveTemps()
	if got := entries(t, dir); len(got) != 0 {
		t.Errorf("left %v", got)
	}
	f.Abort() // after the handler ran: harmless
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

func TestMkdirNew(t *testing.T) {
	base := t.TempDir()
	d := filepath.Join(base, "a", "b")
	created, err := MkdirNew(d)
	if err != nil || !created {
		t.Fatalf("MkdirNew = %v, %v", created, err)
	}
	os.WriteFile(filepath.Join(d, "x"), []byte("x"), 0o644)
	if again, _ := MkdirNew(d); again {
		t.Error("an existing directory reported as created")
	}
	RemoveTemps()
	if _, err := os.Stat(filepath.Join(base, "a")); !os.IsNotExist(err) {
		t.Errorf("created directories still there: %v", err)
	}
	d2 := filepath.Join(base, "kept")
	MkdirNew(d2)
	Keep(d2)
	RemoveTemps()
	RemoveDir(d2)
	if _, err := os.Stat(d2); err != nil {
		t.Errorf("kept directory removed: %v", err)
	}
}
