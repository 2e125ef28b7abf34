package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/chart"
	"github.com/traceq/traceq/slice"
)

func diffCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "diff",
		Usage: "compare two runs: time per step by step kind and category, and the kernels that changed most",
		Description: "BEFORE and AFTER are each a run: a directory of rank files, or a trace file (an nsys export may hold\n" +
			"several processes), of either format. Time per step is a category's kernel time over the side's windows\n" +
			"(steps × devices); without step markers, the whole-trace time per device. A change below --min-change\n" +
			"is 'unchanged', one below 3 standard errors of the step-to-step spread 'noise' (docs/definitions.md#change).",
		ArgsUsage: "BEFORE AFTER",
		Flags: append([]cli.Flag{formatFlag,
			&cli.IntFlag{Name: "top", Value: 10, Usage: "kernels shown per step kind"},
			kindFlag("only steps of this kind: decode, prefill, mixed or step"),
			stepFlag, noStepsFlag, byFlag,
			&cli.StringFlag{Name: "chart", Usage: "also draw the change per category as diverging bars to `FILE` (.svg or .png)"},
			&cli.StringFlag{Name: "min-change", Value: analyze.DefaultMinChange.String(),
				Usage: "a change per step below `T` is 'unchanged': a time (500ns, 2us, 0.1ms), a percent of the before value (0.5%), or both (2us,0.5%); 0 for none"},
			&cli.StringFlag{Name: "fail-if", Usage: "exit 3 when the after run is slower: `COND`s METRIC>THRESHOLD, comma-separated (step_p50>+3%, wall>+0.5ms; metrics step_p50, step_p90, wall, kernel, idle), beyond the threshold and beyond noise"},
			linkFlag, bytesPerTokenFlag, minFindingFlag,
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
			mc, err := parseMinChange(c.String("min-change"))
			if err != nil {
				return usagef("diff: --min-change: %v", err)
			}
			var gates []analyze.Gate
			if s := c.String("fail-if"); s != "" {
				if gates, err = analyze.ParseGates(s); err != nil {
					return usagef("diff: --fail-if %v", err)
				}
			}
			fopt, err := findingOptions(c)
			if err != nil {
				return err
			}
			// Each side is a deployment of its own: its settings are found
			// from its own directory.
			var sides [2]answerFlags
			for i, arg := range c.Args().Slice() {
				a := answerFlags{findings: fopt}
				if a.set, err = deployment(c, e, []string{arg}); err != nil {
					return err
				}
				if a.coll, err = collectiveOptions(c, a.set); err != nil {
					return err
				}
				sides[i] = a
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
			rollup, err := byTop(c)
			if err != nil {
				return err
			}
			opt, err := loadOptions(c, e, selection{steps: true, byTop: rollup, collectives: true})
			if err != nil {
				return err
			}
			before, after, err := load.Pair(c.Args().Slice()[:1], c.Args().Slice()[1:], opt)
			if err != nil {
				return withFlags(err)
			}
			d := analyze.Compare(before, after, analyze.Options{Filter: opt.Filter, Top: c.Int("top"), MinChange: &mc})
			aopt := analyze.Options{Filter: opt.Filter}
			fb := sides[0].answer(before, analyze.Breakdown(before, aopt), nil, sides[0].collectives(opt.Filter)).Findings
			fa := sides[1].answer(after, analyze.Breakdown(after, aopt), nil, sides[1].collectives(opt.Filter)).Findings
			if err := render.Diff(e.stdout, d, fb, fa, render.Options{Format: c.String("format")}); err != nil {
				return err
			}
			if chartPath != "" {
				var buf bytes.Buffer
				if err := chart.Diff(&buf, d, chart.Options{Format: chartFormat, Title: chart.DiffTitle(d)}); err != nil {
					return err
				}
				if err := writeFile(e, chartPath, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
					return err
				}
			}
			if len(gates) == 0 {
				return nil
			}
			results, err := d.Check(gates)
			if err != nil {
				return err
			}
			var failed []string
			for _, r := range results {
				if r.Failed {
					failed = append(failed, render.GateText(&r))
				}
			}
			if len(failed) > 0 {
				return gateError{failed}
			}
			return nil
		},
	}
}

// parseMinChange reads --min-change: a time, a percent, or both separated
// by a comma ("1us,1%"); "0" is no threshold.
func parseMinChange(s string) (analyze.MinChange, error) {
	var mc analyze.MinChange
	var haveNS, havePct bool
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if num, ok := strings.CutSuffix(part, "%"); ok {
			p, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || p < 0 || math.IsInf(p, 0) || math.IsNaN(p) || havePct {
				return mc, fmt.Errorf("bad threshold %q: want a time (2us), a percent (0.5%%) or both (2us,0.5%%)", s)
			}
			mc.Pct, havePct = p, true
			continue
		}
		ns, err := slice.ParseDuration(part)
		if err != nil || haveNS {
			return mc, fmt.Errorf("bad threshold %q: want a time (2us), a percent (0.5%%) or both (2us,0.5%%)", s)
		}
		mc.NS, haveNS = ns, true
	}
	return mc, nil
}
