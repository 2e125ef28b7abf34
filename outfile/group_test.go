package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// tree lists every path under dir, relative, sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func writeAll(t *testing.T, g *Group, paths ...string) {
	t.Helper()
	for _, p := range paths {
		w, err := g.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, filepath.Base(p))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGroupCommit(t *testing.T) {
	dir := t.TempDir()
	g := &Group{}
	defer g.Abort()
	writeAll(t, g, filepath.Join(dir, "a/x=1/p0"), filepath.Join(dir, "a/x=2/p0"))
	if got := tree(t, dir); len(got) != 5 { // a, a/x=1, a/x=2 and two temporary files
		t.Fatalf("before Commit: %v", got)
	}
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	g.Abort() // no effect after Commit
	want := []string{"a", "a/x=1", "a/x=1/p0", "a/x=2", "a/x=2/p0"}
	if got := tree(t, dir); !slices.Equal(got, want) {
		t.Errorf("after Commit: %v, want %v", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/x=2/p0")); string(b) != "p0" {
		t.Errorf("content %q", b)
	}
	if st, _ := os.Stat(filepath.Join(dir, "a/x=1/p0")); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if Temps() != 0 {
		t.Errorf("%d temporary files still tracked", Temps())
	}
}

// TestGroupAbort: a run that fails leaves the directory as it found it:
// no temporary file, no directory it made, earlier files untouched.
func TestGroupAbort(t *testing.T) {
	for _, tc := range []struct {
		name   string
		commit bool // Commit fails half way: the second target is a non-empty directory
	}{{"before commit", false}, {"failed commit", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			old := filepath.Join(dir, "a/x=0/p0")
			os.MkdirAll(filepath.Dir(old), 0o755)
			os.WriteFile(old, []byte("old"), 0o644)
			before := tree(t, dir)
			g := &Group{}
			writeAll(t, g, filepath.Join(dir, "a/x=1/p0"), filepath.Join(dir, "b/x=1/p0"))
			open, err := g.Create(filepath.Join(dir, "b/x=2/p0")) // never closed
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(open, "partial")
			if tc.commit {
				open.Close()
				os.MkdirAll(filepath.Join(dir, "b/x=1/p0/blocker"), 0o755)
				if err := g.Commit(); err == nil {
					t.Fatal("Commit onto a non-empty directory succeeded")
				}
				if _, err := os.Stat(filepath.Join(dir, "a/x=1/p0")); err != nil {
					t.Fatalf("the first file was not renamed before the failure: %v", err)
				}
				os.RemoveAll(filepath.Join(dir, "b/x=1/p0"))
			} else if err := g.Commit(); err == nil {
				t.Fatal("Commit with a file still open succeeded")
			}
			g.Abort()
			if got := tree(t, dir); !slices.Equal(got, before) {
				t.Errorf("after Abort: %v, want %v", got, before)
			}
			if Temps() != 0 {
				t.Errorf("%d temporary files still tracked", Temps())
			}
		})
	}
}

// TestGroupWriteErrorNamesTarget: a failed write names the file the
// caller asked for, not its temporary name.
func TestGroupWriteErrorNamesTarget(t *testing.T) {
	dir := t.TempDir()
	g := &Group{}
	defer g.Abort()
	p := filepath.Join(dir, "x/p0")
	w, err := g.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w.(*groupFile).file.Close() // any write now fails
	_, err = io.WriteString(w, "data")
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != p {
		t.Errorf("write error %v, want an *os.PathError naming %s", err, p)
	}
}
