package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// exportRun runs traceq export and returns the exit code and stderr.
func exportRun(args ...string) (int, string) {
	var out, errb bytes.Buffer
	code := run(append([]string{"traceq", "export"}, args...), nil, &out, &errb)
	return code, errb.String()
}

// files lists the regular files and directories under dir, relative.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// copyRanks copies n of the dlrm8 rank files into dir.
func copyRanks(t *testing.T, dir string, n int) []string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	var out []string
	for r := range n {
		name := "rank" + string(rune('0'+r)) + ".json.gz"
		b, err := os.ReadFile(filepath.Join(dlrm8, name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestExportLayout(t *testing.T) {
	tmp := t.TempDir()
	ranks := copyRanks(t, filepath.Join(tmp, "jobA"), 2)
	out := filepath.Join(tmp, "ds")
	if code, stderr := exportRun(append([]string{"-o", out}, ranks...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var want []string
	for _, table := range []string{"activities", "inputs", "launches", "steps"} {
		want = append(want, table, table+"/run=jobA")
		for _, r := range []string{"0", "1"} {
			want = append(want, table+"/run=jobA/rank="+r, table+"/run=jobA/rank="+r+"/part-0.parquet")
		}
	}
	slices.Sort(want)
	if got := files(t, out); !slices.Equal(got, want) {
		t.Errorf("dataset holds\n%v\nwant (run named after the inputs' directory)\n%v", got, want)
	}
}

// TestExportRefusesExisting: a second export of the same run and rank is
// refused and changes nothing; --force replaces the partition's parts
// (removing those no new part overwrote) and leaves other ranks alone.
func TestExportRefusesExisting(t *testing.T) {
	tmp := t.TempDir()
	ranks := copyRanks(t, filepath.Join(tmp, "in"), 3)
	out := filepath.Join(tmp, "ds")
	if code, stderr := exportRun("-o", out, "--run", "r", ranks[0], ranks[1]); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// An extra part in rank 1, as a second input of that rank would leave.
	extra := filepath.Join(out, "activities/run=r/rank=1/part-1.parquet")
	if err := os.WriteFile(extra, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := files(t, out)
	code, stderr := exportRun("-o", out, "--run", "r", ranks[2], ranks[1])
	if code != exitInput || !strings.Contains(stderr, "--force") || !strings.Contains(stderr, filepath.Join("run=r", "rank=1")) {
		t.Fatalf("exit %d, stderr %q: want exit 1 naming rank 1's partition and --force", code, stderr)
	}
	if got := files(t, out); !slices.Equal(got, before) {
		t.Errorf("the refused run changed the dataset:\n%v\nwas\n%v", got, before)
	}
	if code, stderr := exportRun("-o", out, "--run", "r", "--force", ranks[2], ranks[1]); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(extra); !os.IsNotExist(err) {
		t.Errorf("--force left the old part-1 of rank 1: %v", err)
	}
	for _, r := range []string{"0", "1", "2"} {
		if _, err := os.Stat(filepath.Join(out, "steps/run=r/rank="+r+"/part-0.parquet")); err != nil {
			t.Errorf("rank %s: %v", r, err)
		}
	}
}

// TestExportFailureLeavesNothing: when an input fails, the parts already
// written for earlier inputs and the directories made are removed.
func TestExportFailureLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	ranks := copyRanks(t, filepath.Join(tmp, "in"), 1)
	bad := filepath.Join(tmp, "in", "rank9.json")
	os.WriteFile(bad, []byte(`{"traceEvents": [`), 0o644)
	out := filepath.Join(tmp, "ds")
	code, stderr := exportRun("-o", out, "--strict", ranks[0], bad)
	if code != exitInput || !strings.HasPrefix(stderr, "traceq: "+bad) {
		t.Fatalf("exit %d, stderr %q: want exit 1 naming %s", code, stderr, bad)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed export left %s: %v", out, files(t, out))
	}
	// An existing -o DIR stays, empty as it was.
	os.Mkdir(out, 0o755)
	exportRun("-o", out, "--strict", ranks[0], bad)
	if got := files(t, out); len(got) != 0 {
		t.Errorf("a failed export left %v in the existing DIR", got)
	}
}

func TestExportUsage(t *testing.T) {
	tmp := t.TempDir()
	a := copyRanks(t, filepath.Join(tmp, "a"), 1)[0]
	b := copyRanks(t, filepath.Join(tmp, "b"), 1)[0]
	odd := copyRanks(t, filepath.Join(tmp, "has space"), 1)[0]
	out := filepath.Join(tmp, "ds")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{a}, "-o DIR is required"},
		{[]string{"-o", out}, "no input files"},
		{[]string{"-o", out, "--format", "csv", a}, `unknown --format "csv"`},
		{[]string{"-o", out, "--run", "a/b", a}, `run name "a/b"`},
		{[]string{"-o", out, a, b}, "name the run with --run"},
		{[]string{"-o", out, odd}, "name the run with --run"},
	} {
		code, stderr := exportRun(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("export %v: exit %d, %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("usage errors made %s", out)
	}
}
