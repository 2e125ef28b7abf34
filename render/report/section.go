package report

import (
	"io"
	"slices"
)

// Section writes the short section `traceq report --append` adds to a
// benchmark log, the answer and little else: the run summary, for two runs
// the before → after chart, the shares chart, the steps chart of each
// run's first input, the collectives' answer lines (for several ranks),
// the idle paragraph, and a link to the whole report (full, relative to
// the log; "" for none). Charts go through chart as in Generate, under
// the same names. It returns the number of charts written.
func (r *Report) Section(out io.Writer, format string, chart ChartFunc, full string) (int, error) {
	w := &writer{Report: r, chart: chart, format: format}
	if err := w.writeSection(full); err != nil {
		return w.files, err
	}
	_, err := io.WriteString(out, w.sb.String())
	return w.files, err
}

func (w *writer) writeSection(full string) error {
	sb := &w.sb
	sb.WriteString(w.title())
	if err := w.beforeAfter(false); err != nil {
		return err
	}
	if err := w.summary(); err != nil {
		return err
	}
	sb.WriteString("\n")
	link, err := w.drawKind("shares", Shares, 0, 0, "kernel-time share by category")
	if err != nil {
		return err
	}
	sb.WriteString(link + "\n\n")
	for _, i := range w.chartInputs() {
		first := slices.ContainsFunc(w.runs, func(r run) bool { return r.inputs[0] == i })
		if !first || len(w.charts.series(i, false)) < minStepsChart {
			continue
		}
		link, err := w.drawKind("steps"+w.inputSuffix(i), Steps, i, 0, "GPU time per step by category")
		if err != nil {
			return err
		}
		sb.WriteString(link + "\n\n")
	}
	if ct := w.collectiveTable(); ct != nil {
		w.verdicts(ct)
	}
	if p := w.idleVerdicts(); p != "" {
		sb.WriteString(p + "\n\n")
	}
	if full != "" {
		sb.WriteString("[The whole report](" + full + ") has the tables behind these figures and every chart.\n")
	}
	return nil
}
