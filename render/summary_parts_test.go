package render

import (
	"bytes"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/window"
)

// TestSummaryAndDetailAreBreakdown: the summary, a blank line and the
// detail are Breakdown's text and markdown, byte for byte.
func TestSummaryAndDetailAreBreakdown(t *testing.T) {
	cublas, nccl := classify.MustCategory("gemm/cublas"), classify.MustCategory("communication/allreduce")
	r0, r1 := 0, 1
	tbl := table([]window.Input{{Path: "run/rank0.json", Run: "run", Rank: &r0}, {Path: "run/rank1.json", Run: "run", Rank: &r1}})
	group := func(rank int, kernel int64) analyze.Group {
		return analyze.Group{Rank: &tbl.Ranks[rank], Device: int32(rank),
			Class: whole, KernelNS: kernel, BusyNS: kernel, SpanNS: 2 * kernel, IdleNS: kernel,
			Categories: []analyze.CategoryStat{{Category: cublas, KernelNS: kernel / 4, Share: 0.25}, {Category: nccl, KernelNS: kernel * 3 / 4, Share: 0.75}}}
	}
	r := &analyze.GroupTable{Table: tbl, Groups: []analyze.Group{group(0, 4_000_000), group(1, 8_000_000)},
		CrossRank: []analyze.RankRow{{Run: "run", Class: whole, Ranks: 2, Category: cublas, TotalNS: 3_000_000, MaxRank: &tbl.Ranks[1]}}}
	for _, format := range []string{"text", "markdown"} {
		opt := Options{Format: format, Detail: DetailGroups | DetailRanks, NoHint: true}
		var whole, sum, detail bytes.Buffer
		if err := Breakdown(&whole, r, nil, Answer{}, opt); err != nil {
			t.Fatal(err)
		}
		if err := Summary(&sum, r, Answer{}, opt); err != nil {
			t.Fatal(err)
		}
		if err := BreakdownDetail(&detail, r, nil, opt); err != nil {
			t.Fatal(err)
		}
		if sum.Len() == 0 || detail.Len() == 0 {
			t.Fatalf("%s: empty summary or detail", format)
		}
		if got := sum.String() + "\n" + detail.String(); got != whole.String() {
			t.Errorf("%s: summary + detail differ from Breakdown:\n%s\nwant\n%s", format, got, whole.String())
		}
	}
}
