package render

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/step"
)

// GroupNames gives each group a short name for chart axes and comparison
// tables: the input (its path less the directory all inputs share) when
// there are several, the device when an input has several, and the step
// kind with its step count.
func GroupNames(gs []analyze.Group) []string {
	inputs := map[string]bool{}
	devs := map[string]map[int64]bool{}
	for _, g := range gs {
		inputs[g.Rank.Path] = true
		if devs[g.Rank.Path] == nil {
			devs[g.Rank.Path] = map[int64]bool{}
		}
		devs[g.Rank.Path][g.Rank.PID<<32|int64(uint32(g.Device))] = true
	}
	var paths []string
	for _, g := range gs {
		paths = append(paths, g.Rank.Path)
	}
	short := shortPaths(paths)
	out := make([]string, len(gs))
	for i, g := range gs {
		var parts []string
		if len(inputs) > 1 {
			parts = append(parts, clipLeft(short[i], 32))
		}
		if len(devs[g.Rank.Path]) > 1 {
			parts = append(parts, "dev "+strconv.Itoa(int(g.Device)))
		}
		parts = append(parts, KindLabel(g))
		out[i] = Printable(strings.Join(parts, " · "))
	}
	return out
}

// KindLabel names a group's step kind for a label: "decode ×12", "whole
// trace", "outside steps".
func KindLabel(g analyze.Group) string {
	switch {
	case g.Class.Scope == step.Whole:
		return "whole trace"
	case g.Class.Scope == step.Outside:
		return "outside steps"
	case g.Steps > 0:
		return fmt.Sprintf("%s ×%d", g.Class, g.Steps)
	}
	return g.Class.String()
}

// shortPaths names inputs by base name when those differ, else by the
// path less the directory all share.
func shortPaths(paths []string) []string {
	bases := map[string]string{}
	for _, p := range paths {
		b := path.Base(p)
		if q, ok := bases[b]; ok && q != p {
			return trimCommonDir(paths)
		}
		bases[b] = p
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = path.Base(p)
	}
	return out
}

// clipLeft shortens s to n runes keeping its end, where paths differ.
func clipLeft(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// trimCommonDir drops the directory prefix that all paths share.
func trimCommonDir(paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	common := path.Dir(paths[0]) + "/"
	for _, p := range paths[1:] {
		for !strings.HasPrefix(p, common) && common != "" {
			d := path.Dir(strings.TrimSuffix(common, "/"))
			if d == "." || d == "/" || d+"/" == common {
				common = ""
				break
			}
			common = d + "/"
		}
	}
	if common == "./" {
		common = ""
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.TrimPrefix(p, common)
	}
	return out
}
