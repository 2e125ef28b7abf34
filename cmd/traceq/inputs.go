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
	paths, err := parse.Expand(args)
	if err != nil {
		return nil, err
	}
	opt := parse.Options{Format: c.String("input-format"), Names: c.String("names")}
	if f := opt.Format; f != "" && f != "chrome" && f != "nsys" {
		return nil, usagef("unknown --input-format %q (want chrome or nsys)", f)
	}
	if n := opt.Names; n != "" && n != "demangled" && n != "short" {
		return nil, usagef("unknown --names %q (want demangled or short)", n)
	}
	// Parse the files concurrently (load.go); report on them in order,
	// once the progress line is gone.
	outs, cancel := parseFiles(e, paths, opt)
	done := make([]parsed, len(paths))
	for i := range paths {
		if done[i] = <-outs[i]; done[i].err != nil {
			break
		}
	}
	cancel()
	var out []analyze.Input
	for i, p := range paths {
		t, err := done[i].t, done[i].err
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
		out = append(out, in)
	}
	return out, nil
}

// warn prints the one-line warnings for a parsed trace.
func warn(e *env, c *cli.Context, path string, t *trace.Trace) error {
	if tr := t.Truncated; tr != nil {
		events := "events"
		if tr.Events == 1 {
			events = "event"
		}
		msg := fmt.Sprintf("%s: truncated: %s; read the %d complete %s before the cut", path, tr.Reason, tr.Events, events)
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
		fmt.Fprintf(e.stderr, "traceq: %s: %s:\n", path, odd)
		for _, a := range t.Anomalies {
			fmt.Fprintf(e.stderr, "  %d × %s (first: %s)\n", a.Count, a.What, a.Example)
		}
		return nil
	}
	fmt.Fprintf(e.stderr, "traceq: %s: %s: %s (--verbose lists them)\n", path, odd, strings.Join(parts, "; "))
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
		fmt.Fprintf(e.stderr, "traceq: %s: %s: the whole trace is one window\n", path, what)
	}
	return st, nil
}
