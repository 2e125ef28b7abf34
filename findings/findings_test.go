package findings

import (
	"math"
	"strings"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/interconnect"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

func find(t *testing.T, f *KindFindings, k Kind) *Finding {
	t.Helper()
	for i := range f.Findings {
		if f.Findings[i].Kind == k {
			return &f.Findings[i]
		}
	}
	return nil
}

// TestLatencyBound: when the fixed cost explains most of the transfer,
// the op is latency-bound and its saving is instances per step × α,
// exactly the generator's; the link saving is kept as evidence.
func TestLatencyBound(t *testing.T) {
	cfg := gen.RunConfig{Ranks: 4, Steps: 12, Layers: 3, BusGBps: 64, LatencyNS: 40_000, Seed: 3}
	tbl, _ := genRun(t, cfg, "run")
	rep, _ := findingsOf(tbl, cfg, &collectives.Link{Link: interconnect.Link{Name: "fast", GBps: 128}})
	kf := rep.Of("run", step.ClassOf(step.Decode))
	f := find(t, kf, LatencyBound)
	if f == nil || kf.Findings[0].Kind != LatencyBound {
		t.Fatalf("no latency-bound finding first: %v", kinds(kf.Findings))
	}
	e := f.Collective
	// Two all-reduces per layer, every instance of known size.
	if e.InstancesPerStep != 6 || !e.Fit.OK || math.Abs(e.Fit.AlphaNS-40_000) > 1e-3 || e.LatencyNS != 6*40_000 || f.SavingNS != 6*40_000 {
		t.Errorf("evidence %+v, saving %d; want 6 per step × α 40 µs", e, f.SavingNS)
	}
	if f.Estimate != UpperBound || e.LinkSavingNS <= 0 || e.LinkSavingNS >= f.SavingNS || find(t, kf, Transfer) != nil {
		t.Errorf("estimate %v, link saving %d: want an upper bound, and a smaller link saving as evidence only", f.Estimate, e.LinkSavingNS)
	}
}

// TestThresholdAndOrder: findings under --min-finding are counted with
// their savings, not listed; the listed ones come savings first, largest
// first, then the informational ones, then the capture gaps.
func TestThresholdAndOrder(t *testing.T) {
	cfg := gen.RunConfig{Ranks: 4, Steps: 10, Layers: 2, Straggler: 1, SlowdownPct: 30, BusGBps: 8, LaunchNS: 15_000, Seed: 4}
	tbl, _ := genRun(t, cfg, "run")
	g := analyze.Breakdown(tbl, analyze.Options{})
	ct := collectives.Match(tbl, collectives.Options{BytesPerToken: cfg.BytesPerToken(), Link: &collectives.Link{Link: interconnect.Link{GBps: 16}}})
	all := Find(g, ct, Options{MinShare: -1}).Of("run", step.ClassOf(step.Decode))
	if all.Below != 0 {
		t.Fatalf("--min-finding 0 left %d out", all.Below)
	}
	stage := 0 // 0 savings, 1 informational, 2 gaps
	for i, f := range all.Findings {
		s := map[bool]int{true: 0}[f.Ranked()]
		if !f.Ranked() {
			s = 1
			if f.Kind == CaptureGap {
				s = 2
			}
		}
		if s < stage || (s == 0 && i > 0 && all.Findings[i-1].Ranked() && all.Findings[i-1].SavingNS < f.SavingNS) {
			t.Errorf("out of order at %d: %v", i, kinds(all.Findings))
		}
		stage = s
	}
	for _, want := range []Kind{Straggler, Transfer, LaunchBound, ExposedCommunication} {
		if find(t, all, want) == nil {
			t.Errorf("no %v finding: %v", want, kinds(all.Findings))
		}
	}
	// A threshold above the smallest saving counts it instead.
	smallest := int64(math.MaxInt64)
	for _, f := range all.Findings {
		if f.Ranked() {
			smallest = min(smallest, f.SavingNS)
		}
	}
	cut := float64(smallest+1) / all.StepNS
	some := Find(g, ct, Options{MinShare: cut}).Of("run", step.ClassOf(step.Decode))
	if some.Below < 1 || some.BelowNS < smallest || len(some.Findings) >= len(all.Findings) {
		t.Errorf("threshold %v: %d below (%d ns), %d listed of %d", cut, some.Below, some.BelowNS, len(some.Findings), len(all.Findings))
	}
	for _, f := range some.Findings {
		if f.Ranked() && f.Share < cut {
			t.Errorf("listed under the threshold: %+v", f)
		}
	}
}

// TestCaptureGaps: what the trace lacks is said, with the flag that
// remedies it.
func TestCaptureGaps(t *testing.T) {
	cfg := gen.RunConfig{Ranks: 4, Steps: 6, Layers: 2, Straggler: 1, SlowdownPct: 30, Seed: 5}
	tbl, _ := genRun(t, cfg, "run")
	g := analyze.Breakdown(tbl, analyze.Options{})
	gaps := func(ct *collectives.Table) map[Gap]bool {
		out := map[Gap]bool{}
		for _, f := range Find(g, ct, Options{}).Of("run", step.ClassOf(step.Decode)).Findings {
			if f.Kind == CaptureGap {
				out[f.Gap.Gap] = true
				if f.Remedy == "" {
					t.Errorf("gap %v without a remedy", f.Gap.Gap)
				}
			}
		}
		return out
	}
	// No bytes per token: decode's custom all-reduces have no size.
	if got := gaps(collectives.Match(tbl, collectives.Options{})); !got[NoMessageSizes] || got[NoLink] {
		t.Errorf("without sizes: %v", got)
	}
	// Sizes, no link.
	if got := gaps(collectives.Match(tbl, collectives.Options{BytesPerToken: cfg.BytesPerToken()})); got[NoMessageSizes] || !got[NoLink] {
		t.Errorf("without a link: %v", got)
	}
	// A measured link without a curve for all-reduce.
	l := collectives.Link{Link: interconnect.Link{Name: "nccl-tests"}, Curves: []collectives.Curve{
		{Op: "allgather", Factor: 1, Points: []collectives.Point{{Bytes: 1 << 20, TimeNS: 1e5}}},
		{Op: "broadcast", Factor: 1, Points: []collectives.Point{{Bytes: 1 << 20, TimeNS: 1e5}}}}}
	if got := gaps(collectives.Match(tbl, collectives.Options{BytesPerToken: cfg.BytesPerToken(), Link: &l})); !got[NoCurveForOp] {
		t.Errorf("nccl-tests without all-reduce: %v", got)
	}
	// CUDA graphs nsys traced whole: their kernels are missing.
	// (what the table keeps of the trace's anomalies)
	tbl.Inputs[1].Anomalies = []trace.Anomaly{{What: trace.AnomalyWholeGraphs, Count: 5, Example: "CUPTI_ACTIVITY_KIND_GRAPH_TRACE: 1 ns"}}
	kf0 := Find(g, nil, Options{}).Of("run", step.ClassOf(step.Decode))
	tbl.Inputs[1].Anomalies = nil
	var wg *Finding
	for i := range kf0.Findings {
		if f := &kf0.Findings[i]; f.Gap != nil && f.Gap.Gap == WholeGraphs {
			wg = f
		}
	}
	if wg == nil || wg.Gap.Count != 5 || !strings.Contains(wg.Remedy, "--cuda-graph-trace=node") {
		t.Errorf("whole graphs: %v", kinds(kf0.Findings))
	}
	// Two of the four ranks: the world size promises more.
	two := tbl.Select([]int{0, 1})
	g2 := analyze.Breakdown(two, analyze.Options{})
	kf := Find(g2, collectives.Match(two, collectives.Options{}), Options{}).Of("run", step.ClassOf(step.Decode))
	if f := find(t, kf, CaptureGap); f == nil || f.Gap.Gap != MissingRanks || f.Gap.Count != 2 || f.Gap.Of != 4 {
		t.Errorf("two ranks of four: %v", kinds(kf.Findings))
	}
	// Without step markers: one whole-trace window per device, and the
	// findings are per device.
	ins := make([]window.Input, len(tbl.Inputs))
	for i, in := range tbl.Inputs {
		ins[i] = window.Input{Path: in.Path, Run: in.Run, Trace: in.Trace}
	}
	wt, err := window.Build(ins, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gw := analyze.Breakdown(wt, analyze.Options{})
	kw := Find(gw, collectives.Match(wt, collectives.Options{}), Options{}).Of("run", step.WholeTrace)
	if kw == nil || kw.Steps != 1 || kw.Windows != 4 {
		t.Fatalf("whole trace: %+v", kw)
	}
	if f := find(t, kw, CaptureGap); f == nil || f.Gap.Gap != NoStepMarkers {
		t.Errorf("whole trace: %v", kinds(kw.Findings))
	}
	if sums := analyze.Summarize(gw); kw.StepNS != float64(sums[0].SpanNS)/4 {
		t.Errorf("whole trace: step %v, want the mean span per device", kw.StepNS)
	}
}

// TestStragglerEvidence: the straggler's compute excess names every
// compute category of a slow GPU, at the configured slowdown.
func TestStragglerEvidence(t *testing.T) {
	cfg := gen.RunConfig{Ranks: 8, Steps: 20, Layers: 3, Straggler: 6, SlowdownPct: 25, JitterNS: 300, BusGBps: 16, Seed: 8}
	tbl, exp := genRun(t, cfg, "run")
	rep, _ := findingsOf(tbl, cfg, nil)
	kf := rep.Of("run", step.ClassOf(step.Decode))
	f := find(t, kf, Straggler)
	if f == nil || kf.Findings[0].Kind != Straggler {
		t.Fatalf("no straggler first: %v", kinds(kf.Findings))
	}
	e := f.Straggler
	if *e.Rank.Number != 6 || !e.SlowGPU || len(e.Excess) < 3 || e.LastArrivals != e.Instances {
		t.Fatalf("evidence %+v", e)
	}
	for _, x := range e.Excess {
		if math.Abs(x.Ratio-1.25) > 0.02 {
			t.Errorf("%v: %.3f× the median, want ≈1.25×", x.Category, x.Ratio)
		}
	}
	// The saving is the generator's summed lead per step.
	want := exp.Ops[0].LeadNS[6]
	if f.SavingNS != int64(math.Round(float64(want)/float64(cfg.Steps))) {
		t.Errorf("saving %d, the generator's lead %d over %d steps", f.SavingNS, want, cfg.Steps)
	}
	if f.Share != float64(f.SavingNS)/kf.StepNS || kf.Straggler != e {
		t.Errorf("share %v of %v", f.Share, kf.StepNS)
	}
}

// TestRoofline: the efficiency analysis's categories, as its caller copies
// them, give a finding per compute category above its roofline, sized by
// the time above it per step (an upper bound), ranked with the others;
// communication is the collectives' to size; a step kind with no priced
// kernel gets the no-shapes capture gap.
func TestRoofline(t *testing.T) {
	cfg := gen.RunConfig{Ranks: 2, Steps: 10, Layers: 2, BusGBps: 16, Seed: 9}
	tbl, _ := genRun(t, cfg, "run")
	g := analyze.Breakdown(tbl, analyze.Options{})
	decode := step.ClassOf(step.Decode)
	rows := []RooflineRow{
		{Run: "run", Class: decode, Category: classify.MustCategory("gemm/marlin"), Windows: 20, KernelNS: 2_000_000, ModelledNS: 1_800_000, RooflineNS: 600_000},
		{Run: "run", Class: decode, Category: classify.MustCategory("attention/fa2"), Windows: 20, KernelNS: 900_000, ModelledNS: 0},
		{Run: "run", Class: decode, Category: classify.MustCategory("norm/norm"), Windows: 20, KernelNS: 300_000, ModelledNS: 300_000, RooflineNS: 300_000},
		{Run: "run", Class: decode, Category: classify.MustCategory("communication/allreduce"), Windows: 20, KernelNS: 900_000, ModelledNS: 900_000, RooflineNS: 1},
		{Run: "other", Class: decode, Category: classify.MustCategory("gemm/marlin"), Windows: 20, KernelNS: 9e9, ModelledNS: 9e9, RooflineNS: 1},
	}
	kf := Find(g, nil, Options{Priced: true, Roofline: rows, MinShare: -1}).Of("run", decode)
	var found []*Finding
	for i := range kf.Findings {
		if kf.Findings[i].Kind == Roofline {
			found = append(found, &kf.Findings[i])
		}
	}
	if len(found) != 1 {
		t.Fatalf("roofline findings %v", kinds(kf.Findings))
	}
	f := found[0]
	e := f.Roofline
	if f.SavingNS != 60_000 || f.Estimate != UpperBound || e.ModelledNS != 90_000 || e.RooflineNS != 30_000 || e.KernelNS != 100_000 ||
		math.Abs(e.Efficiency-1.0/3) > 1e-12 || e.Category.String() != "gemm/marlin" {
		t.Errorf("finding %+v, evidence %+v", f, e)
	}
	if find(t, kf, CaptureGap) != nil {
		t.Errorf("a priced step kind has a no-shapes gap: %v", kinds(kf.Findings))
	}
	// Nothing priced in decode, prefill priced: the gap, no finding;
	// nothing priced anywhere: neither (the trace records no shapes at
	// all, which breakdown does not look at).
	none := []RooflineRow{{Run: "run", Class: decode, Category: classify.MustCategory("gemm/marlin"), Windows: 20, KernelNS: 2_000_000}}
	kf = Find(g, nil, Options{Priced: true, Roofline: none}).Of("run", decode)
	if find(t, kf, CaptureGap) != nil || find(t, kf, Roofline) != nil {
		t.Errorf("nothing priced anywhere: %v", kinds(kf.Findings))
	}
	prefill := append(none, RooflineRow{Run: "run", Class: step.ClassOf(step.Prefill), Category: classify.MustCategory("gemm/marlin"),
		Windows: 2, KernelNS: 1_000_000, ModelledNS: 1_000_000, RooflineNS: 900_000})
	kf = Find(g, nil, Options{Priced: true, Roofline: prefill}).Of("run", decode)
	if f := find(t, kf, CaptureGap); f == nil || f.Gap.Gap != NoShapes || find(t, kf, Roofline) != nil {
		t.Errorf("decode unpriced, prefill priced: %v", kinds(kf.Findings))
	}
	// Not asked: neither.
	kf = Find(g, nil, Options{Roofline: rows}).Of("run", decode)
	if find(t, kf, Roofline) != nil {
		t.Error("roofline findings without the efficiency analysis")
	}
}
