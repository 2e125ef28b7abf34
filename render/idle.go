package render

import (
	"strconv"

	"github.com/traceq/traceq/analyze"
)

// IdleLine says in one line why a group's device was idle: its idle time
// by cause, the time between its steps, the CPU time of its launch calls
// over its GPU time, and how much of its communication no other work hid.
func IdleLine(g *analyze.Group) string {
	s := "idle " + MS(g.IdleNS) + " ms: launch-bound " + MS(g.Idle.LaunchBoundNS) + " · device-side " +
		MS(g.Idle.DeviceSideNS) + " · unknown " + MS(g.Idle.UnknownNS)
	if g.BetweenStepGaps > 0 {
		s += " · between steps " + MSf(float64(g.BetweenStepsNS)/float64(g.BetweenStepGaps)) + " ms/step"
	}
	if len(g.Launches) > 0 {
		s += "; launch CPU / GPU time " + LaunchRatio(g)
	}
	if g.Comm.BusyNS > 0 {
		s += "; communication " + MS(g.Comm.BusyNS) + " ms, exposed " + Pct(ratio(g.Comm.ExposedNS, g.Comm.BusyNS))
	}
	return s
}

// LaunchRatio is the CPU time of a group's launch calls over its GPU
// kernel time, two decimals.
func LaunchRatio(g *analyze.Group) string {
	return strconv.FormatFloat(ratio(g.LaunchCPUNS, g.KernelNS), 'f', 2, 64)
}
