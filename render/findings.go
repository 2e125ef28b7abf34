package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/findings"
	"github.com/traceq/traceq/settings"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// Findings writes traceq advise: per run and step kind, the findings
// ranked by what a fix would save per step, each with its evidence and
// remedy; then the settings that came from elsewhere than the command
// line.
func Findings(w io.Writer, tbl *window.Table, rep *findings.Report, set *settings.Settings, opt Options) error {
	switch opt.Format {
	case "json":
		return writeJSON(w, jsonAdviseDoc{Inputs: jsonInputs(tbl.Inputs), Settings: jsonSettings(set), MinFinding: rep.MinShare,
			Findings: jsonFindings(rep), Below: jsonBelow(rep)})
	case "csv":
		return findingsCSV(w, rep)
	case "markdown", "text", "":
	default:
		return CheckFormat(opt.Format)
	}
	md := opt.Format == "markdown"
	var sb strings.Builder
	for i := range rep.Kinds {
		kf := &rep.Kinds[i]
		if i > 0 {
			sb.WriteByte('\n')
		}
		heading(&sb, findingsTitle(kf), opt)
		findingList(&sb, kf, rep.MinShare, true, md, "  ")
	}
	if len(rep.Kinds) == 0 {
		sb.WriteString("no findings: the inputs have no GPU work of the kind asked for\n")
	}
	settingsLine(&sb, set, md)
	_, err := io.WriteString(w, sb.String())
	return err
}

// findingsTitle names the run and step kind of a list of findings.
func findingsTitle(kf *findings.KindFindings) string {
	parts := []string{}
	if kf.Run != "" {
		parts = append(parts, kf.Run)
	}
	parts = append(parts, classWords(kf.Class), stepTimeWord(kf))
	return Printable(strings.Join(parts, " · "))
}

func classWords(c step.Class) string {
	switch {
	case c.Scope == step.Whole:
		return "whole trace"
	case c.Kind == step.Generic:
		return "steps"
	}
	return c.String() + " steps"
}

// stepTimeWord is what the shares of a list of findings are of.
func stepTimeWord(kf *findings.KindFindings) string {
	if kf.Class.Scope == step.Whole {
		return "mean span per device " + MSf(kf.StepNS) + " ms"
	}
	return "step time p50 " + MSf(kf.StepNS) + " ms"
}

// findingList writes a list of findings: numbered savings, then the
// informational ones and the capture gaps, then what the threshold left
// out. long adds each finding's remedy.
func findingList(sb *strings.Builder, kf *findings.KindFindings, minShare float64, long, md bool, indent string) {
	if md {
		indent = ""
	}
	n := 0
	for i := range kf.Findings {
		f := &kf.Findings[i]
		mark := "-"
		if f.Ranked() {
			n++
			mark = strconv.Itoa(n) + "."
		}
		line := FindingText(f, long)
		if md {
			line = MarkdownCell(line)
		}
		sb.WriteString(indent + mark + " " + line + "\n")
		if long && f.Remedy != "" {
			r := "remedy: " + f.Remedy
			if md {
				sb.WriteString("   " + MarkdownCell(r) + "\n")
			} else {
				sb.WriteString(indent + strings.Repeat(" ", len(mark)+1) + r + "\n")
			}
		}
	}
	if len(kf.Findings) == 0 {
		sb.WriteString(indent + "- nothing to fix above " + Pct(minShare) + " of the step\n")
	}
	if kf.Below > 0 && long {
		if md {
			sb.WriteByte('\n') // a paragraph, not part of the last item
		}
		sb.WriteString(indent + fmt.Sprintf("(%s under %s of the step: %s ms/step in all; --min-finding 0 lists them)\n",
			countOf(kf.Below, "more finding"), Pct(minShare), MS(kf.BelowNS)))
	}
}

// saving writes a finding's size: "≈0.089 ms/step, 11.8% of the step"
// for a central estimate, "≤…" for an upper bound.
func saving(f *findings.Finding) string {
	sign := "≈"
	switch f.Estimate {
	case findings.UpperBound:
		sign = "≤"
	case findings.Informational:
		sign = ""
	}
	if f.Class.Scope != step.InStep {
		return sign + MS(f.SavingNS) + " ms per device (" + Pct(f.Share) + " of the span)"
	}
	return sign + MS(f.SavingNS) + " ms/step (" + Pct(f.Share) + " of the step)"
}

// perUnit is what a finding's times are per: "ms/step", or "ms per
// device" over a whole trace.
func perUnit(f *findings.Finding) string {
	if f.Class.Scope != step.InStep {
		return "ms per device"
	}
	return "ms/step"
}

// FindingText says a finding in one line: what, how much per step, and
// its evidence — briefly for breakdown's first screen, in full (long)
// for advise and the JSON documents.
func FindingText(f *findings.Finding, long bool) string {
	switch f.Kind {
	case findings.Straggler:
		e := f.Straggler
		s := "the straggler, " + RankName(e.Rank) + ": " + saving(f) + " if it kept up: last at " +
			Pct(ratio(e.LastArrivals, e.Instances)) + " of " + strconv.FormatInt(e.Instances, 10) + " collectives"
		if long {
			s += ", " + MS(e.LeadNS) + " ms/step after the next-to-last rank, while the others wait " + MS(e.WaitNS) + " ms/step"
		}
		if len(e.Excess) > 0 {
			n := 1
			if long || e.SlowGPU {
				n = 3
			}
			var cats []string
			for _, x := range e.Excess[:min(len(e.Excess), n)] {
				cats = append(cats, x.Category.String()+" "+strconv.FormatFloat(x.Ratio, 'f', 2, 64)+"×")
			}
			s += "; its " + strings.Join(cats, ", ") + " the median rank's"
			if e.SlowGPU {
				s += ": a slow GPU, not one kernel"
			} else {
				s += ": one category, not the whole GPU"
			}
		} else {
			s += "; its compute is not slower: it starts late"
		}
		return s
	case findings.Transfer:
		e := f.Collective
		s := OpName(e.Op) + " transfer against " + linkWords(e.Link) + ": " + saving(f) + ": " + MS(e.TransferNS) + " ms/step of transfer, " +
			MS(e.AtLinkNS) + " at the link"
		if e.Link.Measured() {
			s = OpName(e.Op) + " transfer against what nccl-tests reached here: " + saving(f) + ": " + MS(e.TransferNS) +
				" ms/step of transfer, " + MS(e.AtLinkNS) + " at the measured busbw"
		}
		if !long {
			return s
		}
		if e.Fit.OK {
			s += "; " + fitWords(e.Fit)
		} else if !e.Link.Measured() {
			s += "; one message size: its latency counted as transfer"
		}
		if e.Link.Measured() {
			s += " (" + filepath.Base(e.Link.Source) + ")"
		}
		return s + sizedWords(e)
	case findings.LatencyBound:
		e := f.Collective
		s := OpName(e.Op) + " is latency-bound: " + saving(f) + " of fixed cost, " +
			strconv.FormatFloat(e.InstancesPerStep, 'f', -1, 64) + " per step × α " + us(int64(math.Round(e.Fit.AlphaNS))) + " µs"
		if long {
			s += " (" + Pct(e.Fit.LatencyShare()) + " of its transfer; " + fitWords(e.Fit) + ")"
		}
		if e.LinkSavingNS >= 0 {
			s += "; a faster link would save " + MS(e.LinkSavingNS) + " ms/step"
		}
		return s
	case findings.LaunchBound:
		e := f.Idle
		return "launch-bound idle: " + saving(f) + ": the device waited for the host's launches (launch CPU / GPU time " +
			strconv.FormatFloat(e.LaunchCPUPerGPU, 'f', 2, 64) + ")"
	case findings.BetweenSteps:
		e := f.Idle
		s := "between steps: " + saving(f)
		if e.PeriodNS > 0 {
			s += ", " + Pct(float64(e.BetweenNS)/e.PeriodNS) + " of the period"
		}
		if long {
			s += ": host and scheduler time between one step's GPU work and the next (period p50 " + MSf(e.PeriodNS) + " ms)"
		}
		return s
	case findings.ExposedCommunication:
		e := f.Idle
		s := "exposed communication: " + MS(f.SavingNS) + " of " + MS(e.CommBusyNS) + " " + perUnit(f) + " ran with nothing beside it"
		if long {
			of := "step"
			if f.Class.Scope != step.InStep {
				of = "span"
			}
			s += " (" + Pct(f.Share) + " of the " + of + ": what overlap could hide at most)"
		}
		return s
	case findings.Roofline:
		e := f.Roofline
		s := e.Category.String() + " below the roofline: " + saving(f) + ": " + MS(e.ModelledNS) + " " + perUnit(f) + " against " +
			MS(e.RooflineNS) + " at the roofline (" + Pct(e.Efficiency) + " efficient)"
		if long {
			s += "; " + Pct(ratio(e.ModelledNS, e.KernelNS)) + " of its " + MS(e.KernelNS) + " " + perUnit(f) + " priced"
		}
		return s
	case findings.CaptureGap:
		return "capture: " + gapWords(f.Gap)
	}
	return f.Kind.String() + ": " + saving(f)
}

func linkWords(l *collectives.Link) string {
	if l.Measured() {
		return "what nccl-tests reached on this machine (" + filepath.Base(l.Source) + ")"
	}
	if l.Assumed() {
		// No link was given: the finding says which it assumed.
		return l.Label() + " (assumed: " + assumedWords(&l.Link) + ")"
	}
	return l.Label()
}

// fitWords describes a latency–bandwidth fit: "α 3.000 µs + bus bytes at
// 16.0 GB/s over 38 sizes".
func fitWords(f collectives.Fit) string {
	beta := "no bandwidth term"
	if !math.IsInf(f.BetaGBps, 1) {
		beta = "bus bytes at " + GBps(f.BetaGBps) + " GB/s"
	}
	return "fit α " + us(int64(math.Round(f.AlphaNS))) + " µs + " + beta + " over " + strconv.Itoa(f.Sizes) + " sizes"
}

func sizedWords(e *findings.CollectiveEvidence) string {
	if e.SizedInstances < e.Instances {
		return fmt.Sprintf("; the %d of %d instances of known size", e.SizedInstances, e.Instances)
	}
	return ""
}

// gapWords says what a capture gap lacks and how to capture it.
func gapWords(g *findings.GapEvidence) string {
	op := OpName(g.Op)
	var what string
	switch g.Gap {
	case findings.NoStepMarkers:
		what = "no step markers: every figure is per device over the whole trace"
	case findings.NoMessageSizes:
		what = fmt.Sprintf("%s message sizes unknown for %d of %d instances, so no bus bandwidth", op, g.Count, g.Of)
	case findings.NoLink:
		what = "no link to compare " + op + "'s bus bandwidth with"
	case findings.MissingRanks:
		what = fmt.Sprintf("%d of %d ranks in the run", g.Count, g.Of)
	case findings.OneRank:
		what = op + " on one rank: waiting cannot be told from transfer"
	case findings.NoCurveForOp:
		what = "the nccl-tests output did not measure " + op
	case findings.UnmatchedInstances:
		what = fmt.Sprintf("%d of %d %s instances are not on every rank", g.Count, g.Of, op)
	case findings.WholeGraphs:
		what = fmt.Sprintf("%d CUDA graph executions traced whole: their kernels are missing", g.Count)
	case findings.NoShapes:
		what = "no shapes: no kernel could be priced against the roofline"
	default:
		what = g.Gap.String()
	}
	return what
}

// settingsLine says where the settings not given on the command line
// came from.
func settingsLine(sb *strings.Builder, set *settings.Settings, md bool) {
	var parts []string
	for _, s := range set.List() {
		if s.Source != settings.FromFlag {
			parts = append(parts, s.Name.Flag()+" "+s.Value+" from "+s.From())
		}
	}
	if len(parts) == 0 {
		return
	}
	line := "settings: " + strings.Join(parts, " · ")
	if md {
		line = MarkdownCell(line) + "  "
	}
	sb.WriteString("\n" + line + "\n")
}

func findingsCSV(w io.Writer, rep *findings.Report) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"run", "step_kind", "order", "kind", "subject", "saving_ns_per_step", "share_of_step", "estimate", "finding", "remedy"})
	for _, kf := range rep.Kinds {
		n := 0
		for i := range kf.Findings {
			f := &kf.Findings[i]
			order := ""
			if f.Ranked() {
				n++
				order = strconv.Itoa(n)
			}
			cw.Write([]string{csvText(kf.Run), kf.Class.String(), order, f.Kind.String(), csvText(Subject(f)), strconv.FormatInt(f.SavingNS, 10),
				ftoa(f.Share), f.Estimate.String(), csvText(FindingText(f, true)), csvText(f.Remedy)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// RooflineRows copies the efficiency analysis's categories for the
// findings (findings.Options.Roofline): sibling analyses are joined by
// their caller. Priced is false without the analysis (eff nil).
func RooflineRows(eff *efficiency.Result) (rows []findings.RooflineRow, priced bool) {
	if eff == nil {
		return nil, false
	}
	rows = make([]findings.RooflineRow, len(eff.Categories))
	for i, c := range eff.Categories {
		rows[i] = findings.RooflineRow{Run: c.Run, Class: c.Class, Category: c.Category, Windows: c.Windows,
			KernelNS: c.KernelNS, ModelledNS: c.ModelledNS, RooflineNS: c.RooflineNS}
	}
	return rows, true
}

// Subject names what a finding is about: a rank, a collective, a cause.
func Subject(f *findings.Finding) string {
	switch {
	case f.Straggler != nil:
		return RankName(f.Straggler.Rank)
	case f.Collective != nil:
		s := OpName(f.Collective.Op)
		if f.Collective.Group != "" {
			s += " (group " + f.Collective.Group + ")"
		}
		return s
	case f.Roofline != nil:
		return f.Roofline.Category.String()
	case f.Gap != nil:
		if f.Gap.Op != "" {
			return f.Gap.Gap.String() + " " + OpName(f.Gap.Op)
		}
		return f.Gap.Gap.String()
	}
	return strings.ReplaceAll(f.Kind.String(), "_", " ")
}
