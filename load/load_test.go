package load

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
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
		"rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz":    "", // HTA's names: no host in them
		"node1.cluster.local_4021.pt.trace.json.gz":        "node1.cluster.local",
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

// TestFileRank: vLLM's worker names and HTA's rank names carry the rank.
func TestFileRank(t *testing.T) {
	for name, want := range map[string]int{
		"a1b2c-rank-5.1746000000000000000.pt.trace.json.gz": 5,
		"rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz":     34,
		"sampled_rank-1.json.gz":                            1,
		"inference_rank_1.json.gz":                          1,
		"rank12.json":                                       12,
		"host123_1234.pt.trace.json.gz":                     -1,
		"frank3.json":                                       -1,
		"ranks.json":                                        -1,
	} {
		got, ok := fileRank("/runs/" + name)
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("fileRank(%s) = %d, want %d", name, got, want)
		}
	}
}

// TestRankFromFileName: a trace that does not say its rank takes its
// file name's, and says so; one that says keeps its own.
func TestRankFromFileName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	// hta_triton states no rank; dlrm8's rank 3 states 3.
	copyFile(t, "../testdata/traces/torch/hta_triton.json.gz", filepath.Join(dir, "x1y2z-rank-6.1746000000000000000.pt.trace.json.gz"))
	copyFile(t, filepath.Join(dlrm8, "rank3.json.gz"), filepath.Join(dir, "x1y2z-rank-7.1746000000000000001.pt.trace.json.gz"))
	tbl, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.Ranks) != 2 {
		t.Fatalf("%d ranks", len(tbl.Ranks))
	}
	r := tbl.Ranks[0]
	if r.Number == nil || *r.Number != 6 || r.Source != trace.RankFromFileName || tbl.Inputs[0].Rank == nil || *tbl.Inputs[0].Rank != 6 {
		t.Errorf("vLLM-named rank without distributedInfo: %+v", r)
	}
	r = tbl.Ranks[1]
	if r.Number == nil || *r.Number != 3 || r.Source != trace.RankFromDistributedInfo {
		t.Errorf("a trace stating rank 3 named rank-7: %+v", r)
	}
}

// TestHosts: the layout's host of each file (node directory, else file
// name), the trace's own for OneOn without one, and every rank of a run
// spread over hosts counts them.
func TestHosts(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "runB")
	copyFile(t, filepath.Join(dlrm8, "rank0.json.gz"), filepath.Join(run, "nodeA", "rank0.json.gz"))
	copyFile(t, filepath.Join(dlrm8, "rank1.json.gz"), filepath.Join(run, "gpu7_4242.pt.trace.json.gz"))
	loose := filepath.Join(root, "loose_1.pt.trace.json.gz")
	copyFile(t, filepath.Join(dlrm8, "rank2.json.gz"), loose)
	set, err := Expand([]string{run, loose}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := Hosts(set); !slices.Equal(got, []string{"gpu7", "nodeA", "loose"}) {
		t.Errorf("Hosts = %q", got)
	}
	tbl, err := Load([]string{run}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tbl.Ranks {
		if r.RunHosts != 2 {
			t.Errorf("rank %v on %q: RunHosts %d, want 2", *r.Number, r.Host, r.RunHosts)
		}
	}
	one, err := OneOn(filepath.Join(run, "nodeA", "rank0.json.gz"), "nodeA", Options{})
	if err != nil || one.Inputs[0].Host != "nodeA" || one.Ranks[0].Host != "nodeA" {
		t.Errorf("OneOn: %v %+v", err, one.Ranks)
	}
	nsys := "../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite"
	one, err = OneOn(nsys, "", Options{})
	if err != nil || one.Inputs[0].Host != "modal" {
		t.Errorf("OneOn an nsys export naming its host: %v, host %q", err, one.Inputs[0].Host)
	}
}
