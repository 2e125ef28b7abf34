package main

import (
	"bytes"
	"io"
	"path/filepath"
	"slices"

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
			kindFlag("only steps of this kind: decode, prefill, mixed or step"),
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
			kind, err := stepKindFlag(c)
			if err != nil {
				return err
			}
			chartPath := c.String("chart")
			var chartFormat string
			if chartPath != "" {
				if chartFormat, err = extensionFormat("diff", "--chart", chartPath); err != nil {
					return err
				}
				if err := refuseInputs("diff", "--chart", chartPath, inputPaths(c.Args().Slice())); err != nil {
					return err
				}
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
			if err := analyze.CheckKind(append(slices.Clone(before), after...), kind); err != nil {
				return err
			}
			d := analyze.Compare(before, after, analyze.Options{Classifier: cl, Kind: kind, Top: c.Int("top")})
			if err := render.Diff(e.stdout, d, render.Options{Format: c.String("format")}); err != nil {
				return err
			}
			if chartPath == "" {
				return nil
			}
			var buf bytes.Buffer
			title := clipName(filepath.Base(c.Args().Get(0)), 28) + " → " + clipName(filepath.Base(c.Args().Get(1)), 28)
			if err := chart.Diff(&buf, d, chart.Options{Format: chartFormat, Title: title}); err != nil {
				return err
			}
			return writeFile(e, chartPath, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
		},
	}
}

// clipName shortens a file name to n runes for a chart title.
func clipName(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
