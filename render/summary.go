package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/findings"
	"github.com/traceq/traceq/settings"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
)

// summaryCategories is how many categories a summary lists before folding
// the rest into one line.
const summaryCategories = 6

// Detail names the parts of breakdown's text and markdown output after the
// summary.
type Detail uint8

const (
	DetailGroups     Detail = 1 << iota // per input, process, device and step kind
	DetailRanks                         // the cross-rank tables
	DetailKernels                       // the kernels with the most time
	DetailEfficiency                    // the efficiency per category and op shape (when priced)
	DetailAll        = DetailGroups | DetailRanks | DetailKernels | DetailEfficiency
)

// ParseDetail reads a comma-separated list of groups, ranks, kernels, all.
func ParseDetail(s string) (Detail, error) {
	var d Detail
	for _, w := range strings.Split(s, ",") {
		switch strings.TrimSpace(w) {
		case "":
		case "groups":
			d |= DetailGroups
		case "ranks":
			d |= DetailRanks
		case "kernels":
			d |= DetailKernels
		case "efficiency":
			d |= DetailEfficiency
		case "all":
			d |= DetailAll
		default:
			return 0, fmt.Errorf("unknown --detail %q (want groups, ranks, kernels, efficiency or all, comma-separated)", w)
		}
	}
	return d, nil
}

// runTitle names a run in a summary: its name and what it holds.
func runTitle(s *analyze.KindSummary) string {
	var parts []string
	if s.Run != "" {
		parts = append(parts, s.Run)
	}
	if s.Ranks > 1 {
		parts = append(parts, strconv.Itoa(s.Ranks)+" ranks")
	}
	switch s.Class.Scope {
	case step.Whole:
		parts = append(parts, "whole trace on "+countOf(s.Devices, "device"))
	default:
		steps := StepCount(s.Steps, s.Class.Kind)
		if s.Devices > 1 {
			steps += " on each of " + strconv.Itoa(s.Devices) + " devices"
			if s.Windows != s.Steps*s.Devices {
				steps = fmt.Sprintf("%s (%d step-device windows on %d devices)", StepCount(s.Steps, s.Class.Kind), s.Windows, s.Devices)
			}
		}
		parts = append(parts, steps)
	}
	return Printable(strings.Join(parts, " · "))
}

// Answer is what breakdown's first screen and the report lead with,
// beside the breakdown: the run's matched collectives (nil when the
// inputs have none), the findings made of them (nil when not computed),
// and the settings the command found.
type Answer struct {
	Collectives *collectives.Table
	Findings    *findings.Report
	Settings    *settings.Settings
}

// summaryText writes the first screen of breakdown: per run and step kind,
// the step time, the findings and where the time goes; time outside every
// step folded into one line per run.
func summaryText(sb *strings.Builder, g *analyze.GroupTable, a Answer, opt Options) {
	sums := analyze.Summarize(g)
	md := opt.Format == "markdown"
	outside := map[string]*analyze.KindSummary{}
	for i := range sums {
		if sums[i].Class.Scope == step.Outside {
			outside[sums[i].Run] = &sums[i]
		}
	}
	var perClass []collectives.ClassSum
	if a.Collectives != nil {
		perClass = a.Collectives.PerClass()
	}
	first := true
	for i := range sums {
		s := &sums[i]
		if s.Class.Scope == step.Outside {
			continue
		}
		if !first {
			sb.WriteByte('\n')
		}
		first = false
		heading(sb, runTitle(s), opt)
		line := func(text string) {
			if md {
				sb.WriteString(text + "  \n")
			} else {
				sb.WriteString("  " + text + "\n")
			}
		}
		if s.Class.Scope == step.InStep && s.Windows > 0 {
			l := fmt.Sprintf("step time p50 %s ms · p90 %s ms", MSf(s.StepSpan.P50), MSf(s.StepSpan.P90))
			if s.Periods > 0 {
				l += fmt.Sprintf(" · period p50 %s ms, gap p50 %s ms (%s of the period)", MSf(s.PeriodP50), MSf(s.GapP50), Pct(s.GapP50/s.PeriodP50))
			}
			if s.TokenSteps > 0 {
				l += fmt.Sprintf(" · %s tokens/step (p50)", strconv.FormatFloat(s.TokensP50, 'f', -1, 64))
				if s.NSPerToken != nil { // undefined without tokens
					l += fmt.Sprintf(", %s µs/token", strconv.FormatFloat(*s.NSPerToken/1e3, 'f', 1, 64))
				}
			}
			line(l)
		}
		per := "ms/step"
		if s.Class.Scope == step.Whole {
			per = "ms per device"
		}
		line(fmt.Sprintf("kernel time %s %s · busy %s of the %s · idle %s: launch-bound %s, device-side %s, unknown %s",
			MS(s.KernelPerStepNS()), per, Pct(ratio(s.BusyNS, s.SpanNS)), spanWord(s.Class), Pct(ratio(s.IdleNS, s.SpanNS)),
			Pct(ratio(s.Idle.LaunchBoundNS, s.SpanNS)), Pct(ratio(s.Idle.DeviceSideNS, s.SpanNS)), Pct(ratio(s.Idle.UnknownNS, s.SpanNS))))
		if e := stepRow(opt.Efficiency, s.Run, s.Class); e != nil && e.ModelledNS > 0 {
			line(SpeedOfLight(e))
		}
		if kf := a.Findings.Of(s.Run, s.Class); kf != nil {
			sb.WriteByte('\n')
			head := "findings, by what a fix would save per step"
			if s.Class.Scope != step.InStep {
				head = "findings, by what a fix would save per device"
			}
			if kf.Below > 0 {
				head += fmt.Sprintf(" (%d more under %s of the %s: %s ms in all)", kf.Below, Pct(a.Findings.MinShare), spanWord(s.Class), MS(kf.BelowNS))
			}
			if md {
				sb.WriteString(strings.ToUpper(head[:1]) + head[1:] + ":\n\n")
			} else {
				sb.WriteString("  " + head + ":\n")
			}
			findingList(sb, kf, a.Findings.MinShare, false, md, "  ")
		}
		sb.WriteByte('\n')
		perHead := "kernel " + per
		t := &Table{Head: []string{"category", perHead, "of kernel time", "of " + spanWord(s.Class)},
			Right: []bool{false, true, true, true}}
		shown := s.Categories[:min(len(s.Categories), summaryCategories)]
		for _, c := range shown {
			t.Add(c.Category.String(), MS(c.KernelPerStepNS), Pct(c.Share), Pct(c.StepShare))
		}
		if rest := s.Categories[len(shown):]; len(rest) > 0 {
			var kernel int64
			for _, c := range rest {
				kernel += c.KernelNS
			}
			t.Add(fmt.Sprintf("%d more categories", len(rest)), MS(stats.PerStep(kernel, s.Windows)), Pct(ratio(kernel, s.KernelNS)), "")
		}
		t.Write(sb, md)
		var notes []string
		if s.Ranks > 1 {
			notes = append(notes, rankLine(s, per, perClass, a.Findings))
		}
		if o := outlierLine(g, s); o != "" {
			notes = append(notes, o)
		}
		if o := outside[s.Run]; o != nil && i+1 < len(sums) && sums[i+1].Class.Scope == step.Outside {
			notes = append(notes, fmt.Sprintf("outside any step: %s ms of kernel time in all, on %s (%s of the run's kernel time)",
				MS(o.KernelNS), countOf(o.Devices, "device"), Pct(ratio(o.KernelNS, runKernel(sums, s.Run)))))
		}
		if len(notes) > 0 {
			sb.WriteByte('\n')
		}
		for _, n := range notes {
			line(n)
		}
	}
	settingsLine(sb, a.Settings, md)
}

// rankLine says how the ranks compare: the straggler when the collectives
// name one, else how kernel time per step varies across them.
func rankLine(s *analyze.KindSummary, per string, perClass []collectives.ClassSum, fs *findings.Report) string {
	for _, cs := range perClass {
		st := cs.Straggler
		if cs.Run != s.Run || cs.Class != s.Class || st == nil || !st.Distinct {
			continue
		}
		l := fmt.Sprintf("across %d ranks: %s is the straggler, last to arrive at %s of %d collectives", s.Ranks, RankName(st.Rank),
			Pct(st.Share()), st.Instances)
		if kf := fs.Of(s.Run, s.Class); kf != nil && kf.Straggler != nil && len(kf.Straggler.Excess) > 0 {
			x := kf.Straggler.Excess[0]
			l += fmt.Sprintf("; its %s %s× the median rank's", x.Category, strconv.FormatFloat(x.Ratio, 'f', 2, 64))
		}
		return l
	}
	return rankSpread(s, per)
}

// outlierLine names the outlier steps of a run and class: "" when none.
func outlierLine(g *analyze.GroupTable, s *analyze.KindSummary) string {
	if s.Class.Scope != step.InStep {
		return ""
	}
	var names []string
	n := 0
	for i := range g.Steps {
		r := &g.Steps[i]
		if !r.Outlier || r.Rank.Run != s.Run || step.ClassOf(r.Step.Kind) != s.Class {
			continue
		}
		n++
		if len(names) < 3 {
			name := "step " + strconv.Itoa(r.Step.Index)
			if s.Ranks > 1 {
				name += " on " + RankName(r.Rank)
			}
			names = append(names, fmt.Sprintf("%s (%s ms, %s the median)", name, MS(r.SpanNS), ratioX(float64(r.SpanNS), s.StepSpan.P50)))
		}
	}
	if n == 0 {
		return ""
	}
	more := ""
	if n > len(names) {
		more = fmt.Sprintf(", and %d more", n-len(names))
	}
	return fmt.Sprintf("outlier steps: %s%s (traceq steps lists them)", strings.Join(names, ", "), more)
}

// spanWord names what a summary's shares are of.
func spanWord(c step.Class) string {
	if c.Scope == step.Whole {
		return "span"
	}
	return "step time"
}

// rankSpread says how kernel time per step varies across the ranks.
func rankSpread(s *analyze.KindSummary, per string) string {
	r := s.RankSpread
	who := RankName(s.MaxRank)
	return fmt.Sprintf("across %d ranks, kernel %s: min %s · median %s · max %s (%s, %s the median)",
		s.Ranks, per, MS(r.Min), MSf(r.P50), MS(r.Max), who, ratioX(float64(r.Max), r.P50))
}

func ratioX(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}

func runKernel(sums []analyze.KindSummary, run string) int64 {
	var n int64
	for _, s := range sums {
		if s.Run == run {
			n += s.KernelNS
		}
	}
	return n
}
