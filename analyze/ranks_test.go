package analyze

import (
	"reflect"
	"testing"

	"github.com/traceq/traceq/classify"
)

func TestCrossRank(t *testing.T) {
	r0, r1, r2 := 0, 1, 2
	g := func(input int, rank *int, kind StepKind, kernel int64, cats ...CategoryStat) Group {
		return Group{Path: "r.json", Run: "run", Rank: rank, StepKind: kind, KernelNS: kernel, Categories: cats, Input: input}
	}
	c := func(cat string, ns int64) CategoryStat {
		return CategoryStat{Category: classify.MustCategory(cat), KernelNS: ns}
	}
	r := &GroupTable{Groups: []Group{
		g(0, &r0, KindDecode, 100, c("gemm/cublas", 60), c("communication/allreduce", 40)),
		g(1, &r1, KindDecode, 300, c("gemm/cublas", 100), c("communication/allreduce", 200)),
		g(2, &r2, KindDecode, 70, c("gemm/cublas", 70)), // no allreduce: counts as 0
		g(2, &r2, KindPrefill, 500, c("gemm/cublas", 500)),
		g(0, &r0, KindPrefill, 800, c("gemm/cublas", 800)), // rank 1 has no prefill: 2 ranks
	}}
	got := CrossRank(r)
	row := func(kind StepKind, cat string, ranks int, total int64, share float64, min int64, med float64, max int64, slow *int, by ...int64) RankRow {
		mom := 0.0
		if med > 0 {
			mom = float64(max) / med
		}
		rr := RankRow{Run: "run", StepKind: kind, Ranks: ranks, TotalNS: total, Share: share, MinNS: min, MedianNS: med,
			MaxNS: max, MaxOverMedian: mom, MaxRank: slow, MaxPath: "r.json", ByRankNS: by}
		if cat == "total" {
			rr.Total = true
		} else {
			rr.Category = classify.MustCategory(cat)
		}
		return rr
	}
	want := []RankRow{
		row(KindDecode, "total", 3, 470, 1, 70, 100, 300, &r1, 100, 300, 70),
		row(KindDecode, "communication/allreduce", 3, 240, 240.0/470, 0, 40, 200, &r1, 40, 200, 0),
		row(KindDecode, "gemm/cublas", 3, 230, 230.0/470, 60, 70, 100, &r1, 60, 100, 70),
		row(KindPrefill, "total", 2, 1300, 1, 500, 650, 800, &r0, 800, 500),
		row(KindPrefill, "gemm/cublas", 2, 1300, 1, 500, 650, 800, &r0, 800, 500),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	// Two runs of the same ranks are compared apart: run b's ranks never
	// mix with run a's.
	two := &GroupTable{}
	for _, run := range []string{"a", "b"} {
		for _, gr := range r.Groups {
			gr.Run = run
			if run == "b" {
				gr.Input += 3
			}
			two.Groups = append(two.Groups, gr)
		}
	}
	byRun := map[string]int{}
	for _, row := range CrossRank(two) {
		byRun[row.Run]++
		if row.Ranks > 3 {
			t.Errorf("run %s: a row over %d ranks", row.Run, row.Ranks)
		}
	}
	if byRun["a"] != len(want) || byRun["b"] != len(want) {
		t.Errorf("rows per run %v, want %d each", byRun, len(want))
	}
	// One rank: nothing to compare, but an empty array, not null.
	one := CrossRank(&GroupTable{Groups: r.Groups[:1]})
	if one == nil || len(one) != 0 {
		t.Errorf("one rank: got %#v, want an empty non-nil slice", one)
	}
}
