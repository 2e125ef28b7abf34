package main

import (
	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/render"
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
			return render.Diff(e.stdout, d, render.Options{Format: c.String("format")})
		},
	}
}
