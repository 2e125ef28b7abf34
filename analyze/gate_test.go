package analyze_test

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/step"
)

func TestParseGates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []analyze.Gate
	}{
		{"step_p50>+3%", []analyze.Gate{{Metric: "step_p50", Pct: 3, Text: "step_p50>+3%"}}},
		{" wall > 0.5ms , kernel>+250us", []analyze.Gate{{Metric: "wall", NS: 500_000, Text: "wall > 0.5ms"}, {Metric: "kernel", NS: 250_000, Text: "kernel>+250us"}}},
		{"idle>1.5%,step_p90>2s", []analyze.Gate{{Metric: "idle", Pct: 1.5, Text: "idle>1.5%"}, {Metric: "step_p90", NS: 2e9, Text: "step_p90>2s"}}},
	} {
		got, err := analyze.ParseGates(tc.in)
		if err != nil || len(got) != len(tc.want) {
			t.Fatalf("%q: %v, %v", tc.in, got, err)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: %+v, want %+v", tc.in, got[i], tc.want[i])
			}
		}
	}
	for _, bad := range []string{"", "step_p50", "step_p50<3%", "p50>3%", "step_p50>-3%", "wall>3", "wall>fast", ","} {
		if _, err := analyze.ParseGates(bad); !errors.Is(err, analyze.ErrGateSyntax) {
			t.Errorf("%q: %v, want ErrGateSyntax", bad, err)
		}
	}
}

// TestGate checks --fail-if on generated runs: attention 20 µs slower in
// every decode step fails step_p50>+1% and wall>+1%, not a threshold
// above the change; a run against itself fails nothing; the whole-trace
// diff has no step time to gate.
func TestGate(t *testing.T) {
	cfg := gen.Config{Ranks: 2, Steps: 30, Layers: 2, Seed: 21}
	before, _ := genRun(t, cfg)
	slow := cfg
	slow.SlowCategory, slow.SlowNS = "attention/fa2", 20_000
	after, _ := genRun(t, slow)
	d := analyze.Compare(before, after, analyze.Options{})
	check := func(spec string) []analyze.GateResult {
		gates, err := analyze.ParseGates(spec)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := d.Check(gates)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	failed := func(rs []analyze.GateResult) bool {
		for _, r := range rs {
			if r.Failed {
				return true
			}
		}
		return false
	}
	rs := check("step_p50>+1%")
	if len(rs) != 1 || rs[0].Class != step.ClassOf(step.Decode) || !rs[0].Failed || rs[0].Change != "grew" {
		t.Fatalf("step_p50>+1%%: %+v", rs)
	}
	// Two layers: two attention kernels per step, 40 µs in all.
	if math.Abs(rs[0].Delta-40_000) > 5_000 {
		t.Errorf("delta %v, want about 40 µs", rs[0].Delta)
	}
	if !failed(check("wall>+1%")) || !failed(check("kernel>+30us")) || failed(check("kernel>+50us")) {
		t.Error("wall, kernel gates")
	}
	if pct := *rs[0].DeltaPct; failed(check("step_p50>+" + formatPct(pct+1))) {
		t.Errorf("a threshold above the change (%.2f%%) failed", pct)
	}
	same := analyze.Compare(before, before, analyze.Options{})
	gates, _ := analyze.ParseGates("step_p50>0%,wall>0%,kernel>0%,idle>0%,step_p90>0%")
	rs2, err := same.Check(gates)
	if err != nil || failed(rs2) {
		t.Errorf("a run against itself: %+v, %v", rs2, err)
	}
	// The wall time of the diff is the generator's mean span.
	if k := d.Kinds[0]; k.Wall.BeforePerStepNS <= 0 || k.Wall.AfterPerStepNS-k.Wall.BeforePerStepNS < 35_000 {
		t.Errorf("wall %+v", k.Wall)
	}
	whole := analyze.Compare(before, after, analyze.Options{Filter: step.Only(step.Unattributed)})
	if _, err := whole.Check(gates[:1]); !errors.Is(err, analyze.ErrGateNoMetric) {
		t.Errorf("no step kind: %v", err)
	}
}

func formatPct(p float64) string { return strconv.FormatFloat(p, 'f', 3, 64) + "%" }
