package efficiency

import (
	"math"
	"math/bits"

	"github.com/traceq/traceq/gpuspec"
	"github.com/traceq/traceq/opcost"
)

// Bound says which roof limits an op: the one whose time is longer.
type Bound uint8

const (
	MemoryBound  Bound = iota // bytes / bandwidth ≥ FLOPs / peak
	ComputeBound              // FLOPs / peak > bytes / bandwidth
)

func (b Bound) String() string {
	if b == ComputeBound {
		return "compute"
	}
	return "memory"
}

// Roof is an op's time at the device's limits
// (docs/definitions.md#roofline).
type Roof struct {
	// ComputeNS is FLOPs at the peak of the op's type, MemoryNS bytes at
	// the memory bandwidth, each rounded up to the nanosecond.
	ComputeNS, MemoryNS int64
}

// NS is the roofline time: the longer of the two.
func (r Roof) NS() int64 { return max(r.ComputeNS, r.MemoryNS) }

// Bound is the roof that sets NS (memory on a tie).
func (r Roof) Bound() Bound {
	if r.ComputeNS > r.MemoryNS {
		return ComputeBound
	}
	return MemoryBound
}

// RoofOf returns the roofline time of cost on g. ok is false when the
// cost has FLOPs of a type the row gives no peak for (an fp8 GEMM on an
// A100 row): the op is then not modelled on this device.
func RoofOf(c opcost.Cost, g *gpuspec.GPU) (Roof, bool) {
	var r Roof
	if c.FLOPs > 0 {
		peak, ok := g.PeakFLOPS(c.DType)
		if !ok {
			return Roof{}, false
		}
		r.ComputeNS = ceilNS(c.FLOPs, peak)
	}
	r.MemoryNS = ceilNS(c.Bytes, g.Memory.PerSecond)
	return r, true
}

// ceilNS is ⌈work · 10⁹ / perSecond⌉ nanoseconds, in 128-bit integers,
// saturating at MaxInt64.
func ceilNS(work, perSecond int64) int64 {
	if work <= 0 || perSecond <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(work), 1e9)
	if hi >= uint64(perSecond) {
		return math.MaxInt64 // the quotient would not fit 64 bits
	}
	q, r := bits.Div64(hi, lo, uint64(perSecond))
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// Rate is work per nanosecond in units of 10¹² per second: FLOPs and
// bytes over a measured time give TFLOP/s and TB/s. 0 when ns is 0.
func Rate(work, ns int64) float64 {
	if ns <= 0 {
		return 0
	}
	return float64(work) / float64(ns) / 1e3
}

// Intensity is FLOPs per byte, 0 without bytes.
func Intensity(flops, bytes int64) float64 {
	if bytes <= 0 {
		return 0
	}
	return float64(flops) / float64(bytes)
}

// Efficiency is roofline time over measured time: 1 at the roofline, 0.2
// at a fifth of it. 0 when nothing was measured.
func Efficiency(rooflineNS, measuredNS int64) float64 {
	if measuredNS <= 0 {
		return 0
	}
	return float64(rooflineNS) / float64(measuredNS)
}
