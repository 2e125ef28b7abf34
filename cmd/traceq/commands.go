package main

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/findings"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/settings"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

func commands(e *env) []*cli.Command {
	return []*cli.Command{
		breakdownCmd(e),
		adviseCmd(e),
		kernelsCmd(e),
		classifyCmd(e),
		rulesCmd(e),
		chartCmd(e),
		reportCmd(e),
		stepsCmd(e),
		diffCmd(e),
		sliceCmd(e),
		exportCmd(e),
		collectivesCmd(e),
		mergeCmd(e),
		gpusCmd(e),
		efficiencyCmd(e),
	}
}

func checkTableFormat(f string) error {
	if err := render.CheckFormat(f); err != nil {
		return usageError{err.Error()}
	}
	return nil
}

// tableInputs checks --format and reads the inputs: the start of every
// command that prints a table.
func tableInputs(c *cli.Context, e *env, sel selection) (*window.Table, error) {
	if err := checkTableFormat(c.String("format")); err != nil {
		return nil, err
	}
	return loadInputs(c, e, sel)
}

// byFlag is --by: categories as they are, or folded to their top level.
var byFlag = &cli.StringFlag{Name: "by", Value: "category", Usage: "group kernel time by `category` (top/sub) or by top (top level only: communication/* is communication)"}

// byTop reads --by.
func byTop(c *cli.Context) (bool, error) {
	switch c.String("by") {
	case "category", "":
		return false, nil
	case "top":
		return true, nil
	}
	return false, usagef("%s: unknown --by %q (want category or top)", c.Command.Name, c.String("by"))
}

func breakdownCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:      "breakdown",
		Usage:     "per run and step kind: the step time, what to fix first (findings), and GPU time per kernel category",
		ArgsUsage: "INPUT...",
		Flags: append([]cli.Flag{formatFlag,
			&cli.IntFlag{Name: "top", Value: 10, Usage: "top kernels shown per group"},
			kindFlag("only steps of this kind: decode, prefill, mixed or step"),
			&cli.StringFlag{Name: "detail", Usage: "after the summary (text, markdown), also print `PARTS`: groups, ranks, kernels, efficiency or all, comma-separated"},
			byFlag, linkFlag, bytesPerTokenFlag, minFindingFlag,
			noStepsFlag, stepFlag, gpuFlag, gpuSpecFlag, captureFlag,
		}, inputFlags()...),
		Action: func(c *cli.Context) error {
			if c.Int("top") < 1 {
				return usagef("breakdown: --top must be at least 1")
			}
			detail, err := render.ParseDetail(c.String("detail"))
			if err != nil {
				return usageError{"breakdown: " + err.Error()}
			}
			rollup, err := byTop(c)
			if err != nil {
				return err
			}
			a, err := answerOptions(c, e)
			if err != nil {
				return err
			}
			el, err := newEffLoad(c, e, false, false)
			if err != nil {
				return err
			}
			tbl, err := tableInputs(c, e, selection{steps: true, byTop: rollup, durations: true, collectives: true, reduce: el.reduce})
			if err != nil {
				return err
			}
			f, _ := kindFilter(c)
			opt := analyze.Options{Filter: f, Top: c.Int("top")}
			// The two passes over the activities are independent: run
			// them on two cores (seconds for GBs of rank files), and
			// the collectives' match with them.
			coll := a.collectives(f, el.defaultLink())
			coll.start(tbl)
			kernels := make(chan []analyze.KernelStat, 1)
			go func() { kernels <- analyze.Kernels(tbl, analyze.KernelOptions{Options: opt, MemOps: true}) }()
			r := analyze.Breakdown(tbl, opt)
			eff, err := el.result(tbl, coll)
			if err != nil {
				return err
			}
			ans := a.answer(tbl, r, eff, coll)
			return render.Breakdown(e.stdout, r, <-kernels, ans, render.Options{Format: c.String("format"), Top: c.Int("top"), Detail: detail,
				Efficiency: eff})
		},
	}
}

// answerFlags are what the findings of a command need: the settings, the
// collectives' options made of them, the threshold.
type answerFlags struct {
	set      *settings.Settings
	coll     collectives.Options
	findings findings.Options
}

// answerOptions reads the settings, the collectives' options and
// --min-finding.
func answerOptions(c *cli.Context, e *env) (answerFlags, error) {
	var a answerFlags
	var err error
	if a.findings, err = findingOptions(c); err != nil {
		return a, err
	}
	if a.set, err = deployment(c, e, c.Args().Slice()); err != nil {
		return a, err
	}
	a.coll, err = collectiveOptions(c, a.set)
	return a, err
}

// collectives is the matchOnce of the command's collective options, kind
// f and devices' default link (def; nil for none): the findings' match,
// which the efficiency analysis's link time shares.
func (a answerFlags) collectives(f step.Filter, def func(*window.Table) (string, string)) *matchOnce {
	opt := a.coll
	opt.Filter = f
	return &matchOnce{opt: opt, def: def}
}

// answer matches the collectives of a breakdown's table (when it has
// any: through coll) and finds what to fix first, with the efficiency
// analysis's categories when it ran (eff; nil when it did not).
func (a answerFlags) answer(tbl *window.Table, r *analyze.GroupTable, eff *efficiency.Result, coll *matchOnce) render.Answer {
	var ct *collectives.Table
	if r.AnyCommunication() {
		ct = coll.of(tbl)
	}
	fopt := a.findings
	fopt.Roofline, fopt.Priced = render.RooflineRows(eff)
	return render.Answer{Collectives: ct, Findings: findings.Find(r, ct, fopt), Settings: a.set}
}

func adviseCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "advise",
		Usage: "what to fix first: per run and step kind, the findings ranked by the time per step a fix would save, with their evidence and remedies",
		Description: "Each saving is a first-order estimate (≈ central, ≤ an upper bound) defined in docs/definitions.md#findings, with the error\n" +
			"measured against generated runs where the fix was made. --link and --bytes-per-token may be given once: in the environment\n" +
			"(TRACEQ_LINK, TRACEQ_BYTES_PER_TOKEN) or in a traceq.toml in the run's directory or a parent.",
		ArgsUsage: "INPUT...",
		Flags: append([]cli.Flag{formatFlag,
			kindFlag("only steps of this kind: decode, prefill, mixed or step"),
			linkFlag, bytesPerTokenFlag, minFindingFlag, noStepsFlag, stepFlag, gpuFlag, gpuSpecFlag, captureFlag,
		}, inputFlags()...),
		Action: func(c *cli.Context) error {
			a, err := answerOptions(c, e)
			if err != nil {
				return err
			}
			el, err := newEffLoad(c, e, false, false)
			if err != nil {
				return err
			}
			tbl, err := tableInputs(c, e, selection{steps: true, collectives: true, reduce: el.reduce})
			if err != nil {
				return err
			}
			f, _ := kindFilter(c)
			r := analyze.Breakdown(tbl, analyze.Options{Filter: f})
			coll := a.collectives(f, el.defaultLink())
			eff, err := el.result(tbl, coll)
			if err != nil {
				return err
			}
			ans := a.answer(tbl, r, eff, coll)
			return render.Findings(e.stdout, tbl, ans.Findings, ans.Settings, render.Options{Format: c.String("format")})
		},
	}
}

func kernelsCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:      "kernels",
		Usage:     "per-kernel-name statistics (nsys cuda_gpu_kern_sum's columns, plus the category)",
		ArgsUsage: "INPUT...",
		Flags: append([]cli.Flag{formatFlag,
			&cli.IntFlag{Name: "top", Usage: "show only the N kernels with the most total time (0: all)"},
			&cli.BoolFlag{Name: "per-device", Usage: "one row per input, device and name"},
			&cli.BoolFlag{Name: "memops", Usage: "include memcpy and memset activities"},
			kindFlag("only kernels of steps of this kind"),
			byFlag, gpuFlag, gpuSpecFlag, captureFlag,
		}, inputFlags()...),
		Action: func(c *cli.Context) error {
			if c.Int("top") < 0 {
				return usagef("kernels: --top must be >= 0")
			}
			rollup, err := byTop(c)
			if err != nil {
				return err
			}
			el, err := newEffLoad(c, e, true, false)
			if err != nil {
				return err
			}
			tbl, err := tableInputs(c, e, selection{byTop: rollup, durations: true, reduce: el.reduce})
			if err != nil {
				return err
			}
			f, _ := kindFilter(c)
			ks := analyze.Kernels(tbl, analyze.KernelOptions{
				Options:   analyze.Options{Filter: f},
				PerDevice: c.Bool("per-device"), MemOps: c.Bool("memops"), Limit: c.Int("top"),
			})
			eff, err := el.result(tbl, nil)
			if err != nil {
				return err
			}
			return render.Kernels(e.stdout, tbl, ks, render.Options{Format: c.String("format"), Efficiency: eff})
		},
	}
}

func classifyCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "classify",
		Usage: "read kernel names, one per line, on stdin; print name<TAB>category",
		Flags: []cli.Flag{rulesFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("classify reads names on stdin and takes no arguments")
			}
			cl, err := classifier(c)
			if err != nil {
				return err
			}
			sc := bufio.NewScanner(e.stdin)
			sc.Buffer(make([]byte, 64<<10), classify.MaxLine)
			w := bufio.NewWriter(e.stdout)
			n := 0
			for sc.Scan() {
				n++
				name := sc.Text()
				fmt.Fprintf(w, "%s\t%s\n", name, cl.Classify(parse.DemangleName(name)))
			}
			if err := sc.Err(); err != nil {
				if errors.Is(err, bufio.ErrTooLong) {
					return fmt.Errorf("standard input:%d: line longer than %s, the limit", n+1, classify.LineLimit)
				}
				return fmt.Errorf("reading standard input: %w", err)
			}
			return w.Flush()
		},
	}
}

func rulesCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "rules",
		Usage: "print the effective classification rules (built-in, extended or replaced by --rules)",
		Flags: []cli.Flag{rulesFlag},
		Action: func(c *cli.Context) error {
			cl, err := classifier(c)
			if err != nil {
				return err
			}
			return cl.WriteRules(e.stdout)
		},
	}
}
