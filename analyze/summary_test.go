package analyze

import (
	"slices"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

func TestSummarize(t *testing.T) {
	gemm, ar := classify.MustCategory("gemm/cublas"), classify.MustCategory("communication/allreduce")
	n0, n1 := 0, 1
	ranks := []window.Rank{{ID: 0, Input: 0, Run: "a", Number: &n0}, {ID: 1, Input: 1, Run: "a", Number: &n1}, {ID: 2, Input: 2, Run: "b"}}
	grp := func(rank *window.Rank, kind step.Class, steps int, kernel, busy, span, idle int64, cats ...CategoryStat) Group {
		return Group{Rank: rank, Class: kind, Steps: steps, KernelNS: kernel, BusyNS: busy,
			SpanNS: span, IdleNS: idle, Categories: cats, Idle: window.IdleSplit{LaunchBoundNS: idle / 2, DeviceSideNS: idle - idle/2}}
	}
	c := func(cat classify.Category, kernel, busy int64) CategoryStat {
		return CategoryStat{Category: cat, KernelNS: kernel, BusyNS: busy, Instances: 1}
	}
	g := &GroupTable{Groups: []Group{
		grp(&ranks[0], decode, 2, 300, 250, 400, 150, c(gemm, 200, 180), c(ar, 100, 70)),
		grp(&ranks[1], decode, 2, 500, 400, 600, 200, c(gemm, 200, 200), c(ar, 300, 200)),
		grp(&ranks[1], outside, 0, 10, 10, 20, 10, c(gemm, 10, 10)),
		grp(&ranks[2], whole, 0, 70, 60, 90, 30, c(ar, 70, 60)),
	}, Steps: []StepRow{
		{Rank: &ranks[0], Step: step.Step{Kind: step.Decode}, SpanNS: 150, HasNext: true, PeriodNS: 300, GapNS: 150},
		{Rank: &ranks[0], Step: step.Step{Kind: step.Decode}, SpanNS: 250},
		{Rank: &ranks[1], Step: step.Step{Kind: step.Decode}, SpanNS: 280, HasNext: true, PeriodNS: 400, GapNS: 120},
		{Rank: &ranks[1], Step: step.Step{Kind: step.Decode}, SpanNS: 320},
	}}
	got := Summarize(g)
	if len(got) != 3 || got[0].Run != "a" || got[0].Class != decode || got[1].Class != outside || got[2].Run != "b" {
		t.Fatalf("summaries %+v", got)
	}
	d := got[0]
	if d.Ranks != 2 || d.Devices != 2 || d.Steps != 2 || d.Windows != 4 || d.KernelNS != 800 || d.BusyNS != 650 ||
		d.SpanNS != 1000 || d.IdleNS != 350 || d.Idle.LaunchBoundNS != 175 || d.KernelPerStepNS() != 200 {
		t.Errorf("decode sums %+v", d)
	}
	// Step spans 150 250 280 320: p50 265; periods 300 400 (p50 350),
	// gaps 150 120 (p50 135).
	if d.StepSpan.P50 != 265 || d.StepSpan.Max != 320 || d.Periods != 2 || d.PeriodP50 != 350 || d.GapP50 != 135 {
		t.Errorf("decode steps %+v", d)
	}
	// gemm 400 of 800 kernel (50%), busy 380 of span 1000; allreduce 400:
	// a tie broken by the category order (communication first).
	if len(d.Categories) != 2 || d.Categories[0].Category != ar || d.Categories[0].KernelNS != 400 ||
		d.Categories[1].StepShare != 0.38 || d.Categories[1].KernelPerStepNS != 100 || d.Categories[1].Share != 0.5 {
		t.Errorf("decode categories %+v", d.Categories)
	}
	// Per rank per step: 300/2 = 150, 500/2 = 250; rank 1 has the most.
	if !slices.Equal(d.PerRank, []int64{150, 250}) || d.MaxRank == nil || *d.MaxRank.Number != 1 {
		t.Errorf("per rank %v, max %+v", d.PerRank, d.MaxRank)
	}
	if b := got[2]; b.Windows != 1 || b.StepSpan != (stats.Dist{}) || b.KernelPerStepNS() != 70 {
		t.Errorf("whole-trace run %+v", b)
	}
}
