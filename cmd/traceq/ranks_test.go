package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const dlrm8 = "../../testdata/traces/torch/dlrm8"

// crRun runs traceq and returns stdout, failing on a non-zero exit.
func crRun(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append([]string{"traceq"}, args...), nil, &out, &errb); code != 0 {
		t.Fatalf("traceq %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.Bytes()
}

type crDoc struct {
	Groups []struct {
		Rank       *int   `json:"rank"`
		StepKind   string `json:"step_kind"`
		KernelNS   int64  `json:"kernel_ns"`
		Categories []struct {
			Category string `json:"category"`
			KernelNS int64  `json:"kernel_ns"`
		} `json:"categories"`
	} `json:"groups"`
	CrossRank []struct {
		StepKind    string  `json:"step_kind"`
		Category    string  `json:"category"`
		Ranks       int     `json:"ranks"`
		TotalNS     int64   `json:"total_ns"`
		MinNS       int64   `json:"min_ns"`
		MedianNS    float64 `json:"median_ns"`
		MaxNS       int64   `json:"max_ns"`
		SlowestRank *int    `json:"slowest_rank"`
		SlowestPath string  `json:"slowest_path"`
		ByRankNS    []int64 `json:"by_rank_ns"`
	} `json:"cross_rank"`
}

// TestCrossRankDLRM8 runs the 8 real DLRM ranks as one directory and checks
// the cross-rank table against figures computed here from the breakdown of
// each rank file run on its own.
func TestCrossRankDLRM8(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(dlrm8, "rank*.json.gz"))
	slices.Sort(files)
	if len(files) != 8 {
		t.Fatalf("found %d rank files, want 8", len(files))
	}
	type key struct{ kind, cat string }
	perRank := map[key][]int64{} // per rank file, in file order; absent kind: no entry
	hasKind := map[string][]bool{}
	rankOf := make([]int, len(files))
	for i, f := range files {
		var d crDoc
		if err := json.Unmarshal(crRun(t, "breakdown", "--format", "json", f), &d); err != nil {
			t.Fatal(err)
		}
		if len(d.CrossRank) != 0 {
			t.Errorf("%s alone: %d cross-rank rows, want none", f, len(d.CrossRank))
		}
		for _, g := range d.Groups {
			if g.Rank == nil {
				t.Fatalf("%s: no rank", f)
			}
			rankOf[i] = *g.Rank
			if hasKind[g.StepKind] == nil {
				hasKind[g.StepKind] = make([]bool, len(files))
			}
			hasKind[g.StepKind][i] = true
			add := func(cat string, ns int64) {
				k := key{g.StepKind, cat}
				if perRank[k] == nil {
					perRank[k] = make([]int64, len(files))
				}
				perRank[k][i] += ns
			}
			add("total", g.KernelNS)
			for _, c := range g.Categories {
				add(c.Category, c.KernelNS)
			}
		}
	}

	var d crDoc
	if err := json.Unmarshal(crRun(t, "breakdown", "--format", "json", dlrm8), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.CrossRank) != len(perRank) {
		t.Errorf("%d cross-rank rows, want %d", len(d.CrossRank), len(perRank))
	}
	for _, row := range d.CrossRank {
		vals := perRank[key{row.StepKind, row.Category}]
		if vals == nil {
			t.Errorf("unexpected row %s/%s", row.StepKind, row.Category)
			continue
		}
		var sample []int64
		var total int64
		slow := -1
		for i, v := range vals {
			if !hasKind[row.StepKind][i] {
				continue
			}
			sample = append(sample, v)
			total += v
			if slow < 0 || v > vals[slow] {
				slow = i
			}
		}
		sorted := slices.Clone(sample)
		slices.Sort(sorted)
		n := len(sorted)
		median := float64(sorted[n/2])
		if n%2 == 0 {
			median = float64(sorted[n/2-1]+sorted[n/2]) / 2
		}
		name := row.StepKind + "/" + row.Category
		if row.Ranks != n || row.TotalNS != total || row.MinNS != sorted[0] || row.MaxNS != sorted[n-1] || row.MedianNS != median {
			t.Errorf("%s: ranks %d total %d min %d median %v max %d; want %d %d %d %v %d",
				name, row.Ranks, row.TotalNS, row.MinNS, row.MedianNS, row.MaxNS, n, total, sorted[0], median, sorted[n-1])
		}
		if row.SlowestRank == nil || *row.SlowestRank != rankOf[slow] || row.SlowestPath != files[slow] {
			t.Errorf("%s: slowest %v %s, want rank %d %s", name, row.SlowestRank, row.SlowestPath, rankOf[slow], files[slow])
		}
		if !slices.Equal(row.ByRankNS, sample) {
			t.Errorf("%s: by_rank_ns %v, want %v", name, row.ByRankNS, sample)
		}
	}
	if d.CrossRank[0].Category != "total" || d.CrossRank[0].Ranks != 8 {
		t.Errorf("first row %s with %d ranks, want the total of 8 ranks", d.CrossRank[0].Category, d.CrossRank[0].Ranks)
	}

	// The other formats carry the same rows.
	text := string(crRun(t, "breakdown", "--detail", "ranks", dlrm8))
	if !strings.Contains(text, "== dlrm8 · steps · cross-rank comparison of 8 ranks") {
		t.Errorf("text output lacks the cross-rank title")
	}
	md := string(crRun(t, "breakdown", "--detail", "ranks", "--format", "markdown", dlrm8))
	if !strings.Contains(md, "### dlrm8 · steps · cross-rank comparison of 8 ranks") || !strings.Contains(md, "| category | all ranks ms |") {
		t.Errorf("markdown output lacks the cross-rank table")
	}
	_, second, ok := strings.Cut(string(crRun(t, "breakdown", "--format", "csv", dlrm8)), "\n\n")
	if !ok {
		t.Fatal("csv output has no second table")
	}
	recs, err := csv.NewReader(strings.NewReader(second)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(d.CrossRank)+1 || recs[0][0] != "step_kind" {
		t.Fatalf("cross-rank csv: %d records, header %v; want %d rows and a header", len(recs), recs[0], len(d.CrossRank))
	}
	for i, row := range d.CrossRank {
		rec := recs[i+1]
		if rec[0] != row.StepKind || rec[1] != row.Category || rec[3] != strconv.FormatInt(row.TotalNS, 10) ||
			rec[7] != strconv.FormatInt(row.MaxNS, 10) {
			t.Errorf("csv row %d: %v, want %s %s total %d max %d", i, rec, row.StepKind, row.Category, row.TotalNS, row.MaxNS)
		}
	}
}
