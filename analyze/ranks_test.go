package analyze

import (
	"reflect"
	"testing"
)

func TestCrossRank(t *testing.T) {
	r0, r1, r2 := 0, 1, 2
	g := func(input int, rank *int, kind string, kernel int64, cats ...CategoryStat) Group {
		return Group{Path: "r.json", Rank: rank, StepKind: kind, KernelNS: kernel, Categories: cats, input: input}
	}
	c := func(cat string, ns int64) CategoryStat { return CategoryStat{Category: cat, KernelNS: ns} }
	r := &Report{Groups: []Group{
		g(0, &r0, "decode", 100, c("gemm/cublas", 60), c("communication/allreduce", 40)),
		g(1, &r1, "decode", 300, c("gemm/cublas", 100), c("communication/allreduce", 200)),
		g(2, &r2, "decode", 70, c("gemm/cublas", 70)), // no allreduce: counts as 0
		g(2, &r2, "prefill", 500, c("gemm/cublas", 500)),
		g(0, &r0, "prefill", 800, c("gemm/cublas", 800)), // rank 1 has no prefill: 2 ranks
	}}
	got := CrossRank(r)
	row := func(kind, cat string, ranks int, total int64, share float64, min int64, med float64, max int64, slow *int, by ...int64) RankRow {
		mom := 0.0
		if med > 0 {
			mom = float64(max) / med
		}
		return RankRow{StepKind: kind, Category: cat, Ranks: ranks, TotalNS: total, Share: share, MinNS: min, MedianNS: med,
			MaxNS: max, MaxOverMedian: mom, SlowestRank: slow, SlowestPath: "r.json", ByRankNS: by}
	}
	want := []RankRow{
		row("decode", "total", 3, 470, 1, 70, 100, 300, &r1, 100, 300, 70),
		row("decode", "communication/allreduce", 3, 240, 240.0/470, 0, 40, 200, &r1, 40, 200, 0),
		row("decode", "gemm/cublas", 3, 230, 230.0/470, 60, 70, 100, &r1, 60, 100, 70),
		row("prefill", "total", 2, 1300, 1, 500, 650, 800, &r0, 800, 500),
		row("prefill", "gemm/cublas", 2, 1300, 1, 500, 650, 800, &r0, 800, 500),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	// One rank: nothing to compare, but an empty array, not null.
	one := CrossRank(&Report{Groups: r.Groups[:1]})
	if one == nil || len(one) != 0 {
		t.Errorf("one rank: got %#v, want an empty non-nil slice", one)
	}
}
