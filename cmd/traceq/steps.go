package main

import (
	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/render"
)

func stepsCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:      "steps",
		Usage:     "every step on every device: kind, marker, span, busy, idle, top category, outlier flag",
		ArgsUsage: "INPUT...",
		Flags:     append([]cli.Flag{formatFlag, stepFlag}, inputFlags()...),
		Action: func(c *cli.Context) error {
			tbl, err := tableInputs(c, e, selection{steps: true})
			if err != nil {
				return err
			}
			return render.Steps(e.stdout, analyze.Breakdown(tbl, analyze.Options{}), render.Options{Format: c.String("format")})
		},
	}
}
