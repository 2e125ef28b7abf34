package window

import (
	"os"
	"testing"

	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
)

// TestGaps: the gaps Options.Gaps receives are the idle time of the
// windows: per window, the gaps on its device inside its span sum, by
// cause, to its idle split; each gap runs between two activities of its
// device, none of which runs inside it.
func TestGaps(t *testing.T) {
	for _, name := range []string{"vllm_mixed_piecewise.json.gz", "dlrm8/rank1.json.gz", "hta_ns_resolution.json.gz"} {
		for _, stepped := range []bool{true, false} {
			f, err := os.Open("../testdata/traces/torch/" + name)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := chrometrace.Parse(f, chrometrace.Options{})
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			var st *step.Steps
			if stepped {
				if st, err = step.Find(tr, step.Options{}); err != nil || st == nil {
					t.Fatalf("%s: steps %v", name, err)
				}
			}
			var gaps []Gap
			tbl, err := Build([]Input{{Path: name, Trace: tr, Steps: st}}, Options{Gaps: func(g Gap) { gaps = append(gaps, g) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(gaps) == 0 {
				t.Fatalf("%s: no gaps", name)
			}
			for _, g := range gaps {
				if g.End <= g.Start || tbl.Ranks[g.Rank].Input != 0 {
					t.Fatalf("%s: gap %+v", name, g)
				}
				for i := range tr.Activities {
					a := &tr.Activities[i]
					if a.Device == g.Device && a.Start < g.End && a.End() > g.Start && (stepped || tbl.Ranks[g.Rank].Proc == a.Proc) {
						t.Fatalf("%s: activity %d [%d, %d) runs in gap %+v", name, i, a.Start, a.End(), g)
					}
				}
			}
			var total int64
			for _, w := range tbl.Windows {
				var split [numCauses]int64
				for _, g := range gaps {
					if g.Device == w.Device && g.Start >= w.First && g.End <= w.Last && (stepped || g.Rank == w.Rank) {
						split[g.Cause] += int64(g.End - g.Start)
					}
				}
				got := IdleSplit{LaunchBoundNS: split[LaunchBound], DeviceSideNS: split[DeviceSide], UnknownNS: split[Unknown]}
				if got != w.Idle {
					t.Errorf("%s (steps %v): window %+v: gaps give %+v, idle %+v", name, stepped, w.Step, got, w.Idle)
				}
				total += w.IdleNS
			}
			if total == 0 {
				t.Errorf("%s: no idle time", name)
			}
		}
	}
}
