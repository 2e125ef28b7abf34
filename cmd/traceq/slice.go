package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/outfile"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/parse/nsyssqlite"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/slice"
	"github.com/traceq/traceq/step"
)

func sliceCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "slice",
		Usage: "write the chosen steps or time window of a Chrome trace as a small Chrome trace a viewer can open",
		Description: "--time START:END counts from the trace's first GPU activity, as the start times 'traceq steps'\n" +
			"prints; a bare number counts µs, or give a unit: 1.5ms, 250us, 90ns, 2s. --steps K:M takes steps\n" +
			"K to M-1 (the indices 'traceq steps' prints). The slice keeps every metadata event and top-level\n" +
			"value, the events inside the window and the flows whose ends are both inside. Open it at\n" +
			"https://ui.perfetto.dev (Open trace file).",
		ArgsUsage: "INPUT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the slice to `FILE` (gzip-compressed when it ends in .gz)"},
			&cli.StringFlag{Name: "steps", Usage: "steps `K:M` (K to M-1), K: or K"},
			&cli.StringFlag{Name: "time", Usage: "time window `START:END` from the first GPU activity"},
			kindFlag("with --steps: only steps of this kind (decode, prefill, mixed, step)"),
			stepFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("slice: want one input trace, got %d", c.NArg())
			}
			in, out := c.Args().First(), c.String("output")
			if out == "" {
				return usagef("slice: -o FILE is required")
			}
			if (c.String("steps") == "") == (c.String("time") == "") {
				return usagef("slice: give exactly one of --steps and --time")
			}
			kind, err := kindFilter(c)
			if err != nil {
				return err
			}
			if _, on := kind.Class(); on && c.String("steps") == "" {
				return usagef("slice: --kind needs --steps")
			}
			if err := refuseInputs("slice", "-o", out, []string{in}); err != nil {
				return err
			}
			if err := oneFile(in); err != nil {
				return err
			}
			// Slicing reads the input more than once: standard input is
			// copied to a temporary file first.
			src := in
			if in == parse.Stdin {
				spool, err := spoolStdin(e)
				if err != nil {
					return err
				}
				defer outfile.Remove(spool)
				src = spool
			}
			if err := checkChrome(in, src); err != nil {
				return err
			}
			open := func() (io.ReadCloser, error) { return os.Open(src) }
			var sel *slice.Selection
			var what string
			if r := c.String("time"); r != "" {
				from, to, err := slice.ParseRange(r)
				if err != nil {
					return usagef("slice: --time: %v", err)
				}
				start, err := slice.Start(open)
				if err != nil {
					return &parse.FileError{Path: in, Err: err}
				}
				var toEnd bool
				sel, toEnd = slice.TimeWindow(start, from, to)
				what = "time " + render.MS(from) + " ms to "
				if toEnd {
					what += "the end"
				} else {
					what += render.MS(to) + " ms"
				}
			} else {
				from, to, err := slice.ParseSteps(c.String("steps"))
				if err != nil {
					return usagef("slice: --steps: %v", err)
				}
				var steps []step.Step
				sel, steps, err = slice.Steps(open, slice.StepOptions{Options: step.Options{Pattern: c.String("step")},
					From: from, To: to, Filter: kind})
				var pe *step.PatternError
				switch {
				case errors.As(err, &pe):
					return withFlags(err)
				case errors.Is(err, slice.ErrNoSteps):
					what := "no step markers (ProfilerStep#N, vLLM execute_…, SGLang step[…], ATOM prefill[…]/decode[…])"
					if p := c.String("step"); p != "" {
						what = fmt.Sprintf("no annotation range matches --step %q", p)
					}
					return &parse.FileError{Path: in, Err: errors.New(what + ": use --time")}
				case err != nil:
					return &parse.FileError{Path: in, Err: err}
				}
				what = stepNames(steps)
			}
			stats, err := writeSlice(open, sel, out)
			if err != nil {
				return err
			}
			if stats.Truncated != "" {
				fmt.Fprintf(e.stderr, "traceq: warning: %s: %s; the slice holds the events before the cut\n", parse.DisplayName(in), stats.Truncated)
			}
			fmt.Fprintf(e.stdout, "%s: %s: kept %d of %d events (%d metadata, %d flow), %d top-level values\n",
				out, what, stats.Kept, stats.Read, stats.Metadata, stats.Flows, stats.TopKeys)
			return nil
		},
	}
}

// stepNames names the sliced steps for the summary line.
func stepNames(steps []step.Step) string {
	var names []string
	for i, s := range steps {
		if i == 3 && len(steps) > 4 {
			names = append(names, "…", fmt.Sprintf("%d %s", steps[len(steps)-1].Index, steps[len(steps)-1].Marker))
			break
		}
		names = append(names, fmt.Sprintf("%d %s", s.Index, s.Marker))
	}
	if len(steps) == 1 {
		return "1 step (" + names[0] + ")"
	}
	return fmt.Sprintf("%d steps (%s)", len(steps), strings.Join(names, ", "))
}

// writeSlice writes the slice to path atomically, gzip-compressed for a
// .gz name.
func writeSlice(open slice.Opener, sel *slice.Selection, path string) (*slice.Stats, error) {
	var stats *slice.Stats
	err := outfile.WriteWith(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		var dst io.Writer = bw
		var zw *gzip.Writer
		if strings.HasSuffix(path, ".gz") {
			zw = gzip.NewWriter(bw)
			dst = zw
		}
		var err error
		if stats, err = slice.Copy(open, sel, dst); err != nil {
			return err
		}
		if zw != nil {
			if err := zw.Close(); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	return stats, err
}

// checkChrome refuses an nsys export early, with a clear message, rather
// than as malformed JSON. name is the input as the user named it, path
// where it is read from (a spool of standard input).
func checkChrome(name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &parse.FileError{Path: name, Err: err}
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	if nsyssqlite.Sniff(head[:n]) {
		return &parse.FileError{Path: name, Err: errors.New("an nsys export: slice reads Chrome traces (torch.profiler JSON) only")}
	}
	return nil
}

// oneFile refuses a directory: slice cuts one trace file, and the message
// names the trace files the directory holds, to pick from.
func oneFile(in string) error {
	st, err := os.Stat(in)
	if err != nil || !st.IsDir() {
		return nil // read, and reported, as the input
	}
	var names []string
	if set, err := parse.Expand([]string{in}); err == nil {
		for _, f := range set.Files() {
			names = append(names, filepath.Base(f))
		}
	}
	holds := "holds no trace file"
	switch n := len(names); {
	case n > 8:
		holds = fmt.Sprintf("holds %d trace files (%s, …, %s)", n, strings.Join(names[:3], ", "), names[n-1])
	case n > 0:
		holds = "holds " + strings.Join(names, ", ")
	}
	return usagef("slice: %s is a directory: slice takes one trace file, and %s %s", in, in, holds)
}

// spoolStdin copies standard input to a temporary file and returns its
// name; the caller removes it (outfile.Remove), and so does a signal.
func spoolStdin(e *env) (string, error) {
	f, err := outfile.Temp("", "traceq-stdin-*")
	if err != nil {
		return "", fmt.Errorf("copying standard input to a temporary file: %w", err)
	}
	var in io.Reader = e.stdin
	if in == nil {
		in = strings.NewReader("")
	}
	_, err = io.Copy(f, in)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		outfile.Remove(f.Name())
		return "", fmt.Errorf("copying standard input to a temporary file: %w", err)
	}
	return f.Name(), nil
}
