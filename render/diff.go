package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/findings"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// Diff writes the comparison of two runs, leading per step kind with the
// step time (the wall time without steps) and what changed in the
// findings: fb holds the findings of the before run (d.BeforeRun), fa of
// the after run (nil when not computed; one report may hold both).
func Diff(w io.Writer, d *analyze.Diff, fb, fa *findings.Report, opt Options) error {
	changes := findings.Compare(fb, d.BeforeRun, fa, d.AfterRun)
	switch opt.Format {
	case "json":
		doc := diffDoc(d)
		doc.Findings, doc.BeforeFindings = jsonRunFindings(fa, d.AfterRun), jsonRunFindings(fb, d.BeforeRun)
		doc.FindingChanges = jsonFindingChanges(changes)
		return writeJSON(w, doc)
	case "csv":
		return diffCSV(w, d)
	case "markdown", "text", "":
	default:
		return CheckFormat(opt.Format)
	}
	md := opt.Format == "markdown"
	var sb strings.Builder
	line := func(label, text string) {
		if md {
			sb.WriteString("**" + strings.TrimSpace(label) + "**: " + text + "  \n")
		} else {
			sb.WriteString(label + ": " + text + "\n")
		}
	}
	// The answer first: per step kind, the step time, what changed in the
	// findings, then in the categories.
	for _, ls := range diffAnswers(d, changes) {
		for j, l := range ls {
			if j > 0 && !md {
				l = "  " + l
			}
			sb.WriteString(l)
			if md {
				sb.WriteString("  ")
			}
			sb.WriteByte('\n')
		}
	}
	if len(d.Kinds) > 0 {
		sb.WriteByte('\n')
	}
	line("before", sideText(d.BeforeRun, d.Before.Inputs))
	line("after ", sideText(d.AfterRun, d.After.Inputs))
	line("changes", thresholdText(d))
	names := diffLabels(d)
	for _, n := range DiffNotes(d) {
		if md {
			sb.WriteString("- note: " + n + "\n")
		} else {
			sb.WriteString("note: " + n + "\n")
		}
	}
	for i := range d.Kinds {
		k := &d.Kinds[i]
		sb.WriteByte('\n')
		heading(&sb, diffKindTitle(k), opt)
		var lines []string
		if k.StepTime != nil {
			lines = append(lines, stepTimeLine(k.StepTime))
		}
		if k.Tokens != nil {
			lines = append(lines, tokenLine(k.Tokens))
		}
		ct := &Table{Head: []string{"category", "before ms/step", "after ms/step", "delta ms", "delta %", "noise ms", "change", "share before", "share after", "share change"},
			Right: []bool{false, true, true, true, true, true, false, true, true, true}}
		for j, c := range append([]analyze.CategoryDiff{k.Total}, k.Categories...) {
			ct.Add(rowCategory(j == 0, c.Category), MS(c.BeforePerStepNS), MS(c.AfterPerStepNS), signedMS(c.DeltaNS), signedPct(c.DeltaPct),
				noiseMS(c.NoiseNS), c.Change, Pct(c.BeforeShare), Pct(c.AfterShare), pp(c.ShareChange))
		}
		kt := &Table{Head: []string{"change", "before ms/step", "after ms/step", "delta ms", "delta %", "noise ms", "category", "kernel"},
			Right: []bool{false, true, true, true, true, true, false, false}}
		rows := make([]string, len(k.Kernels))
		for j, kd := range k.Kernels {
			rows[j] = kd.Name
		}
		shown := names.List(rows, opt.nameWidth())
		for j, kd := range k.Kernels {
			name := shown[j]
			if kd.Match == "short_name" {
				name += fmt.Sprintf(" (matched by short name: %d before, %d after)", len(kd.BeforeNames), len(kd.AfterNames))
			}
			kt.Add(kd.Change, MS(kd.BeforePerStepNS), MS(kd.AfterPerStepNS), signedMS(kd.DeltaNS), signedPct(kd.DeltaPct), noiseMS(kd.NoiseNS), kd.Category.String(), name)
		}
		if md {
			for _, l := range lines {
				sb.WriteString(l + "  \n")
			}
			if len(lines) > 0 {
				sb.WriteByte('\n')
			}
			ct.Markdown(&sb)
			sb.WriteString("\n" + idleDiffLine(&k.Idle) + "\n")
			sb.WriteString("\nKernels that changed most:\n\n")
			kt.Markdown(&sb)
		} else {
			for _, l := range lines {
				sb.WriteString("  " + l + "\n")
			}
			ct.Text(&sb, "  ")
			sb.WriteString("\n  " + idleDiffLine(&k.Idle) + "\n")
			sb.WriteString("\n  kernels that changed most:\n")
			kt.Text(&sb, "  ")
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// diffLabels labels the kernels of both sides of d.
func diffLabels(d *analyze.Diff) Labels {
	return LabelsOf(append(d.Before.Names(), d.After.Names()...))
}

// DiffNotes says, in sentences, which classes d compares on one side only
// and why it is not comparable.
func DiffNotes(d *analyze.Diff) []string {
	notes := []string{}
	for _, k := range d.OnlyBefore {
		notes = append(notes, fmt.Sprintf("step kind %q is in before only", k))
	}
	for _, k := range d.OnlyAfter {
		notes = append(notes, fmt.Sprintf("step kind %q is in after only", k))
	}
	if len(d.Kinds) == 0 {
		notes = append(notes, fmt.Sprintf("not comparable: no common step kind (before: %s; after: %s); --no-steps compares whole traces",
			classList(d.OnlyBefore), classList(d.OnlyAfter)))
	}
	for _, k := range d.Kinds {
		if k.Unshared {
			notes = append(notes, fmt.Sprintf("step kind %q: no category has time on both sides", k.Class))
		}
	}
	if len(d.Kinds) > 0 && !d.Comparable {
		notes = append(notes, "not comparable: the common step kinds share no category")
	}
	return notes
}

func classList(cs []step.Class) string {
	if len(cs) == 0 {
		return "none"
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.String()
	}
	return strings.Join(names, ", ")
}

// DiffAnswers is what diff leads with, per step kind: the step time p50
// before → after (the wall time without steps) and what changed in the
// findings, then the kernel time and the categories that changed most;
// fb and fa as for Diff.
func DiffAnswers(d *analyze.Diff, fb, fa *findings.Report) [][]string {
	return diffAnswers(d, findings.Compare(fb, d.BeforeRun, fa, d.AfterRun))
}

func diffAnswers(d *analyze.Diff, changes []findings.KindChange) [][]string {
	var out [][]string
	for i := range d.Kinds {
		k := &d.Kinds[i]
		var c *findings.KindChange
		for j := range changes {
			if changes[j].Class == k.Class {
				c = &changes[j]
			}
		}
		out = append(out, diffAnswer(k, c, d.MinChange))
	}
	return out
}

// answerChanges is how many changed categories a diff's answer line
// names.
const answerChanges = 3

// diffAnswer is a kind's answer, first lines of diff: the step time p50
// before → after with its verdict (the wall time per device without
// steps), and the findings that changed — the straggler, wait and
// transfer per collective, the other savings; then the kernel time per
// step and the categories that changed most beyond noise, and the idle
// time's change.
func diffAnswer(k *analyze.KindDiff, c *findings.KindChange, mc analyze.MinChange) []string {
	var sb strings.Builder
	per := "per step"
	switch {
	case k.Class.Scope == step.Whole:
		sb.WriteString("whole trace: ")
		per = "per device"
	case k.Class.Scope == step.Outside:
		sb.WriteString("outside steps: ")
		per = "per device"
	case k.Class.Kind == step.Generic:
		sb.WriteString("steps: ")
	default:
		sb.WriteString(k.Class.String() + ": ")
	}
	if st := k.StepTime; st != nil {
		fmt.Fprintf(&sb, "step time p50 %s → %s ms (%s, %s)", MSf(st.Before.P50), MSf(st.After.P50), signedPct(st.DeltaP50Pct), st.Change)
	} else {
		w := k.Wall
		fmt.Fprintf(&sb, "wall time %s %s → %s ms (%s, %s)", per, MS(w.BeforePerStepNS), MS(w.AfterPerStepNS), signedPct(w.DeltaPct), w.Change)
	}
	if said := findingsChanged(c, per, mc); len(said) > 0 {
		sb.WriteString(": " + strings.Join(said, "; "))
	}
	lines := []string{sb.String()}
	sb.Reset()
	t := k.Total
	fmt.Fprintf(&sb, "kernel time %s %s → %s ms (%s, %s)", per, MS(t.BeforePerStepNS), MS(t.AfterPerStepNS), signedPct(t.DeltaPct), t.Change)
	var named []string
	for _, c := range k.Categories {
		if c.Changed() && len(named) < answerChanges {
			named = append(named, Printable(c.Category.String())+" "+signedMS(c.DeltaNS)+" ms")
		}
	}
	if len(named) > 0 {
		sb.WriteString(": " + strings.Join(named, ", "))
	} else {
		sb.WriteString(": no category changed beyond noise")
	}
	if id := k.Idle.Total; id.Changed() {
		fmt.Fprintf(&sb, "; idle %s ms", signedMS(id.DeltaNS))
		var causes []string
		for _, c := range []struct {
			name string
			d    analyze.CategoryDiff
		}{{"launch-bound", k.Idle.LaunchBound}, {"device-side", k.Idle.DeviceSide}, {"unknown", k.Idle.Unknown}} {
			if c.d.Changed() {
				causes = append(causes, c.name+" "+signedMS(c.d.DeltaNS))
			}
		}
		if len(causes) > 0 {
			sb.WriteString(" (" + strings.Join(causes, ", ") + ")")
		}
	}
	return append(lines, sb.String())
}

// answerOps is how many collectives a diff's answer compares.
const answerOps = 2

// findingsChanged says what changed in a kind's findings: the straggler,
// each collective's wait and transfer, the other savings listed on
// either side — those that changed beyond mc.
func findingsChanged(c *findings.KindChange, per string, mc analyze.MinChange) []string {
	if c == nil {
		return nil
	}
	unit := " ms/step"
	if per != "per step" {
		unit = " ms " + per
	}
	changed := func(b, a int64) bool { return b != a && !mc.Below(float64(a-b), float64(b)) }
	var out []string
	b, a := c.StragglerBefore, c.StragglerAfter
	switch c.Straggler() {
	case findings.StragglerGone:
		out = append(out, fmt.Sprintf("the straggler is gone (%s, ≈%s%s before)", RankName(b.Rank), MS(b.LeadNS), unit))
	case findings.StragglerNew:
		out = append(out, fmt.Sprintf("a new straggler, %s (≈%s%s)", RankName(a.Rank), MS(a.LeadNS), unit))
	case findings.StragglerSame:
		out = append(out, fmt.Sprintf("%s still the straggler (≈%s → ≈%s%s)", RankName(a.Rank), MS(b.LeadNS), MS(a.LeadNS), unit))
	case findings.StragglerMoved:
		out = append(out, fmt.Sprintf("the straggler moved from %s to %s (≈%s → ≈%s%s)", RankName(b.Rank), RankName(a.Rank), MS(b.LeadNS), MS(a.LeadNS), unit))
	}
	ops := 0
	for _, o := range c.Collectives {
		if ops == answerOps {
			break
		}
		name := OpName(o.Op)
		if o.Group != "" {
			name += " (group " + Printable(o.Group) + ")"
		}
		part := func(what string, b, a int64) string {
			if !changed(b, a) {
				return what + " unchanged (" + MS(a) + unit + ")"
			}
			return what + " " + MS(b) + " → " + MS(a) + unit
		}
		switch {
		case o.Before == nil:
			out = append(out, fmt.Sprintf("%s new: wait %s, transfer %s%s", name, MS(o.After.WaitNS), MS(o.After.TransferNS), unit))
		case o.After == nil:
			out = append(out, name+" gone")
		case changed(o.Before.WaitNS, o.After.WaitNS) || changed(o.Before.TransferNS, o.After.TransferNS):
			out = append(out, name+" "+part("wait", o.Before.WaitNS, o.After.WaitNS)+", "+part("transfer", o.Before.TransferNS, o.After.TransferNS))
		default:
			continue
		}
		ops++
	}
	for _, f := range c.Findings {
		name := findingName(f)
		switch {
		case f.Before == nil:
			out = append(out, fmt.Sprintf("new: %s %s%s", name, sizeOf(f.After), unit))
		case f.After == nil:
			out = append(out, fmt.Sprintf("gone: %s (%s%s before)", name, sizeOf(f.Before), unit))
		case changed(f.Before.SavingNS, f.After.SavingNS):
			out = append(out, fmt.Sprintf("%s %s → %s%s", name, sizeOf(f.Before), sizeOf(f.After), unit))
		}
	}
	return out
}

// findingName names a finding in a diff: "launch-bound idle", "AllReduce
// transfer against pcie4".
func findingName(f findings.FindingChange) string {
	x := f.After
	if x == nil {
		x = f.Before
	}
	switch f.Kind {
	case findings.Transfer:
		return OpName(x.Collective.Op) + " transfer below the link"
	case findings.LatencyBound:
		return OpName(x.Collective.Op) + " latency"
	case findings.Roofline:
		return x.Roofline.Category.String() + " above the roofline"
	case findings.LaunchBound:
		return "launch-bound idle"
	case findings.BetweenSteps:
		return "time between steps"
	}
	return strings.ReplaceAll(f.Kind.String(), "_", " ")
}

// sizeOf is a finding's saving with its sign: "≈0.051", "≤0.474".
func sizeOf(f *findings.Finding) string {
	if f.Estimate == findings.UpperBound {
		return "≤" + MS(f.SavingNS)
	}
	return "≈" + MS(f.SavingNS)
}

// GateText says how a step kind failed a --fail-if condition: "decode:
// step time p50 0.658 → 0.744 ms (+13.1%, grew) beyond step_p50>+3%".
func GateText(r *analyze.GateResult) string {
	name := map[string]string{"step_p50": "step time p50", "step_p90": "step time p90", "wall": "wall time per step",
		"kernel": "kernel time per step", "idle": "idle time per step"}[r.Gate.Metric]
	if r.Class.Scope != step.InStep && r.Gate.Metric != "step_p50" && r.Gate.Metric != "step_p90" {
		name = strings.Replace(name, "per step", "per device", 1)
	}
	change := signedPct(r.DeltaPct)
	if r.Change != "" {
		change += ", " + r.Change
	}
	return fmt.Sprintf("%s: %s %s → %s ms (%s) beyond %s", r.Class, name, MSf(r.Before), MSf(r.After), change, Printable(r.Gate.Text))
}

// sideText names a side by its run, with its file, or its count of files
// and their directory when they share one.
func sideText(run string, ins []window.Input) string {
	switch len(ins) {
	case 0:
		return Printable(run)
	case 1:
		return Printable(run) + " (" + Printable(ins[0].Path) + ")"
	}
	dir := filepath.Dir(ins[0].Path)
	for _, in := range ins[1:] {
		if filepath.Dir(in.Path) != dir {
			return fmt.Sprintf("%s (%d files)", Printable(run), len(ins))
		}
	}
	return fmt.Sprintf("%s (%d files in %s)", Printable(run), len(ins), Printable(dir))
}

// thresholdText says when a change is called unchanged and when noise.
func thresholdText(d *analyze.Diff) string {
	return fmt.Sprintf("unchanged below --min-change %s per step; noise below %d standard errors of the step-to-step spread (noise ms)",
		d.MinChange, d.NoiseK)
}

// stepTimeLine compares the step time's percentiles.
func stepTimeLine(st *analyze.StepTimeDiff) string {
	part := func(name string, b, a, d float64, pct *float64, change string) string {
		s := name + " " + MSf(b) + " → " + MSf(a) + " ms (" + signedMSf(d) + " ms, " + signedPct(pct)
		if change != "" {
			s += ", " + change
		}
		return s + ")"
	}
	return "step time " + part("p50", st.Before.P50, st.After.P50, st.DeltaP50, st.DeltaP50Pct, st.Change) +
		" · " + part("p90", st.Before.P90, st.After.P90, st.DeltaP90, st.DeltaP90Pct, "")
}

// tokenLine compares the tokens per step and the time per token.
func tokenLine(t *analyze.TokenDiff) string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	line := "tokens per step p50 " + num(t.BeforeP50) + " → " + num(t.AfterP50) + " · step time per token "
	if t.DeltaNSPerToken == nil {
		// A side whose steps computed no token: time per token undefined.
		return line + optUS(t.BeforeNSPerToken) + " → " + optUS(t.AfterNSPerToken) + " µs"
	}
	d := us(*t.DeltaNSPerToken)
	if *t.DeltaNSPerToken > 0 {
		d = "+" + d
	}
	return line + us(*t.BeforeNSPerToken) + " → " + us(*t.AfterNSPerToken) + " µs (" + d + " µs, " + signedPct(t.DeltaPct) + ")"
}

// us formats nanoseconds as microseconds with three decimals.
func us(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 3, 64) }

// optUS is us, or "undefined" for nil.
func optUS(ns *int64) string {
	if ns == nil {
		return "undefined"
	}
	return us(*ns)
}

func signedMSf(ns float64) string {
	s := MSf(ns)
	if s == "-0.000" {
		return "0.000"
	}
	if ns > 0 && s != "0.000" {
		return "+" + s
	}
	return s
}

// noiseMS is a row's noise threshold, "-" when the spread is unknown.
func noiseMS(ns int64) string {
	if ns < 0 {
		return "-"
	}
	return MS(ns)
}

// idleDiffLine says how the idle time per step and its causes changed.
func idleDiffLine(d *analyze.IdleDiff) string {
	arrow := func(c analyze.CategoryDiff) string {
		return MS(c.BeforePerStepNS) + " → " + MS(c.AfterPerStepNS)
	}
	return "idle per step: " + arrow(d.Total) + " ms, " + d.Total.Change + " (launch-bound " + arrow(d.LaunchBound) + " · device-side " +
		arrow(d.DeviceSide) + " · unknown " + arrow(d.Unknown) + ")"
}

func diffKindTitle(k *analyze.KindDiff) string {
	side := func(steps, devices int) string {
		return fmt.Sprintf("%s on %s", countOf(steps, "step"), countOf(devices, "device"))
	}
	switch k.Class.Scope {
	case step.Whole:
		return fmt.Sprintf("whole trace · per device · before: %s · after: %s", countOf(k.BeforeDevices, "device"), countOf(k.AfterDevices, "device"))
	case step.Outside:
		return fmt.Sprintf("outside any step · per device · before: %s · after: %s", countOf(k.BeforeDevices, "device"), countOf(k.AfterDevices, "device"))
	}
	steps := k.Class.String() + " steps"
	if k.Class.Kind == step.Generic { // ProfilerStep#N and custom markers
		steps = "steps"
	}
	return fmt.Sprintf("%s · mean per step and device · before: %s · after: %s",
		steps, side(k.BeforeSteps, k.BeforeDevices), side(k.AfterSteps, k.AfterDevices))
}

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func signedMS(ns int64) string {
	s := MS(ns)
	if ns > 0 && s != "0.000" {
		return "+" + s
	}
	return s
}

func signedPct(p *float64) string {
	if p == nil {
		return "new"
	}
	s := strconv.FormatFloat(*p, 'f', 1, 64) + "%"
	switch {
	case s == "-0.0%":
		s = "0.0%"
	case *p > 0 && s != "0.0%":
		s = "+" + s
	}
	return s
}

// pp formats a change of share in percentage points.
func pp(f float64) string {
	s := strconv.FormatFloat(f*100, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	if f > 0 && s != "0.0" {
		s = "+" + s
	}
	return s + " pp"
}

func diffCSV(w io.Writer, d *analyze.Diff) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"step_kind", "row", "name", "category", "match", "change", "before_ns", "after_ns",
		"before_per_step_ns", "after_per_step_ns", "delta_ns", "delta_pct", "before_share", "after_share", "share_change",
		"before_instances", "after_instances", "before_windows", "after_windows",
		"before_stddev_ns", "after_stddev_ns", "noise_ns"})
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	optI64 := func(v *int64) string { // "" for undefined
		if v == nil {
			return ""
		}
		return i64(*v)
	}
	// Percentiles interpolate: to the thousandth of a nanosecond.
	num := func(f float64) string { return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64) }
	pct := func(p *float64) string {
		if p == nil {
			return ""
		}
		return ftoa(*p)
	}
	known := func(v int64) string { // -1: unknown
		if v < 0 {
			return ""
		}
		return i64(v)
	}
	verdict := func(v analyze.Verdict) []string {
		return []string{known(v.BeforeStdDevNS), known(v.AfterStdDevNS), known(v.NoiseNS)}
	}
	for _, k := range d.Kinds {
		kind := k.Class.String()
		bw, aw := strconv.Itoa(k.BeforeWindows), strconv.Itoa(k.AfterWindows)
		for j, c := range append([]analyze.CategoryDiff{k.Total}, k.Categories...) {
			row := "category"
			if j == 0 {
				row = "total"
			}
			cw.Write(append([]string{kind, row, "", rowCategory(j == 0, c.Category), "", c.Change, i64(c.BeforeNS), i64(c.AfterNS),
				i64(c.BeforePerStepNS), i64(c.AfterPerStepNS), i64(c.DeltaNS), pct(c.DeltaPct),
				ftoa(c.BeforeShare), ftoa(c.AfterShare), ftoa(c.ShareChange), "", "", bw, aw}, verdict(c.Verdict)...))
		}
		for _, c := range []struct {
			name string
			d    analyze.CategoryDiff
		}{{"idle", k.Idle.Total}, {"launch_bound", k.Idle.LaunchBound}, {"device_side", k.Idle.DeviceSide}, {"unknown", k.Idle.Unknown}} {
			cw.Write(append([]string{kind, "idle", c.name, "", "", c.d.Change, i64(c.d.BeforeNS), i64(c.d.AfterNS),
				i64(c.d.BeforePerStepNS), i64(c.d.AfterPerStepNS), i64(c.d.DeltaNS), pct(c.d.DeltaPct),
				ftoa(c.d.BeforeShare), ftoa(c.d.AfterShare), ftoa(c.d.ShareChange), "", "", bw, aw}, verdict(c.d.Verdict)...))
		}
		for _, kd := range k.Kernels {
			cw.Write(append([]string{kind, "kernel", csvText(kd.Name), kd.Category.String(), kd.Match, kd.Change, i64(kd.BeforeNS), i64(kd.AfterNS),
				i64(kd.BeforePerStepNS), i64(kd.AfterPerStepNS), i64(kd.DeltaNS), pct(kd.DeltaPct),
				"", "", "", i64(kd.BeforeInstances), i64(kd.AfterInstances), bw, aw}, verdict(kd.Verdict)...))
		}
		// Added after the rows of the first version: step time and tokens.
		if st := k.StepTime; st != nil {
			cw.Write(append([]string{kind, "step_time", "p50", "", "", st.Change, "", "", num(st.Before.P50), num(st.After.P50), num(st.DeltaP50),
				pct(st.DeltaP50Pct), "", "", "", "", "", bw, aw}, verdict(st.Verdict)...))
			cw.Write([]string{kind, "step_time", "p90", "", "", "", "", "", num(st.Before.P90), num(st.After.P90), num(st.DeltaP90),
				pct(st.DeltaP90Pct), "", "", "", "", "", bw, aw, "", "", ""})
		}
		if t := k.Tokens; t != nil {
			cw.Write([]string{kind, "tokens", "tokens_p50", "", "", "", "", "", num(t.BeforeP50), num(t.AfterP50), num(t.AfterP50 - t.BeforeP50),
				pct(pctOf(t.BeforeP50, t.AfterP50)), "", "", "", "", "", bw, aw, "", "", ""})
			cw.Write([]string{kind, "tokens", "ns_per_token", "", "", "", "", "", optI64(t.BeforeNSPerToken), optI64(t.AfterNSPerToken), optI64(t.DeltaNSPerToken),
				pct(t.DeltaPct), "", "", "", "", "", bw, aw, "", "", ""})
		}
		// Added after the rows of step time and tokens: the wall time.
		cw.Write(append([]string{kind, "wall", "", "", "", k.Wall.Change, i64(k.Wall.BeforeNS), i64(k.Wall.AfterNS),
			i64(k.Wall.BeforePerStepNS), i64(k.Wall.AfterPerStepNS), i64(k.Wall.DeltaNS), pct(k.Wall.DeltaPct),
			"", "", "", "", "", bw, aw}, verdict(k.Wall.Verdict)...))

	}
	cw.Flush()
	return cw.Error()
}

// pctOf is (after − before) / before × 100, nil when before is 0.
func pctOf(before, after float64) *float64 {
	if before == 0 {
		return nil
	}
	v := (after - before) / before * 100
	return &v
}
