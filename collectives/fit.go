package collectives

import "math"

// Fit is the latency–bandwidth model of an op's transfer time over its
// instances of known size: time = α + bus bytes / β, fitted by least
// squares (docs/definitions.md#transfer-below-the-link).
type Fit struct {
	// Sizes is the number of distinct message sizes the fit saw; with
	// one, α and β cannot be told apart and OK is false.
	Sizes int
	OK    bool
	// AlphaNS is the fixed cost of one instance (α ≥ 0); BetaGBps the
	// bandwidth the bus bytes moved at (+Inf when the time does not grow
	// with the size: all latency).
	AlphaNS  float64
	BetaGBps float64
	// Instances, BusBytes and TransferNS are what the fit covers: the
	// instances of known size, their bus bytes and transfer time.
	Instances  int64
	BusBytes   float64
	TransferNS int64
}

// LatencyShare is the share of the transfer time the latency term
// explains: instances × α over the transfer time.
func (f Fit) LatencyShare() float64 {
	if f.TransferNS <= 0 {
		return 0
	}
	return min(1, float64(f.Instances)*f.AlphaNS/float64(f.TransferNS))
}

// Fit fits the latency–bandwidth model to the op's instances of known
// size. The per-size rows hold everything least squares needs (every
// instance of a row has the row's size), so the fit is exact over the
// instances without keeping them. A negative intercept is refitted
// through the origin (α = 0); a slope ≤ 0 (time not growing with size)
// makes the op all latency (α = the mean time, β = +Inf).
func (o *Op) Fit() Fit {
	var f Fit
	factor, ok := busFactor(o.Op, o.GroupSize)
	if !ok {
		return f
	}
	var n, sx, sxx, sy, sxy float64
	for _, s := range o.Sizes {
		if s.Bytes < 0 || s.Instances == 0 {
			continue
		}
		f.Sizes++
		x := float64(s.Bytes) * factor
		k := float64(s.Instances)
		n += k
		sx += k * x
		sxx += k * x * x
		sy += float64(s.TransferNS)
		sxy += x * float64(s.TransferNS)
		f.Instances += s.Instances
		f.TransferNS += s.TransferNS
	}
	f.BusBytes = sx
	if f.Sizes < 2 || n == 0 {
		return f
	}
	f.OK = true
	den := n*sxx - sx*sx
	slope := (n*sxy - sx*sy) / den
	alpha := (sy - slope*sx) / n
	if alpha < 0 {
		alpha, slope = 0, sxy/sxx
	}
	if !(slope > 0) {
		f.AlphaNS, f.BetaGBps = sy/n, math.Inf(1)
		return f
	}
	f.AlphaNS, f.BetaGBps = alpha, 1/slope
	return f
}
