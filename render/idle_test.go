package render

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

var idleTable = table([]window.Input{{Path: "x.json"}})

func idleGroup() analyze.Group {
	return analyze.Group{Rank: &idleTable.Ranks[0], Device: 0, Class: prefill, Steps: 3,
		KernelNS: 1_000_000, SpanNS: 1_800_000, IdleNS: 614_000,
		Idle:           window.IdleSplit{LaunchBoundNS: 20_000, DeviceSideNS: 594_000},
		BetweenStepsNS: 600_000, BetweenStepGaps: 2,
		BetweenFrom: []analyze.StepGapStat{{From: step.Decode, Gaps: 2, TotalNS: 600_000}},
		Launches: []analyze.LaunchStat{{API: "cudaLaunchKernel", Calls: 5, CPUNS: 20_000,
			LaunchToStart: stats.Dist{P50: 4000.5, P90: 9000, Max: 12000}}},
		LaunchCPUNS: 20_000,
		Comm:        window.CommStat{BusyNS: 300_000, ExposedNS: 300_000}}
}

func TestIdleLine(t *testing.T) {
	g := idleGroup()
	want := "idle 0.614 ms: launch-bound 0.020 · device-side 0.594 · unknown 0.000 · between steps 0.300 ms/step; " +
		"launch CPU / GPU time 0.02; communication 0.300 ms, exposed 100.0%"
	if got := IdleLine(&g); got != want {
		t.Errorf("IdleLine =\n%s\nwant\n%s", got, want)
	}
	// Without steps, launches or communication, those parts go.
	g = analyze.Group{IdleNS: 5, Idle: window.IdleSplit{UnknownNS: 5}}
	if got := IdleLine(&g); got != "idle 0.000 ms: launch-bound 0.000 · device-side 0.000 · unknown 0.000" {
		t.Errorf("IdleLine = %s", got)
	}
}

// TestIdleJSON checks the wire names of issue 15's fields.
func TestIdleJSON(t *testing.T) {
	tbl := table([]window.Input{{Path: "x.json"}}, window.Rank{Path: "x.json", PID: 7})
	tbl.EmptyLaunches = []window.EmptyLaunch{{Rank: 0, API: "cudaMemcpyAsync", Calls: 2, CPUNS: 9}}
	r := &analyze.GroupTable{Table: tbl, Groups: []analyze.Group{idleGroup()}}
	var buf bytes.Buffer
	if err := Breakdown(&buf, r, nil, Answer{}, Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Idle struct {
				LaunchBound *int64 `json:"launch_bound_ns"`
				DeviceSide  *int64 `json:"device_side_ns"`
				Unknown     *int64 `json:"unknown_ns"`
			} `json:"idle"`
			BetweenStepsNS *int64 `json:"between_steps_ns"`
			Launches       []struct {
				API           string `json:"api"`
				Calls         int64  `json:"calls"`
				CPUNS         int64  `json:"cpu_ns"`
				LaunchToStart struct {
					P50 float64 `json:"p50"`
					P90 float64 `json:"p90"`
					Max int64   `json:"max"`
				} `json:"launch_to_start_ns"`
			} `json:"launches"`
			Communication struct {
				BusyNS    *int64 `json:"busy_ns"`
				ExposedNS *int64 `json:"exposed_ns"`
			} `json:"communication"`
		} `json:"groups"`
		Empty []struct {
			API   string `json:"api"`
			Calls int64  `json:"calls"`
		} `json:"launches_without_gpu_work"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	g := doc.Groups[0]
	if g.Idle.LaunchBound == nil || *g.Idle.LaunchBound != 20_000 || g.Idle.DeviceSide == nil || *g.Idle.DeviceSide != 594_000 ||
		g.Idle.Unknown == nil || *g.Idle.Unknown != 0 || g.BetweenStepsNS == nil || *g.BetweenStepsNS != 600_000 ||
		g.Communication.BusyNS == nil || *g.Communication.BusyNS != 300_000 || g.Communication.ExposedNS == nil {
		t.Errorf("group fields: %s", buf.String())
	}
	if len(g.Launches) != 1 || g.Launches[0].API != "cudaLaunchKernel" || g.Launches[0].Calls != 5 || g.Launches[0].CPUNS != 20_000 ||
		g.Launches[0].LaunchToStart.P50 != 4000.5 || g.Launches[0].LaunchToStart.P90 != 9000 || g.Launches[0].LaunchToStart.Max != 12000 {
		t.Errorf("launches: %+v", g.Launches)
	}
	if len(doc.Empty) != 1 || doc.Empty[0].API != "cudaMemcpyAsync" || doc.Empty[0].Calls != 2 {
		t.Errorf("launches without GPU work: %+v", doc.Empty)
	}
	// A group without launches or steps still has every field, empty.
	r.Groups[0] = analyze.Group{Rank: &tbl.Ranks[0]}
	buf.Reset()
	Breakdown(&buf, r, nil, Answer{}, Options{Format: "json"})
	for _, key := range []string{`"launches": []`, `"between_steps_by_kind": []`, `"unknown_ns": 0`, `"exposed_ns": 0`} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("empty group lacks %s:\n%s", key, buf.String())
		}
	}
}

// TestStepsIdleColumns checks the steps table's idle split columns.
func TestStepsIdleColumns(t *testing.T) {
	tbl := table([]window.Input{{Path: "x", Stepped: &window.StepSummary{Steps: 1}}})
	r := &analyze.GroupTable{Table: tbl,
		Steps: []analyze.StepRow{{Rank: &tbl.Ranks[0], Device: 2, Step: step.Step{Index: 0, Kind: step.Decode, Marker: "m"},
			SpanNS: 100_000, IdleNS: 30_000, Idle: window.IdleSplit{LaunchBoundNS: 12_000, DeviceSideNS: 17_000, UnknownNS: 1_000}}},
	}
	var buf bytes.Buffer
	if err := Steps(&buf, r, Options{Format: "csv"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	head, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
	i := slices.Index(head, "launch_bound_ns")
	if i < 0 || !slices.Equal(head[i:i+3], []string{"launch_bound_ns", "device_side_ns", "unknown_ns"}) ||
		!slices.Equal(row[i:i+3], []string{"12000", "17000", "1000"}) {
		t.Errorf("csv:\n%s", buf.String())
	}
	buf.Reset()
	Steps(&buf, r, Options{Format: "text"})
	if !strings.Contains(buf.String(), "launch-bound ms  device-side ms") || !strings.Contains(buf.String(), "0.030            0.012           0.017") {
		t.Errorf("text:\n%s", buf.String())
	}
}
