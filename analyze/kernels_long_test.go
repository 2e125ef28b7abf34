package analyze

import (
	"testing"

	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// TestKernelsLongDurations checks both ways Kernels holds durations: in 32
// bits for kernels shorter than 2.1 s, in 64 for a name that has a longer
// one, with figures computed by hand.
func TestKernelsLongDurations(t *testing.T) {
	tr := &trace.Trace{
		Names: []string{"", "long_kernel", "short_kernel"},
		Procs: []trace.Proc{{Rank: -1}},
		Activities: []trace.Activity{
			{Start: 0, Dur: 3_000_000_000, Name: 1},
			{Start: 1, Dur: 10, Name: 2},
			{Start: 2, Dur: 5, Name: 1},
			{Start: 3, Dur: 2_147_483_647, Name: 2}, // MaxInt32 still fits
			{Start: 4, Dur: 30, Name: 2},
		},
	}
	got := Kernels(tableOf(t, window.Input{Path: "x", Trace: tr}), KernelOptions{})
	want := map[string]stats.Dist{
		"long_kernel":  {N: 2, Total: 3_000_000_005, Min: 5, Max: 3_000_000_000, P50: 1_500_000_002.5},
		"short_kernel": {N: 3, Total: 2_147_483_687, Min: 10, Max: 2_147_483_647, P50: 30},
	}
	if len(got) != 2 {
		t.Fatalf("got %d kernels, want 2", len(got))
	}
	for _, k := range got {
		w := want[k.Name]
		if k.N != w.N || k.Total != w.Total || k.Min != w.Min || k.Max != w.Max || k.P50 != w.P50 {
			t.Errorf("%s: got %+v, want %+v", k.Name, k.Dist, w)
		}
	}
}
