//go:build unix

package duckdb

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestKilledExport: an export killed with SIGKILL (nothing can clean up
// after it) while it reads its second input leaves nothing DuckDB reads:
// its parts were staged under a hidden directory of the dataset, outside
// the tables, and only a commit moves them in. A later export into the
// same dataset works, and DuckDB reads exactly the runs that completed.
func TestKilledExport(t *testing.T) {
	tmp := t.TempDir()
	bin := buildTraceq(t, tmp)
	fleet := filepath.Join(tmp, "fleet")
	dlrm := filepath.Join(root, "testdata", "traces", "torch", "dlrm8")
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	traceq(t, bin, "export", "-o", fleet, "--run", "done", abs(filepath.Join(dlrm, "rank0.json.gz")))

	fifo := filepath.Join(tmp, "rank1.json.gz")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	data, err := os.ReadFile(filepath.Join(dlrm, "rank1.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "export", "-o", fleet, "--run", "killed", abs(filepath.Join(dlrm, "rank0.json.gz")), fifo)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Opening the FIFO waits for the export to open it: by then it has
	// written the first input's parts.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data[:len(data)/2])
	cmd.Process.Kill()
	cmd.Wait()
	w.Close()

	staged, _ := filepath.Glob(filepath.Join(fleet, ".traceq-stage-*", "activities", "run=killed", "*", "*.parquet"))
	if len(staged) == 0 {
		t.Fatal("the killed export staged nothing: the test did not kill it mid-way")
	}
	if got := runs(t, fleet); !slices.Equal(got, []string{"done"}) {
		t.Errorf("after SIGKILL DuckDB reads runs %v, want [done]", got)
	}
	traceq(t, bin, "export", "-o", fleet, "--run", "later", abs(filepath.Join(dlrm, "rank1.json.gz")))
	if got := runs(t, fleet); !slices.Equal(got, []string{"done", "later"}) {
		t.Errorf("after a later export DuckDB reads runs %v, want [done later]", got)
	}
}

// runs lists the runs DuckDB reads from each table, with the glob the
// documentation gives, checking that every table agrees.
func runs(t *testing.T, fleet string) []string {
	t.Helper()
	db := openFleet(t, fleet)
	var first []string
	for _, table := range []string{"activities", "steps", "launches", "inputs"} {
		glob := filepath.ToSlash(filepath.Join(fleet, table, "**", "*.parquet"))
		rows, err := db.Query("SELECT DISTINCT run FROM read_parquet('" + strings.ReplaceAll(glob, "'", "''") + "', hive_partitioning = true) ORDER BY run")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var r string
			if err := rows.Scan(&r); err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		rows.Close()
		if first == nil {
			first = got
		} else if !slices.Equal(got, first) {
			t.Errorf("%s holds runs %v, activities %v", table, got, first)
		}
	}
	return first
}
