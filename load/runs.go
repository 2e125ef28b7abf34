package load

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/window"
)

// source is what one command-line argument named: a directory (of rank
// files) or a file, and the inputs it gave, by index.
type source struct {
	Arg    string
	Dir    bool
	Inputs []int
}

// assignRuns sets the Run of every input (docs/ranks.md#runs). A run is the set of traces of
// one job:
//   - a directory argument is a run, named after the directory;
//   - consecutive file arguments that are different ranks of one
//     distributed run (each trace says its rank, all the same world size
//     > 1) form one run, named after their common directory;
//   - any other file is a run of one, named after the file.
//
// Names are made unique with -2, -3… in argument order.
func assignRuns(tbl *window.Table, sources []source) {
	inputs := tbl.Inputs
	seen := map[string]int{}
	name := func(n string) string {
		seen[n]++
		if k := seen[n]; k > 1 {
			return n + "-" + strconv.Itoa(k)
		}
		return n
	}
	set := func(idx []int, run string) {
		for _, i := range idx {
			inputs[i].Run = run
		}
	}
	defer tbl.NameRuns()
	for i := 0; i < len(sources); i++ {
		s := sources[i]
		if s.Dir {
			set(s.Inputs, name(DirRun(s.Arg)))
			continue
		}
		// A file: extend over the following files while they are further
		// ranks of the same run.
		group := append([]int(nil), s.Inputs...)
		j := i + 1
		for ; j < len(sources) && !sources[j].Dir && rankSet(inputs, append(group, sources[j].Inputs...)); j++ {
			group = append(group, sources[j].Inputs...)
		}
		if j > i+1 {
			set(group, name(commonDirName(inputs, group)))
		} else {
			set(group, name(fileRunName(s.Arg)))
		}
		i = j - 1
	}
}

// DirRun is the name of the run a directory argument stands for: the
// directory's own name.
func DirRun(arg string) string { return filepath.Base(filepath.Clean(arg)) }

// rankSet reports whether inputs idx are distinct ranks of one world.
func rankSet(inputs []window.Input, idx []int) bool {
	ranks := map[int]bool{}
	world := -1
	for _, i := range idx {
		r, w := inputs[i].Rank, inputs[i].WorldSize
		if r == nil || w == nil || *w <= 1 || ranks[*r] || (world >= 0 && *w != world) {
			return false
		}
		ranks[*r], world = true, *w
	}
	return true
}

// commonDirName names a run of loose rank files after the directory
// holding them all, or the first file when they share none.
func commonDirName(inputs []window.Input, idx []int) string {
	dir := filepath.Dir(inputs[idx[0]].Path)
	for _, i := range idx[1:] {
		if filepath.Dir(inputs[i].Path) != dir {
			return fileRunName(inputs[idx[0]].Path)
		}
	}
	if b := filepath.Base(dir); b != "." && b != "/" {
		return b
	}
	return fileRunName(inputs[idx[0]].Path)
}

// fileRunName is a trace file's name without its trace extensions.
func fileRunName(p string) string {
	b := filepath.Base(p)
	for _, ext := range []string{".gz", ".json", ".sqlite", ".pt.trace", ".trace"} {
		b = strings.TrimSuffix(b, ext)
	}
	if b == "" || b == "-" {
		return "stdin"
	}
	return b
}

// MixedRunError is Load's refusal (Options.RefuseMixedRuns) of a run
// whose files disagree: ranks of another run may be in it.
type MixedRunError struct {
	Problems []string // one per disagreement, as the warnings say them
}

func (e *MixedRunError) Error() string {
	return strings.Join(e.Problems, "; ") + ": the files may hold ranks of different runs"
}

// runProblem is one way a run's files disagree.
type runProblem struct {
	what string
	// mixed says it can only come from files of different runs (the same
	// rank twice, two world sizes, more ranks than the world); fewer
	// ranks than the world is a run given in part.
	mixed bool
}

// checkRuns finds the runs of tbl whose files disagree about the world
// they belong to: two files claiming the same rank, different world
// sizes (distributedInfo.world_size), or a rank count other than the
// world size. Ranks whose trace does not say are left out.
func checkRuns(tbl *window.Table) []runProblem {
	var runs []string
	byRun := map[string][]*window.Rank{}
	for i := range tbl.Ranks {
		r := &tbl.Ranks[i]
		if _, ok := byRun[r.Run]; !ok {
			runs = append(runs, r.Run)
		}
		byRun[r.Run] = append(byRun[r.Run], r)
	}
	var out []runProblem
	for _, run := range runs {
		ranks := byRun[run]
		inputs := map[int]bool{}
		for _, r := range ranks {
			inputs[r.Input] = true
		}
		if len(inputs) < 2 {
			continue // one file: nothing to disagree with
		}
		prefix := "run " + run + ": "
		// The same rank in two files.
		at := map[int][]string{} // rank number → the files claiming it
		var numbers []int
		for _, r := range ranks {
			if r.Number == nil {
				continue
			}
			n := *r.Number
			if len(at[n]) == 0 {
				numbers = append(numbers, n)
			}
			if !slices.Contains(at[n], r.Path) {
				at[n] = append(at[n], r.Path)
			}
		}
		slices.Sort(numbers)
		for _, n := range numbers {
			if len(at[n]) > 1 {
				out = append(out, runProblem{prefix + "rank " + strconv.Itoa(n) + " is claimed by " + names(at[n]), true})
			}
		}
		// World sizes.
		world := map[int][]string{}
		var sizes []int
		for _, r := range ranks {
			if r.WorldSize <= 0 {
				continue
			}
			if len(world[r.WorldSize]) == 0 {
				sizes = append(sizes, r.WorldSize)
			}
			if !slices.Contains(world[r.WorldSize], r.Path) {
				world[r.WorldSize] = append(world[r.WorldSize], r.Path)
			}
		}
		slices.Sort(sizes)
		if len(sizes) > 1 {
			var parts []string
			for _, w := range sizes {
				parts = append(parts, "world size "+strconv.Itoa(w)+" in "+names(world[w]))
			}
			out = append(out, runProblem{prefix + "the files disagree on the world size: " + strings.Join(parts, ", "), true})
			continue
		}
		// The rank count against the one world size.
		if len(sizes) == 1 && len(numbers) > 1 && len(numbers) != sizes[0] {
			w := sizes[0]
			var missing []int
			for n := range w {
				if len(at[n]) == 0 {
					missing = append(missing, n)
				}
			}
			switch {
			case len(numbers) > w || numbers[len(numbers)-1] >= w:
				out = append(out, runProblem{fmt.Sprintf("%s%d ranks (up to rank %d) in a world of %d", prefix, len(numbers), numbers[len(numbers)-1], w), true})
			default:
				what := "rank "
				if len(missing) > 1 {
					what = "ranks "
				}
				out = append(out, runProblem{fmt.Sprintf("%s%d of the world's %d ranks: %s%s missing", prefix, len(numbers), w, what, spans(missing)), false})
			}
		}
	}
	return out
}

// spans writes sorted numbers with their runs as ranges: "2-7", "0, 3-5".
func spans(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(ns[i]))
		default:
			parts = append(parts, strconv.Itoa(ns[i])+"-"+strconv.Itoa(ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// names lists paths for a message: "a and b", "a, b and c".
func names(paths []string) string {
	ds := make([]string, len(paths))
	for i, p := range paths {
		ds[i] = parse.DisplayName(p)
	}
	if len(ds) == 1 {
		return ds[0]
	}
	return strings.Join(ds[:len(ds)-1], ", ") + " and " + ds[len(ds)-1]
}

// runsChecked warns about the runs of tbl whose files disagree, or with
// opt.RefuseMixedRuns refuses those that can only be files of different
// runs.
func runsChecked(tbl *window.Table, opt Options) error {
	var refused []string
	for _, p := range checkRuns(tbl) {
		if opt.RefuseMixedRuns && p.mixed {
			refused = append(refused, p.what)
			continue
		}
		warnf(opt.Warnings, "warning: %s", p.what)
	}
	if len(refused) > 0 {
		return &MixedRunError{Problems: refused}
	}
	return nil
}
