package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/trace"
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
	inputFmt    = &cli.StringFlag{Name: "input-format", Usage: "force the input format: chrome or nsys (default: detect from content)"}
)

func inputFlags() []cli.Flag { return []cli.Flag{rulesFlag, strictFlag, verbose, namesFlag, inputFmt} }

func classifier(c *cli.Context) (*classify.Classifier, error) {
	if p := c.String("rules"); p != "" {
		cl, err := classify.Load(p)
		var pe *os.PathError
		if errors.As(err, &pe) {
			// "open FILE: ..." reads as Go; put the file first, once.
			return nil, fmt.Errorf("%s: %w", p, pe.Err)
		}
		return cl, err
	}
	return classify.Default(), nil
}

// loadInputs parses every input argument (a directory stands for its
// trace files), printing warnings about truncation and odd input.
func loadInputs(c *cli.Context, e *env) ([]analyze.Input, error) {
	if c.NArg() == 0 {
		return nil, usagef("%s: no input files (see 'traceq %s --help')", c.Command.Name, c.Command.Name)
	}
	if f := c.String("format"); f != "" && c.IsSet("format") && slices.Contains(c.Command.Flags, cli.Flag(formatFlag)) {
		// checked by the caller's renderer too; fail before parsing
		if err := checkTableFormat(f); err != nil {
			return nil, err
		}
	}
	return loadArgs(c, e, c.Args().Slice())
}

// loadArgs is loadInputs for the given arguments (diff loads two sides).
func loadArgs(c *cli.Context, e *env, args []string) ([]analyze.Input, error) {
	groups, err := loadGroups(c, e, args)
	if err != nil {
		return nil, err
	}
	// Runs are named from the arguments (a directory is a run); see
	// analyze.AssignRuns.
	var out []analyze.Input
	var sources []analyze.Source
	for _, g := range groups {
		src := analyze.Source{Arg: g.Arg.Arg, Dir: g.Dir}
		for _, in := range g.Inputs {
			src.Inputs = append(src.Inputs, len(out))
			out = append(out, in)
		}
		sources = append(sources, src)
	}
	analyze.AssignRuns(out, sources)
	// Every analysis adds without checking: refuse what would overflow.
	if err := analyze.CheckSums(out); err != nil {
		return nil, err
	}
	return out, nil
}

// argInputs is what one input argument stands for: a directory is a
// group of inputs (a run of ranks), a file a group of one. Inputs is
// empty when all its files were given before under other names.
type argInputs struct {
	parse.Arg
	Inputs []analyze.Input
}

// loadGroups is loadArgs keeping the inputs grouped by argument, so that
// each directory can be a run.
func loadGroups(c *cli.Context, e *env, args []string) ([]argInputs, error) {
	set, err := parse.Expand(args)
	if err != nil {
		return nil, eachError(e, err)
	}
	opt, err := parseOptions(c)
	if err != nil {
		return nil, err
	}
	for _, s := range set.Skipped {
		fmt.Fprintf(e.stderr, "traceq: %s\n", s)
	}
	for _, r := range set.Repeats {
		fmt.Fprintf(e.stderr, "traceq: %s\n", r)
	}
	// Parse the files concurrently (load.go); report on them in order,
	// once the progress line is gone.
	paths := set.Files()
	outs, cancel := parseFiles(e, paths, opt)
	done := make([]parsed, len(paths))
	for i := range paths {
		if done[i] = <-outs[i]; done[i].err != nil {
			break
		}
	}
	cancel()
	var out []argInputs
	i := 0
	for _, a := range set.Args {
		g := argInputs{Arg: a}
		for _, p := range a.Files {
			t, err := done[i].t, done[i].err
			i++
			if err != nil {
				return nil, err
			}
			if err := warn(e, c, p, t); err != nil {
				return nil, err
			}
			in := analyze.Input{Path: p, Trace: t}
			if in.Steps, err = findSteps(c, e, p, t); err != nil {
				return nil, err
			}
			g.Inputs = append(g.Inputs, in)
		}
		out = append(out, g)
	}
	return out, nil
}

// eachError prints all but the last of the errors joined in err, one
// line each as main prints the last, so every unreadable input is named.
func eachError(e *env, err error) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	errs := j.Unwrap()
	for _, err := range errs[:len(errs)-1] {
		fmt.Fprintf(e.stderr, "traceq: %v\n", err)
	}
	return errs[len(errs)-1]
}

// parseOptions reads --input-format and --names.
func parseOptions(c *cli.Context) (parse.Options, error) {
	opt := parse.Options{Format: c.String("input-format"), Names: c.String("names")}
	if f := opt.Format; f != "" && f != "chrome" && f != "nsys" {
		return opt, usagef("unknown --input-format %q (want chrome or nsys)", f)
	}
	if n := opt.Names; n != "" && n != "demangled" && n != "short" {
		return opt, usagef("unknown --names %q (want demangled or short)", n)
	}
	return opt, nil
}

// warn prints the one-line warnings for a parsed trace.
func warn(e *env, c *cli.Context, path string, t *trace.Trace) error {
	if tr := t.Truncated; tr != nil {
		events := "events"
		if tr.Events == 1 {
			events = "event"
		}
		msg := fmt.Sprintf("%s: truncated: %s; read the %d complete %s before the cut", parse.DisplayName(path), tr.Reason, tr.Events, events)
		if c.Bool("strict") {
			return fmt.Errorf("%s", msg)
		}
		fmt.Fprintf(e.stderr, "traceq: warning: %s\n", msg)
	}
	if len(t.Anomalies) == 0 {
		return nil
	}
	var n int64
	var parts []string
	for _, a := range t.Anomalies {
		n += a.Count
		parts = append(parts, fmt.Sprintf("%d %s", a.Count, a.What))
	}
	odd := fmt.Sprintf("%d odd events", n)
	if n == 1 {
		odd = "1 odd event"
	}
	if c.Bool("verbose") {
		fmt.Fprintf(e.stderr, "traceq: %s: %s:\n", parse.DisplayName(path), odd)
		for _, a := range t.Anomalies {
			fmt.Fprintf(e.stderr, "  %d × %s (first: %s)\n", a.Count, a.What, a.Example)
		}
		return nil
	}
	fmt.Fprintf(e.stderr, "traceq: %s: %s: %s (--verbose lists them)\n", parse.DisplayName(path), odd, strings.Join(parts, "; "))
	return nil
}

// findSteps segments t into steps when the command uses steps (it has a
// --step flag, or --kind asks for one kind) and --no-steps is not given.
func findSteps(c *cli.Context, e *env, path string, t *trace.Trace) (*analyze.Steps, error) {
	uses := c.String("kind") != ""
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), "step") {
			uses = true
		}
	}
	if !uses || c.Bool("no-steps") {
		return nil, nil
	}
	st, err := analyze.FindSteps(t, analyze.StepOptions{Pattern: c.String("step")})
	var pe *analyze.PatternError
	if errors.As(err, &pe) {
		return nil, usageError{err.Error()}
	}
	if err != nil {
		return nil, err
	}
	if st == nil {
		what := "no step markers (ProfilerStep#N, vLLM execute_…, SGLang step[…], ATOM prefill[…]/decode[…])"
		if p := c.String("step"); p != "" {
			what = fmt.Sprintf("no annotation range matches --step %q", p)
		}
		fmt.Fprintf(e.stderr, "traceq: %s: %s: the whole trace is one window\n", parse.DisplayName(path), what)
	}
	return st, nil
}
