package report

import (
	"io"

	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/chart"
)

// speedOfLight writes the section on efficiency when the report's
// efficiency analysis priced some kernel: each class's step time against
// its speed of light, the roofline chart and the tables of traceq
// efficiency (docs/efficiency.md).
func (w *writer) speedOfLight() error {
	r := w.opt.Efficiency
	if !render.Priced(r) {
		return nil
	}
	sb := &w.sb
	sb.WriteString(w.h(1) + "Speed of light\n\n")
	runs := map[string]bool{}
	for _, s := range r.Steps {
		runs[s.Run] = true
	}
	for _, s := range r.Steps {
		sb.WriteString("- " + render.MarkdownCell(render.EfficiencyLine(&s, len(runs) > 1)) + "\n")
	}
	sb.WriteString("\n")
	// Memory-only ops, or devices outside the GPU table, leave the
	// roofline chart nothing to draw: the tables still stand.
	if chart.RooflineDrawable(r) {
		link, err := w.draw("roofline", "roofline: achieved TFLOP/s by arithmetic intensity", func(out io.Writer) error {
			return chart.Roofline(out, r, chart.Options{Format: w.format, Title: Title(w.inputs)})
		})
		if err != nil {
			return err
		}
		sb.WriteString(link + "\n\n")
		sb.WriteString("*One circle per op shape with FLOPs, its area its kernel time; the lines are the device's memory roof and its compute roofs. ")
	} else {
		sb.WriteString("*No op with FLOPs was priced on a device of the GPU table: no roofline chart. ")
	}
	sb.WriteString("How each figure is defined: docs/definitions.md#efficiency.*\n")
	if err := render.EfficiencyTables(sb, r, render.Options{Format: "markdown", Level: w.opt.Level + 2, Top: w.opt.Top}); err != nil {
		return err
	}
	sb.WriteString("\n")
	return nil
}
