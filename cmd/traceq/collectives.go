package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/render"
)

// Flags of collectives (and report).
var (
	bytesPerTokenFlag = &cli.Int64Flag{Name: "bytes-per-token", Usage: "size collectives without args as `N` bytes × the step's token count (from its marker); e.g. hidden size × 2 for a bf16 all-reduce"}
	linkFlag          = &cli.StringFlag{Name: "link", Usage: "compare bus bandwidth with `NAME|GBPS`: a link (" + collectives.LinkNames() + ") or GB/s per direction; for a run over hosts, intra=NAME|GBPS,inter=NAME|GBPS (between hosts: " + collectives.NetLinkNames() + ")"}
)

// collectiveOptions reads --bytes-per-token and --link.
func collectiveOptions(c *cli.Context) (collectives.Options, error) {
	var opt collectives.Options
	if n := c.Int64("bytes-per-token"); n < 0 {
		return opt, usagef("%s: --bytes-per-token must be positive", c.Command.Name)
	} else {
		opt.BytesPerToken = n
	}
	if s := c.String("link"); s != "" {
		ls, err := collectives.ParseLinks(s, collectives.ParseLink)
		if err != nil {
			return opt, usagef("%s: --link: %v", c.Command.Name, err)
		}
		if ls.All != nil {
			opt.Link = ls.All
		} else {
			opt.Links = ls
		}
	}
	return opt, nil
}

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
			bytesPerTokenFlag, linkFlag, noStepsFlag, stepFlag,
			&cli.BoolFlag{Name: "force", Usage: "match a run whose files disagree (the same rank twice, two world sizes, more ranks than the world)"},
		}, inputFlags()...),
		Action: func(c *cli.Context) error {
			opt, err := collectiveOptions(c)
			if err != nil {
				return err
			}
			tbl, err := tableInputs(c, e, selection{steps: true, matchRanks: !c.Bool("force")})
			if err != nil {
				return err
			}
			opt.Filter, _ = kindFilter(c)
			ct := collectives.Match(tbl, opt)
			for _, w := range render.CollectiveWarnings(ct) {
				fmt.Fprintf(e.stderr, "traceq: warning: %s\n", w)
			}
			return render.Collectives(e.stdout, ct, render.Options{Format: c.String("format")})
		},
	}
}
