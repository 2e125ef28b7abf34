package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/outfile"
	"github.com/traceq/traceq/parse"
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
			&cli.StringFlag{Name: "run", Usage: "run `NAME` of every input's partition (default: a directory argument is a run named after it; the input files are one run, named after the directory holding them)"},
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
			set, err := load.Expand(c.Args().Slice(), opt)
			if err != nil {
				return err
			}
			paths := set.Files()
			if err := refuseInputs("export", "-o", dir, paths); err != nil {
				return err
			}
			runs, err := exportRuns(c, set)
			if err != nil {
				return err
			}
			// The parts are staged in DIR and put in place together.
			tree, err := outfile.NewTree(dir)
			if err != nil {
				return err
			}
			defer tree.Abort()
			ds := &dataset{dir: dir, inputs: paths, force: c.Bool("force"), tree: tree, checked: map[string]bool{}}
			x := parquet.New(ds.create, parquet.Options{Version: version()})
			// One input at a time: memory holds one trace, however many.
			hosts := load.Hosts(set)
			for i, p := range paths {
				tbl, err := load.OneOn(p, hosts[i], opt)
				if err != nil {
					return withFlags(err)
				}
				if err := x.Add(runs[i], tbl); err != nil {
					return err
				}
				// Collect this trace before parsing the next, or the heap
				// grows to hold two (the soft limit is for many ranks).
				tbl = nil
				runtime.GC()
			}
			if err := tree.Commit(ds.existing); err != nil {
				return err
			}
			var names []string
			for _, r := range runs {
				if !slices.Contains(names, r) {
					names = append(names, r)
				}
			}
			what := "run " + names[0]
			if len(names) > 1 {
				what = "runs " + strings.Join(names, ", ")
			}
			fmt.Fprintf(e.stdout, "%s: %s: %d inputs, %d part files\n", dir, what, len(paths), ds.parts)
			return nil
		},
	}
}

// exportRuns names the run of each input file, in order: --run names
// them all; else a directory argument is a run named after it, as every
// command names it (load.DirRun), and the file arguments are one run,
// named after the directory that holds them all. Two runs of one name
// are refused: a dataset keeps its run names, so none is made up.
func exportRuns(c *cli.Context, set *parse.Inputs) ([]string, error) {
	files := set.Files()
	runs := make([]string, len(files))
	if r := c.String("run"); r != "" {
		if err := parquet.CheckRun(r); err != nil {
			return nil, usagef("export: --run: %v", err)
		}
		for i := range runs {
			runs[i] = r
		}
		return runs, nil
	}
	byPath := map[string]string{}
	from := map[string]string{} // run -> the argument it is named after
	name := func(run, arg, what string) error {
		if err := parquet.CheckRun(run); err != nil {
			return usagef("export: %v (from %s): name the run with --run", err, what)
		}
		if prev, ok := from[run]; ok && prev != arg {
			return usagef("export: %s and %s would both be run %s: export them apart, naming the runs with --run", prev, arg, run)
		}
		from[run] = arg
		return nil
	}
	var fileDir string
	for _, a := range set.Args {
		if a.Dir {
			// Named after the directory itself, also when given as "."
			abs, err := filepath.Abs(a.Arg)
			if err != nil {
				return nil, err
			}
			run := load.DirRun(abs)
			if err := name(run, a.Arg, "the directory "+a.Arg); err != nil {
				return nil, err
			}
			for _, p := range a.Files {
				byPath[p] = run
			}
			continue
		}
		for _, p := range a.Files {
			if p == parse.Stdin {
				return nil, usagef("export: standard input is in no directory to name the run after: name the run with --run")
			}
			abs, err := filepath.Abs(filepath.Dir(p))
			if err != nil {
				return nil, err
			}
			if fileDir != "" && abs != fileDir {
				return nil, usagef("export: the input files are in several directories (%s, %s): name the run with --run", fileDir, abs)
			}
			fileDir = abs
		}
	}
	if fileDir != "" {
		if err := name(filepath.Base(fileDir), "the input files in "+fileDir, "the input files' directory"); err != nil {
			return nil, err
		}
	}
	for i, p := range files {
		if r, ok := byPath[p]; ok {
			runs[i] = r
		} else {
			runs[i] = filepath.Base(fileDir)
		}
	}
	return runs, nil
}

// dataset checks the partitions the export writes: a partition that
// holds parts is refused unless --force, which replaces it whole.
type dataset struct {
	dir     string
	inputs  []string
	force   bool
	tree    *outfile.Tree
	checked map[string]bool // partition directories looked at
	parts   int
}

// create starts a part file, first checking its partition, so that an
// export that would be refused stops before reading every input.
func (d *dataset) create(rel string) (io.WriteCloser, error) {
	if pdir := filepath.Join(d.dir, filepath.FromSlash(path.Dir(rel))); !d.checked[pdir] {
		d.checked[pdir] = true
		if _, err := d.existing(pdir); err != nil {
			return nil, err
		}
	}
	d.parts++
	return d.tree.Create(rel)
}

// existing decides what happens to a partition directory that exists
// (outfile.Existing): one without parts gets the new parts beside what it
// holds; one with parts is replaced whole with --force, provided it holds
// nothing but traceq's parts and no input, and is refused without.
func (d *dataset) existing(pdir string) (replace bool, err error) {
	ents, err := os.ReadDir(pdir)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var parts, others []string
	input := ""
	for _, e := range ents {
		name := e.Name()
		if same, ok := outfile.SameFile(filepath.Join(pdir, name), d.inputs); ok && input == "" {
			input = outfile.Describe(filepath.Join(pdir, name), same)
		}
		switch {
		case e.Type().IsRegular() && strings.HasSuffix(name, ".parquet") && !strings.HasPrefix(name, "."):
			parts = append(parts, name)
		case e.Type().IsRegular() && strings.HasPrefix(name, ".part-") && strings.Contains(name, ".parquet.tmp-"):
			// A temporary part an interrupted older traceq left.
		default:
			others = append(others, name)
		}
	}
	switch {
	case len(parts) == 0:
		return false, nil
	case !d.force:
		return false, fmt.Errorf("%s: holds a dataset for this run and rank already (%s); --force replaces it", pdir, strings.Join(parts, ", "))
	case input != "":
		return false, usagef("export: %s is an input, in the partition %s that --force would replace; write the output elsewhere", input, pdir)
	case len(others) > 0:
		return false, fmt.Errorf("%s: holds %s besides its parts: --force replaces a partition whole, and removes only what traceq wrote; move them out first", pdir, strings.Join(others, ", "))
	}
	return true, nil
}
