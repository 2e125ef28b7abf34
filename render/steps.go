package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/step"
)

// StepCount says "1 decode step", "5 steps": step.Generic (ProfilerStep
// and custom markers) and 0 name no kind.
func StepCount(n int, kind step.Kind) string {
	s := strconv.Itoa(n) + " "
	if kind != 0 && kind != step.Generic {
		s += kind.String() + " "
	}
	if n == 1 {
		return s + "step"
	}
	return s + "steps"
}

// StepStatsLine summarises a group's steps in one line: the span's
// percentiles and the outlier steps.
func StepStatsLine(ss *analyze.StepStats) string {
	s := fmt.Sprintf("per step: span p50 %s · p90 %s · p99 %s · max %s ms", MSf(ss.SpanNS.P50), MSf(ss.SpanNS.P90),
		MSf(ss.SpanNS.P99), MS(ss.SpanNS.Max))
	if len(ss.Outliers) > 0 {
		var outs []string
		for _, o := range ss.Outliers {
			outs = append(outs, strconv.Itoa(o))
		}
		s += " · outlier steps " + strings.Join(outs, ", ")
	}
	return s
}

// Steps writes every step of r on every device, with the per-kind
// statistics of its groups: the steps command.
func Steps(w io.Writer, r *analyze.GroupTable, opt Options) error {
	switch opt.Format {
	case "json":
		return writeJSON(w, stepsDoc(r))
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"path", "rank", "pid", "device", "index", "kind", "marker", "marker_start_ns", "marker_end_ns",
			"start_ns", "offset_ns", "span_ns", "busy_ns", "idle_ns", "kernel_ns", "top_category", "top_share", "outlier",
			"launch_bound_ns", "device_side_ns", "unknown_ns", "tokens", "run"})
		{
			for _, s := range jsonSteps(r.Steps) {
				cw.Write([]string{csvText(s.Path), intOrEmpty(s.Rank), strconv.FormatInt(s.PID, 10), strconv.Itoa(int(s.Device)),
					strconv.Itoa(s.Index), s.Kind, csvText(s.Marker), strconv.FormatInt(s.MarkerStart, 10),
					strconv.FormatInt(s.MarkerEnd, 10), strconv.FormatInt(s.StartNS, 10),
					strconv.FormatInt(s.OffsetNS, 10), strconv.FormatInt(s.SpanNS, 10), strconv.FormatInt(s.BusyNS, 10),
					strconv.FormatInt(s.IdleNS, 10), strconv.FormatInt(s.KernelNS, 10), s.TopCategory, ftoa(s.TopShare),
					strconv.FormatBool(s.Outlier), strconv.FormatInt(s.Idle.LaunchBoundNS, 10),
					strconv.FormatInt(s.Idle.DeviceSideNS, 10), strconv.FormatInt(s.Idle.UnknownNS, 10), int64OrEmpty(s.Tokens), csvText(s.Run)})
			}
		}
		cw.Flush()
		return cw.Error()
	case "markdown", "text", "":
		return stepsText(w, r, opt)
	}
	return CheckFormat(opt.Format)
}

func stepsText(w io.Writer, r *analyze.GroupTable, opt Options) error {
	var sb strings.Builder
	md := opt.Format == "markdown"
	width := opt.NameWidth
	if width <= 0 {
		width = 48
	}
	stepped := 0
	for ii := range r.Table.Inputs {
		in := &r.Table.Inputs[ii]
		sum := in.Stepped
		if sum == nil {
			continue
		}
		if stepped > 0 {
			sb.WriteByte('\n')
		}
		stepped++
		heading(&sb, Printable(in.Path+" · "+StepCount(sum.Steps, 0)), opt)
		tokens := false
		for _, s := range r.Steps {
			tokens = tokens || (s.Rank.Input == ii && s.Step.Tokens >= 0)
		}
		t := &Table{Head: []string{"step", "kind", "marker", "dev", "start ms", "span ms", "busy ms", "idle ms",
			"launch-bound ms", "device-side ms", "top category", "share", "of span", "outlier"},
			Right: []bool{true, false, false, true, true, true, true, true, true, true, false, true, true, false}}
		if tokens {
			// Before the outlier column, which is mostly empty.
			n := len(t.Head) - 1
			t.Head = append(t.Head[:n:n], "tokens", "µs/token", "outlier")
			t.Right = append(t.Right[:n:n], true, true, false)
		}
		for _, s := range r.Steps {
			if s.Rank.Input != ii {
				continue
			}
			out := ""
			if s.Outlier {
				out = "outlier"
			}
			top, share, ofSpan := "", Pct(0), ""
			if c, ok := s.TopCategory(); ok {
				top, share, ofSpan = c.Category.String(), Pct(c.ShareOfKernel), Pct(c.ShareOfSpan)
			}
			row := []string{strconv.Itoa(s.Step.Index), s.Step.Kind.String(), clip(s.Step.Marker, width), strconv.Itoa(int(s.Device)), MS(s.Offset),
				MS(s.SpanNS), MS(s.BusyNS), MS(s.IdleNS), MS(s.Idle.LaunchBoundNS), MS(s.Idle.DeviceSideNS), top, share, ofSpan}
			if tokens {
				tok, per := "", ""
				if n := s.Step.Tokens; n > 0 {
					tok, per = strconv.FormatInt(n, 10), strconv.FormatFloat(float64(s.SpanNS)/float64(n)/1e3, 'f', 1, 64)
				} else if n == 0 {
					tok = "0"
				}
				row = append(row, tok, per)
			}
			t.Add(append(row, out)...)
		}
		t.Write(&sb, md)
		sb.WriteByte('\n')
		note := fmt.Sprintf("%d of %d steps ran no GPU work", sum.Empty, sum.Steps)
		if sum.Empty == 0 {
			note = "every step ran GPU work"
		}
		if sum.Unattributed == 0 {
			note += "; every GPU activity belongs to a step"
		} else {
			note += fmt.Sprintf("; %s ms of kernel time in %d activities belongs to no step", MS(sum.UnattributedNS), sum.Unattributed)
		}
		if md {
			sb.WriteString(note + "\n\n")
		} else {
			sb.WriteString("  " + note + "\n\n")
		}
		kt := &Table{Head: []string{"dev", "kind", "steps", "span p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms", "outliers"},
			Right: []bool{true, false, true, true, true, true, true, true, false}}
		for _, g := range r.Groups {
			if g.Rank.Input != ii || g.StepStats == nil {
				continue
			}
			s := g.StepStats
			var outs []string
			for _, o := range s.Outliers {
				outs = append(outs, strconv.Itoa(o))
			}
			kt.Add(strconv.Itoa(int(g.Device)), g.Class.String(), strconv.Itoa(s.Count), MSf(s.SpanNS.P50), MSf(s.SpanNS.P90),
				MSf(s.SpanNS.P99), MS(s.SpanNS.Max), MSf(s.SpanNS.Mean), strings.Join(outs, " "))
		}
		kt.Write(&sb, md)
		betweenSteps(&sb, r, ii, md)
	}
	if stepped == 0 {
		sb.WriteString("no steps\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// betweenSteps writes the time between the steps of one input, per
// device and pair of step kinds: the host's time between steps, apart
// from the idle time inside them.
func betweenSteps(sb *strings.Builder, r *analyze.GroupTable, input int, md bool) {
	t := &Table{Head: []string{"dev", "from", "to", "gaps", "mean ms", "total ms"},
		Right: []bool{true, false, false, true, true, true}}
	for _, g := range r.Groups {
		if g.Rank.Input != input {
			continue
		}
		for _, b := range g.BetweenFrom {
			t.Add(strconv.Itoa(int(g.Device)), b.From.String(), g.Class.String(), strconv.Itoa(b.Gaps),
				MSf(float64(b.TotalNS)/float64(b.Gaps)), MS(b.TotalNS))
		}
	}
	if len(t.rows) == 0 {
		return
	}
	note := "time between steps: from the end of one step's GPU span to the start of the next step's on the device"
	if md {
		sb.WriteString("\n" + note + ":\n\n")
	} else {
		sb.WriteString("\n  " + note + ":\n")
	}
	t.Write(sb, md)
}
