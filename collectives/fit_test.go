package collectives

import (
	"math"
	"testing"
)

// TestFit checks the latency–bandwidth fit against hand-computed
// instances: exact data give α and β back; one size gives no fit; a time
// that does not grow with size is all latency; a negative intercept is
// refitted through the origin.
func TestFit(t *testing.T) {
	// allreduce over 8 ranks: bus bytes = bytes × 1.75.
	row := func(bytes, n int64, alpha, beta float64) Size {
		per := alpha + float64(bytes)*1.75/beta
		return Size{Bytes: bytes, Instances: n, TransferNS: int64(math.Round(per * float64(n)))}
	}
	op := Op{Op: "allreduce", GroupSize: 8, Sizes: []Size{row(8000, 3, 4000, 16), row(16000, 5, 4000, 16), row(64000, 2, 4000, 16), {Bytes: -1, Instances: 7, TransferNS: 1e6}}}
	f := op.Fit()
	if !f.OK || f.Sizes != 3 || f.Instances != 10 || math.Abs(f.AlphaNS-4000) > 1e-6 || math.Abs(f.BetaGBps-16) > 1e-9 {
		t.Fatalf("fit %+v, want α 4000, β 16 over 10 instances", f)
	}
	if want := 10 * 4000.0 / float64(f.TransferNS); math.Abs(f.LatencyShare()-want) > 1e-12 {
		t.Errorf("latency share %v, want %v", f.LatencyShare(), want)
	}
	if f.BusBytes != 1.75*(3*8000+5*16000+2*64000) {
		t.Errorf("bus bytes %v", f.BusBytes)
	}
	one := Op{Op: "allreduce", GroupSize: 8, Sizes: []Size{row(8000, 3, 4000, 16)}}
	if f := one.Fit(); f.OK || f.Sizes != 1 || f.Instances != 3 {
		t.Errorf("one size: %+v", f)
	}
	flat := Op{Op: "allreduce", GroupSize: 8, Sizes: []Size{{Bytes: 8000, Instances: 2, TransferNS: 10000}, {Bytes: 16000, Instances: 2, TransferNS: 9000}}}
	if f := flat.Fit(); !f.OK || !math.IsInf(f.BetaGBps, 1) || f.AlphaNS != 4750 || f.LatencyShare() != 1 {
		t.Errorf("flat: %+v", f)
	}
	// Times 1000 and 3500 at bus bytes 1000 and 2000: the line has a
	// negative intercept; through the origin the slope is
	// Σxy/Σx² = (1e6 + 7e6) / (1e6 + 4e6) = 1.6.
	neg := Op{Op: "broadcast", Sizes: []Size{{Bytes: 1000, Instances: 1, TransferNS: 1000}, {Bytes: 2000, Instances: 1, TransferNS: 3500}}}
	if f := neg.Fit(); !f.OK || f.AlphaNS != 0 || math.Abs(f.BetaGBps-1/1.6) > 1e-12 {
		t.Errorf("negative intercept: %+v", f)
	}
	if f := (&Op{Op: "other", Sizes: op.Sizes}).Fit(); f.OK || f.Sizes != 0 {
		t.Errorf("no bus factor: %+v", f)
	}
}
