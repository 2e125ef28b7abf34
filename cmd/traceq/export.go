package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/outfile"
	"github.com/traceq/traceq/render/parquet"
)

func exportCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write the traces as a hive-partitioned Parquet dataset (DIR/activities|steps|launches|inputs/run=RUN/rank=R/part-N.parquet) for DuckDB or Spark; see docs/fleet.md",
		ArgsUsage: "INPUT...",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Value: "parquet", Usage: "output format: parquet"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "dataset `DIR` (made if missing)"},
			&cli.StringFlag{Name: "run", Usage: "run `NAME` of the partition (default: the name of the directory holding the inputs)"},
			&cli.BoolFlag{Name: "force", Usage: "replace the parts of a run and rank DIR already holds"},
			noStepsFlag, stepFlag,
		}, inputFlags()...),
		Action: func(c *cli.Context) error {
			if f := c.String("format"); f != "parquet" {
				return usagef("export: unknown --format %q (want parquet)", f)
			}
			dir := c.String("output")
			if dir == "" {
				return usagef("export: -o DIR is required")
			}
			if c.NArg() == 0 {
				return usagef("export: no input files (see 'traceq export --help')")
			}
			opt, err := loadOptions(c, e, selection{steps: true})
			if err != nil {
				return err
			}
			opt.Progress = nil // one file at a time
			paths, err := load.Files(c.Args().Slice(), opt)
			if err != nil {
				return err
			}
			run, err := runName(c, paths)
			if err != nil {
				return err
			}
			ds := &dataset{dir: dir, inputs: paths, force: c.Bool("force"), checked: map[string]bool{}}
			defer ds.files.Abort()
			x, err := parquet.New(ds.create, parquet.Options{Run: run, Version: version()})
			if err != nil {
				return usageError{err.Error()}
			}
			// One input at a time: memory holds one trace, however many.
			for _, p := range paths {
				tbl, err := load.One(p, opt)
				if err != nil {
					return withFlags(err)
				}
				if err := x.Add(tbl); err != nil {
					return err
				}
				// Collect this trace before parsing the next, or the heap
				// grows to hold two (the soft limit is for many ranks).
				tbl = nil
				runtime.GC()
			}
			if err := ds.commit(); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s: run %s: %d inputs, %d part files\n", dir, run, len(paths), ds.parts)
			return nil
		},
	}
}

// runName is --run, or the name of the directory that holds every input.
func runName(c *cli.Context, paths []string) (string, error) {
	if r := c.String("run"); r != "" {
		if err := parquet.CheckRun(r); err != nil {
			return "", usagef("export: --run: %v", err)
		}
		return r, nil
	}
	var dir string
	for _, p := range paths {
		abs, err := filepath.Abs(filepath.Dir(p))
		if err != nil {
			return "", err
		}
		if dir != "" && abs != dir {
			return "", usagef("export: the inputs are in several directories (%s, %s): name the run with --run", dir, abs)
		}
		dir = abs
	}
	run := filepath.Base(dir)
	if err := parquet.CheckRun(run); err != nil {
		return "", usagef("export: %v (from the inputs' directory): name the run with --run", err)
	}
	return run, nil
}

// dataset puts the part files in place together (outfile.Group) and
// refuses, unless --force, to add parts to a partition that holds some.
type dataset struct {
	dir      string
	inputs   []string
	force    bool
	files    outfile.Group
	checked  map[string]bool // partition directories looked at
	replaced []string        // old parts --force removes after the commit
	parts    int
}

func (d *dataset) create(rel string) (io.WriteCloser, error) {
	p := filepath.Join(d.dir, filepath.FromSlash(rel))
	if same, ok := outfile.SameFile(p, d.inputs); ok {
		return nil, fmt.Errorf("%s: refusing to overwrite an input", outfile.Describe(p, same))
	}
	if pdir := filepath.Dir(p); !d.checked[pdir] {
		d.checked[pdir] = true
		old, err := parts(pdir)
		if err != nil {
			return nil, err
		}
		if len(old) > 0 && !d.force {
			return nil, fmt.Errorf("%s: holds a dataset for this run and rank already (%s); --force replaces it", pdir, strings.Join(old, ", "))
		}
		for _, o := range old {
			d.replaced = append(d.replaced, filepath.Join(pdir, o))
		}
	}
	d.parts++
	return d.files.Create(p)
}

// parts lists the part files of a partition directory (none when absent).
func parts(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".parquet") && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// commit puts the new parts in place, then removes the old parts of the
// replaced partitions that no new part overwrote.
func (d *dataset) commit() error {
	if err := d.files.Commit(); err != nil {
		return err
	}
	for _, o := range d.replaced {
		if !d.files.Created(o) {
			if err := os.Remove(o); err != nil {
				return err
			}
		}
	}
	return nil
}
