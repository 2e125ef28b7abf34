package load

import (
	"path/filepath"
	"strconv"
	"strings"

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
func assignRuns(inputs []window.Input, sources []source) {
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
		m := inputs[i].Trace.Meta
		if m.Rank < 0 || m.WorldSize <= 1 || ranks[m.Rank] || (world >= 0 && m.WorldSize != world) {
			return false
		}
		ranks[m.Rank], world = true, m.WorldSize
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
