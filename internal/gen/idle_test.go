package gen

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// percentile is linear interpolation between closest ranks, written here
// from its definition.
func percentile(xs []int64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo+1 >= len(s) {
		return float64(s[len(s)-1])
	}
	return float64(s[lo]) + (pos-float64(lo))*float64(s[lo+1]-s[lo])
}

func checkLaunches(t *testing.T, what string, got []analyze.LaunchStat, want map[string]*LaunchExpect) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: launches %+v, want %d APIs", what, got, len(want))
	}
	for _, l := range got {
		w := want[l.API]
		if w == nil {
			t.Errorf("%s: unexpected API %s", what, l.API)
			continue
		}
		if l.Calls != w.Calls || l.CPUNS != w.CPUNS || l.LaunchToStart.Max != slices.Max(w.Latencies) ||
			math.Abs(l.LaunchToStart.P50-percentile(w.Latencies, 50)) > 1e-6 || math.Abs(l.LaunchToStart.P90-percentile(w.Latencies, 90)) > 1e-6 {
			t.Errorf("%s: %s %+v, want %d calls %d ns p50 %g p90 %g max %d", what, l.API, l, w.Calls, w.CPUNS,
				percentile(w.Latencies, 50), percentile(w.Latencies, 90), slices.Max(w.Latencies))
		}
	}
}

// TestIdleTraceExact reads WriteIdle traces back and checks the idle split
// of every step, the time between steps, the launch statistics and the
// exposed communication against what the generator built, to the
// nanosecond; then the same trace as one window.
func TestIdleTraceExact(t *testing.T) {
	for _, cfg := range []IdleConfig{{Steps: 9, Seed: 1}, {Steps: 7, Kernels: 4, Seed: 2}, {Steps: 30, Kernels: 17, Seed: 3}} {
		var buf bytes.Buffer
		exp, err := WriteIdle(&buf, cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{BlockSize: 2000, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		st, err := step.Find(tr, step.Options{})
		if err != nil || st == nil {
			t.Fatalf("FindSteps: %v %v", st, err)
		}
		r := breakdownOf(t, window.Input{Path: "idle", Trace: tr, Steps: st})
		steps := r.Steps
		if len(steps) != len(exp.Steps) {
			t.Fatalf("%d step rows, want %d", len(steps), len(exp.Steps))
		}
		var whole window.IdleSplit
		var busy, exposed int64
		for i, row := range steps {
			e := exp.Steps[i]
			want := window.IdleSplit{LaunchBoundNS: e.LaunchBoundNS, DeviceSideNS: e.DeviceSideNS, UnknownNS: e.UnknownNS}
			if row.Step.Kind.String() != e.Kind || row.Idle != want || row.IdleNS != want.Total() {
				t.Errorf("seed %d step %d (%s): idle %d %+v, want %+v", cfg.Seed, i, row.Step.Kind, row.IdleNS, row.Idle, want)
			}
			// Every kind has gaps of its cause, and only those.
			if (e.Kind == "prefill") != (e.LaunchBoundNS > 0) || (e.Kind == "mixed") != (e.UnknownNS > 0) || e.DeviceSideNS > 0 == (e.Kind == "prefill") {
				t.Errorf("seed %d step %d (%s): the generator built %+v", cfg.Seed, i, e.Kind, e)
			}
			whole.LaunchBoundNS += e.LaunchBoundNS + max(e.GapBeforeNS, 0)
			whole.DeviceSideNS += e.DeviceSideNS
			whole.UnknownNS += e.UnknownNS
			busy += e.CommBusyNS
			exposed += e.CommExposedNS
		}
		for _, g := range r.Groups {
			var between int64
			var gaps int
			var comm window.CommStat
			for _, e := range exp.Steps {
				if e.Kind != g.Class.String() {
					continue
				}
				if e.GapBeforeNS >= 0 {
					between += e.GapBeforeNS
					gaps++
				}
				comm.BusyNS += e.CommBusyNS
				comm.ExposedNS += e.CommExposedNS
			}
			if g.BetweenStepsNS != between || g.BetweenStepGaps != gaps || g.Comm != comm {
				t.Errorf("seed %d %s: between %d in %d, comm %+v; want %d in %d, %+v", cfg.Seed, g.Class,
					g.BetweenStepsNS, g.BetweenStepGaps, g.Comm, between, gaps, comm)
			}
			checkLaunches(t, g.Class.String(), g.Launches, exp.Launches[g.Class.String()])
		}
		empty := r.Table.EmptyLaunches
		if len(empty) != 1 || empty[0].API != "cudaLaunchKernel" || empty[0].Calls != exp.EmptyCalls ||
			empty[0].CPUNS != exp.EmptyCPUNS || r.Table.Ranks[empty[0].Rank].PID != exp.PID {
			t.Errorf("seed %d: empty launches %+v, want %d calls %d ns", cfg.Seed, empty, exp.EmptyCalls, exp.EmptyCPUNS)
		}

		// The whole trace: the gaps between steps are idle too, and
		// launch-bound (the host scheduled the next step after the device
		// finished); launches of every kind together.
		r = breakdownOf(t, window.Input{Path: "idle", Trace: tr})
		if len(r.Groups) != 1 {
			t.Fatalf("whole trace: %d groups", len(r.Groups))
		}
		g := r.Groups[0]
		if g.Idle != whole || g.IdleNS != whole.Total() || g.Comm != (window.CommStat{BusyNS: busy, ExposedNS: exposed}) {
			t.Errorf("seed %d whole trace: idle %d %+v comm %+v, want %+v %d/%d", cfg.Seed, g.IdleNS, g.Idle, g.Comm, whole, busy, exposed)
		}
		all := map[string]*LaunchExpect{}
		for _, m := range exp.Launches {
			for api, l := range m {
				if all[api] == nil {
					all[api] = &LaunchExpect{}
				}
				all[api].Calls += l.Calls
				all[api].CPUNS += l.CPUNS
				all[api].Latencies = append(all[api].Latencies, l.Latencies...)
			}
		}
		checkLaunches(t, "whole trace", g.Launches, all)
	}
}
