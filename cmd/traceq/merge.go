package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/merge"
	"github.com/traceq/traceq/outfile"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/slice"
	"github.com/traceq/traceq/step"
)

func mergeCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "merge",
		Usage: "write the ranks of a run as one Chrome trace: every rank a process, the chosen steps or time window, clocks aligned, idle gaps annotated",
		Description: "--steps K:M takes steps K to M-1 of every rank (the indices 'traceq steps' prints); --time START:END counts\n" +
			"from the merged trace's first GPU activity (a bare number counts µs, or give a unit: 1.5ms, 250us, 2s).\n" +
			"--align base moves each rank by its baseTimeNanoseconds (host wall clocks); auto does so when every rank\n" +
			"has one; collectives moves each rank so that the kernels of every matched collective end together.\n" +
			"Open the output at https://ui.perfetto.dev (Open trace file). Definitions: docs/diff-slice.md#merge.",
		ArgsUsage: "RUN...",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the merged trace to `FILE` (gzip-compressed when it ends in .gz)"},
			&cli.StringFlag{Name: "steps", Usage: "steps `K:M` (K to M-1) of every rank, K: or K"},
			&cli.StringFlag{Name: "time", Usage: "time window `START:END` from the merged trace's first GPU activity"},
			&cli.StringFlag{Name: "align", Value: "auto", Usage: "put the clocks on one: `auto`, base (baseTimeNanoseconds), collectives (matched collectives end together) or none"},
			kindFlag("with --steps: only steps of this kind (decode, prefill, mixed, step)"),
			stepFlag,
		}, rulesFlag, strictFlag, verbose),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("merge: no input (see 'traceq merge --help')")
			}
			out := c.String("output")
			if out == "" {
				return usagef("merge: -o FILE is required")
			}
			if (c.String("steps") == "") == (c.String("time") == "") {
				return usagef("merge: give exactly one of --steps and --time")
			}
			kind, err := kindFilter(c)
			if err != nil {
				return err
			}
			if _, on := kind.Class(); on && c.String("steps") == "" {
				return usagef("merge: --kind needs --steps")
			}
			align, err := merge.ParseAlign(c.String("align"))
			if err != nil {
				return usagef("merge: --align: %v", err)
			}
			lo, err := loadOptions(c, e, selection{})
			if err != nil {
				return err
			}
			lo.Filter, lo.Progress = step.Filter{}, nil
			opt := merge.Options{Load: lo, Align: align}
			what := ""
			if s := c.String("steps"); s != "" {
				from, to, err := slice.ParseSteps(s)
				if err != nil {
					return usagef("merge: --steps: %v", err)
				}
				opt.Steps = &slice.StepOptions{Options: step.Options{Pattern: c.String("step")}, From: from, To: to, Filter: kind}
			} else {
				if opt.From, opt.To, err = slice.ParseRange(c.String("time")); err != nil {
					return usagef("merge: --time: %v", err)
				}
				what = "time " + render.MS(opt.From) + " ms to "
				if opt.To == math.MaxInt64 {
					what += "the end"
				} else {
					what += render.MS(opt.To) + " ms"
				}
			}
			// An output that is an input is refused before anything is
			// read (the loader reports the inputs' own errors).
			if set, err := parse.Expand(c.Args().Slice()); err == nil {
				if err := refuseInputs("merge", "-o", out, set.Files()); err != nil {
					return err
				}
			}
			m, err := merge.Prepare(c.Args().Slice(), opt)
			if errors.Is(err, merge.ErrNoSteps) {
				return fmt.Errorf("%w (--time)", err)
			}
			if err != nil {
				return withFlags(err)
			}
			var res *merge.Result
			err = outfile.WriteWith(out, func(w io.Writer) error {
				bw := bufio.NewWriterSize(w, 1<<20)
				var dst io.Writer = bw
				var zw *gzip.Writer
				if strings.HasSuffix(out, ".gz") {
					zw = gzip.NewWriter(bw)
					dst = zw
				}
				var err error
				if res, err = m.Write(dst); err != nil {
					return err
				}
				if zw != nil {
					if err := zw.Close(); err != nil {
						return err
					}
				}
				return bw.Flush()
			})
			if err != nil {
				return err
			}
			if what == "" && len(res.Ranks) > 0 {
				what = stepNames(res.Ranks[0].Steps)
				if len(res.Ranks) > 1 {
					what += " of each rank"
				}
			}
			var kept, read, gaps, waits int64
			for _, r := range res.Ranks {
				kept += r.Copy.Kept
				read += r.Copy.Read
				gaps += r.Gaps
				waits += r.Waits
			}
			fmt.Fprintf(e.stdout, "%s: %d ranks, %s: kept %d of %d events, %d idle gaps and %d waits annotated; clocks: %s\n",
				out, len(res.Ranks), what, kept, read, gaps, waits, alignWords(res))
			for _, r := range res.Ranks {
				fmt.Fprintf(e.stdout, "  %s: %s\n", r.Label, shiftWords(r))
				if r.Copy.Truncated != "" {
					fmt.Fprintf(e.stderr, "traceq: warning: %s: %s; the merge holds the events before the cut\n", r.Path, r.Copy.Truncated)
				}
			}
			return nil
		},
	}
}

func alignWords(res *merge.Result) string {
	spread := func() string {
		if res.Instances == 0 {
			return "no collective matched across ranks"
		}
		return fmt.Sprintf("the ends of the %d matched collectives lie within %s µs of each other (median %s µs)",
			res.Instances, render.Micros(res.SpreadMax), render.Micros(res.SpreadP50))
	}
	switch res.Align {
	case merge.AlignBase:
		return "aligned by each trace's baseTimeNanoseconds; " + spread()
	case merge.AlignCollectives:
		return "aligned by the collectives; " + spread()
	}
	return "as recorded (not aligned); " + spread()
}

// shiftWords says how a rank's clock moved.
func shiftWords(r merge.Rank) string {
	switch r.AlignedBy {
	case "none":
		return "not moved"
	}
	return render.SignedMicros(r.ShiftNS) + " µs (" + r.AlignedBy + ")"
}
