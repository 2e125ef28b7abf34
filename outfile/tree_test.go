package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stage writes files (slash paths, content their base name) into a new
// tree for root.
func stage(t *testing.T, root string, rels ...string) *Tree {
	t.Helper()
	tr, err := NewTree(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range rels {
		w, err := tr.Create(rel)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, "new "+rel)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// put writes old files under root.
func put(t *testing.T, root string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("old "+rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func content(t *testing.T, root, rel string) string {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func never(dir string) (bool, error) { return false, errors.New("existing called for " + dir) }

func TestTreeCommitNew(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ds")
	tr := stage(t, root, "a/run=r/rank=0/p0", "a/run=r/rank=1/p0", "b/run=r/rank=0/p0")
	defer tr.Abort()
	if got := filesOf(tree(t, root)); len(got) != 3 || !strings.HasPrefix(got[0], StagePrefix) {
		t.Fatalf("before Commit: %v, want three staged files", got)
	}
	if err := tr.Commit(never); err != nil {
		t.Fatal(err)
	}
	want := []string{"a/run=r/rank=0/p0", "a/run=r/rank=1/p0", "b/run=r/rank=0/p0"}
	if got := filesOf(tree(t, root)); !slices.Equal(got, want) {
		t.Errorf("after Commit: %v, want %v", got, want)
	}
	if c := content(t, root, "a/run=r/rank=1/p0"); c != "new a/run=r/rank=1/p0" {
		t.Errorf("content %q", c)
	}
	if Temps() != 0 {
		t.Errorf("%d still tracked", Temps())
	}
}

// TestTreeCommitMerges: a run, a rank that exist keep what they hold;
// existing decides for a leaf that exists: replace it whole, or add
// beside, never over a file.
func TestTreeCommitMerges(t *testing.T) {
	root := t.TempDir()
	put(t, root, "a/run=r/rank=1/p0", "a/run=r/rank=2/p0", "a/run=r/rank=2/p1", "a/run=r/rank=3/notes")
	tr := stage(t, root, "a/run=r/rank=0/p0", "a/run=r/rank=2/p0", "a/run=r/rank=3/p0")
	var asked []string
	err := tr.Commit(func(dir string) (bool, error) {
		rel, _ := filepath.Rel(root, dir)
		asked = append(asked, filepath.ToSlash(rel))
		return rel == filepath.FromSlash("a/run=r/rank=2"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/run=r/rank=2", "a/run=r/rank=3"}; !slices.Equal(asked, want) {
		t.Errorf("existing asked for %v, want %v", asked, want)
	}
	want := []string{"a/run=r/rank=0/p0", "a/run=r/rank=1/p0", "a/run=r/rank=2/p0", "a/run=r/rank=3/notes", "a/run=r/rank=3/p0"}
	if got := filesOf(tree(t, root)); !slices.Equal(got, want) {
		t.Errorf("after Commit: %v, want %v", got, want)
	}
	for rel, want := range map[string]string{
		"a/run=r/rank=1/p0": "old a/run=r/rank=1/p0", "a/run=r/rank=2/p0": "new a/run=r/rank=2/p0",
		"a/run=r/rank=3/notes": "old a/run=r/rank=3/notes", "a/run=r/rank=3/p0": "new a/run=r/rank=3/p0",
	} {
		if c := content(t, root, rel); c != want {
			t.Errorf("%s holds %q, want %q", rel, c, want)
		}
	}

	// Adding beside a file of the same name fails, and is undone.
	before := state(t, root)
	tr = stage(t, root, "a/run=r/rank=9/p0", "a/run=r/rank=3/p0")
	err = tr.Commit(func(string) (bool, error) { return false, nil })
	tr.Abort()
	if err == nil || !strings.Contains(err.Error(), "rank=3") {
		t.Errorf("adding over a file: %v", err)
	}
	sameState(t, "after the refused commit", state(t, root), before)
}

// TestTreeFailureAtEachStep: a commit failing after any leaf (an injected
// failure, binding root as well), or refused by existing, leaves the
// directory exactly as it was: replaced leaves back, moved directories
// out, nothing staged left, the root it made removed.
func TestTreeFailureAtEachStep(t *testing.T) {
	rels := []string{"a/run=new/rank=0/p0", "a/run=r/rank=0/p0", "a/run=r/rank=1/p0", "b/run=r/rank=0/p0", "c/p0"}
	for _, fresh := range []bool{false, true} {
		// The leaves put in place one by one: on a fresh root, each top
		// directory moves whole with its first leaf.
		leaves := []string{"a/run=new/rank=0", "a/run=r/rank=0", "a/run=r/rank=1", "b/run=r/rank=0", "c"}
		if fresh {
			leaves = []string{"a/run=new/rank=0", "b/run=r/rank=0", "c"}
		}
		for _, at := range leaves {
			t.Run(at, func(t *testing.T) {
				dir := t.TempDir()
				root := filepath.Join(dir, "ds")
				if !fresh {
					put(t, root, "a/run=r/rank=1/p0", "a/run=r/rank=1/p1", "b/run=r/rank=0/p0", "b/run=other/rank=0/p0")
				}
				before := state(t, dir)
				testHook = func(s string) error {
					if s == "leaf "+at {
						return errors.New("injected")
					}
					return nil
				}
				defer func() { testHook = nil }()
				tr := stage(t, root, rels...)
				err := tr.Commit(func(string) (bool, error) { return true, nil })
				tr.Abort()
				if err == nil || !strings.Contains(err.Error(), "injected") {
					t.Fatalf("Commit = %v, want the injected failure", err)
				}
				sameState(t, "after a failure at "+at, state(t, dir), before)
				if Temps() != 0 {
					t.Errorf("%d still tracked", Temps())
				}
			})
		}
	}
	// existing refusing the last leaf.
	dir := t.TempDir()
	put(t, dir, "b/run=r/rank=0/p0")
	before := state(t, dir)
	tr := stage(t, dir, rels...)
	err := tr.Commit(func(d string) (bool, error) { return false, errors.New("refused " + d) })
	tr.Abort()
	if err == nil || !strings.HasPrefix(err.Error(), "refused ") {
		t.Errorf("Commit = %v, want existing's error", err)
	}
	sameState(t, "after a refused leaf", state(t, dir), before)
}

// TestTreeUndoKeepsOthers: undoing a directory moved into place whole
// takes back only this tree's files: what another process put there
// meanwhile stays.
func TestTreeUndoKeepsOthers(t *testing.T) {
	root := t.TempDir()
	theirs := filepath.Join(root, "a", "run=r", "rank=1", "p0")
	testHook = func(s string) error {
		if s == "leaf b/run=r/rank=0" {
			return errors.New("injected")
		}
		if s == "leaf a/run=r/rank=0" { // another export adds rank 1 into the run this one made
			os.MkdirAll(filepath.Dir(theirs), 0o755)
			os.WriteFile(theirs, []byte("theirs"), 0o644)
		}
		return nil
	}
	defer func() { testHook = nil }()
	tr := stage(t, root, "a/run=r/rank=0/p0", "b/run=r/rank=0/p0")
	err := tr.Commit(never)
	tr.Abort()
	if err == nil {
		t.Fatal("no failure")
	}
	if got := filesOf(tree(t, root)); !slices.Equal(got, []string{"a/run=r/rank=1/p0"}) {
		t.Errorf("after the undo: %v, want the other process's file alone", got)
	}
}

// TestTreeRootThroughLink: -o LINK, a symlink to a directory that does
// not exist yet: the directory is made where the link points, and a
// failed run removes it, never the link (issue 19 item 2).
func TestTreeRootThroughLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink("target/ds", link); err != nil {
		t.Skip(err)
	}
	for _, root := range []string{link, filepath.Join(link, "sub")} {
		tr := stage(t, root, "a/p=0/f")
		tr.Abort()
		if got := tree(t, dir); !slices.Equal(got, []string{"link"}) {
			t.Errorf("%s: after Abort: %v, want the link alone", root, got)
		}
	}
	tr := stage(t, link, "a/p=0/f")
	if err := tr.Commit(never); err != nil {
		t.Fatal(err)
	}
	if c := content(t, dir, "target/ds/a/p=0/f"); c != "new a/p=0/f" {
		t.Errorf("through the link: %q", c)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
}

// TestTreeErrorsNameTarget: errors name the file's final path, not its
// staged one (issue 19 item 16).
func TestTreeErrorsNameTarget(t *testing.T) {
	root := t.TempDir()
	tr := stage(t, root)
	defer tr.Abort()
	w, err := tr.Create("a/p=0/f")
	if err != nil {
		t.Fatal(err)
	}
	w.(*file).f.Close()
	_, err = w.Write([]byte("x"))
	want := filepath.Join(root, "a", "p=0", "f")
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != want {
		t.Errorf("write error %v, want one naming %s", err, want)
	}
	if _, err := tr.Create("../escape"); err == nil {
		t.Error("a path out of the tree was accepted")
	}
}

func TestExchange(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "sub", "b")
	put(t, dir, "a/x", "sub/b/y")
	if err := exchange(a, b); err != nil {
		t.Fatal(err)
	}
	if got := filesOf(tree(t, dir)); !slices.Equal(got, []string{"a/y", "sub/b/x"}) {
		t.Errorf("after exchange: %v", got)
	}
	if err := renameNoReplace(a, b); err == nil {
		t.Error("renameNoReplace replaced a directory")
	}
}

// TestTreeDirAppearsMeanwhile: a table directory another process moves
// into place between a commit's looks (two exports of different ranks
// at once) is looked at again and added to, not taken for a link to
// nothing (TestExportConcurrentRanks failed so once under load); a link
// to nothing is still refused.
func TestTreeDirAppearsMeanwhile(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ds")
	other := filepath.Join(t.TempDir(), "other")
	put(t, other, "a/run=r/rank=1/p0")
	tr := stage(t, root, "a/run=r/rank=0/p0")
	defer tr.Abort()
	testHook = func(s string) error {
		if s == "absent "+filepath.Join(root, "a") {
			testHook = nil
			return os.Rename(filepath.Join(other, "a"), filepath.Join(root, "a"))
		}
		return nil
	}
	defer func() { testHook = nil }()
	if err := tr.Commit(never); err != nil {
		t.Fatal(err)
	}
	if got, want := filesOf(tree(t, root)), []string{"a/run=r/rank=0/p0", "a/run=r/rank=1/p0"}; !slices.Equal(got, want) {
		t.Errorf("after Commit: %v, want %v", got, want)
	}

	root = filepath.Join(t.TempDir(), "ds")
	tr = stage(t, root, "a/run=r/rank=0/p0")
	defer tr.Abort()
	if err := os.Symlink(filepath.Join(root, "missing"), filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := tr.Commit(never); err == nil || !strings.Contains(err.Error(), "a symbolic link to nothing") {
		t.Errorf("commit onto a link to nothing: %v", err)
	}
}
