package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// tree lists every path under dir, relative, sorted; a directory ends in
// "/".
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				rel += "/"
			}
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// filesOf keeps the files of a tree listing.
func filesOf(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !strings.HasSuffix(p, "/") {
			out = append(out, p)
		}
	}
	return out
}

// state is every path under dir with its content and inode (a file put
// back must be the same file, with its links).
func state(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range tree(t, dir) {
		full := filepath.Join(dir, p)
		st, err := os.Lstat(full)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case st.IsDir():
			out[p] = "dir"
		case st.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(full)
			out[p] = "-> " + l
		default:
			b, _ := os.ReadFile(full)
			out[p] = fmt.Sprintf("%q %v %v", b, st.Mode().Perm(), inode(st))
		}
	}
	return out
}

func sameState(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: %s is %s, was %s", what, p, got[p], w)
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: new %s (%s)", what, p, g)
		}
	}
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
	for _, d := range []string{"a/x=1", "a/x=2"} {
		if err := g.MkdirAll(filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	writeAll(t, g, filepath.Join(dir, "a/x=1/p0"), filepath.Join(dir, "a/x=2/p0"))
	if got := tree(t, dir); len(got) != 5 { // a, a/x=1, a/x=2 and two temporary files
		t.Fatalf("before Commit: %v", got)
	}
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	g.Abort() // no effect after Commit
	want := []string{"a/", "a/x=1/", "a/x=1/p0", "a/x=2/", "a/x=2/p0"}
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

// TestGroupFailedCommitKeepsOld: a commit that fails half way (the second
// target became a non-empty directory, which no rename replaces, root or
// not) puts back the file it had already replaced: the directory is as it
// was (issue 19 item 1, for a report and its charts).
func TestGroupFailedCommitKeepsOld(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.md"), filepath.Join(dir, "b.svg")
	os.WriteFile(a, []byte("old a"), 0o600)
	os.WriteFile(b, []byte("old b"), 0o644)
	g := &Group{}
	writeAll(t, g, a, b)
	os.Remove(b)
	os.MkdirAll(filepath.Join(b, "blocker"), 0o755)
	before := state(t, dir)
	if err := g.Commit(); err == nil {
		t.Fatal("Commit onto a non-empty directory succeeded")
	}
	g.Abort()
	for p := range before {
		if strings.HasPrefix(p, ".") {
			delete(before, p) // the temporary files
		}
	}
	sameState(t, "after the failed commit", state(t, dir), before)
	if Temps() != 0 {
		t.Errorf("%d temporary files still tracked", Temps())
	}
}

// TestGroupFailureAtEachStep: a commit failing at any of its steps (an
// injected failure: it binds root as well) leaves every file as it was,
// the same files (content, mode, inode), a log cut back to what it held,
// and no debris.
func TestGroupFailureAtEachStep(t *testing.T) {
	steps := []string{"rename a.md", "rename b.svg", "rename c.svg", "append log.md", "appended log.md", "append new.md", "appended new.md"}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "a.md"), []byte("old a"), 0o600)
			os.WriteFile(filepath.Join(dir, "b.svg"), []byte("old b"), 0o644)
			os.Link(filepath.Join(dir, "b.svg"), filepath.Join(dir, "b-link.svg"))
			os.WriteFile(filepath.Join(dir, "log.md"), []byte("# log\n"), 0o640)
			before := state(t, dir)
			testHook = func(s string) error {
				if s == strings.Fields(step)[0]+" "+filepath.Join(dir, strings.Fields(step)[1]) {
					return errors.New("injected")
				}
				return nil
			}
			defer func() { testHook = nil }()
			g := &Group{}
			writeAll(t, g, filepath.Join(dir, "a.md"), filepath.Join(dir, "b.svg"), filepath.Join(dir, "c.svg"))
			g.Append(filepath.Join(dir, "log.md"), func([]byte) []byte { return []byte("\n## new\n") })
			g.Append(filepath.Join(dir, "new.md"), func([]byte) []byte { return []byte("## new\n") })
			err := g.Commit()
			g.Abort()
			if err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("Commit = %v, want the injected failure", err)
			}
			sameState(t, "after a failure at "+step, state(t, dir), before)
			if Temps() != 0 {
				t.Errorf("%d temporary files still tracked", Temps())
			}
		})
	}
}

// TestGroupAbort: a run that fails before its commit leaves the directory
// as it found it: no temporary file, no directory it made.
func TestGroupAbort(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "a/x=0/p0")
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte("old"), 0o644)
	before := tree(t, dir)
	g := &Group{}
	for _, d := range []string{"a/x=1", "b/x=1", "b/x=2"} {
		if err := g.MkdirAll(filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	writeAll(t, g, filepath.Join(dir, "a/x=1/p0"), filepath.Join(dir, "b/x=1/p0"), filepath.Join(dir, "a/x=0/p0"))
	open, err := g.Create(filepath.Join(dir, "b/x=2/p0")) // never closed
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(open, "partial")
	if err := g.Commit(); err == nil {
		t.Fatal("Commit with a file still open succeeded")
	}
	g.Abort()
	if got := tree(t, dir); !slices.Equal(got, before) {
		t.Errorf("after Abort: %v, want %v", got, before)
	}
	if b, _ := os.ReadFile(old); string(b) != "old" {
		t.Errorf("old file holds %q", b)
	}
	if Temps() != 0 {
		t.Errorf("%d temporary files still tracked", Temps())
	}
}

// TestGroupWriteErrorNamesTarget: a failed write names the file the
// caller asked for, not its temporary name.
func TestGroupWriteErrorNamesTarget(t *testing.T) {
	dir := t.TempDir()
	g := &Group{}
	defer g.Abort()
	p := filepath.Join(dir, "p0")
	w, err := g.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w.(*file).f.Close() // any write now fails
	_, err = io.WriteString(w, "data")
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != p {
		t.Errorf("write error %v, want an *os.PathError naming %s", err, p)
	}
}

// TestGroupMkdirFollowsLinks: a directory named through a symlink to
// nothing (-o LINK, or -o LINK/sub) is made where the link points; a
// failed run removes what it made, never the link (issue 19 item 2).
func TestGroupMkdirFollowsLinks(t *testing.T) {
	for _, sub := range []string{"", "sub"} {
		dir := t.TempDir()
		link := filepath.Join(dir, "link")
		if err := os.Symlink("real/out", link); err != nil {
			t.Skip(err)
		}
		out := filepath.Join(link, sub)
		g := &Group{}
		if err := g.MkdirAll(out); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(filepath.Join(dir, "real", "out", sub)); err != nil || !st.IsDir() {
			t.Errorf("%s: the link's target was not made: %v", out, err)
		}
		writeAll(t, g, filepath.Join(out, "x"))
		g.Abort()
		if got := tree(t, dir); !slices.Equal(got, []string{"link"}) {
			t.Errorf("%s: after Abort: %v, want the link alone", out, got)
		}
		g = &Group{}
		g.MkdirAll(out)
		writeAll(t, g, filepath.Join(out, "x"))
		if err := g.Commit(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "real", "out", sub, "x")); string(b) != "x" {
			t.Errorf("%s: committed through the link: %q", out, b)
		}
		if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s: the link was replaced", out)
		}
	}
}

// TestGroupMkdirNew: fresh directories get -2, -3…; a name too long for
// the file system is clipped; an error other than "exists" stops at once
// (issue 19 item 7).
func TestGroupMkdirNew(t *testing.T) {
	dir := t.TempDir()
	var g Group
	var got []string
	for range 3 {
		d, err := g.MkdirNew(filepath.Join(dir, "run"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(d))
	}
	if want := []string{"run", "run-2", "run-3"}; !slices.Equal(got, want) {
		t.Errorf("MkdirNew gave %v, want %v", got, want)
	}
	long := strings.Repeat("x", 300)
	d, err := g.MkdirNew(filepath.Join(dir, long))
	if err != nil || filepath.Base(d) != long[:MaxName] {
		t.Errorf("MkdirNew(300 x) = %q, %v; want the name clipped to %d", filepath.Base(d), err, MaxName)
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	if _, err := g.MkdirNew(filepath.Join(dir, "file", "run")); err == nil {
		t.Error("MkdirNew under a file succeeded")
	}
	g.Abort()
	if got := tree(t, dir); !slices.Equal(got, []string{"file"}) {
		t.Errorf("after Abort: %v", got)
	}
}

// TestGroupAppend: an append adds to the end of the file in place: the
// tail it is given, the mode, the inode and the links stay; a symlink is
// followed; a missing file is made.
func TestGroupAppend(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log.md")
	os.WriteFile(log, []byte("# log\nno newline"), 0o600)
	hard := filepath.Join(dir, "hard.md")
	os.Link(log, hard)
	sym := filepath.Join(dir, "sym.md")
	os.Symlink("log.md", sym)
	before, _ := os.Stat(log)
	var tails []string
	for _, p := range []string{log, sym, hard, filepath.Join(dir, "new.md")} {
		var g Group
		g.Append(p, func(tail []byte) []byte {
			tails = append(tails, string(tail))
			return []byte("\n+")
		})
		if err := g.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"ne", "\n+", "\n+", ""}; !slices.Equal(tails, want) {
		t.Errorf("tails %q, want %q", tails, want)
	}
	b, _ := os.ReadFile(hard)
	if string(b) != "# log\nno newline\n+\n+\n+" {
		t.Errorf("log holds %q", b)
	}
	after, _ := os.Stat(log)
	if !os.SameFile(before, after) || after.Mode().Perm() != 0o600 {
		t.Errorf("the log was replaced or its mode changed (%v)", after.Mode())
	}
	if st, _ := os.Lstat(sym); st.Mode()&fs.ModeSymlink == 0 {
		t.Error("the symlink was replaced")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new.md")); string(b) != "\n+" {
		t.Errorf("new file holds %q", b)
	}
}

// TestGroupAppendConcurrent: 20 groups appending to one file at once
// (each reading the tail, as a report does) keep 20 whole records.
func TestGroupAppendConcurrent(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log.md")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var g Group
			g.Append(log, func(tail []byte) []byte {
				sep := ""
				if len(tail) > 0 && tail[len(tail)-1] != '\n' {
					sep = "\n"
				}
				return []byte(fmt.Sprintf("%s%02d %s\n", sep, i, strings.Repeat("x", 4000)))
			})
			if err := g.Commit(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d records, want 20", len(lines))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if len(l) != 4003 || seen[l[:2]] {
			t.Errorf("record %.10q… of %d bytes", l, len(l))
		}
		seen[l[:2]] = true
	}
}

// TestGroupAppendIsAFile: a file the group writes whole cannot also be
// appended to.
func TestGroupAppendIsAFile(t *testing.T) {
	dir := t.TempDir()
	var g Group
	defer g.Abort()
	writeAll(t, &g, filepath.Join(dir, "r.md"))
	g.Append(filepath.Join(dir, ".", "r.md"), func([]byte) []byte { return nil })
	if err := g.Commit(); err == nil {
		t.Error("appending to a file of the group succeeded")
	}
}
