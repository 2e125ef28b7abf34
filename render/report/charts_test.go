package report

import (
	"testing"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// TestChartsMatch: with ChartOptions.Match the collectives analysis is
// the caller's, asked once; without it the charts match their own.
func TestChartsMatch(t *testing.T) {
	tr := &trace.Trace{Names: []string{"k"}, Procs: []trace.Proc{{PID: 1, Rank: -1}}, Meta: trace.Meta{Rank: -1, WorldSize: -1},
		Activities: []trace.Activity{{Start: 10, Dur: 5}}}
	tbl, err := window.Build([]window.Input{{Path: "x.json", Trace: tr}}, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	own := &collectives.Table{}
	asked := 0
	c := NewCharts(tbl, ChartOptions{Match: func() *collectives.Table { asked++; return own }})
	if c.Collectives() != own || c.Collectives() != own || asked != 1 {
		t.Errorf("Match asked %d times, its table used: %v", asked, c.Collectives() == own)
	}
	if got := NewCharts(tbl, ChartOptions{}).Collectives(); got == nil || got == own {
		t.Errorf("without Match: %v", got)
	}
}
