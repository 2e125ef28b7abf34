package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests of issue 19's data-loss and output items: nothing traceq did
// not create is removed or replaced, a failed or interrupted run leaves
// the previous state, concurrent runs keep each other's work.

// snapshot describes every entry under dir that is not hidden (a name
// starting with '.'): a file by its mode and content hash, a directory,
// a symlink by its target. Hidden entries are traceq's staging and
// temporary names, which readers skip; noHidden checks them separately.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return filepath.SkipAll
			}
			return err
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "symlink to " + target
		case st.IsDir():
			out[rel] = "dir " + st.Mode().Perm().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %v %x", st.Mode().Perm(), sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameSnapshot reports the differences between two snapshots.
func sameSnapshot(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			diffs = append(diffs, "missing "+p)
		} else if g != w {
			diffs = append(diffs, "changed "+p+": "+g+", was "+w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diffs = append(diffs, "new "+p)
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}

// hidden lists the hidden entries under dir (staging directories,
// temporary files), which a run that ended must not leave.
func hidden(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir && strings.HasPrefix(d.Name(), ".") {
			out = append(out, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return out
}

// TestExportNullRun: DuckDB's hive partitioning reads a run named null
// (in any letter case) as SQL NULL, so such a name is refused, from
// --run and from a directory name alike (issue 19 item 10).
func TestExportNullRun(t *testing.T) {
	tmp := t.TempDir()
	in := copyRanks(t, filepath.Join(tmp, "Null"), 1)[0]
	ds := filepath.Join(tmp, "ds")
	for _, args := range [][]string{
		{"--run", "null", in}, {"--run", "NULL", in}, {"--run", "nUlL", in},
		{filepath.Join(tmp, "Null")}, {in},
	} {
		code, stderr := exportRun(append([]string{"-o", ds}, args...)...)
		if code != exitUsage || !strings.Contains(strings.ToLower(stderr), "null") {
			t.Errorf("export %v: exit %d, %q; want exit 2 refusing the name", args, code, stderr)
		}
	}
	if _, err := os.Stat(ds); !os.IsNotExist(err) {
		t.Errorf("a refused export made %s", ds)
	}
	if code, stderr := exportRun("-o", ds, "--run", "nullish", in); code != 0 {
		t.Errorf("--run nullish: exit %d: %s", code, stderr)
	}
}

// TestExportRunsFromDirectories: each directory argument is a run named
// after it, as in the other commands; --run names every input's run
// (issue 19 item 23).
func TestExportRunsFromDirectories(t *testing.T) {
	tmp := t.TempDir()
	copyRanks(t, filepath.Join(tmp, "runA"), 2)
	copyRanks(t, filepath.Join(tmp, "runB"), 1)
	ds := filepath.Join(tmp, "ds")
	code, stderr := exportRun("-o", ds, filepath.Join(tmp, "runA")+"/", filepath.Join(tmp, "runB"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var want []string
	for _, table := range []string{"activities", "inputs", "launches", "steps"} {
		want = append(want, table, table+"/run=runA", table+"/run=runB")
		for _, p := range []string{"runA/rank=0", "runA/rank=1", "runB/rank=0"} {
			want = append(want, table+"/run="+p, table+"/run="+p+"/part-0.parquet")
		}
	}
	slices.Sort(want)
	if got := files(t, ds); !slices.Equal(got, want) {
		t.Errorf("dataset holds\n%v\nwant\n%v", got, want)
	}
	// Two directories of one name would be one run: refused, nothing made.
	copyRanks(t, filepath.Join(tmp, "other", "runA"), 1)
	code, stderr = exportRun("-o", filepath.Join(tmp, "ds3"), filepath.Join(tmp, "runA"), filepath.Join(tmp, "other", "runA"))
	if code != exitUsage || !strings.Contains(stderr, "both be run runA") {
		t.Errorf("two directories named runA: exit %d, %q; want exit 2", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(tmp, "ds3")); !os.IsNotExist(err) {
		t.Errorf("a refused export made its directory")
	}
	// --run puts every input into the one run, as before.
	ds2 := filepath.Join(tmp, "ds2")
	if code, stderr := exportRun("-o", ds2, "--run", "both", filepath.Join(tmp, "runA"), filepath.Join(tmp, "runB")); code != 0 {
		t.Fatalf("--run: exit %d: %s", code, stderr)
	}
	for _, p := range []string{"rank=0/part-0.parquet", "rank=0/part-1.parquet", "rank=1/part-0.parquet"} {
		if _, err := os.Stat(filepath.Join(ds2, "steps", "run=both", p)); err != nil {
			t.Error(err)
		}
	}
}

// TestExportOutputIsInput: -o naming an input, and --force replacing a
// partition that holds an input, are usage errors saying so (issue 19
// item 18), and change nothing.
func TestExportOutputIsInput(t *testing.T) {
	tmp := t.TempDir()
	ranks := copyRanks(t, filepath.Join(tmp, "in"), 1)
	code, stderr := exportRun("-o", ranks[0], "--run", "r", ranks[0])
	if code != exitUsage || !strings.Contains(stderr, "is an input") {
		t.Errorf("-o INPUT: exit %d, %q; want exit 2 and \"is an input\"", code, stderr)
	}
	ds := filepath.Join(tmp, "ds")
	if code, stderr := exportRun("-o", ds, "--run", "r", ranks[0]); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// An input kept inside a partition that --force would replace.
	in := filepath.Join(ds, "activities", "run=r", "rank=0", "rank0.json.gz")
	b, _ := os.ReadFile(ranks[0])
	os.WriteFile(in, b, 0o644)
	before := snapshot(t, ds)
	code, stderr = exportRun("-o", ds, "--run", "r", "--force", in)
	if code != exitUsage || !strings.Contains(stderr, "is an input") {
		t.Errorf("--force onto a partition holding the input: exit %d, %q; want exit 2 and \"is an input\"", code, stderr)
	}
	sameSnapshot(t, "the refused export changed the dataset", snapshot(t, ds), before)
}

// TestReportAppendIsTheReport: the log --append writes cannot be the
// report --out writes, nor one of its charts (issue 19 item 5).
func TestReportAppendIsTheReport(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json")
	rep := filepath.Join(dir, "rep")
	link := filepath.Join(dir, "replink")
	os.Symlink("rep", link)
	for _, app := range []string{filepath.Join(rep, "report.md"), filepath.Join(link, "report.md"), filepath.Join(rep, "shares.svg")} {
		code, stdout, stderr := runCLI("report", "--out", rep, "--append", app, in)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "--append") {
			t.Errorf("--out %s --append %s: exit %d, %q %q; want a usage error", rep, app, code, stdout, stderr)
		}
		if _, err := os.Stat(rep); !os.IsNotExist(err) {
			t.Errorf("--append %s: the refused run made %s", app, rep)
		}
	}
}

// TestReportAppendThroughLinks: --append to a symlink appends to the file
// it points at, and a hard-linked log stays one file; the link stays a
// link, the log keeps its mode and owner (issue 19 item 6).
func TestReportAppendThroughLinks(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json")
	logs := filepath.Join(dir, "logs")
	os.Mkdir(logs, 0o755)
	shared := filepath.Join(logs, "shared.md")
	os.WriteFile(shared, []byte("# shared\n"), 0o600)
	owner := -1
	if os.Geteuid() == 0 {
		owner = 4242 // only root can give a file away: check it stays given
		if err := os.Chown(shared, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	sym := filepath.Join(dir, "sym.md")
	os.Symlink("logs/shared.md", sym)
	hard := filepath.Join(dir, "hard.md")
	if err := os.Link(shared, hard); err != nil {
		t.Skip(err)
	}
	rtRun(t, "report", "--append", sym, "--date", "2026-11-30", in)
	rtRun(t, "report", "--append", hard, "--date", "2026-12-01", in)
	if st, err := os.Lstat(sym); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
	for _, p := range []string{shared, hard, sym} {
		b, _ := os.ReadFile(p)
		if !strings.HasPrefix(string(b), "# shared\n\n## t — 2026-11-30\n") || !strings.Contains(string(b), "\n## t — 2026-12-01\n") {
			t.Errorf("%s does not hold both sections:\n%.300s", p, b)
		}
	}
	st, _ := os.Stat(shared)
	hst, _ := os.Stat(hard)
	if !os.SameFile(st, hst) {
		t.Error("the hard link was broken")
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", st.Mode().Perm())
	}
	if owner >= 0 {
		if uid := fileOwner(st); uid != owner {
			t.Errorf("owner %d, want %d kept", uid, owner)
		}
	}
	// A dangling symlink: its target is created, the link stays.
	dangling := filepath.Join(dir, "new.md")
	os.Symlink("logs/new-target.md", dangling)
	rtRun(t, "report", "--append", dangling, "--date", "2026-11-30", in)
	if st, err := os.Lstat(dangling); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the dangling symlink was replaced: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(logs, "new-target.md")); err != nil || !strings.HasPrefix(string(b), "## t — 2026-11-30\n") {
		t.Errorf("the link's target: %v\n%.100s", err, b)
	}
}

// TestReportAppendLongName: a run name too long for a directory name
// does not hang report --append (issue 19 item 7): the chart directory
// and chart names are clipped, and a second append gets its own.
func TestReportAppendLongName(t *testing.T) {
	base := t.TempDir()
	long := strings.Repeat("r", 240)
	run := filepath.Join(base, long)
	os.Mkdir(run, 0o755)
	writeTrace(t, run, "rank0.json")
	bench := filepath.Join(base, "BENCH.md")
	done := make(chan string, 2)
	go func() {
		for range 2 {
			code, _, stderr := runCLI("report", "--append", bench, "--date", "2026-11-30", run)
			done <- fmt.Sprintf("exit %d %s", code, stderr[strings.Index(stderr, "one window\n")+len("one window\n"):])
		}
	}()
	for range 2 {
		select {
		case r := <-done:
			if r != "exit 0 " {
				t.Fatalf("report --append on a %d-character run name: %s", len(long), r)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("report --append on a long run name did not finish in 2 minutes")
		}
	}
	var dirs []string
	for _, e := range dirFiles(t, base) {
		if strings.HasPrefix(e, "traceq-") {
			dirs = append(dirs, e)
			if len(e) > 255 {
				t.Errorf("directory name of %d bytes", len(e))
			}
		}
	}
	if len(dirs) != 2 {
		t.Errorf("chart directories %v, want two", dirs)
	}
	b, _ := os.ReadFile(bench)
	for _, d := range dirs {
		if !strings.Contains(string(b), "]("+d+"/report.md)") {
			t.Errorf("the log does not link %s", d)
		}
	}
}

// TestExportThroughSymlink: -o LINK, a symlink to a directory that does
// not exist yet (or a symlink parent of -o): a failed export removes the
// directory it made where the link points, never the link; a successful
// one writes there (issue 19 item 2).
func TestExportThroughSymlink(t *testing.T) {
	tmp := t.TempDir()
	ranks := copyRanks(t, filepath.Join(tmp, "in"), 1)
	bad := filepath.Join(tmp, "in", "rank9.json")
	os.WriteFile(bad, []byte(`{"traceEvents": [`), 0o644)
	link := filepath.Join(tmp, "link")
	if err := os.Symlink("big/fleet", link); err != nil {
		t.Skip(err)
	}
	for _, out := range []string{link, filepath.Join(link, "sub")} {
		if code, stderr := exportRun("-o", out, "--strict", "--run", "r", ranks[0], bad); code != exitInput {
			t.Fatalf("-o %s: exit %d (%s), want 1", out, code, stderr)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("-o %s: the failed export removed the symlink: %v", out, err)
		}
		if _, err := os.Stat(filepath.Join(tmp, "big")); !os.IsNotExist(err) {
			t.Errorf("-o %s: the failed export left the directories it made: %v", out, err)
		}
	}
	if code, stderr := exportRun("-o", link, "--run", "r", ranks[0]); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(tmp, "big", "fleet", "steps", "run=r", "rank=0", "part-0.parquet")); err != nil {
		t.Error(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Error("the symlink was replaced")
	}
}
