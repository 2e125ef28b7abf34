package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/chart"
)

func diffCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "diff",
		Usage: "compare two runs: time per step by step kind and category, and the kernels that changed most",
		Description: "BEFORE and AFTER are each a trace file or a directory of rank files, of either format.\n" +
			"Time per step is a category's kernel time over the side's windows (steps × devices);\n" +
			"without step markers, the whole-trace time per device.",
		ArgsUsage: "BEFORE AFTER",
		Flags: append([]cli.Flag{formatFlag,
			&cli.IntFlag{Name: "top", Value: 10, Usage: "kernels shown per step kind"},
			&cli.StringFlag{Name: "kind", Usage: "only steps of this kind: decode, prefill, mixed or step"},
			stepFlag, noStepsFlag,
			&cli.StringFlag{Name: "chart", Usage: "also draw the change per category as diverging bars to `FILE` (.svg or .png)"},
		}, inputFlags()...),
		Action: func(c *cli.Context) error {
			if err := checkTableFormat(c.String("format")); err != nil {
				return err
			}
			if c.NArg() != 2 {
				return usagef("diff: want two inputs, BEFORE and AFTER (each a file or a directory), got %d", c.NArg())
			}
			if c.Int("top") < 0 {
				return usagef("diff: --top must be >= 0")
			}
			cl, err := classifier(c)
			if err != nil {
				return err
			}
			before, err := loadArgs(c, e, c.Args().Slice()[:1])
			if err != nil {
				return err
			}
			after, err := loadArgs(c, e, c.Args().Slice()[1:])
			if err != nil {
				return err
			}
			d := analyze.Compare(before, after, analyze.Options{Classifier: cl, Kind: c.String("kind"), Top: c.Int("top")})
			if err := render.Diff(e.stdout, d, render.Options{Format: c.String("format")}); err != nil {
				return err
			}
			if p := c.String("chart"); p != "" {
				return writeDiffChart(p, d, c.Args().Slice())
			}
			return nil
		},
	}
}

// writeDiffChart draws the diff's chart to path, PNG for a .png name.
func writeDiffChart(path string, d *analyze.Diff, args []string) error {
	format := "svg"
	if strings.HasSuffix(path, ".png") {
		format = "png"
	}
	var buf bytes.Buffer
	base := func(p string) string {
		b := []rune(filepath.Base(p))
		if len(b) > 28 {
			return string(b[:27]) + "…"
		}
		return string(b)
	}
	title := base(args[0]) + " → " + base(args[1])
	if err := chart.Diff(&buf, d, chart.Options{Format: format, Title: title}); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
