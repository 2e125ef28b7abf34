package load

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// maxParallelFiles bounds the input files parsed at once. Each parse
// already uses every core; a second one in flight fills the gaps of the
// first (its gzip stream, its splitter and its final sort are single
// goroutines) while keeping memory to two files' working sets on top of
// the parsed traces.
const maxParallelFiles = 2

// filesInFlight is maxParallelFiles; tests set it.
var filesInFlight = maxParallelFiles

// testParse and testParsed, set by tests only, are called when the parse
// of file i starts and when it has made its model.
var (
	testParse  func(i int)
	testParsed func(i int, t *trace.Trace)
)

// Options configures Load.
type Options struct {
	// Parse configures the parsers (input format, nsys names, workers).
	Parse parse.Options
	// Classifier and ByTop make the table's categories
	// (window.Options).
	Classifier *classify.Classifier
	ByTop      bool
	// Steps finds the step markers of each input; without it the whole
	// trace is one window per device (--no-steps). Pattern replaces the
	// built-in markers (step.Options).
	Steps   bool
	Pattern string
	// Filter is the class the command selects (--kind): Load refuses,
	// with a step.NoKindError, inputs that hold no window of it.
	Filter step.Filter
	// Strict makes a truncated input an error instead of a warning.
	Strict bool
	// RefuseMixedRuns makes a run whose files can only be of different
	// runs (the same rank twice, two world sizes, more ranks than the
	// world) a *MixedRunError instead of a warning: for analyses that
	// match ranks (collectives).
	RefuseMixedRuns bool
	// Verbose lists every kind of odd input with an example.
	Verbose bool
	// Warnings receives the one-line warnings about the inputs (nil:
	// none are written).
	Warnings io.Writer
	// Progress, when set, receives a progress line while reading takes
	// longer than a second (a terminal).
	Progress io.Writer
	// Stdin is read for the input "-".
	Stdin io.Reader

	// SkipDurations and SkipCollectives leave out of the table the
	// records of the kernels table and of the collectives
	// (window.Options), for commands that show neither.
	SkipDurations, SkipCollectives bool
	// Reduce, when set, is called for each input once the table holds
	// it, in input order, with its model: for analyses that need more
	// of an input than the table keeps (efficiency.Reducer). Runs are
	// not named yet (Input.Run is set once every input is read).
	Reduce func(tbl *window.Table, input int) error
	// Gaps, when set, receives each idle gap the table finds
	// (window.Options.Gaps).
	Gaps func(window.Gap)
	// Keep, when set, says which inputs keep their model (a timeline's);
	// every other input's is dropped once it is added and reduced, so
	// that a run's memory is the models being parsed and the table.
	Keep func(input int) bool
}

// windowOptions are the table's options.
func (opt *Options) windowOptions() window.Options {
	return window.Options{Classifier: opt.Classifier, ByTop: opt.ByTop, SkipDurations: opt.SkipDurations, SkipCollectives: opt.SkipCollectives,
		Gaps: opt.Gaps}
}

// Load reads the inputs the arguments name (a directory stands for its
// trace files, its subdirectories' included), in parallel, and reduces
// them to their table: runs named (docs/ranks.md#runs), hosts from the
// directory or file names, steps found, the model checked
// (window.ErrOverflow) and the class filter checked. Every command reads
// its inputs through Load, so none can skip a check.
//
// Each input is added to the table as soon as it is parsed, in input
// order, then reduced (Options.Reduce) and its model dropped (unless
// Options.Keep): at most maxParallelFiles models are alive at once,
// whatever the number of inputs.
func Load(args []string, opt Options) (*window.Table, error) {
	tbl, err := read(args, opt, 1)
	if err != nil {
		return nil, err
	}
	if err := check(opt.Filter, tbl.Inputs); err != nil {
		return nil, err
	}
	return tbl, runsChecked(tbl, opt)
}

// Pair loads the two sides of a comparison, each a run of its own
// arguments; the class filter must select windows of one side at least.
func Pair(before, after []string, opt Options) (b, a *window.Table, err error) {
	// The first side's table is held while the second is read.
	if b, err = read(before, opt, 2); err != nil {
		return nil, nil, err
	}
	if a, err = read(after, opt, 2); err != nil {
		return nil, nil, err
	}
	if err := check(opt.Filter, append(slices.Clip(b.Inputs), a.Inputs...)); err != nil {
		return nil, nil, err
	}
	if err := runsChecked(b, opt); err != nil {
		return nil, nil, err
	}
	return b, a, runsChecked(a, opt)
}

func check(f step.Filter, inputs []window.Input) error {
	steps := make([]*step.Steps, len(inputs))
	for i := range inputs {
		steps[i] = inputs[i].Steps
	}
	return f.Check(steps)
}

// Expand lists the files the arguments name, grouped by argument,
// writing the warnings about what directories hold besides traces: for
// commands that read one input at a time (One) and name runs by argument
// (export).
func Expand(args []string, opt Options) (*parse.Inputs, error) {
	return expand(args, opt)
}

// expand is parse.Expand, the warnings about what it skipped written.
func expand(args []string, opt Options) (*parse.Inputs, error) {
	set, err := parse.Expand(args)
	if err != nil {
		return nil, eachError(opt.Warnings, err)
	}
	for _, s := range set.Skipped {
		warnf(opt.Warnings, "%s", s)
	}
	for _, r := range set.Repeats {
		warnf(opt.Warnings, "%s", r)
	}
	return set, nil
}

// One reads one input file as Load does (warnings, steps, the model
// check), for commands that hold one input at a time (export), and
// reduces it to its table, whose model it keeps.
func One(path string, opt Options) (*window.Table, error) {
	return OneOn(path, fileHost(path), opt)
}

// OneOn is One for a file the layout puts on host (Hosts; "" for none):
// the input is on that host, else on the one the trace names.
func OneOn(path, host string, opt Options) (*window.Table, error) {
	limitMemory(1)
	t, err := readInput(path, opt.Parse, opt.Stdin)
	if err != nil {
		return nil, err
	}
	st, err := findSteps(t, opt)
	if err != nil {
		return nil, err
	}
	in, err := prepare(path, t, st, opt)
	if err != nil {
		return nil, err
	}
	in.Host = cmp.Or(host, t.Meta.Host)
	return window.Build([]window.Input{in}, opt.windowOptions())
}

// Hosts returns the host the layout gives each file of set, in the order
// of set.Files(): its node directory (run/node0/rank3.json.gz), else its
// file name (torch.profiler's {host}_{pid}.…); "" when neither does.
func Hosts(set *parse.Inputs) []string {
	var out []string
	for _, a := range set.Args {
		for j, p := range a.Files {
			sub := ""
			if a.Dir {
				sub = a.Subdirs[j]
			}
			out = append(out, layoutHost(sub, p))
		}
	}
	return out
}

// layoutHost is the host the layout gives file p, in the subdirectory sub
// of a directory argument ("" for none).
func layoutHost(sub, p string) string {
	return cmp.Or(subdirHost(sub), fileHost(p))
}

// read parses every input of args into their table, names their runs and
// hosts, under the soft memory limit of their number of files (at least
// held: the inputs the command holds besides).
func read(args []string, opt Options, held int) (*window.Table, error) {
	set, err := expand(args, opt)
	if err != nil {
		return nil, err
	}
	limitMemory(max(len(set.Files()), held))
	// Parse the files concurrently; add them in order, each once parsed,
	// reporting on them as they are added (the progress line is redrawn
	// after).
	paths := set.Files()
	outs, done, cancel := parseFiles(paths, opt)
	defer cancel()
	tbl := window.NewTable(opt.windowOptions())
	var sources []source
	i := 0
	for _, a := range set.Args {
		src := source{Arg: a.Arg, Dir: a.Dir}
		for j, p := range a.Files {
			sub := ""
			if a.Dir {
				sub = a.Subdirs[j]
			}
			if err := add(tbl, i, p, sub, outs[i], opt); err != nil {
				return nil, err
			}
			// The model is dropped (add's frame is gone): its slot is
			// the next file's.
			done(i)
			src.Inputs = append(src.Inputs, i)
			i++
		}
		sources = append(sources, src)
	}
	cancel()
	assignRuns(tbl, sources)
	return tbl, nil
}

// add adds input i (path, in the subdirectory sub of a directory
// argument), once parsed, to tbl, reduces it and drops its model.
func add(tbl *window.Table, i int, path, sub string, out chan parsed, opt Options) error {
	r := <-out
	if r.err != nil {
		return r.err
	}
	in, err := prepare(path, r.t, r.steps, opt)
	if err != nil {
		return err
	}
	in.Host = cmp.Or(layoutHost(sub, path), r.t.Meta.Host)
	if err := tbl.Add(in); err != nil {
		return err
	}
	if opt.Reduce != nil {
		if err := opt.Reduce(tbl, i); err != nil {
			return err
		}
	}
	if opt.Keep == nil || !opt.Keep(i) {
		tbl.Release(i)
	}
	return nil
}

// findSteps finds the steps of a parsed trace (nil without Options.Steps
// or without markers).
func findSteps(t *trace.Trace, opt Options) (*step.Steps, error) {
	if !opt.Steps {
		return nil, nil
	}
	return step.Find(t, step.Options{Pattern: opt.Pattern})
}

// prepare warns about a parsed trace and its steps. A trace that does not
// say its rank takes the one its file name gives (fileRank).
func prepare(path string, t *trace.Trace, st *step.Steps, opt Options) (window.Input, error) {
	in := window.Input{Path: path, Trace: t}
	if r, ok := fileRank(path); ok && t.Meta.Rank < 0 && len(t.Procs) <= 1 {
		t.Meta.Rank, t.Meta.RankSource = r, trace.RankFromFileName
		for i := range t.Procs {
			t.Procs[i].Rank = r
		}
	}
	if err := truncated(opt, path, t); err != nil {
		return in, err
	}
	if !opt.Steps {
		odd(opt, path, t.Anomalies)
		return in, nil
	}
	if st != nil && len(st.Anomalies) > 0 {
		all := append(slices.Clone(t.Anomalies), st.Anomalies...)
		slices.SortStableFunc(all, func(a, b trace.Anomaly) int { return strings.Compare(a.What, b.What) })
		odd(opt, path, all)
	} else {
		odd(opt, path, t.Anomalies)
	}
	if st == nil {
		what := "no step markers (ProfilerStep#N, vLLM execute_…, SGLang step[…], ATOM prefill[…]/decode[…])"
		if opt.Pattern != "" {
			what = fmt.Sprintf("no annotation range matches --step %q", opt.Pattern)
		}
		warnf(opt.Warnings, "%s: %s: the whole trace is one window", parse.DisplayName(path), what)
	}
	in.Steps = st
	return in, nil
}

// subdirHost is the host of a file found in a subdirectory of an input
// directory: the subdirectory's first element (run/node0/rank3.json.gz is
// on node0); "" for a file directly in the directory.
func subdirHost(sub string) string {
	if sub == "" {
		return ""
	}
	return strings.Split(filepath.ToSlash(sub), "/")[0]
}

// profilerName is torch.profiler's default trace file name,
// {hostname}_{pid}[.{timestamp}].pt.trace.json[.gz]
// (tensorboard_trace_handler's worker name). A host name has no
// underscore (RFC 1123), which keeps names such as HTA's
// rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz out.
var profilerName = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9.-]*)_[0-9]+(\.[0-9]+)?\.pt\.trace\.json(\.gz)?$`)

// fileHost is the host a trace file's name gives, "" when it gives none.
func fileHost(path string) string {
	if m := profilerName.FindStringSubmatch(filepath.Base(path)); m != nil {
		return m[1]
	}
	return ""
}

// rankName finds a rank in a trace file's name: vLLM's worker names
// ({instance}-rank-{N}.{time}.pt.trace.json.gz), HTA's rank-N.… and
// rank_N, rankN.
var rankName = regexp.MustCompile(`(?:^|[-_.])rank[-_]?([0-9]{1,6})(?:[-_.]|$)`)

// fileRank is the rank a trace file's name gives, and whether it gives
// one.
func fileRank(path string) (int, bool) {
	m := rankName.FindStringSubmatch(strings.ToLower(filepath.Base(path)))
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// eachError writes all but the last of the errors joined in err, one line
// each as the command prints the last, so every unreadable input is
// named.
func eachError(w io.Writer, err error) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	errs := j.Unwrap()
	for _, err := range errs[:len(errs)-1] {
		warnf(w, "%v", err)
	}
	return errs[len(errs)-1]
}

func warnf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "traceq: "+format+"\n", args...)
	}
}

// truncated writes the warning about a truncated trace, an error with
// Strict.
func truncated(opt Options, path string, t *trace.Trace) error {
	if tr := t.Truncated; tr != nil {
		events := "events"
		if tr.Events == 1 {
			events = "event"
		}
		msg := fmt.Sprintf("%s: truncated: %s; read the %d complete %s before the cut", parse.DisplayName(path), tr.Reason, tr.Events, events)
		if opt.Strict {
			return errors.New(msg)
		}
		warnf(opt.Warnings, "warning: %s", msg)
	}
	return nil
}

// odd writes the one-line summary of an input's odd events (the trace's
// and its step markers').
func odd(opt Options, path string, anomalies []trace.Anomaly) {
	if len(anomalies) == 0 || opt.Warnings == nil {
		return
	}
	var n int64
	var parts []string
	for _, a := range anomalies {
		n += a.Count
		parts = append(parts, fmt.Sprintf("%d %s", a.Count, a.What))
	}
	events := fmt.Sprintf("%d odd events", n)
	if n == 1 {
		events = "1 odd event"
	}
	if opt.Verbose {
		warnf(opt.Warnings, "%s: %s:", parse.DisplayName(path), events)
		for _, a := range anomalies {
			fmt.Fprintf(opt.Warnings, "  %d × %s (first: %s)\n", a.Count, a.What, a.Example)
		}
		return
	}
	warnf(opt.Warnings, "%s: %s: %s (--verbose lists them)", parse.DisplayName(path), events, strings.Join(parts, "; "))
}

// parsed is the outcome of parsing one input file: its model and steps.
type parsed struct {
	t     *trace.Trace
	steps *step.Steps
	err   error
}

// parseFiles parses paths concurrently and returns a channel per file, in
// order, that delivers its outcome. At most maxParallelFiles models are
// alive at once: a file's slot is taken when its parse starts and given
// back when the caller calls done with its index (its model dropped or
// kept). Call the returned cancel when done: files not yet started are
// then skipped, and it waits for the parses in flight to end.
func parseFiles(paths []string, opt Options) (outs []chan parsed, done func(i int), cancel func()) {
	var prog *progress
	if opt.Progress != nil {
		prog = newProgress(opt.Progress, paths)
		prog.run()
	}
	outs = make([]chan parsed, len(paths))
	for i := range outs {
		outs[i] = make(chan parsed, 1)
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	sem := make(chan struct{}, min(filesInFlight, max(1, runtime.GOMAXPROCS(0))))
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, p := range paths {
			select {
			case sem <- struct{}{}:
			case <-quit:
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if testParse != nil {
					testParse(i)
				}
				o := opt.Parse
				if prog != nil {
					o.Progress = func(int64) func(int64) { return prog.counter(i) }
				}
				t, err := readInput(p, o, opt.Stdin)
				var st *step.Steps
				if err == nil {
					// Steps are found here, in parallel; the warnings
					// about them are written in input order.
					st, err = findSteps(t, opt)
				}
				if prog != nil {
					prog.finish(i)
				}
				if testParsed != nil && err == nil {
					testParsed(i, t)
				}
				if err != nil {
					<-sem // no model to wait for
				}
				outs[i] <- parsed{t, st, err}
			}()
		}
	}()
	done = func(int) { <-sem }
	var once sync.Once
	cancel = func() {
		once.Do(func() {
			close(quit)
			wg.Wait()
			if prog != nil {
				prog.stop()
			}
		})
	}
	return outs, done, cancel
}

// readInput parses one input: a file, or standard input for "-".
func readInput(path string, opt parse.Options, stdin io.Reader) (*trace.Trace, error) {
	if path != parse.Stdin {
		return parse.File(path, opt)
	}
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	return parse.Read(path, stdin, opt)
}
