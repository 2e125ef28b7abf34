package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// Flags shared by the commands that read traces.
var (
	formatFlag  = &cli.StringFlag{Name: "format", Value: "text", Usage: "output format: text, markdown, csv or json"}
	rulesFlag   = &cli.StringFlag{Name: "rules", Usage: "classification rules `FILE` that extends the built-in table (or replaces it, see 'traceq rules')"}
	strictFlag  = &cli.BoolFlag{Name: "strict", Usage: "treat a truncated trace as an error instead of a warning"}
	verbose     = &cli.BoolFlag{Name: "verbose", Usage: "list every kind of odd input found, with an example"}
	namesFlag   = &cli.StringFlag{Name: "names", Value: "demangled", Usage: "nsys kernel names: demangled or short"}
	noStepsFlag = &cli.BoolFlag{Name: "no-steps", Usage: "ignore step markers: the whole trace is one window per device"}
	stepFlag    = &cli.StringFlag{Name: "step", Usage: "step markers are the annotation ranges whose name matches `REGEX` (default: ProfilerStep#N, vLLM execute_…, SGLang step[…], ATOM prefill[…]/decode[…])"}
	inputFmt    = &cli.StringFlag{Name: "input-format", Usage: "force the input format: chrome (chrome-trace) or nsys (nsys-sqlite) (default: detect from content)"}
)

func inputFlags() []cli.Flag { return []cli.Flag{rulesFlag, strictFlag, verbose, namesFlag, inputFmt} }

func classifier(c *cli.Context) (*classify.Classifier, error) {
	cl, err := rulesClassifier(c)
	if cl == nil && err == nil {
		cl = classify.Default()
	}
	return cl, err
}

// rulesClassifier is the classifier of --rules, nil without it: a table
// given none compiles the default rules itself, while the files parse.
func rulesClassifier(c *cli.Context) (*classify.Classifier, error) {
	p := c.String("rules")
	if p == "" {
		return nil, nil
	}
	cl, err := classify.Load(p)
	var pe *os.PathError
	if errors.As(err, &pe) {
		// "open FILE: ..." reads as Go; put the file first, once.
		return nil, fmt.Errorf("%s: %w", p, pe.Err)
	}
	return cl, err
}

// selection is how a command reads its inputs: which windows it keeps
// (--kind, the same for every command that takes it), whether it looks
// for steps at all, and how it folds categories.
type selection struct {
	// steps is false for a command that never groups by step (kernels
	// without --kind).
	steps bool
	byTop bool
	// matchRanks refuses a run whose files can only be of different runs
	// (collectives without --force): it would match their collectives.
	matchRanks bool
	// durations and collectives keep the records of the kernels table
	// and of the collectives (load.Options.SkipDurations,
	// SkipCollectives) for a command that shows them.
	durations, collectives bool
	// keepFirst keeps the first input's model (a timeline chart's).
	keepFirst bool
	// reduce takes what else the command needs of each input's model
	// (load.Options.Reduce).
	reduce func(*window.Table, int) error
	// quiet reads the inputs again without a word (warnings, progress).
	quiet bool
}

// loadOptions reads the flags every command that reads traces shares:
// the classifier, the parser options, --kind, --step and --no-steps.
func loadOptions(c *cli.Context, e *env, sel selection) (load.Options, error) {
	var opt load.Options
	var err error
	if opt.Parse, err = parseOptions(c); err != nil {
		return opt, err
	}
	if opt.Filter, err = kindFilter(c); err != nil {
		return opt, err
	}
	if opt.Classifier, err = rulesClassifier(c); err != nil {
		return opt, err
	}
	_, on := opt.Filter.Class()
	opt.Steps = (sel.steps || on) && !c.Bool("no-steps")
	opt.Pattern, opt.ByTop = c.String("step"), sel.byTop
	opt.Strict, opt.Verbose = c.Bool("strict"), c.Bool("verbose")
	opt.RefuseMixedRuns = sel.matchRanks
	opt.Warnings, opt.Stdin = e.stderr, e.stdin
	if e.tty {
		opt.Progress = e.stderr
	}
	if sel.quiet {
		opt.Warnings, opt.Progress = nil, nil
	}
	opt.SkipDurations, opt.SkipCollectives = !sel.durations, !sel.collectives
	opt.Reduce = sel.reduce
	if sel.keepFirst {
		opt.Keep = func(i int) bool { return i == 0 }
	}
	return opt, nil
}

// loadInputs reads every input argument (a directory stands for its
// trace files) into their table, through the one loader every command
// uses (package load).
func loadInputs(c *cli.Context, e *env, sel selection) (*window.Table, error) {
	if c.NArg() == 0 {
		return nil, usagef("%s: no input files (see 'traceq %s --help')", c.Command.Name, c.Command.Name)
	}
	opt, err := loadOptions(c, e, sel)
	if err != nil {
		return nil, err
	}
	tbl, err := load.Load(c.Args().Slice(), opt)
	return tbl, withFlags(err)
}

// withFlags restates the errors of the library packages that a flag
// remedies in the flags' words.
func withFlags(err error) error {
	var pe *step.PatternError
	var ke *step.NoKindError
	var me *load.MixedRunError
	switch {
	case errors.As(err, &me):
		return fmt.Errorf("%w; --force matches their collectives as one run's anyway", err)
	case errors.As(err, &pe):
		return usagef("--step %s: %v", pe.Pattern, pe.Err)
	case errors.As(err, &ke) && ke.Class == step.WholeTrace:
		return fmt.Errorf("%w; --no-steps makes one", err)
	case errors.As(err, &ke) && ke.Class == step.ClassOf(step.Generic):
		return fmt.Errorf("%w; --step REGEX names custom markers", err)
	}
	return err
}

// parseOptions reads --input-format and --names.
func parseOptions(c *cli.Context) (parse.Options, error) {
	opt := parse.Options{Names: c.String("names")}
	switch f := c.String("input-format"); f {
	case "":
	case "chrome", string(trace.FormatChrome):
		opt.Format = trace.FormatChrome
	case "nsys", string(trace.FormatNsys):
		opt.Format = trace.FormatNsys
	default:
		return opt, usagef("unknown --input-format %q (want chrome or nsys)", f)
	}
	if n := opt.Names; n != "" && n != "demangled" && n != "short" {
		return opt, usagef("unknown --names %q (want demangled or short)", n)
	}
	return opt, nil
}

// kindFlag is --kind, a step kind, with the command's own usage text.
func kindFlag(usage string) cli.Flag { return &cli.StringFlag{Name: "kind", Usage: usage} }

// kindFilter reads --kind: the class of windows a command keeps.
func kindFilter(c *cli.Context) (step.Filter, error) {
	s := c.String("kind")
	f, ok := step.ParseFilter(s)
	if !ok {
		return f, usagef("unknown --kind %q (want %s)", s, step.FilterNames())
	}
	return f, nil
}
