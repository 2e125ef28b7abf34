package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/render/report"
)

// chartFlags are the flags chart and report share.
func chartFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "top", Value: 15, Usage: "kernels in the top chart"},
		&cli.StringFlag{Name: "step-kind", Usage: "draw only steps of this kind (decode, prefill, mixed, step); the histogram's default is the most frequent kind"},
		stepFlag, noStepsFlag,
	}
}

func chartKindNames() string {
	var names []string
	for _, k := range report.ChartKinds() {
		names = append(names, k.String())
	}
	return strings.Join(names, ", ")
}

// chartStepKind reads --step-kind.
func chartStepKind(c *cli.Context) (analyze.StepKind, error) {
	s := c.String("step-kind")
	k, ok := analyze.ParseStepKind(s)
	if !ok {
		return 0, usagef("%s: unknown --step-kind %q (want %s)", c.Command.Name, s, stepKindNames())
	}
	return k, nil
}

func chartCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "chart",
		Usage: "draw one chart (SVG or PNG): steps, shares, top, hist, timeline or collectives",
		Description: "steps: per-step GPU kernel time stacked by category (first input, first device; bins when many steps)\n" +
			"shares: category shares of kernel time per input, device and step kind\n" +
			"top: the most expensive kernels across all inputs\n" +
			"hist: distribution of step GPU spans with p50/p90/p99 (first input)\n" +
			"timeline: the kernels of one step on their streams (first input, --step-index)\n" +
			"collectives: per rank of a run, collective kernel time split into transfer and waiting for the last rank, the straggler named\n" +
			"The format follows the output's extension (.svg or .png); --format is for -o - (standard output).",
		ArgsUsage: "INPUT...",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "kind", Usage: "chart: " + chartKindNames()},
			&cli.IntFlag{Name: "step-index", Usage: "timeline: the step to draw, by index among the input's steps (0 = the whole trace when it has no steps)"},
			&cli.StringFlag{Name: "format", Value: "svg", Usage: "svg or png (default: from the output's extension)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the chart to `FILE` ('-' for stdout)"},
		}, chartFlags()...), inputFlags()...),
		Action: func(c *cli.Context) error {
			kind, ok := report.ParseChartKind(c.String("kind"))
			if !ok {
				return usagef("chart: unknown --kind %q (want %s)", c.String("kind"), chartKindNames())
			}
			out := c.String("output")
			if out == "" {
				return usagef("chart: -o FILE is required (.svg or .png, or - for standard output)")
			}
			format, err := imageFormat(c, "-o", out)
			if err != nil {
				return err
			}
			if c.Int("top") <= 0 {
				return usagef("chart: --top must be > 0")
			}
			stepKind, err := chartStepKind(c)
			if err != nil {
				return err
			}
			if err := refuseInputs("chart", "-o", out, inputPaths(c.Args().Slice())); err != nil {
				return err
			}
			cl, err := classifier(c)
			if err != nil {
				return err
			}
			inputs, err := loadInputs(c, e)
			if err != nil {
				return err
			}
			charts := report.NewCharts(inputs, report.ChartOptions{Classifier: cl, StepKind: stepKind, Top: c.Int("top")})
			if len(inputs) > 1 && kind.PerInput() {
				fmt.Fprintf(e.stderr, "traceq: chart --kind %s draws the first input only (%s); 'traceq report' draws one per input\n", kind, inputs[0].Path)
			}
			// Drawn in memory first: a chart that cannot be drawn leaves
			// no file.
			var buf bytes.Buffer
			if err := charts.Draw(&buf, kind, 0, c.Int("step-index"), format); err != nil {
				return err
			}
			return writeFile(e, out, func(w io.Writer) error {
				_, err := w.Write(buf.Bytes())
				return err
			})
		},
	}
}
