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

	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/parse/nsyssqlite"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/slice"
)

func sliceCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "slice",
		Usage: "write the chosen steps or time window of a Chrome trace as a small Chrome trace a viewer can open",
		Description: "--time START:END is relative to the trace's first event; a bare number counts µs, or give\n" +
			"a unit: 1.5ms, 250us, 90ns, 2s. --steps K:M takes steps K to M-1 (the indices 'traceq steps' prints).\n" +
			"The slice keeps every metadata event and top-level value, the events inside the window and the\n" +
			"flows whose ends are both inside. Open it at https://ui.perfetto.dev (Open trace file).",
		ArgsUsage: "INPUT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the slice to `FILE` (gzip-compressed when it ends in .gz)"},
			&cli.StringFlag{Name: "steps", Usage: "steps `K:M` (K to M-1), K: or K"},
			&cli.StringFlag{Name: "time", Usage: "time window `START:END` after the trace start"},
			&cli.StringFlag{Name: "kind", Usage: "with --steps: only steps of this kind (decode, prefill, mixed, step)"},
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
			if c.String("kind") != "" && c.String("steps") == "" {
				return usagef("slice: --kind needs --steps")
			}
			if same(in, out) {
				return usagef("slice: the output %s is the input", out)
			}
			if err := checkChrome(in); err != nil {
				return err
			}
			open := func() (io.ReadCloser, error) { return os.Open(in) }
			var sel *slice.Selection
			var what string
			if r := c.String("time"); r != "" {
				from, to, err := slice.ParseRange(r)
				if err != nil {
					return usagef("slice: --time: %v", err)
				}
				start, err := slice.Start(open)
				if err != nil {
					return fmt.Errorf("%s: %w", in, err)
				}
				end := start + to
				if to > 1<<63-1-start {
					end = 1<<63 - 1
				}
				sel = slice.Window(start+from, end)
				what = "time " + render.MS(from) + " ms to "
				if end == 1<<63-1 {
					what += "the end"
				} else {
					what += render.MS(to) + " ms"
				}
			} else {
				from, to, err := slice.ParseSteps(c.String("steps"))
				if err != nil {
					return usagef("slice: --steps: %v", err)
				}
				// Several streaming passes find the steps and the kernels
				// they own, holding only the markers and the selection.
				var steps []string
				sel, steps, err = sliceSteps(open, c.String("step"), from, to, c.String("kind"))
				if errors.Is(err, slice.ErrNoSteps) {
					what := "no step markers (ProfilerStep#N, vLLM execute_…, SGLang step[…], ATOM prefill[…]/decode[…])"
					if p := c.String("step"); p != "" {
						what = fmt.Sprintf("no annotation range matches --step %q", p)
					}
					fmt.Fprintf(e.stderr, "traceq: %s: %s: the whole trace is one window\n", in, what)
					err = errors.New("the trace has no step markers: use --time")
				}
				if errors.Is(err, slice.ErrNoGPU) || errors.Is(err, slice.ErrInput) {
					// Say what is wrong with the input as the parser does.
					if _, perr := parse.File(in, parse.Options{Format: "chrome"}); perr != nil {
						return perr
					}
				}
				if err != nil {
					if strings.HasPrefix(err.Error(), "--step: ") {
						return usageError{err.Error()}
					}
					return fmt.Errorf("%s: %w", in, err)
				}
				what = fmt.Sprintf("%d steps (%s)", len(steps), strings.Join(steps, ", "))
				if len(steps) == 1 {
					what = "1 step (" + steps[0] + ")"
				}
			}
			stats, err := writeSlice(open, sel, out)
			if err != nil {
				return err
			}
			if stats.Truncated != "" {
				fmt.Fprintf(e.stderr, "traceq: warning: %s: %s; the slice holds the events before the cut\n", in, stats.Truncated)
			}
			fmt.Fprintf(e.stdout, "%s: %s: kept %d of %d events (%d metadata, %d flow), %d top-level values\n",
				out, what, stats.Kept, stats.Read, stats.Metadata, stats.Flows, stats.TopKeys)
			return nil
		},
	}
}

// sliceSteps selects steps and names them for the summary line.
func sliceSteps(open slice.Opener, pattern string, from, to int, kind string) (*slice.Selection, []string, error) {
	sel, steps, err := slice.StepsStream(open, pattern, from, to, kind)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for i, s := range steps {
		if i == 3 && len(steps) > 4 {
			names = append(names, "…", fmt.Sprintf("%d %s", steps[len(steps)-1].Index, steps[len(steps)-1].Marker))
			break
		}
		names = append(names, fmt.Sprintf("%d %s", s.Index, s.Marker))
	}
	return sel, names, nil
}

// writeSlice writes the slice to path, gzip-compressed for a .gz name, and
// removes a partial file on error.
func writeSlice(open slice.Opener, sel *slice.Selection, path string) (*slice.Stats, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var w io.Writer = bw
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(bw)
		w = zw
	}
	stats, err := slice.Copy(open, sel, w)
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return stats, nil
}

// checkChrome refuses an nsys export early, with a clear message, rather
// than as malformed JSON.
func checkChrome(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	if nsyssqlite.Sniff(head[:n]) {
		return fmt.Errorf("%s: an nsys export: slice reads Chrome traces (torch.profiler JSON) only", path)
	}
	return nil
}

// same reports whether two paths name the same file.
func same(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(sa, sb)
	}
	return filepath.Clean(a) == filepath.Clean(b)
}
