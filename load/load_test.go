package load

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/traceq/traceq/step"
)

const dlrm8 = "../testdata/traces/torch/dlrm8"

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadNestedRun: a run spread over node directories is one run, each
// rank on the host its directory names; the rank table carries the host.
func TestLoadNestedRun(t *testing.T) {
	run := filepath.Join(t.TempDir(), "runA")
	for r := range 8 {
		node := "node0"
		if r >= 4 {
			node = "node1"
		}
		copyFile(t, filepath.Join(dlrm8, "rank"+string(rune('0'+r))+".json.gz"), filepath.Join(run, node, "rank"+string(rune('0'+r))+".json.gz"))
	}
	tbl, err := Load([]string{run}, Options{Steps: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.Inputs) != 8 || len(tbl.Ranks) != 8 {
		t.Fatalf("%d inputs, %d ranks", len(tbl.Inputs), len(tbl.Ranks))
	}
	for i, r := range tbl.Ranks {
		want := "node0"
		if i >= 4 {
			want = "node1"
		}
		if r.Run != "runA" || r.Host != want || r.Number == nil || *r.Number != i || tbl.Inputs[r.Input].Host != want {
			t.Errorf("rank %d: run %q host %q number %v", i, r.Run, r.Host, r.Number)
		}
	}
}

// TestFileHost: torch.profiler's default file names carry the host.
func TestFileHost(t *testing.T) {
	for name, want := range map[string]string{
		"host123_1234.pt.trace.json.gz":                    "host123",
		"gpu-node-7_88.1700000000123.pt.trace.json":        "gpu-node-7",
		"rank0.json.gz":                                    "",
		"benchmark_result_924719_1679055439_trace.json.gz": "",
		"host_x.pt.trace.json":                             "",
	} {
		if got := fileHost("/runs/" + name); got != want {
			t.Errorf("fileHost(%s) = %q, want %q", name, got, want)
		}
	}
	if subdirHost("node3/gpu") != "node3" || subdirHost("") != "" {
		t.Error("subdirHost")
	}
}

// TestLoadChecksFilter: the class filter is checked on the set, once, for
// every caller: a run without decode steps is refused.
func TestLoadChecksFilter(t *testing.T) {
	f, _ := step.ParseFilter("decode")
	_, err := Load([]string{dlrm8}, Options{Steps: true, Filter: f})
	var ke *step.NoKindError
	if !errors.As(err, &ke) || ke.Class != step.ClassOf(step.Decode) {
		t.Errorf("Load with --kind decode on dlrm8: %v", err)
	}
	a, b, err := Pair([]string{dlrm8 + "/rank0.json.gz"}, []string{dlrm8 + "/rank1.json.gz"}, Options{Steps: true, Filter: f})
	if !errors.As(err, &ke) || a != nil || b != nil {
		t.Errorf("Pair with --kind decode: %v", err)
	}
}
