package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/render/chart"
)

// chartKinds lists the charts, in the order a report shows them.
var chartKinds = []string{"steps", "shares", "top", "hist", "timeline"}

// chartFlags are the flags chart and report share.
func chartFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "top", Value: 15, Usage: "kernels in the top chart"},
		&cli.StringFlag{Name: "step-kind", Usage: "draw only steps of this kind (decode, prefill, mixed, step); the histogram's default is the most frequent kind"},
		stepFlag, noStepsFlag,
	}
}

func chartCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "chart",
		Usage: "draw one chart (SVG or PNG): steps, shares, top, hist or timeline",
		Description: "steps: per-step GPU kernel time stacked by category (first input, first device; bins when many steps)\n" +
			"shares: category shares of kernel time per input, device and step kind\n" +
			"top: the most expensive kernels across all inputs\n" +
			"hist: distribution of step GPU spans with p50/p90/p99 (first input)\n" +
			"timeline: the kernels of one step on their streams (first input, --step-index)",
		ArgsUsage: "INPUT...",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "kind", Required: true, Usage: "chart: " + strings.Join(chartKinds, ", ")},
			&cli.IntFlag{Name: "step-index", Usage: "timeline: the step to draw, by index among the input's steps (0 = the whole trace when it has no steps)"},
			&cli.StringFlag{Name: "format", Value: "svg", Usage: "svg or png"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "write the chart to `FILE` ('-' for stdout)"},
		}, chartFlags()...), inputFlags()...),
		Action: func(c *cli.Context) error {
			kind := c.String("kind")
			if !slices.Contains(chartKinds, kind) {
				return usagef("chart: unknown --kind %q (want %s)", kind, strings.Join(chartKinds, ", "))
			}
			if err := chart.CheckFormat(c.String("format")); err != nil {
				return usagef("chart: %v", err)
			}
			if c.Int("top") <= 0 {
				return usagef("chart: --top must be > 0")
			}
			cl, err := classifier(c)
			if err != nil {
				return err
			}
			inputs, err := loadInputs(c, e)
			if err != nil {
				return err
			}
			d := newChartData(inputs, cl, c.String("step-kind"), c.Int("top"))
			if len(inputs) > 1 && (kind == "steps" || kind == "hist" || kind == "timeline") {
				fmt.Fprintf(e.stderr, "traceq: chart --kind %s draws the first input only (%s); 'traceq report' draws one per input\n", kind, inputs[0].Path)
			}
			var buf bytes.Buffer
			if err := d.draw(&buf, kind, 0, c.Int("step-index"), c.String("format")); err != nil {
				return err
			}
			return writeOutput(e, c.String("output"), buf.Bytes())
		},
	}
}

// writeOutput writes b to path, or to stdout for "-"; nothing is written
// when drawing failed, so a failed run leaves no half file.
func writeOutput(e *env, path string, b []byte) error {
	if path == "-" {
		_, err := e.stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// chartData is what the charts of one set of inputs are drawn from.
type chartData struct {
	inputs   []analyze.Input
	cl       *classify.Classifier
	stepKind string
	report   *analyze.Report
	kernels  []analyze.KernelStat
}

func newChartData(inputs []analyze.Input, cl *classify.Classifier, stepKind string, top int) *chartData {
	opt := analyze.Options{Classifier: cl, Kind: stepKind}
	return &chartData{
		inputs: inputs, cl: cl, stepKind: stepKind,
		report:  analyze.Breakdown(inputs, opt),
		kernels: analyze.Kernels(inputs, analyze.KernelOptions{Options: opt, MemOps: true, Limit: top}),
	}
}

// traceTitle names inputs for a chart title: base names, shortened when
// there are many.
func traceTitle(inputs []analyze.Input) string {
	names := make([]string, len(inputs))
	for i, in := range inputs {
		names[i] = filepath.Base(in.Path)
	}
	if s := strings.Join(names, ", "); len(s) <= 60 {
		return s
	}
	return fmt.Sprintf("%s … %s (%d inputs)", names[0], names[len(names)-1], len(names))
}

// series is the step rows the per-input charts draw for input i: its first
// device, the chosen step kind (for hist, the most frequent kind by
// default).
func (d *chartData) series(i int, forHist bool) []analyze.StepRow {
	kind := d.stepKind
	if kind == "" && forHist {
		kind = analyze.DominantKind(analyze.StepSeries(d.report.StepRows, i, ""))
	}
	return analyze.StepSeries(d.report.StepRows, i, kind)
}

// draw writes chart kind; per-input charts (steps, hist, timeline) draw
// input i.
func (d *chartData) draw(w io.Writer, kind string, i, stepIndex int, format string) error {
	opt := chart.Options{Format: format, Title: traceTitle(d.inputs)}
	one := chart.Options{Format: format, Title: traceTitle(d.inputs[i : i+1])}
	noSteps := func(what string) error {
		markers := "no step markers"
		if d.stepKind != "" {
			markers = "no steps of kind " + d.stepKind
		}
		return fmt.Errorf("%s: %s, so no %s chart; try --kind shares or top", d.inputs[i].Path, markers, what)
	}
	switch kind {
	case "steps":
		rows := d.series(i, false)
		if len(rows) == 0 {
			return noSteps("steps")
		}
		return chart.Steps(w, rows, one)
	case "hist":
		rows := d.series(i, true)
		if len(rows) == 0 {
			return noSteps("hist")
		}
		return chart.Hist(w, rows, one)
	case "shares":
		return chart.Shares(w, d.report.Groups, opt)
	case "top":
		return chart.Top(w, d.kernels, opt)
	case "timeline":
		tl, err := analyze.StepTimeline(d.inputs[i], stepIndex, d.cl)
		if err != nil {
			return err
		}
		return chart.Timeline(w, tl, one)
	}
	return fmt.Errorf("unknown chart %q", kind)
}
