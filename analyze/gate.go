package analyze

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/traceq/traceq/step"
)

// Gate is one condition of diff --fail-if (docs/diff-slice.md#a-ci-gate):
// the after run fails it when Metric grew by more than the threshold (NS
// nanoseconds per step, or Pct percent of the before value) and, where
// the metric has a noise verdict, beyond noise.
type Gate struct {
	Metric string
	NS     int64
	Pct    float64
	// Text is the condition as written.
	Text string
}

// GateMetrics are what --fail-if compares, with what each is.
var GateMetrics = []struct{ Name, What string }{
	{"step_p50", "the step time p50 (its verdict must be grew)"},
	{"step_p90", "the step time p90 (no noise verdict: the threshold alone)"},
	{"wall", "the wall time per step and device, per device without steps (grew)"},
	{"kernel", "the kernel time per step (grew)"},
	{"idle", "the idle time per step (grew)"},
}

func gateMetricNames() string {
	names := make([]string, len(GateMetrics))
	for i, m := range GateMetrics {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// ErrGateSyntax is ParseGates' error.
var ErrGateSyntax = errors.New("want METRIC>THRESHOLD, comma-separated: step_p50>+3%, wall>+0.5ms")

// ParseGates reads --fail-if: conditions METRIC>THRESHOLD separated by
// commas, the threshold a percent of the before value ("+3%") or a time
// per step ("+0.2ms", "50us"), a leading + optional.
func ParseGates(s string) ([]Gate, error) {
	var out []Gate
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		metric, thr, ok := strings.Cut(part, ">")
		metric, thr = strings.TrimSpace(metric), strings.TrimPrefix(strings.TrimSpace(thr), "+")
		known := false
		for _, m := range GateMetrics {
			known = known || m.Name == metric
		}
		if !ok || !known {
			return nil, fmt.Errorf("%q: %w (metrics: %s)", part, ErrGateSyntax, gateMetricNames())
		}
		g := Gate{Metric: metric, Text: part}
		if num, isPct := strings.CutSuffix(thr, "%"); isPct {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%q: %w", part, ErrGateSyntax)
			}
			g.Pct = v
		} else {
			ns, err := parseTime(thr)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", part, ErrGateSyntax)
			}
			g.NS = ns
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q: %w", s, ErrGateSyntax)
	}
	return out, nil
}

// parseTime reads a non-negative time with a unit: ns, us (µs), ms, s.
func parseTime(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		ns     float64
	}{{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || v < 0 || v*u.ns > math.MaxInt64/2 {
				return 0, ErrGateSyntax
			}
			return int64(math.Round(v * u.ns)), nil
		}
	}
	return 0, ErrGateSyntax
}

// GateResult is one gate on one step kind: the metric before → after, and
// whether it failed.
type GateResult struct {
	Gate   Gate
	Class  step.Class
	Before float64 // ns (per step)
	After  float64
	Delta  float64
	// DeltaPct is Delta over Before × 100; nil when Before is 0.
	DeltaPct *float64
	// Change is the metric's verdict ("" for step_p90, which has none).
	Change string
	Failed bool
}

// ErrGateNoMetric is Check's error for a gate whose metric no step kind
// of the diff has (step_p50 on traces without steps).
var ErrGateNoMetric = errors.New("no step kind of the diff has it")

// Check evaluates gates on every step kind the diff compares (not the
// time outside steps): a gate fails on a kind when the metric grew by more
// than its threshold and its verdict is grew (for step_p90, which has no
// verdict, by more than the threshold alone).
func (d *Diff) Check(gates []Gate) ([]GateResult, error) {
	var out []GateResult
	for _, g := range gates {
		found := false
		for i := range d.Kinds {
			k := &d.Kinds[i]
			if k.Class.Scope == step.Outside {
				continue
			}
			r := GateResult{Gate: g, Class: k.Class}
			switch g.Metric {
			case "step_p50", "step_p90":
				st := k.StepTime
				if st == nil {
					continue
				}
				r.Before, r.After, r.DeltaPct, r.Change = st.Before.P50, st.After.P50, st.DeltaP50Pct, st.Change
				if g.Metric == "step_p90" {
					r.Before, r.After, r.DeltaPct, r.Change = st.Before.P90, st.After.P90, st.DeltaP90Pct, ""
				}
			case "wall", "kernel", "idle":
				c := map[string]CategoryDiff{"wall": k.Wall, "kernel": k.Total, "idle": k.Idle.Total}[g.Metric]
				r.Before, r.After, r.DeltaPct, r.Change = float64(c.BeforePerStepNS), float64(c.AfterPerStepNS), c.DeltaPct, c.Change
			}
			found = true
			r.Delta = r.After - r.Before
			over := r.Delta > float64(g.NS)
			if g.NS == 0 {
				over = r.Delta > 0 && r.Delta*100 > g.Pct*math.Abs(r.Before)
			}
			r.Failed = over && (r.Change == changeGrew || r.Change == changeAppeared || g.Metric == "step_p90")
			out = append(out, r)
		}
		if !found {
			return out, fmt.Errorf("--fail-if %s: %w", g.Text, ErrGateNoMetric)
		}
	}
	return out, nil
}
