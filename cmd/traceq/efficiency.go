package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/gpuspec"
	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/chart"
	"github.com/traceq/traceq/settings"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

var captureFlag = &cli.StringSliceFlag{Name: "capture", Usage: "graph-capture trace `FILE` (or directory of them) whose captured launches price the CUDA-graph replays (default: the files of a " + parse.CaptureDir + " folder beside each input)"}

func efficiencyCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "efficiency",
		Usage: "every op, category and step kind against what the GPU could do: FLOPs and bytes from the recorded shapes, roofline time, efficiency, SM coverage, the step's speed of light",
		Description: "Kernels are priced by the CPU op that launched them, from the shapes torch.profiler records with record_shapes=True;\n" +
			"CUDA-graph replays by the ops of the graph's capture trace. The device's limits come from the GPU table ('traceq gpus').\n" +
			"Definitions: docs/definitions.md#efficiency; how to capture what it needs: docs/efficiency.md.",
		ArgsUsage: "INPUT...",
		Flags: append([]cli.Flag{formatFlag,
			&cli.IntFlag{Name: "top", Value: 10, Usage: "op shapes shown per run (text, markdown)"},
			kindFlag("only steps of this kind: decode, prefill, mixed or step"),
			gpuFlag, gpuSpecFlag, captureFlag, linkFlag, bytesPerTokenFlag,
			noStepsFlag, stepFlag,
		}, inputFlags()...),
		Action: func(c *cli.Context) error {
			if c.Int("top") < 1 {
				return usagef("efficiency: --top must be at least 1")
			}
			if err := checkTableFormat(c.String("format")); err != nil {
				return err
			}
			r, err := efficiencyResult(c, e)
			if err != nil {
				return err
			}
			return render.Efficiency(e.stdout, r, render.Options{Format: c.String("format"), Top: c.Int("top")})
		},
	}
}

// efficiencyResult reads the flags of the efficiency analysis (--gpu,
// --gpu-spec, --capture, --link, --bytes-per-token, --kind), the inputs
// and their captures, and analyses them, joined with the collectives
// analysis for the link time: the work of efficiency and chart --type
// roofline.
func efficiencyResult(c *cli.Context, e *env) (*efficiency.Result, error) {
	// The flags first: a bad --gpu fails before gigabytes are read.
	el, err := newEffLoad(c, e, false, true)
	if err != nil {
		return nil, err
	}
	tbl, err := loadInputs(c, e, selection{steps: true, collectives: true, reduce: el.reduce})
	if err != nil {
		return nil, err
	}
	return el.result(tbl, el.collectives())
}

// efficiencyFlags are what --gpu-spec, --gpu, --link and
// --bytes-per-token say (the last three given once: the flag, else
// TRACEQ_*, else a traceq.toml by the run).
type efficiencyFlags struct {
	table *gpuspec.Table
	gpu   *gpuspec.GPU
	copt  collectives.Options
}

func readEfficiencyFlags(c *cli.Context, e *env) (f efficiencyFlags, err error) {
	set, err := deployment(c, e, c.Args().Slice())
	if err != nil {
		return f, err
	}
	if f.copt, err = collectiveOptions(c, set); err != nil {
		return f, err
	}
	if f.table, err = gpuTable(c); err != nil {
		return f, err
	}
	f.gpu, err = gpuChoice(c, f.table, set)
	return f, err
}

// effLoad runs the efficiency analysis input by input while the loader
// holds each model (load.Options.Reduce), for a command that shows its
// figures beside its own when they can exist: some input records CPU ops
// with their shapes, or a capture trace is given or found; for kernels'
// SM coverage (coverage), also when an input records launch
// configurations. Inputs read before any needs it are passed over, at no
// cost; should a later one need it, the inputs are read again, quietly
// (a run whose files differ in what they record).
type effLoad struct {
	c        *cli.Context
	e        *env
	flags    efficiencyFlags
	flagErr  error // told only when the analysis runs
	coverage bool
	always   bool
	r        *efficiency.Reducer
	need     bool // some input has what the analysis prices with
	passed   bool // an input was passed over
}

// newEffLoad reads the efficiency flags and the capture traces; always
// runs the analysis whatever the inputs record (efficiency, chart
// --type roofline), and fails at once on a bad flag.
func newEffLoad(c *cli.Context, e *env, coverage, always bool) (*effLoad, error) {
	l := &effLoad{c: c, e: e, coverage: coverage}
	l.always = always || len(c.StringSlice("capture")) > 0 || captureFolders(c)
	if l.flags, l.flagErr = readEfficiencyFlags(c, e); l.flagErr != nil {
		if always {
			return nil, l.flagErr
		}
		return l, nil
	}
	var caps []efficiency.Capture
	if l.always {
		var err error
		if caps, err = loadCaptures(c, e); err != nil {
			return nil, err
		}
	}
	filter, _ := kindFilter(c)
	l.r = efficiency.NewReducer(efficiency.Options{Filter: filter, Table: l.flags.table, GPU: l.flags.gpu, Captures: caps})
	return l, nil
}

// reduce is the load.Options.Reduce of the analysis.
func (l *effLoad) reduce(tbl *window.Table, i int) error {
	in := &tbl.Inputs[i]
	l.need = l.need || l.always || in.OpSigs > 0 || (l.coverage && in.Configs > 0)
	// Standard input cannot be read again: taken whatever it records.
	if l.r != nil && (l.need || in.Path == parse.Stdin) {
		l.r.Reduce(tbl, i)
		return nil
	}
	l.passed = true
	return nil
}

// matchOnce matches the collectives of a table once, for a command that
// needs them twice (the speed of light's link time, the findings), at
// the link collectives.Options.WithDefault chooses: the one given, else
// the devices' default (def).
type matchOnce struct {
	opt collectives.Options
	def func(*window.Table) (link, rows string) // nil: no default link
	tbl *window.Table
	ct  *collectives.Table
	// pending, when not nil, is closed when the match start began is done.
	pending chan struct{}
}

// matches counts collectives.Match calls made through matchOnce (tests).
var matches atomic.Int64

// options are the collective options of tbl: the command's, with the
// default link of tbl's devices when none was given.
func (m *matchOnce) options(tbl *window.Table) collectives.Options {
	if m.def == nil {
		return m.opt
	}
	return m.opt.WithDefault(m.def(tbl))
}

// start matches the collectives of tbl on another goroutine when it has
// collective kernels, for of to take: the command's passes over the table
// run meanwhile (a breakdown's tail after the parse is otherwise serial).
func (m *matchOnce) start(tbl *window.Table) {
	if m.pending != nil || (m.ct != nil && m.tbl == tbl) {
		return
	}
	has := false
	for i := range tbl.Inputs {
		has = has || len(tbl.Inputs[i].Collectives.Kernels) > 0
	}
	if !has {
		return
	}
	matches.Add(1)
	opt := m.options(tbl)
	done := make(chan struct{})
	m.tbl, m.ct, m.pending = tbl, nil, done
	go func() {
		defer close(done)
		m.ct = collectives.Match(tbl, opt)
	}()
}

// of returns the collectives of tbl, matched on first use.
func (m *matchOnce) of(tbl *window.Table) *collectives.Table {
	if m.pending != nil {
		<-m.pending
		m.pending = nil
	}
	if m.ct == nil || m.tbl != tbl {
		matches.Add(1)
		m.tbl, m.ct = tbl, collectives.Match(tbl, m.options(tbl))
	}
	return m.ct
}

// deviceLink is the default link of a table's devices: their rows of
// table (--gpu-spec), or gpu's (--gpu) when set.
func deviceLink(table *gpuspec.Table, gpu *gpuspec.GPU) func(*window.Table) (string, string) {
	return func(tbl *window.Table) (string, string) {
		return efficiency.DefaultLink(efficiency.Devices(tbl, table, gpu))
	}
}

// devicesLink reads --gpu-spec and --gpu (given once: the settings) for
// the default link of a command that has no efficiency analysis
// (collectives, diff).
func devicesLink(c *cli.Context, set *settings.Settings) (func(*window.Table) (string, string), error) {
	table, err := gpuTable(c)
	if err != nil {
		return nil, err
	}
	gpu, err := gpuChoice(c, table, set)
	if err != nil {
		return nil, err
	}
	return deviceLink(table, gpu), nil
}

// defaultLink is deviceLink of the command's --gpu-spec and --gpu; nil
// (no default) when they could not be read.
func (l *effLoad) defaultLink() func(*window.Table) (string, string) {
	if l.flagErr != nil {
		return nil
	}
	return deviceLink(l.flags.table, l.flags.gpu)
}

// collectives returns the matchOnce of the command's collective options
// (--link, --bytes-per-token, --kind) and devices.
func (l *effLoad) collectives() *matchOnce {
	opt := l.flags.copt
	opt.Filter, _ = kindFilter(l.c)
	return &matchOnce{opt: opt, def: l.defaultLink()}
}

// result is the analysis of tbl (nil when no input has what it needs),
// joined (with coll: nil for none) with the collectives analysis for the
// link time.
func (l *effLoad) result(tbl *window.Table, coll *matchOnce) (*efficiency.Result, error) {
	if !l.need {
		return nil, nil
	}
	if l.flagErr != nil {
		return nil, l.flagErr
	}
	if l.passed {
		// Some input was passed over before another needed the analysis:
		// read them all again, each one taken.
		again := *l
		again.always, again.passed = true, false
		again.r = efficiency.NewReducer(l.r.Options())
		var err error
		if tbl, err = loadInputs(l.c, l.e, selection{steps: true, collectives: coll != nil, quiet: true, reduce: again.reduce}); err != nil {
			return nil, err
		}
		l = &again
	}
	if coll != nil {
		// The collectives at the link of every command
		// (collectives.Options.WithDefault), matched only when there is
		// one to time them at.
		if opt := coll.options(tbl); opt.Link != nil || opt.Links.Given() {
			l.r.SetLink(coll.of(tbl).LinkTime)
		}
	}
	return l.r.Result(tbl), nil
}

// rooflineType is chart --type roofline, drawn from the efficiency
// analysis rather than report's charts.
const rooflineType = "roofline"

// rooflineChart draws chart --type roofline.
func rooflineChart(c *cli.Context, e *env) error {
	out := c.String("output")
	if out == "" {
		return usagef("chart: -o FILE is required (.svg or .png, or - for standard output)")
	}
	format, err := imageFormat(c, "-o", out)
	if err != nil {
		return err
	}
	if err := refuseInputs("chart", "-o", out, inputPaths(c.Args().Slice())); err != nil {
		return err
	}
	r, err := efficiencyResult(c, e)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := chart.Roofline(&buf, r, chart.Options{Format: format, Title: rooflineTitle(r)}); err != nil {
		return err
	}
	return writeFile(e, out, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
}

// rooflineTitle names what the chart draws: the run, or the runs.
func rooflineTitle(r *efficiency.Result) string {
	var runs []string
	for _, in := range r.Inputs {
		if !slices.Contains(runs, in.Run) {
			runs = append(runs, in.Run)
		}
	}
	return strings.Join(runs, ", ")
}

// captureFolders lists the capture_traces folders beside the inputs (in
// an input directory, or beside an input file).
func captureFolderPaths(c *cli.Context) []string {
	var paths []string
	seen := map[string]bool{}
	for _, a := range c.Args().Slice() {
		if a == parse.Stdin {
			continue
		}
		dir := a
		if st, err := os.Stat(a); err != nil || !st.IsDir() {
			dir = filepath.Dir(a)
		}
		d := filepath.Join(dir, parse.CaptureDir)
		if st, err := os.Stat(d); err == nil && st.IsDir() && !seen[d] {
			seen[d] = true
			paths = append(paths, d)
		}
	}
	return paths
}

func captureFolders(c *cli.Context) bool { return len(captureFolderPaths(c)) > 0 }

// vllmCaptureDetails is the file vLLM writes beside its capture traces.
const vllmCaptureDetails = "execution_details.json"

// loadCaptures reads the graph-capture traces: those --capture names, or
// else the files of a capture_traces folder beside each input. They are
// not inputs: no runs, no steps. A file --capture names must read; one
// found beside an input that does not is left out with a warning, the
// analysis going on without it.
func loadCaptures(c *cli.Context, e *env) ([]efficiency.Capture, error) {
	paths, found := c.StringSlice("capture"), false
	if len(paths) == 0 {
		paths, found = captureFolderPaths(c), true
	}
	if len(paths) == 0 {
		return nil, nil
	}
	opt, err := loadOptions(c, e, selection{})
	if err != nil {
		return nil, err
	}
	opt.Steps, opt.Filter = false, step.Filter{}
	// A capture trace may hold no GPU activity at all: its kernels ran
	// in the replays.
	opt.Parse.LaunchesOnly = true
	warn := func(format string, args ...any) {
		if opt.Warnings != nil {
			fmt.Fprintf(opt.Warnings, "traceq: "+format+"\n", args...)
		}
	}
	var files []string
	for _, p := range paths {
		// vLLM writes execution_details.json (not a trace) beside its
		// capture traces: skipped without a word.
		quiet := opt
		quiet.Warnings = nil
		set, err := load.Expand([]string{p}, quiet)
		if err != nil {
			if found {
				warn("warning: no capture trace read: %v", err)
				continue
			}
			_, err = load.Expand([]string{p}, opt) // again, for every error's line
			return nil, err
		}
		for _, s := range set.Skipped {
			if filepath.Base(s.Path) != vllmCaptureDetails {
				warn("%s", s)
			}
		}
		for _, r := range set.Repeats {
			warn("%s", r)
		}
		files = append(files, set.Files()...)
	}
	var caps []efficiency.Capture
	for _, p := range files {
		tbl, err := load.One(p, opt)
		if err != nil {
			if found {
				warn("warning: capture trace not read: %v", err)
				continue
			}
			return nil, err
		}
		caps = append(caps, efficiency.Capture{Path: p, Trace: tbl.Inputs[0].Trace})
	}
	slices.SortStableFunc(caps, func(a, b efficiency.Capture) int { return strings.Compare(a.Path, b.Path) })
	return caps, nil
}
