package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
)

// Diff writes the comparison of two runs.
func Diff(w io.Writer, d *analyze.Diff, opt Options) error {
	switch opt.Format {
	case "json":
		return writeJSON(w, diffDoc(d))
	case "csv":
		return diffCSV(w, d)
	case "markdown", "text", "":
	default:
		return CheckFormat(opt.Format)
	}
	md := opt.Format == "markdown"
	var sb strings.Builder
	sides := func(label string, ins []analyze.InputInfo) {
		paths := make([]string, len(ins))
		for i, in := range ins {
			paths[i] = Printable(in.Path)
		}
		if len(paths) > 3 {
			paths = append(paths[:2], fmt.Sprintf("… (%d files)", len(ins)))
		}
		if md {
			sb.WriteString("**" + strings.TrimSpace(label) + "**: " + strings.Join(paths, ", ") + "  \n")
		} else {
			sb.WriteString(label + ": " + strings.Join(paths, ", ") + "\n")
		}
	}
	sides("before", d.Before)
	sides("after ", d.After)
	for _, n := range d.Notes {
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
		ct := &Table{Head: []string{"category", "before ms/step", "after ms/step", "delta ms", "delta %", "share before", "share after", "share change"},
			Right: []bool{false, true, true, true, true, true, true, true}}
		for j, c := range append([]analyze.CategoryDiff{k.Total}, k.Categories...) {
			ct.Add(rowCategory(j == 0, c.Category), MS(c.BeforePerStepNS), MS(c.AfterPerStepNS), signedMS(c.DeltaNS), signedPct(c.DeltaPct),
				Pct(c.BeforeShare), Pct(c.AfterShare), pp(c.ShareChange))
		}
		kt := &Table{Head: []string{"change", "before ms/step", "after ms/step", "delta ms", "delta %", "category", "kernel"},
			Right: []bool{false, true, true, true, true, false, false}}
		names, labels := make([]string, len(k.Kernels)), make([]string, len(k.Kernels))
		for j, kd := range k.Kernels {
			names[j], labels[j] = kd.Name, kd.Label
		}
		shown := displayNames(names, labels, opt.nameWidth())
		for j, kd := range k.Kernels {
			name := shown[j]
			if kd.Match == "short_name" {
				name += fmt.Sprintf(" (matched by short name: %d before, %d after)", len(kd.BeforeNames), len(kd.AfterNames))
			}
			kt.Add(kd.Change, MS(kd.BeforePerStepNS), MS(kd.AfterPerStepNS), signedMS(kd.DeltaNS), signedPct(kd.DeltaPct), kd.Category.String(), name)
		}
		if md {
			ct.Markdown(&sb)
			sb.WriteString("\n" + idleDiffLine(&k.Idle) + "\n")
			sb.WriteString("\nKernels that changed most:\n\n")
			kt.Markdown(&sb)
		} else {
			ct.Text(&sb, "  ")
			sb.WriteString("\n  " + idleDiffLine(&k.Idle) + "\n")
			sb.WriteString("\n  kernels that changed most:\n")
			kt.Text(&sb, "  ")
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// idleDiffLine says how the idle time per step and its causes changed.
func idleDiffLine(d *analyze.IdleDiff) string {
	arrow := func(c analyze.CategoryDiff) string {
		return MS(c.BeforePerStepNS) + " → " + MS(c.AfterPerStepNS)
	}
	return "idle per step: " + arrow(d.Total) + " ms (launch-bound " + arrow(d.LaunchBound) + " · device-side " +
		arrow(d.DeviceSide) + " · unknown " + arrow(d.Unknown) + ")"
}

func diffKindTitle(k *analyze.KindDiff) string {
	side := func(steps, devices int) string {
		return fmt.Sprintf("%s on %s", countOf(steps, "step"), countOf(devices, "device"))
	}
	switch k.StepKind {
	case analyze.KindAll:
		return fmt.Sprintf("whole trace · per device · before: %s · after: %s", countOf(k.BeforeDevices, "device"), countOf(k.AfterDevices, "device"))
	case analyze.KindNone:
		return fmt.Sprintf("outside any step · per device · before: %s · after: %s", countOf(k.BeforeDevices, "device"), countOf(k.AfterDevices, "device"))
	}
	steps := k.StepKind.String() + " steps"
	if k.StepKind == analyze.KindStep { // ProfilerStep#N and custom markers
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
	if *p > 0 && s != "0.0%" {
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
		"before_instances", "after_instances", "before_windows", "after_windows"})
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	pct := func(p *float64) string {
		if p == nil {
			return ""
		}
		return ftoa(*p)
	}
	for _, k := range d.Kinds {
		bw, aw := strconv.Itoa(k.BeforeWindows), strconv.Itoa(k.AfterWindows)
		for j, c := range append([]analyze.CategoryDiff{k.Total}, k.Categories...) {
			row := "category"
			if j == 0 {
				row = "total"
			}
			cw.Write([]string{k.StepKind.String(), row, "", rowCategory(j == 0, c.Category), "", "", i64(c.BeforeNS), i64(c.AfterNS),
				i64(c.BeforePerStepNS), i64(c.AfterPerStepNS), i64(c.DeltaNS), pct(c.DeltaPct),
				ftoa(c.BeforeShare), ftoa(c.AfterShare), ftoa(c.ShareChange), "", "", bw, aw})
		}
		for _, c := range []struct {
			name string
			d    analyze.CategoryDiff
		}{{"idle", k.Idle.Total}, {"launch_bound", k.Idle.LaunchBound}, {"device_side", k.Idle.DeviceSide}, {"unknown", k.Idle.Unknown}} {
			cw.Write([]string{k.StepKind.String(), "idle", c.name, "", "", "", i64(c.d.BeforeNS), i64(c.d.AfterNS),
				i64(c.d.BeforePerStepNS), i64(c.d.AfterPerStepNS), i64(c.d.DeltaNS), pct(c.d.DeltaPct),
				ftoa(c.d.BeforeShare), ftoa(c.d.AfterShare), ftoa(c.d.ShareChange), "", "", bw, aw})
		}
		for _, kd := range k.Kernels {
			cw.Write([]string{k.StepKind.String(), "kernel", csvText(kd.Name), kd.Category.String(), kd.Match, kd.Change, i64(kd.BeforeNS), i64(kd.AfterNS),
				i64(kd.BeforePerStepNS), i64(kd.AfterPerStepNS), i64(kd.DeltaNS), pct(kd.DeltaPct),
				"", "", "", i64(kd.BeforeInstances), i64(kd.AfterInstances), bw, aw})
		}
	}
	cw.Flush()
	return cw.Error()
}
