package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/render/report"
	"github.com/traceq/traceq/slice"
	"github.com/traceq/traceq/step"
)

// chartFlags are the flags chart and report share.
func chartFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "top", Value: 15, Usage: "kernels in the top chart"},
		kindFlag("draw only steps of this kind (decode, prefill, mixed, step); the histogram's default is the most frequent kind"),
		// Renamed: --kind is the step kind in every command.
		&cli.StringFlag{Name: "step-kind", Hidden: true},
		&cli.BoolFlag{Name: "unattributed", Usage: "shares: also draw the groups outside any step that hold under 5% of their run's kernel time (left out by default, and the chart says so)"},
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

// chartStepKind reads --kind, the step kind the charts draw, and refuses
// the flags' old spellings with their new names.
func chartStepKind(c *cli.Context) (step.Filter, error) {
	if c.IsSet("step-kind") {
		return step.Filter{}, usagef("%s: --step-kind is now --kind, as in every command", c.Command.Name)
	}
	if _, ok := report.ParseChartKind(c.String("kind")); ok {
		return step.Filter{}, usagef("%s: --kind is the step kind in every command; the chart is --type %s", c.Command.Name, c.String("kind"))
	}
	f, err := kindFilter(c)
	if err != nil {
		return f, usageError{c.Command.Name + ": " + err.Error()}
	}
	return f, nil
}

func chartCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "chart",
		Usage: "draw one chart (SVG or PNG) of --type steps, shares, top, hist, timeline or collectives",
		Description: "steps: per-step GPU kernel time stacked by category (first input, first device; bins when many steps)\n" +
			"shares: category shares of kernel time per run, rank, device and step kind\n" +
			"top: the most expensive kernels across all inputs\n" +
			"hist: distribution of step GPU spans with p50/p90/p99 (first input)\n" +
			"timeline: the kernels of one step on their streams (first input, --step-index)\n" +
			"collectives: per rank of a run, collective kernel time split into transfer and waiting for the last rank, the straggler named\n" +
			"roofline: each op shape's achieved TFLOP/s against its arithmetic intensity, on the device's roofs (see 'traceq efficiency')\n" +
			"The format follows the output's extension (.svg or .png); --format is for -o - (standard output).",
		ArgsUsage: "INPUT...",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "type", Usage: "the chart: " + chartKindNames() + ", roofline"},
			&cli.IntFlag{Name: "step-index", Usage: "timeline: the step to draw, by index among the input's steps (0 = the whole trace when it has no steps; default: the first step, of --kind's kind with --kind)"},
			&cli.StringFlag{Name: "from", Usage: "timeline: draw from `TIME` after the step's first kernel (1.5ms, 250us; a bare number counts µs)"},
			&cli.StringFlag{Name: "to", Usage: "timeline: draw up to `TIME` after the step's first kernel (default: its end)"},
			&cli.IntFlag{Name: "longest", Usage: "timeline: name the `N` longest kernels under the chart (default 5, -1 none)"},
			&cli.StringFlag{Name: "format", Value: "svg", Usage: "svg or png (default: from the output's extension)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the chart to `FILE` ('-' for stdout)"},
			gpuFlag, gpuSpecFlag, captureFlag,
		}, chartFlags()...), inputFlags()...),
		Action: func(c *cli.Context) error {
			stepKind, err := chartStepKind(c)
			if err != nil {
				return err
			}
			if c.String("type") == rooflineType {
				return rooflineChart(c, e)
			}
			kind, ok := report.ParseChartKind(c.String("type"))
			if !ok {
				return usagef("chart: unknown --type %q (want %s)", c.String("type"), chartKindNames())
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
			stepIndex := -1 // the first step of --kind's kind
			if c.IsSet("step-index") {
				if stepIndex = c.Int("step-index"); stepIndex < 0 {
					return usagef("chart: --step-index must be 0 or more")
				}
			}
			if err := refuseInputs("chart", "-o", out, inputPaths(c.Args().Slice())); err != nil {
				return err
			}
			copt := report.ChartOptions{Filter: stepKind, Top: c.Int("top"), Longest: c.Int("longest"),
				Unattributed: c.Bool("unattributed")}
			if copt.From, copt.To, err = timelineWindow(c, kind); err != nil {
				return err
			}
			// Only the timeline reads a model: the first input's.
			tbl, err := loadInputs(c, e, selection{steps: true, durations: kind == report.Top,
				collectives: kind == report.Collectives, keepFirst: kind == report.Timeline})
			if err != nil {
				return err
			}
			charts := report.NewCharts(tbl, copt)
			if len(tbl.Inputs) > 1 && kind.PerInput() {
				fmt.Fprintf(e.stderr, "traceq: chart --type %s draws the first input only (%s); 'traceq report' draws one per input\n", kind, tbl.Inputs[0].Path)
			}
			// Drawn in memory first: a chart that cannot be drawn leaves
			// no file.
			var buf bytes.Buffer
			if err := charts.Draw(&buf, kind, 0, stepIndex, format); err != nil {
				return err
			}
			return writeFile(e, out, func(w io.Writer) error {
				_, err := w.Write(buf.Bytes())
				return err
			})
		},
	}
}

// timelineWindow reads --from and --to, which only the timeline takes.
func timelineWindow(c *cli.Context, kind report.ChartKind) (from, to int64, err error) {
	if c.String("from") == "" && c.String("to") == "" {
		return 0, 0, nil
	}
	if kind != report.Timeline {
		return 0, 0, usagef("chart: --from and --to are for --type timeline")
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"from", &from}, {"to", &to}} {
		if s := c.String(f.name); s != "" {
			if *f.v, err = slice.ParseDuration(s); err != nil {
				return 0, 0, usagef("chart: --%s: %v", f.name, err)
			}
		}
	}
	if to != 0 && to <= from {
		return 0, 0, usagef("chart: --to must be after --from")
	}
	return from, to, nil
}
