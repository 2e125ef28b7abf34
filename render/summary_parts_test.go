package render

import (
	"bytes"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
)

// TestSummaryAndDetailAreBreakdown: the summary, a blank line and the
// detail are Breakdown's text and markdown, byte for byte.
func TestSummaryAndDetailAreBreakdown(t *testing.T) {
	cublas, nccl := classify.MustCategory("gemm/cublas"), classify.MustCategory("communication/allreduce")
	r0, r1 := 0, 1
	group := func(rank *int, kernel int64) analyze.Group {
		return analyze.Group{Path: "run/rank" + string(rune('0'+*rank)) + ".json", Run: "run", Rank: rank, Device: int32(*rank),
			StepKind: analyze.KindAll, KernelNS: kernel, BusyNS: kernel, SpanNS: 2 * kernel, IdleNS: kernel,
			Categories: []analyze.CategoryStat{{Category: cublas, KernelNS: kernel / 4, Share: 0.25}, {Category: nccl, KernelNS: kernel * 3 / 4, Share: 0.75}}}
	}
	r := &analyze.GroupTable{Groups: []analyze.Group{group(&r0, 4_000_000), group(&r1, 8_000_000)},
		CrossRank: []analyze.RankRow{{Run: "run", StepKind: analyze.KindAll, Ranks: 2, Category: cublas, TotalNS: 3_000_000}}}
	for _, format := range []string{"text", "markdown"} {
		opt := Options{Format: format, Detail: DetailGroups | DetailRanks, NoHint: true}
		var whole, sum, detail bytes.Buffer
		if err := Breakdown(&whole, r, nil, nil, opt); err != nil {
			t.Fatal(err)
		}
		if err := Summary(&sum, r, nil, opt); err != nil {
			t.Fatal(err)
		}
		if err := BreakdownDetail(&detail, r, opt); err != nil {
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
