package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/render"
)

func collectivesCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "collectives",
		Usage: "collectives across the ranks of a run: waiting for the last rank vs transfer, the straggler, message sizes, bus bandwidth against the link",
		Description: "The inputs are the ranks of one run: a directory of rank files, several files, or one nsys export holding several processes.\n" +
			"Each collective kernel (category communication/*) is matched with its counterparts on the other ranks; the shortest of them is the\n" +
			"transfer time (the last rank to arrive waits for no one), the rest of each kernel is waiting. Definitions: docs/definitions.md.",
		ArgsUsage: "INPUT...",
		Flags: append([]cli.Flag{formatFlag,
			kindFlag("only collectives of steps of this kind: decode, prefill, mixed or step"),
			bytesPerTokenFlag, linkFlag, gpuFlag, gpuSpecFlag, noStepsFlag, stepFlag,
			&cli.BoolFlag{Name: "force", Usage: "match a run whose files disagree (the same rank twice, two world sizes, more ranks than the world)"},
		}, inputFlags()...),
		Action: func(c *cli.Context) error {
			set, err := deployment(c, e, c.Args().Slice())
			if err != nil {
				return err
			}
			opt, err := collectiveOptions(c, set)
			if err != nil {
				return err
			}
			def, err := devicesLink(c, set)
			if err != nil {
				return err
			}
			tbl, err := tableInputs(c, e, selection{steps: true, matchRanks: !c.Bool("force"), collectives: true})
			if err != nil {
				return err
			}
			opt.Filter, _ = kindFilter(c)
			ct := collectives.Match(tbl, opt.WithDefault(def(tbl)))
			for _, w := range render.CollectiveWarnings(ct) {
				fmt.Fprintf(e.stderr, "traceq: warning: %s\n", w)
			}
			return render.Collectives(e.stdout, ct, set, render.Options{Format: c.String("format")})
		},
	}
}
