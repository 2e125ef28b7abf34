package main

import (
	"bufio"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/render"
)

func commands(e *env) []*cli.Command {
	return []*cli.Command{
		breakdownCmd(e),
		kernelsCmd(e),
		classifyCmd(e),
		rulesCmd(e),
		chartCmd(e),
		reportCmd(e),
		stepsCmd(e),
		diffCmd(e),
		sliceCmd(e),
		exportCmd(e),
	}
}

// tableInputs checks --format, builds the classifier and reads the inputs:
// the start of every command that prints a table.
func tableInputs(c *cli.Context, e *env) (*classify.Classifier, []analyze.Input, error) {
	if err := checkTableFormat(c.String("format")); err != nil {
		return nil, nil, err
	}
	cl, err := classifier(c)
	if err != nil {
		return nil, nil, err
	}
	inputs, err := loadInputs(c, e)
	if err != nil {
		return nil, nil, err
	}
	return cl, inputs, nil
}

func checkTableFormat(f string) error {
	if err := render.CheckFormat(f); err != nil {
		return usageError{err.Error()}
	}
	return nil
}

func breakdownCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:      "breakdown",
		Usage:     "GPU time per device and kernel category (per step kind when steps are marked)",
		ArgsUsage: "INPUT...",
		Flags: append([]cli.Flag{formatFlag,
			&cli.IntFlag{Name: "top", Value: 10, Usage: "top kernels shown per group"},
			&cli.StringFlag{Name: "kind", Usage: "only steps of this kind: decode, prefill, mixed or step"},
			noStepsFlag, stepFlag,
		}, inputFlags()...),
		Action: func(c *cli.Context) error {
			if c.Int("top") < 1 {
				return usagef("breakdown: --top must be at least 1")
			}
			cl, inputs, err := tableInputs(c, e)
			if err != nil {
				return err
			}
			opt := analyze.Options{Classifier: cl, Kind: c.String("kind"), Top: c.Int("top")}
			// The two passes over the activities are independent: run
			// them on two cores (seconds for GBs of rank files).
			kernels := make(chan []analyze.KernelStat, 1)
			go func() { kernels <- analyze.Kernels(inputs, analyze.KernelOptions{Options: opt, MemOps: true}) }()
			r := analyze.Breakdown(inputs, opt)
			r.Kernels = <-kernels
			return render.Breakdown(e.stdout, r, render.Options{Format: c.String("format"), Top: c.Int("top")})
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
			&cli.StringFlag{Name: "kind", Usage: "only kernels of steps of this kind"},
		}, inputFlags()...),
		Action: func(c *cli.Context) error {
			if c.Int("top") < 0 {
				return usagef("kernels: --top must be >= 0")
			}
			cl, inputs, err := tableInputs(c, e)
			if err != nil {
				return err
			}
			ks := analyze.Kernels(inputs, analyze.KernelOptions{
				Options:   analyze.Options{Classifier: cl, Kind: c.String("kind")},
				PerDevice: c.Bool("per-device"), MemOps: c.Bool("memops"), Limit: c.Int("top"),
			})
			rep := &render.KernelReport{Kernels: ks}
			for _, in := range inputs {
				rep.Inputs = append(rep.Inputs, analyze.Describe(in))
			}
			return render.Kernels(e.stdout, rep, render.Options{Format: c.String("format")})
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
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			w := bufio.NewWriter(e.stdout)
			for sc.Scan() {
				name := sc.Text()
				fmt.Fprintf(w, "%s\t%s\n", name, cl.Classify(name))
			}
			if err := sc.Err(); err != nil {
				return fmt.Errorf("reading stdin: %w", err)
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
