package efficiency

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/traceq/traceq/trace"
)

// capture is a capture trace ready for matching: its launch calls that
// name a kernel, in the order they ran.
type capture struct {
	path     string
	trace    *trace.Trace
	launches []int32 // indices into trace.Launches
	keys     []int32 // the kernels' names as keys shared with the inputs
	grids    [][3]int32
	ops      []trace.OpID
}

// nameKeys numbers raw kernel names across the captures, so that an
// input's names are compared with captured ones as integers.
type nameKeys map[string]int32

// rawName is a name as the trace wrote it: mangled where parse demangled
// it, so that both sides of a match compare the same spelling.
func rawName(t *trace.Trace, id trace.NameID) string {
	if m, ok := t.Mangled[id]; ok {
		return m
	}
	return t.Names[id]
}

// captureSet holds the prepared captures and their name keys.
type captureSet struct {
	caps []*capture
	keys nameKeys
}

func prepareCaptures(cs []Capture) *captureSet {
	set := &captureSet{keys: nameKeys{}}
	for _, c := range cs {
		t := c.Trace
		cp := &capture{path: c.Path, trace: t}
		for i := range t.Launches {
			if t.AttrOf(t.Launches[i].Attr).Kernel != 0 {
				cp.launches = append(cp.launches, int32(i))
			}
		}
		slices.SortStableFunc(cp.launches, func(a, b int32) int {
			la, lb := &t.Launches[a], &t.Launches[b]
			return cmp.Or(cmp.Compare(la.Start, lb.Start), cmp.Compare(la.Corr, lb.Corr))
		})
		for _, li := range cp.launches {
			at := t.AttrOf(t.Launches[li].Attr)
			name := rawName(t, at.Kernel)
			k, ok := set.keys[name]
			if !ok {
				k = int32(len(set.keys))
				set.keys[name] = k
			}
			cp.keys = append(cp.keys, k)
			cp.grids = append(cp.grids, t.ConfigOf(at.Config).Grid)
			cp.ops = append(cp.ops, at.Op)
		}
		set.caps = append(set.caps, cp)
	}
	return set
}

// configOf is the launch configuration of a captured launch.
func (c *capture) configOf(i int32) trace.Config {
	return c.trace.ConfigOf(c.trace.AttrOf(c.trace.Launches[c.launches[i]].Attr).Config)
}

// replays is what the matching found in one input.
type replays struct {
	row    GraphRow
	isRep  []bool // per activity: replayed from a graph
	groups []replayGroup
}

// replayGroup is one graph launch's kernels (indices into Activities, in
// start order) and their alignment with a capture (nil: none matched).
type replayGroup struct {
	kernels []int32
	res     *alignment
}

// alignment pairs a replay's kernels with the launches of capture
// captureIdx (an index into the capture set): pair[k] is kernel k's
// launch (an index into the capture's launches), or -1. Replays with the
// same kernel sequence share one.
type alignment struct {
	capture    int // index among the input's candidate captures, -1 none
	captureIdx int32
	pair       []int32
}

// isGraphLaunch: cudaGraphLaunch, hipGraphLaunch and their driver forms.
func isGraphLaunch(name string) bool { return strings.Contains(name, "GraphLaunch") }

// matchReplays finds t's CUDA-graph replays (the kernels of one graph
// launch share its correlation id) and aligns each with the captures of
// the same rank (docs/definitions.md#cuda-graph-replays). nil when t has
// no graph launch.
func matchReplays(t *trace.Trace, set *captureSet) *replays {
	type pk struct {
		proc int32
		corr int64
	}
	graph := map[pk]int32{}
	for i := range t.Launches {
		l := &t.Launches[i]
		if isGraphLaunch(t.Names[l.Name]) {
			if _, ok := graph[pk{l.Proc, l.Corr}]; !ok {
				graph[pk{l.Proc, l.Corr}] = int32(len(graph))
			}
		}
	}
	if len(graph) == 0 {
		return nil
	}
	r := &replays{isRep: make([]bool, len(t.Activities))}
	// Two passes: count each launch's kernels, then fill one flat slice
	// (no slices grown kernel by kernel: a GB of trace replays millions).
	groupOf := make([]int32, len(t.Activities))
	count := make([]int32, len(graph))
	total := 0
	for i := range t.Activities {
		groupOf[i] = -1
		a := &t.Activities[i]
		if a.Kind != trace.KindKernel || a.Corr == 0 {
			continue
		}
		if g, ok := graph[pk{a.Proc, a.Corr}]; ok {
			groupOf[i] = g
			count[g]++
			total++
			r.isRep[i] = true
		}
	}
	flat := make([]int32, total)
	groups := make([][]int32, len(graph))
	off := 0
	for g, n := range count {
		groups[g] = flat[off : off : off+int(n)]
		off += int(n)
	}
	for i, g := range groupOf {
		if g >= 0 {
			groups[g] = append(groups[g], int32(i))
		}
	}
	var caps []*capture
	var capIdx []int32
	for i, c := range set.caps {
		if c.trace.Meta.Rank < 0 || t.Meta.Rank < 0 || c.trace.Meta.Rank == t.Meta.Rank {
			caps = append(caps, c)
			capIdx = append(capIdx, int32(i))
		}
	}
	keyOf := make([]int32, len(t.Names))
	for i := range keyOf {
		keyOf[i] = -1
		if k, ok := set.keys[rawName(t, trace.NameID(i))]; ok {
			keyOf[i] = k
		}
	}
	cache := map[string]*alignment{}
	used := map[int32]bool{}
	var buf []byte
	var keys []int32
	var grids [][3]int32
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		r.row.Replays++
		keys = slices.Grow(keys[:0], len(g))[:len(g)]
		grids = slices.Grow(grids[:0], len(g))[:len(g)]
		buf = buf[:0]
		for k, i := range g {
			a := &t.Activities[i]
			keys[k] = keyOf[a.Name]
			grids[k] = t.ConfigOf(t.AttrOf(a.Attr).Config).Grid
			buf = binary.LittleEndian.AppendUint32(buf, uint32(keys[k]))
			for _, x := range grids[k] {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(x))
			}
			r.row.Kernels++
			r.row.KernelNS += a.Dur
		}
		res, ok := cache[string(buf)]
		if !ok {
			res = &alignment{capture: -1}
			best, bestScore := 0, int32(math.MinInt32)
			for ci, c := range caps {
				pair, n, score := align(len(keys), len(c.keys), func(i, j int) bool {
					return keys[i] >= 0 && keys[i] == c.keys[j] && gridsAgree(grids[i], c.grids[j])
				})
				if n > best || (n == best && n > 0 && score > bestScore) {
					best, bestScore = n, score
					res = &alignment{capture: ci, captureIdx: capIdx[ci], pair: pair}
				}
			}
			cache[string(buf)] = res
		}
		grp := replayGroup{kernels: g}
		if res.capture >= 0 {
			grp.res = res
			used[res.captureIdx] = true
			for k, i := range g {
				if res.pair[k] >= 0 {
					r.row.Matched++
					r.row.MatchedNS += t.Activities[i].Dur
				}
			}
		}
		r.groups = append(r.groups, grp)
	}
	for i, c := range set.caps {
		if used[int32(i)] {
			r.row.Captures = append(r.row.Captures, c.path)
		}
	}
	return r
}

// gridsAgree: grids that both sides recorded must be equal.
func gridsAgree(a, b [3]int32) bool {
	return a == [3]int32{} || b == [3]int32{} || a == b
}
