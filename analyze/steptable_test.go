package analyze

import (
	"math"
	"math/rand"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

const (
	gemmName = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
	arName   = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
)

// sixSteps builds six ProfilerSteps on device 0: a 60 ns GEMM, a 10 ns
// gap, then an all-reduce of ar[i] ns.
func sixSteps(t *testing.T, ar []int64) window.Input {
	b := newBuilder()
	for i, d := range ar {
		at := trace.Time(i * 1000)
		b.cpu("ProfilerStep#"+string(rune('0'+i)), 1, at, at+100)
		b.launch(0, int64(2*i+1), 1, at+10)
		b.launch(0, int64(2*i+2), 1, at+20)
		b.t.Activities = append(b.t.Activities,
			trace.Activity{Start: at + 200, Dur: 60, Corr: int64(2*i + 1), Name: b.in.ID(gemmName), Stream: 7},
			trace.Activity{Start: at + 270, Dur: d, Corr: int64(2*i + 2), Name: b.in.ID(arName), Stream: 7})
	}
	tr := b.done(t)
	st, err := step.Find(tr, step.Options{})
	if err != nil || st == nil {
		t.Fatal(st, err)
	}
	return window.Input{Path: "six", Trace: tr, Steps: st}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestStepStats(t *testing.T) {
	in := sixSteps(t, []int64{30, 34, 30, 30, 30, 230})
	r := breakdownOf(t, Options{}, in)
	st := r.Steps
	if len(r.Groups) != 1 {
		t.Fatalf("groups = %+v", r.Groups)
	}
	g := r.Groups[0]
	if g.Class != stepOnly || g.Steps != 6 || g.KernelNS != 744 || g.SpanNS != 804 || g.BusyNS != 744 {
		t.Errorf("group = %+v", g)
	}
	ss := g.StepStats
	if ss == nil {
		t.Fatal("no step_stats")
	}
	// Spans 100 104 100 100 100 300 -> sorted 100 100 100 100 104 300.
	want := stats.Dist{Min: 100, Mean: 134, P50: 100, P90: 202, P99: 290.2, Max: 300}
	if s := ss.SpanNS; s.Min != want.Min || s.Max != want.Max || !near(s.Mean, want.Mean) || !near(s.P50, want.P50) ||
		!near(s.P90, want.P90) || !near(s.P99, want.P99) {
		t.Errorf("span = %+v, want %+v", s, want)
	}
	if ss.Count != 6 || ss.IdleNS.Min != 10 || ss.IdleNS.Max != 10 || ss.BusyNS.Max != 290 || ss.KernelNS.Min != 90 {
		t.Errorf("stats = %+v", ss)
	}
	// The MAD of the spans is 0: floored at 1% of the median, the limit is
	// 100 + 3.5/0.6745 ns = 105.19 ns: 300 is an outlier, 104 is not.
	if len(ss.Outliers) != 1 || ss.Outliers[0] != 5 {
		t.Errorf("outliers = %v, want [5]", ss.Outliers)
	}
	if len(ss.Categories) != 2 || ss.Categories[0].Category.String() != "communication/allreduce" || ss.Categories[1].Category.String() != "gemm/cublas" {
		t.Fatalf("categories = %+v", ss.Categories)
	}
	ar := ss.Categories[0].KernelNS // 30 30 30 30 34 230
	if ar.Min != 30 || ar.Max != 230 || !near(ar.Mean, 64) || !near(ar.P50, 30) || !near(ar.P90, 132) || !near(ar.P99, 220.2) {
		t.Errorf("allreduce per step = %+v", ar)
	}
	if gm := ss.Categories[1].KernelNS; gm.Min != 60 || gm.Max != 60 || !near(gm.Mean, 60) {
		t.Errorf("gemm per step = %+v", gm)
	}

	if len(st) != 6 {
		t.Fatalf("%d step rows", len(st))
	}
	for i, l := range st {
		if l.Step.Index != i || l.Offset != int64(i*1000) || l.IdleNS != 10 || l.Outlier != (i == 5) {
			t.Errorf("row %d = %+v", i, l)
		}
	}
	l0, l5 := st[0], st[5]
	if c, _ := l0.TopCategory(); c.Category.String() != "gemm/cublas" || !near(c.ShareOfKernel, 60.0/90) || !near(c.ShareOfSpan, 60.0/100) {
		t.Errorf("step 0 = %+v", l0)
	}
	if c, _ := l5.TopCategory(); c.Category.String() != "communication/allreduce" || !near(c.ShareOfKernel, 230.0/290) || !near(c.ShareOfSpan, 230.0/300) ||
		!near(l5.Categories[1].ShareOfKernel, 60.0/290) {
		t.Errorf("step 5 = %+v", l5)
	}
	if s := r.Table.Inputs[0].Stepped; s == nil || s.Steps != 6 || s.Unattributed != 0 {
		t.Errorf("summary = %+v", s)
	}
	// Steps start 1000 ns apart on the device; step 1's span is 104.
	if r := st[1]; !r.HasNext || r.PeriodNS != 1000 || r.GapNS != 896 {
		t.Errorf("step 1 period %d gap %d (next %v), want 1000, 896", r.PeriodNS, r.GapNS, r.HasNext)
	}
	if st[5].HasNext {
		t.Error("the last step has a next step")
	}
	if ss.Periods != 5 || ss.PeriodNS.P50 != 1000 || ss.GapNS.Min != 896 || ss.GapNS.Max != 900 {
		t.Errorf("periods %d %+v gaps %+v", ss.Periods, ss.PeriodNS, ss.GapNS)
	}
	// Per step: 744 ns over 6 steps is 124; the all-reduce's 384 is 64.
	// Step share: busy over span, 744 of 804.
	if g.KernelPerStepNS != 124 || !near(g.StepShare, 744.0/804) {
		t.Errorf("group per step %d share %v", g.KernelPerStepNS, g.StepShare)
	}
	if c := g.Categories[0]; c.Category.String() != "communication/allreduce" || c.KernelPerStepNS != 64 || !near(c.StepShare, 384.0/804) {
		t.Errorf("allreduce per step %+v", c)
	}
}

func TestOutlierLimit(t *testing.T) {
	for _, tc := range []struct {
		spans []int64 // sorted
		want  float64
	}{
		{[]int64{100, 100, 100, 300}, math.Inf(1)},           // too few steps
		{[]int64{100, 100, 100, 100, 300}, 100 + 3.5/0.6745}, // MAD 0, floored at 1 ns
		// median 300, deviations 200 100 0 100 200 -> MAD 100.
		{[]int64{100, 200, 300, 400, 500}, 300 + 3.5/0.6745*100},
	} {
		if got := outlierLimit(tc.spans); !near(got, tc.want) && got != tc.want {
			t.Errorf("outlierLimit(%v) = %v, want %v", tc.spans, got, tc.want)
		}
	}
}

func TestStepSummaryUnattributed(t *testing.T) {
	in := sixSteps(t, []int64{30, 30, 30, 30, 30, 30})
	// A kernel launched outside every step, and a marker with no GPU work.
	tr := in.Trace
	tr.Launches = append(tr.Launches, trace.Launch{Start: 50_000, Corr: 99, Thread: 1})
	tr.Activities = append(tr.Activities, trace.Activity{Start: 60_000, Dur: 7, Corr: 99, Name: tr.Activities[0].Name, Stream: 7})
	tr.Ranges = append(tr.Ranges, trace.Range{Start: 70_000, Dur: 5, Thread: 1, Name: tr.Ranges[0].Name, Device: -1, Stream: -1})
	tr.Sort()
	st, err := step.Find(tr, step.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := breakdownOf(t, Options{}, window.Input{Path: "x", Trace: tr, Steps: st})
	s := *r.Table.Inputs[0].Stepped
	if s.Steps != 7 || s.Empty != 1 || s.Unattributed != 1 || s.UnattributedNS != 7 {
		t.Errorf("summary = %+v", s)
	}
	var none *Group
	for i := range r.Groups {
		if r.Groups[i].Class == outside {
			none = &r.Groups[i]
		}
	}
	if none == nil || none.KernelNS != 7 || none.StepStats != nil {
		t.Errorf("unattributed group = %+v", none)
	}
}

// TestStepIdleIsDeviceIdle checks a step's idle time against a brute-force
// count: the nanoseconds inside its span when the device ran no activity
// of any step. Steps overlap at random, as a step's kernels may still run
// when the next step's start.
func TestStepIdleIsDeviceIdle(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for iter := 0; iter < 300; iter++ {
		b := newBuilder()
		type a struct {
			dev        int32
			start, dur int64
			step       int32
		}
		var acts []a
		for i := 0; i < 1+rng.Intn(14); i++ {
			acts = append(acts, a{int32(rng.Intn(2)), int64(rng.Intn(300)), int64(rng.Intn(50)), int32(rng.Intn(4)) - 1})
		}
		for _, x := range acts {
			b.t.Activities = append(b.t.Activities, trace.Activity{Start: trace.Time(x.start), Dur: x.dur, Name: b.in.ID(gemmName),
				Device: x.dev, Stream: 7})
		}
		tr := b.done(t)
		// Steps by hand: activity i (in sorted order) to acts' step of the
		// same (dev, start, dur), a multiset match.
		of := make([]int32, len(tr.Activities))
		used := make([]bool, len(acts))
		for i, ta := range tr.Activities {
			for j, x := range acts {
				if !used[j] && x.dev == ta.Device && trace.Time(x.start) == ta.Start && x.dur == ta.Dur {
					used[j], of[i] = true, x.step
					break
				}
			}
		}
		st := &step.Steps{Of: of}
		for k := range 3 {
			st.List = append(st.List, step.Step{Index: k, Kind: step.Decode})
		}
		table := breakdownOf(t, Options{}, window.Input{Path: "x", Trace: tr, Steps: st})
		for _, row := range table.Steps {
			covered := map[int64]bool{}
			for _, x := range acts {
				if x.dev == row.Device {
					for ns := x.start; ns < x.start+x.dur; ns++ {
						covered[ns] = true
					}
				}
			}
			var idle int64
			for ns := int64(row.Start); ns < int64(row.Start)+row.SpanNS; ns++ {
				if !covered[ns] {
					idle++
				}
			}
			if row.IdleNS != idle {
				t.Fatalf("iter %d step %d device %d: idle %d, brute force %d; acts %+v", iter, row.Step.Index, row.Device, row.IdleNS, idle, acts)
			}
		}
	}
}

// TestTokenStats: tokens per step and time per token over the steps whose
// markers say, in a group and in the run summary.
func TestTokenStats(t *testing.T) {
	rk := &window.Rank{Run: "r"}
	rows := []StepRow{
		{Rank: rk, Step: step.Step{Index: 0, Kind: step.Decode, Tokens: 32}, SpanNS: 3200},
		{Rank: rk, Step: step.Step{Index: 1, Kind: step.Decode, Tokens: 64}, SpanNS: 4800},
		{Rank: rk, Step: step.Step{Index: 2, Kind: step.Decode, Tokens: -1}, SpanNS: 9999},
	}
	groups := []Group{{Rank: rk, Class: decode, Steps: 3, SpanNS: 17999}}
	addStats(rows, groups)
	ss := groups[0].StepStats
	// Tokens 32 and 64 (p50 48); spans 3200 + 4800 over 96 tokens.
	if ss.TokenSteps != 2 || ss.Tokens.P50 != 48 || ss.NSPerToken == nil || *ss.NSPerToken != 8000.0/96 {
		t.Errorf("group tokens %d %+v %v", ss.TokenSteps, ss.Tokens, ss.NSPerToken)
	}
	sum := Summarize(&GroupTable{Groups: groups, Steps: rows})
	if s := sum[0]; s.TokenSteps != 2 || s.TokensP50 != 48 || s.NSPerToken == nil || *s.NSPerToken != 8000.0/96 {
		t.Errorf("summary tokens %d %v %v", s.TokenSteps, s.TokensP50, s.NSPerToken)
	}
}

// TestCategoryStats: a group's per-category distribution is stats.Of over
// its steps' kernel time in the category (kernelOf: 0 where a step lacks
// it, a row's first entry where it repeats), largest mean first.
func TestCategoryStats(t *testing.T) {
	rk := &window.Rank{Run: "r"}
	gemm, attn, comm := classify.MustCategory("gemm/cublas"), classify.MustCategory("attention/flash"), classify.MustCategory("communication/allreduce")
	cats := func(cs ...StepCat) []StepCat { return cs }
	rows := []StepRow{
		{Rank: rk, Step: step.Step{Index: 0, Kind: step.Decode}, Categories: cats(StepCat{Category: gemm, KernelNS: 50}, StepCat{Category: attn, KernelNS: 7})},
		{Rank: rk, Step: step.Step{Index: 1, Kind: step.Decode}, Categories: cats(StepCat{Category: comm, KernelNS: 9}, StepCat{Category: gemm, KernelNS: 30}, StepCat{Category: gemm, KernelNS: 1000})},
		{Rank: rk, Step: step.Step{Index: 2, Kind: step.Decode}, Categories: cats(StepCat{Category: attn, KernelNS: 11})},
	}
	groups := []Group{{Rank: rk, Class: decode, Steps: 3}}
	addStats(rows, groups)
	got := groups[0].StepStats.Categories
	if len(got) != 3 {
		t.Fatalf("%d categories, want 3: %+v", len(got), got)
	}
	for _, cs := range got {
		col := make([]int64, len(rows))
		for j := range rows {
			col[j] = kernelOf(&rows[j], cs.Category)
		}
		if want := stats.Of(col); cs.KernelNS != want {
			t.Errorf("%s: %+v, want %+v", cs.Category, cs.KernelNS, want)
		}
	}
	// Means: gemm 80/3, attention 18/3, allreduce 9/3.
	if got[0].Category != gemm || got[1].Category != attn || got[2].Category != comm || got[0].KernelNS.Total != 80 {
		t.Errorf("order %v %v %v, gemm total %d", got[0].Category, got[1].Category, got[2].Category, got[0].KernelNS.Total)
	}
}

// kernelOf is step row r's kernel time in category c, read the plain way.
func kernelOf(r *StepRow, c classify.Category) int64 {
	for _, sc := range r.Categories {
		if sc.Category == c {
			return sc.KernelNS
		}
	}
	return 0
}
