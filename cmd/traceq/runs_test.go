package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMixedRuns (issue 19 item 9): a run whose files disagree about
// their world is warned about, naming the files; collectives refuses to
// match it (exit 1) unless --force, except for a run given in part; a
// copy of a file of the run is read once.
func TestMixedRuns(t *testing.T) {
	dur := func(d int) func(int) int { return func(int) int { return d } }
	none := func(int) string { return "" }
	// rank writes rank r of world w as name, its durations d (so that
	// files differ).
	rank := func(dir, name string, r, w, d int) string {
		p := collRank(t, dir, r, w, 2, dur(d), none, -1)
		q := filepath.Join(dir, name)
		if err := os.Rename(p, q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	for _, tc := range []struct {
		name    string
		files   func(dir string) []string
		warning string
		refused bool
	}{
		{"the same rank twice", func(dir string) []string {
			return []string{rank(dir, "a.json", 0, 2, 10), rank(dir, "b.json", 0, 2, 11), rank(dir, "c.json", 1, 2, 12)}
		}, "rank 0 is claimed by DIR/a.json and DIR/b.json", true},
		{"two world sizes", func(dir string) []string {
			return []string{rank(dir, "a.json", 0, 2, 10), rank(dir, "b.json", 1, 4, 11)}
		}, "the files disagree on the world size: world size 2 in DIR/a.json, world size 4 in DIR/b.json", true},
		{"more ranks than the world", func(dir string) []string {
			return []string{rank(dir, "a.json", 0, 2, 10), rank(dir, "b.json", 1, 2, 11), rank(dir, "c.json", 2, 2, 12)}
		}, "3 ranks (up to rank 2) in a world of 2", true},
		{"a run in part", func(dir string) []string {
			return []string{rank(dir, "a.json", 0, 8, 10), rank(dir, "b.json", 3, 8, 11)}
		}, "2 of the world's 8 ranks: ranks 1-2, 4-7 missing", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "job")
			os.Mkdir(dir, 0o755)
			tc.files(dir)
			want := "traceq: warning: run job: " + strings.ReplaceAll(tc.warning, "DIR", dir)
			code, _, errs := runCLI("breakdown", "--no-steps", dir)
			if code != 0 || !strings.Contains(errs, want) {
				t.Errorf("breakdown: exit %d, stderr %q; want %q", code, errs, want)
			}
			code, _, errs = runCLI("collectives", "--no-steps", dir)
			if tc.refused {
				if code != 1 || !strings.Contains(errs, "traceq: run job: "+strings.ReplaceAll(tc.warning, "DIR", dir)) ||
					!strings.Contains(errs, "--force matches their collectives as one run's anyway") {
					t.Errorf("collectives: exit %d, stderr %q", code, errs)
				}
				code, _, errs = runCLI("collectives", "--no-steps", "--force", dir)
			}
			if code != 0 || !strings.Contains(errs, want) {
				t.Errorf("collectives (forced): exit %d, stderr %q", code, errs)
			}
		})
	}
	// A copy of a rank file in the run's directory is read once.
	dir := filepath.Join(t.TempDir(), "job")
	os.Mkdir(dir, 0o755)
	a := rank(dir, "a.json", 0, 2, 10)
	rank(dir, "b.json", 1, 2, 11)
	b, _ := os.ReadFile(a)
	os.WriteFile(filepath.Join(dir, "c.json"), b, 0o644)
	code, _, errs := runCLI("collectives", "--no-steps", dir)
	if want := "traceq: warning: " + filepath.Join(dir, "c.json") + " holds the same bytes as " + a + ": read once\n"; code != 0 || errs != want {
		t.Errorf("copy: exit %d, stderr %q, want %q", code, errs, want)
	}
}
