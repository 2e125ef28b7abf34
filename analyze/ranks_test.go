package analyze

import (
	"reflect"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

func TestCrossRank(t *testing.T) {
	n0, n1, n2 := 0, 1, 2
	ranks := []window.Rank{{ID: 0, Input: 0, Path: "r.json", Run: "run", Number: &n0}, {ID: 1, Input: 1, Path: "r.json", Run: "run", Number: &n1},
		{ID: 2, Input: 2, Path: "r.json", Run: "run", Number: &n2}}
	r0, r1, r2 := &ranks[0], &ranks[1], &ranks[2]
	g := func(rank *window.Rank, kind step.Class, kernel int64, cats ...CategoryStat) Group {
		return Group{Rank: rank, Class: kind, KernelNS: kernel, Categories: cats}
	}
	c := func(cat string, ns int64) CategoryStat {
		return CategoryStat{Category: classify.MustCategory(cat), KernelNS: ns}
	}
	r := &GroupTable{Groups: []Group{
		g(r0, decode, 100, c("gemm/cublas", 60), c("communication/allreduce", 40)),
		g(r1, decode, 300, c("gemm/cublas", 100), c("communication/allreduce", 200)),
		g(r2, decode, 70, c("gemm/cublas", 70)), // no allreduce: counts as 0
		g(r2, prefill, 500, c("gemm/cublas", 500)),
		g(r0, prefill, 800, c("gemm/cublas", 800)), // rank 1 has no prefill: 2 ranks
	}}
	got := crossRank(r)
	row := func(kind step.Class, cat string, ranks int, total int64, share float64, min int64, med float64, max int64, slow *window.Rank, by ...int64) RankRow {
		mom := 0.0
		if med > 0 {
			mom = float64(max) / med
		}
		rr := RankRow{Run: "run", Class: kind, Ranks: ranks, TotalNS: total, Share: share, MinNS: min, MedianNS: med,
			MaxNS: max, MaxOverMedian: mom, MaxRank: slow, ByRankNS: by}
		if cat == "total" {
			rr.Total = true
		} else {
			rr.Category = classify.MustCategory(cat)
		}
		return rr
	}
	want := []RankRow{
		row(decode, "total", 3, 470, 1, 70, 100, 300, r1, 100, 300, 70),
		row(decode, "communication/allreduce", 3, 240, 240.0/470, 0, 40, 200, r1, 40, 200, 0),
		row(decode, "gemm/cublas", 3, 230, 230.0/470, 60, 70, 100, r1, 60, 100, 70),
		row(prefill, "total", 2, 1300, 1, 500, 650, 800, r0, 800, 500),
		row(prefill, "gemm/cublas", 2, 1300, 1, 500, 650, 800, r0, 800, 500),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	// Two runs of the same ranks are compared apart: run b's ranks never
	// mix with run a's.
	two := &GroupTable{}
	for ri, run := range []string{"a", "b"} {
		for _, gr := range r.Groups {
			rk := *gr.Rank
			rk.Run, rk.ID = run, rk.ID+window.RankID(3*ri)
			gr.Rank = &rk
			two.Groups = append(two.Groups, gr)
		}
	}
	byRun := map[string]int{}
	for _, row := range crossRank(two) {
		byRun[row.Run]++
		if row.Ranks > 3 {
			t.Errorf("run %s: a row over %d ranks", row.Run, row.Ranks)
		}
	}
	if byRun["a"] != len(want) || byRun["b"] != len(want) {
		t.Errorf("rows per run %v, want %d each", byRun, len(want))
	}
	// One rank: nothing to compare, but an empty array, not null.
	one := crossRank(&GroupTable{Groups: r.Groups[:1]})
	if one == nil || len(one) != 0 {
		t.Errorf("one rank: got %#v, want an empty non-nil slice", one)
	}
}
