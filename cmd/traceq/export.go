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

	"github.com/traceq/traceq/analyze"
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
			set, err := parse.Expand(c.Args().Slice())
			if err != nil {
				return eachError(e, err)
			}
			for _, s := range set.Skipped {
				fmt.Fprintf(e.stderr, "traceq: %s\n", s)
			}
			for _, r := range set.Repeats {
				fmt.Fprintf(e.stderr, "traceq: %s\n", r)
			}
			paths := set.Files()
			if err := refuseInputs("export", "-o", dir, paths); err != nil {
				return err
			}
			runs, err := exportRuns(c, set)
			if err != nil {
				return err
			}
			popt, err := parseOptions(c)
			if err != nil {
				return err
			}
			cl, err := classifier(c)
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
			x := parquet.New(ds.create, parquet.Options{Version: version(), Classifier: cl})
			// One input at a time: memory holds one trace, however many.
			for i, p := range paths {
				t, err := readInput(e, p, popt)
				if err != nil {
					return err
				}
				if err := warn(e, c, p, t); err != nil {
					return err
				}
				steps, err := findSteps(c, e, p, t)
				if err != nil {
					return err
				}
				if err := x.Add(runs[i], p, t, steps); err != nil {
					return err
				}
				// Collect this trace before parsing the next, or the heap
				// grows to hold two (the soft limit is for many ranks).
				t, steps = nil, nil
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
// them all; else a directory argument is a run named after it (as
// analyze.AssignRuns names runs for every command), and the file
// arguments are one run, named after the directory that holds them all.
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
	var dirInputs []analyze.Input
	var sources []analyze.Source
	var fileDir string
	for _, a := range set.Args {
		if !a.Dir {
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
			continue
		}
		// Named after the directory itself, also when given as "." or "..".
		abs, err := filepath.Abs(a.Arg)
		if err != nil {
			return nil, err
		}
		src := analyze.Source{Arg: abs, Dir: true}
		for _, p := range a.Files {
			src.Inputs = append(src.Inputs, len(dirInputs))
			dirInputs = append(dirInputs, analyze.Input{Path: p})
		}
		sources = append(sources, src)
	}
	analyze.AssignRuns(dirInputs, sources)
	byPath := map[string]string{}
	for _, in := range dirInputs {
		if err := parquet.CheckRun(in.Run); err != nil {
			return nil, usagef("export: %v (from the directory %s): name the run with --run", err, filepath.Dir(in.Path))
		}
		byPath[in.Path] = in.Run
	}
	fileRun := filepath.Base(fileDir)
	if fileDir != "" {
		if err := parquet.CheckRun(fileRun); err != nil {
			return nil, usagef("export: %v (from the input files' directory): name the run with --run", err)
		}
		for _, in := range dirInputs {
			if in.Run == fileRun {
				return nil, usagef("export: the input files in %s and the directory %s would both be run %s: name the run of the files with --run, or export them apart", fileDir, filepath.Dir(in.Path), fileRun)
			}
		}
	}
	for i, p := range files {
		if r, ok := byPath[p]; ok {
			runs[i] = r
		} else {
			runs[i] = fileRun
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
