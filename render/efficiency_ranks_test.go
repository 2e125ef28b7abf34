package render

import (
	"strings"
	"testing"

	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/window"
)

// TestOpTableRanks: the op shapes of a run over several devices name each
// row's rank (the host first when the run spans hosts), or its device
// when the rank is unknown or the device is several inputs'; a run on
// one device has no such column.
func TestOpTableRanks(t *testing.T) {
	rank := func(n int) *int { return &n }
	op := func(run string, dev int32) efficiency.OpRow {
		return efficiency.OpRow{Run: run, Device: dev, Name: "aten::mm", Instances: 1, KernelNS: 1000}
	}
	r := &efficiency.Result{
		Inputs: []window.Input{
			{Run: "a", Rank: rank(3), Host: "node0"}, {Run: "a", Rank: rank(9), Host: "node1"}, {Run: "a", Host: "node1"},
			{Run: "b", Rank: rank(0)}, {Run: "b", Rank: rank(1)},
			{Run: "c", Rank: rank(0)},
		},
		Devices: []efficiency.Device{
			{Run: "a", Input: 0, Device: 0}, {Run: "a", Input: 1, Device: 1}, {Run: "a", Input: 2, Device: 2},
			{Run: "b", Input: 3, Device: 0}, {Run: "b", Input: 4, Device: 0},
			{Run: "c", Input: 5, Device: 4},
		},
		Ops: []efficiency.OpRow{op("a", 0), op("a", 1), op("a", 2), op("b", 0), op("b", 1), op("c", 4)},
	}
	for _, c := range []struct {
		run  string
		want []string // the first cell of each row; nil: no rank column
	}{
		{"a", []string{"node0 · rank 3", "node1 · rank 9", "device 2"}},
		// Device 0 holds two inputs (ranks 0 and 1), device 1 none.
		{"b", []string{"device 0", "device 1"}},
		{"c", nil},
	} {
		tb, _ := opTable(r, c.run, 10)
		if c.want == nil {
			if tb.Head[0] != "op" {
				t.Errorf("%s: columns %q, want no rank column", c.run, tb.Head)
			}
			continue
		}
		if tb.Head[0] != "rank" || len(tb.rows) != len(c.want) {
			t.Fatalf("%s: columns %q, %d rows", c.run, tb.Head, len(tb.rows))
		}
		var got []string
		for _, row := range tb.rows {
			got = append(got, row[0])
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: ranks %q, want %q", c.run, got, c.want)
		}
	}
}
