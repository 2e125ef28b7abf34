package report

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/traceq/traceq/render/chart"
	"github.com/traceq/traceq/window"
)

// run is one run of a report's inputs: its name and its inputs, by index.
type run struct {
	name   string
	inputs []int
}

// runName is an input's run (docs/ranks.md#runs), or its file's name for
// an input no run was assigned to.
func runName(in window.Input) string {
	if in.Run != "" {
		return in.Run
	}
	return Slug(in.Path)
}

// runsOf lists the runs of inputs in input order.
func runsOf(inputs []window.Input) []run {
	var runs []run
	at := map[string]int{}
	for i, in := range inputs {
		n := runName(in)
		j, ok := at[n]
		if !ok {
			j = len(runs)
			at[n] = j
			runs = append(runs, run{name: n})
		}
		runs[j].inputs = append(runs[j].inputs, i)
	}
	return runs
}

// Title names inputs in a report's title: their runs, "A → B" for two (a
// before and an after), the first and the last when many.
func Title(inputs []window.Input) string {
	return runsTitle(inputs, func(s string) string { return s })
}

// chartTitle names inputs in a chart's title, which must fit its width:
// as Title, each run's name clipped in the middle.
func chartTitle(inputs []window.Input) string {
	return runsTitle(inputs, func(s string) string { return chart.ClipMiddle(s, chart.RunLabelRunes) })
}

func runsTitle(inputs []window.Input, name func(string) string) string {
	runs := runsOf(inputs)
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = name(r.name)
	}
	switch s := strings.Join(names, ", "); {
	case len(names) == 2:
		return names[0] + " → " + names[1]
	case len(names) > 2 && len(s) > 60:
		return fmt.Sprintf("%s … %s (%d runs)", names[0], names[len(names)-1], len(names))
	default:
		return s
	}
}

// rankOf is the rank an input's trace gives, or -1.
func rankOf(in window.Input) int {
	if in.Rank == nil {
		return -1
	}
	return *in.Rank
}

// memberName names an input within its run: "rank 3", or its file's name
// when the trace gives no rank.
func memberName(in window.Input) string {
	if r := rankOf(in); r >= 0 {
		return "rank " + strconv.Itoa(r)
	}
	return filepath.Base(in.Path)
}

// InputTitle names input i for a heading: its run, and its rank (or file)
// when the run has several inputs.
func InputTitle(inputs []window.Input, i int) string {
	return inputTitle(inputs, i, runName(inputs[i]))
}

// chartInputTitle is InputTitle with the run's name clipped for a chart.
func chartInputTitle(inputs []window.Input, i int) string {
	return inputTitle(inputs, i, chart.ClipMiddle(runName(inputs[i]), chart.RunLabelRunes))
}

func inputTitle(inputs []window.Input, i int, name string) string {
	n := runName(inputs[i])
	for j, in := range inputs {
		if j != i && runName(in) == n {
			return name + " · " + memberName(inputs[i])
		}
	}
	return name
}

// inputSlugs names the per-input chart files: the run, and the rank (or
// file) when the run has several inputs; equal slugs get -2, -3….
func inputSlugs(inputs []window.Input) []string {
	out := make([]string, len(inputs))
	seen := map[string]int{}
	for _, r := range runsOf(inputs) {
		for _, i := range r.inputs {
			s := Slug(r.name)
			if len(r.inputs) > 1 {
				if rk := rankOf(inputs[i]); rk >= 0 {
					s += "-rank" + strconv.Itoa(rk)
				} else {
					s += "-" + Slug(inputs[i].Path)
				}
			}
			seen[s]++
			if k := seen[s]; k > 1 {
				s += "-" + strconv.Itoa(k)
			}
			out[i] = s
		}
	}
	return out
}

// DirName is a file-name-safe name for the chart directory of a report on
// inputs: the run, "A-vs-B" for two, the first and a count for more.
func DirName(inputs []window.Input) string {
	runs := runsOf(inputs)
	switch len(runs) {
	case 0:
		return "report"
	case 1:
		return Slug(runs[0].name)
	case 2:
		return Slug(runs[0].name) + "-vs-" + Slug(runs[1].name)
	}
	return fmt.Sprintf("%s-and-%d-more", Slug(runs[0].name), len(runs)-1)
}

// Slug is a file-name-safe short name of an input path or a run: its base
// name without trace extensions.
func Slug(p string) string {
	b := filepath.Base(strings.TrimRight(p, "/"))
	for _, ext := range []string{".gz", ".json", ".sqlite", ".pt.trace", ".trace"} {
		b = strings.TrimSuffix(b, ext)
	}
	var sb strings.Builder
	for _, r := range b {
		if r == '-' || r == '_' || r == '.' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	if sb.Len() == 0 || sb.String() == "." || sb.String() == ".." {
		return "input"
	}
	return sb.String()
}
