package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
)

// StepKindStats is one (input, device, step kind)'s step statistics in the
// JSON document of the steps command.
type StepKindStats struct {
	Path     string             `json:"path"`
	Rank     *int               `json:"rank"`
	PID      int64              `json:"pid"`
	Device   int32              `json:"device"`
	StepKind string             `json:"step_kind"`
	Stats    *analyze.StepStats `json:"step_stats"`
}

// stepsDoc is the JSON document of the steps command.
type stepsDoc struct {
	Inputs    []analyze.InputInfo   `json:"inputs"`
	Steps     []analyze.StepLine    `json:"steps"`
	Summaries []analyze.StepSummary `json:"summaries"`
	Kinds     []StepKindStats       `json:"kinds"`
}

func stepKinds(r *analyze.Report) []StepKindStats {
	out := []StepKindStats{}
	for _, g := range r.Groups {
		if g.StepStats != nil {
			out = append(out, StepKindStats{Path: g.Path, Rank: g.Rank, PID: g.PID, Device: g.Device,
				StepKind: g.StepKind, Stats: g.StepStats})
		}
	}
	return out
}

// StepCount says "1 decode step", "5 steps": kind "step" (ProfilerStep and
// custom markers) and "" name no kind.
func StepCount(n int, kind string) string {
	s := strconv.Itoa(n) + " "
	if kind != "" && kind != analyze.KindStep {
		s += kind + " "
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

// Steps writes every step of r on every device: the steps command.
func Steps(w io.Writer, r *analyze.Report, opt Options) error {
	switch opt.Format {
	case "json":
		doc := stepsDoc{Inputs: r.Inputs, Steps: r.Steps, Summaries: r.StepSummaries, Kinds: stepKinds(r)}
		if doc.Steps == nil {
			doc.Steps = []analyze.StepLine{}
		}
		if doc.Summaries == nil {
			doc.Summaries = []analyze.StepSummary{}
		}
		return writeJSON(w, doc)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"path", "rank", "pid", "device", "index", "kind", "marker", "marker_start_ns", "marker_end_ns",
			"start_ns", "offset_ns", "span_ns", "busy_ns", "idle_ns", "kernel_ns", "top_category", "top_share", "outlier"})
		for _, s := range r.Steps {
			cw.Write([]string{s.Path, intOrEmpty(s.Rank), strconv.FormatInt(s.PID, 10), strconv.Itoa(int(s.Device)),
				strconv.Itoa(s.Index), s.Kind, s.Marker, strconv.FormatInt(int64(s.Step.Start), 10),
				strconv.FormatInt(int64(s.End), 10), strconv.FormatInt(int64(s.StartNS), 10),
				strconv.FormatInt(s.OffsetNS, 10), strconv.FormatInt(s.SpanNS, 10), strconv.FormatInt(s.BusyNS, 10),
				strconv.FormatInt(s.IdleNS, 10), strconv.FormatInt(s.KernelNS, 10), s.TopCategory, ftoa(s.TopShare),
				strconv.FormatBool(s.Outlier)})
		}
		cw.Flush()
		return cw.Error()
	case "markdown", "text", "":
		return stepsText(w, r, opt)
	}
	return CheckFormat(opt.Format)
}

func stepsText(w io.Writer, r *analyze.Report, opt Options) error {
	var sb strings.Builder
	md := opt.Format == "markdown"
	width := opt.NameWidth
	if width <= 0 {
		width = 48
	}
	kinds := stepKinds(r)
	for ii, sum := range r.StepSummaries {
		if ii > 0 {
			sb.WriteByte('\n')
		}
		title := sum.Path + " · " + StepCount(sum.Steps, "")
		if md {
			sb.WriteString("### " + title + "\n\n")
		} else {
			sb.WriteString("== " + title + "\n")
		}
		t := &table{head: []string{"step", "kind", "marker", "dev", "start ms", "span ms", "busy ms", "idle ms",
			"top category", "share", "of span", "outlier"},
			right: []bool{true, false, false, true, true, true, true, true, false, true, true, false}}
		for _, s := range r.Steps {
			if s.Path != sum.Path {
				continue
			}
			out := ""
			if s.Outlier {
				out = "outlier"
			}
			ofSpan := ""
			if len(s.Categories) > 0 {
				ofSpan = Pct(s.Categories[0].ShareOfSpan)
			}
			t.add(strconv.Itoa(s.Index), s.Kind, clip(s.Marker, width), strconv.Itoa(int(s.Device)), MS(s.OffsetNS),
				MS(s.SpanNS), MS(s.BusyNS), MS(s.IdleNS), s.TopCategory, Pct(s.TopShare), ofSpan, out)
		}
		if md {
			t.markdown(&sb)
		} else {
			t.text(&sb, "  ")
		}
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
		st := &table{head: []string{"dev", "kind", "steps", "span p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms", "outliers"},
			right: []bool{true, false, true, true, true, true, true, true, false}}
		for _, k := range kinds {
			if k.Path != sum.Path {
				continue
			}
			s := k.Stats
			var outs []string
			for _, o := range s.Outliers {
				outs = append(outs, strconv.Itoa(o))
			}
			st.add(strconv.Itoa(int(k.Device)), k.StepKind, strconv.Itoa(s.Count), MSf(s.SpanNS.P50), MSf(s.SpanNS.P90),
				MSf(s.SpanNS.P99), MS(s.SpanNS.Max), MSf(s.SpanNS.Mean), strings.Join(outs, " "))
		}
		if md {
			st.markdown(&sb)
		} else {
			st.text(&sb, "  ")
		}
	}
	if len(r.StepSummaries) == 0 {
		sb.WriteString("no steps\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
