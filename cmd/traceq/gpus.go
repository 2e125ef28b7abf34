package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/gpuspec"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/settings"
)

// Flags of the commands that compare work with the GPU's limits.
var (
	gpuSpecFlag = &cli.StringFlag{Name: "gpu-spec", Usage: "GPU table `FILE` that extends the built-in one (or replaces it, see 'traceq gpus')"}
	gpuFlag     = &cli.StringFlag{Name: "gpu", Usage: "take every device to be GPU `NAME` (a row of 'traceq gpus') instead of recognising it from the trace"}
)

// gpuTable reads --gpu-spec: the built-in table, extended or replaced by
// the file.
func gpuTable(c *cli.Context) (*gpuspec.Table, error) {
	p := c.String("gpu-spec")
	if p == "" {
		return gpuspec.Default(), nil
	}
	t, err := gpuspec.Load(p)
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("%s: %w", p, pe.Err)
	}
	return t, err
}

// gpuChoice reads --gpu (given once: the flag, TRACEQ_GPU or gpu in a
// traceq.toml) against the table: nil when not given.
func gpuChoice(c *cli.Context, t *gpuspec.Table, set *settings.Settings) (*gpuspec.GPU, error) {
	s, ok := set.Get(settings.GPU)
	if !ok {
		return nil, nil
	}
	g, err := t.Lookup(s.Value)
	if err != nil {
		return nil, settingError(c.Command.Name, s, err)
	}
	return g, nil
}

func gpusCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "gpus",
		Usage: "print the GPU table: dense peak TFLOP/s per type, memory bandwidth, SMs, default link and sources (built-in, extended or replaced by --gpu-spec)",
		Description: "With --spec, print the table in its file format instead: edit a copy and give it back with --gpu-spec FILE.\n" +
			"A file's rows are tried before the built-in ones (a row of the same name replaces the built-in one); a line !replace drops the built-in rows.",
		Flags: []cli.Flag{formatFlag, gpuSpecFlag,
			&cli.BoolFlag{Name: "spec", Usage: "print the table in the file format --gpu-spec reads"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("gpus takes no arguments")
			}
			if err := checkTableFormat(c.String("format")); err != nil {
				return err
			}
			t, err := gpuTable(c)
			if err != nil {
				return err
			}
			if c.Bool("spec") {
				return t.Write(e.stdout)
			}
			return render.GPUs(e.stdout, t, render.Options{Format: c.String("format")})
		},
	}
}
