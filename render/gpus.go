package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/traceq/traceq/gpuspec"
)

// markSuffix writes a figure's marks as one-letter suffixes for the
// tables: h halved, d derived, u unconfirmed.
func markSuffix(m gpuspec.Mark) string {
	var s string
	if m&gpuspec.Halved != 0 {
		s += "h"
	}
	if m&gpuspec.Derived != 0 {
		s += "d"
	}
	if m&gpuspec.Unconfirmed != 0 {
		s += "u"
	}
	return s
}

func figureText(f gpuspec.Figure) string {
	if !f.Known() {
		return "—"
	}
	return f.Text + markSuffix(f.Marks)
}

// GPUs writes the GPU table: one row per GPU with its peaks, bandwidth,
// SMs and link, then each row's sources.
func GPUs(w io.Writer, t *gpuspec.Table, opt Options) error {
	gpus := t.GPUs()
	switch opt.Format {
	case "json":
		doc := jsonGPUsDoc{GPUs: make([]jsonGPU, len(gpus))}
		for i := range gpus {
			doc.GPUs[i] = jsonGPURow(&gpus[i])
		}
		return writeJSON(w, doc)
	case "csv":
		cw := csv.NewWriter(w)
		head := []string{"name", "sms", "memory_tbps"}
		for _, d := range gpuspec.DTypes() {
			head = append(head, d.String()+"_tflops")
		}
		cw.Write(append(head, "link", "marks", "matches", "source"))
		for _, g := range gpus {
			row := []string{csvText(g.Name), strconv.Itoa(g.SMs), g.Memory.Text}
			var marks []string
			for _, d := range gpuspec.DTypes() {
				row = append(row, g.Peak[d].Text)
				if g.Peak[d].Marks != 0 {
					marks = append(marks, d.String()+"="+strings.ReplaceAll(g.Peak[d].Marks.String(), " ", "+"))
				}
			}
			if g.Memory.Marks != 0 {
				marks = append([]string{"memory=" + strings.ReplaceAll(g.Memory.Marks.String(), " ", "+")}, marks...)
			}
			cw.Write(append(row, g.Link, strings.Join(marks, " "), csvText(matchText(g.Matches)), csvText(g.Source())))
		}
		cw.Flush()
		return cw.Error()
	case "markdown", "text", "":
	default:
		return CheckFormat(opt.Format)
	}
	md := opt.Format == "markdown"
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d GPUs: dense peak TFLOP/s per type, memory TB/s, SMs and the default link of collectives; marks: h = half the vendor's figure with sparsity, d = derived, u = unconfirmed.\n\n", len(gpus))
	head := []string{"GPU", "SMs", "TB/s"}
	right := []bool{false, true, true}
	for _, d := range gpuspec.DTypes() {
		head, right = append(head, d.String()), append(right, true)
	}
	tab := &Table{Head: append(head, "link"), Right: append(right, false)}
	for _, g := range gpus {
		row := []string{g.Name, strconv.Itoa(g.SMs) + markSuffix(g.SMsMark), figureText(g.Memory)}
		for _, d := range gpuspec.DTypes() {
			row = append(row, figureText(g.Peak[d]))
		}
		link := "—"
		if g.Link != "" {
			link = g.Link + markSuffix(g.LinkMark)
		}
		tab.Add(append(row, link)...)
	}
	tab.Write(&sb, md)
	sb.WriteString("\nSources and the names each row matches:\n")
	if md {
		sb.WriteString("\n")
	}
	for _, g := range gpus {
		if md {
			fmt.Fprintf(&sb, "- **%s** (%s): %s\n", MarkdownCell(g.Name), MarkdownCell(matchText(g.Matches)), MarkdownCell(g.Source()))
		} else {
			fmt.Fprintf(&sb, "  %s (%s): %s\n", Printable(g.Name), Printable(matchText(g.Matches)), Printable(g.Source()))
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// matchText lists a row's match lines: "NVIDIA B200"; "" sms=304 memory=192.
func matchText(ms []gpuspec.Match) string {
	var s []string
	for _, m := range ms {
		t := strconv.Quote(m.Name)
		if m.SMs > 0 {
			t += " sms=" + strconv.Itoa(m.SMs)
		}
		if m.MemoryGiB > 0 {
			t += " memory=" + strconv.Itoa(m.MemoryGiB) + "GiB"
		}
		s = append(s, t)
	}
	return strings.Join(s, ", ")
}
