package analyze

import (
	"math"
	"strconv"
	"strings"
)

// Changes: what a diff row's delta is (docs/definitions.md#change).
const (
	changeAppeared  = "appeared"  // time after only
	changeVanished  = "vanished"  // time before only
	changeGrew      = "grew"      // more time after, a change
	changeShrank    = "shrank"    // less time after, a change
	changeUnchanged = "unchanged" // below MinChange
	changeNoise     = "noise"     // below noiseK standard errors of the step-to-step spread
)

// MinChange is the smallest change per step that diff calls a change: a
// delta below NS nanoseconds, or below Pct % of the before value, is
// unchanged. The zero MinChange calls every non-zero delta a change.
type MinChange struct {
	NS  int64
	Pct float64
}

// DefaultMinChange is 1 µs and 1 %: 1 µs is the resolution of the
// millisecond figures diff prints (a change that prints as 0.000 or
// 0.001 ms is none), and 1 % is about what two runs of one workload
// differ by as a whole (GPU clocks, temperature, placement), which the
// step-to-step spread within each run cannot see.
var DefaultMinChange = MinChange{NS: 1000, Pct: 1}

// Below reports whether a delta from before is below the threshold.
func (m MinChange) Below(delta, before float64) bool {
	d := math.Abs(delta)
	return d < float64(m.NS) || d*100 < m.Pct*math.Abs(before)
}

// String is the threshold as --min-change takes it: "1us,1%", "0".
func (m MinChange) String() string {
	var parts []string
	if m.NS > 0 {
		switch {
		case m.NS%1_000_000 == 0:
			parts = append(parts, strconv.FormatInt(m.NS/1_000_000, 10)+"ms")
		case m.NS%1000 == 0:
			parts = append(parts, strconv.FormatInt(m.NS/1000, 10)+"us")
		default:
			parts = append(parts, strconv.FormatInt(m.NS, 10)+"ns")
		}
	}
	if m.Pct > 0 {
		parts = append(parts, strconv.FormatFloat(m.Pct, 'f', -1, 64)+"%")
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ",")
}

// noiseK is how many standard errors of the difference of the two means a
// change must reach to be more than noise. Under the normal approximation
// pure noise reaches 3 standard errors in 0.3 % of the rows; a diff prints
// tens of rows, and at 2 (5 %) a comparison of a run with itself would
// show a few "changes" every time.
const noiseK = 3

// medianSE is the standard error of a median over that of a mean for
// normal data, √(π/2): the step-time row compares p50s.
var medianSE = math.Sqrt(math.Pi / 2)

// Verdict says whether a row's delta is a change, and the spread it was
// judged against.
type Verdict struct {
	// Change is appeared, vanished, grew, shrank (a change), unchanged
	// (below MinChange) or noise (below noiseK standard errors of the
	// step-to-step spread).
	Change string
	// BeforeStdDevNS and AfterStdDevNS are the step-to-step spread of the
	// row's time per window on each side (spreadOf: the pooled standard
	// deviation within each device), rounded to the nanosecond; -1 when no
	// device of the side has two windows (a whole trace, unattributed
	// time, one step).
	BeforeStdDevNS int64
	AfterStdDevNS  int64
	// NoiseNS is noiseK standard errors of the difference of the two
	// means, √(sb²/nb + sa²/na) over the sides' windows, rounded to the
	// nanosecond: a delta below it is noise. -1 when a side's spread is
	// unknown.
	NoiseNS int64
}

// spread is the step-to-step spread of one row's per-window times on one
// side: the pooled standard deviation within each device.
type spread struct {
	n   int     // windows
	dof int     // degrees of freedom: windows − devices
	sd  float64 // pooled within-device sample standard deviation; 0 when dof < 1
}

// known reports whether the side has a step-to-step spread: some device
// has two windows or more.
func (s spread) known() bool { return s.dof >= 1 }

// spreadOf measures xs, one value per window; dev[i] (0 ≤ dev[i] < devices)
// is window i's device. Deviations are taken from each device's own mean
// and pooled: differences between devices (a rank that waits in its
// collectives, a pipeline stage) are not step-to-step noise, and the same
// devices make both sides' means. Two passes in float64: the sum of
// squares of nanosecond times overflows int64.
func spreadOf(xs []int64, dev []int, devices int) spread {
	s := spread{n: len(xs), dof: len(xs) - devices}
	if !s.known() {
		s.dof = 0
		return s
	}
	sum := make([]float64, devices)
	cnt := make([]int, devices)
	for i, x := range xs {
		sum[dev[i]] += float64(x)
		cnt[dev[i]]++
	}
	var ss float64
	for i, x := range xs {
		d := float64(x) - sum[dev[i]]/float64(cnt[dev[i]])
		ss += d * d
	}
	s.sd = math.Sqrt(ss / float64(s.dof))
	return s
}

// judge gives the verdict on delta (after − before) against mc and the
// two sides' spreads; factor scales the standard error (1 for means,
// medianSE for medians). present says whether each side has the row at
// all (categories and kernels: appeared, vanished).
func judge(delta, before float64, b, a spread, mc MinChange, factor float64) Verdict {
	v := Verdict{BeforeStdDevNS: -1, AfterStdDevNS: -1, NoiseNS: -1}
	if b.known() {
		v.BeforeStdDevNS = int64(math.Round(b.sd))
	}
	if a.known() {
		v.AfterStdDevNS = int64(math.Round(a.sd))
	}
	if b.known() && a.known() {
		se := math.Sqrt(b.sd*b.sd/float64(b.n) + a.sd*a.sd/float64(a.n))
		v.NoiseNS = int64(math.Round(noiseK * factor * se))
	}
	switch {
	case delta == 0 || mc.Below(delta, before):
		v.Change = changeUnchanged
	case math.Abs(delta) < float64(v.NoiseNS):
		v.Change = changeNoise
	case delta > 0:
		v.Change = changeGrew
	default:
		v.Change = changeShrank
	}
	return v
}

// presence turns a verdict into appeared or vanished when one side has
// no time at all.
func (v Verdict) presence(before, after int64) Verdict {
	switch {
	case before == 0 && after != 0:
		v.Change = changeAppeared
	case after == 0 && before != 0:
		v.Change = changeVanished
	}
	return v
}

// Changed reports whether the verdict is a change: appeared, vanished,
// grew or shrank.
func (v Verdict) Changed() bool { return v.Change != changeNoise && v.Change != changeUnchanged }
