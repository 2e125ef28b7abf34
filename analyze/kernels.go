package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// KernelOptions selects the per-kernel table.
type KernelOptions struct {
	Options
	// PerDevice splits each name by input and device; otherwise one row per
	// name across all inputs and devices.
	PerDevice bool
	// MemOps includes memcpy and memset activities; nsys's
	// cuda_gpu_kern_sum, which this table mirrors, has kernels only.
	MemOps bool
	// Limit keeps the first N rows (0: all).
	Limit int
}

// KernelStat is one row of the per-kernel table
// (docs/definitions.md#the-kernels-table).
type KernelStat struct {
	Name string
	// Mangled is the raw name the trace recorded when parse demangled it
	// (trace.Trace.Mangled); "" otherwise.
	Mangled  string
	Category classify.Category
	// Dist describes the durations: Total, N (instances), Mean, P50 (the
	// median), Min, Max, StdDev.
	stats.Dist
	// Share is Total over the sum of Total of all rows of the table
	// (before Limit), nsys's "Time (%)".
	Share  float64
	Path   string // set with PerDevice
	Device *int32 // set with PerDevice
}

// Kernels computes the per-kernel-name statistics of a table's inputs:
// for each name, over its activities, the count, total, mean, median,
// min, max and sample standard deviation of the durations. It reads the
// durations from the models.
func Kernels(tbl *window.Table, opt KernelOptions) []KernelStat {
	type key struct {
		name   window.NameID
		cat    window.CatID // folded
		input  int
		device int32
	}
	// Two passes over the activities: count per key, then fill duration
	// slices allocated once at their final size. Keys are looked up per
	// activity as (name id, device) of the input, a small struct; a
	// trace holds millions of activities and a few hundred names, and
	// with many ranks the durations are the largest thing analysis holds.
	gidx := map[key]int{}
	var keys []key
	var counts []int
	var long []bool // a duration of the key needs more than 32 bits
	var cats []classify.Category
	l2g := make([]map[local]int, len(tbl.Inputs)) // per input: local key -> global index
	for ii := range tbl.Inputs {
		in := &tbl.Inputs[ii]
		t := in.Trace
		l2g[ii] = map[local]int{}
		for i := range t.Activities {
			a := &t.Activities[i]
			l, ok := opt.localKey(tbl, ii, i)
			if !ok {
				continue
			}
			g, seen := l2g[ii][l]
			if !seen {
				k := key{name: tbl.ActivityName(ii, i), cat: l.cat, input: -1}
				if opt.PerDevice {
					k.input, k.device = ii, a.Device
				}
				if g, seen = gidx[k]; !seen {
					g = len(keys)
					gidx[k] = g
					keys = append(keys, k)
					counts = append(counts, 0)
					long = append(long, false)
					cats = append(cats, classify.Category{})
				}
				l2g[ii][l] = g
				cats[g] = tbl.Category(l.cat)
			}
			counts[g]++
			if a.Dur > math.MaxInt32 {
				long[g] = true
			}
		}
	}
	// Kernels are shorter than 2.1 s: their durations are held in 32 bits
	// (half the memory; the largest thing analysis holds for many ranks)
	// and summarized as they are.
	durs := make([][]int64, len(keys))
	durs32 := make([][]int32, len(keys))
	for g, n := range counts {
		if long[g] {
			durs[g] = make([]int64, 0, n)
		} else {
			durs32[g] = make([]int32, 0, n)
		}
	}
	for ii := range tbl.Inputs {
		in := &tbl.Inputs[ii]
		t := in.Trace
		for i := range t.Activities {
			a := &t.Activities[i]
			l, ok := opt.localKey(tbl, ii, i)
			if !ok {
				continue
			}
			g := l2g[ii][l]
			if long[g] {
				durs[g] = append(durs[g], a.Dur)
			} else {
				durs32[g] = append(durs32[g], int32(a.Dur))
			}
		}
	}
	var total int64
	out := make([]KernelStat, 0, len(durs))
	for g := range durs {
		var dist stats.Dist
		if long[g] {
			dist = stats.Of(durs[g])
		} else {
			dist = stats.Of(durs32[g])
		}
		durs[g], durs32[g] = nil, nil // summarized: let it go
		k := keys[g]
		ks := KernelStat{Name: tbl.Name(k.name), Mangled: tbl.Mangled(k.name), Category: cats[g], Dist: dist}
		total += ks.Total
		if opt.PerDevice {
			ks.Path = tbl.Inputs[k.input].Path
			d := k.device
			ks.Device = &d
		}
		out = append(out, ks)
	}
	for i := range out {
		out[i].Share = stats.Ratio(out[i].Total, total)
	}
	slices.SortFunc(out, func(a, b KernelStat) int {
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		if c := cmp.Compare(b.N, a.N); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Category.String(), b.Category.String()); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Device != nil && b.Device != nil {
			return cmp.Compare(*a.Device, *b.Device)
		}
		return 0
	})
	if opt.Limit > 0 && len(out) > opt.Limit {
		out = out[:opt.Limit]
	}
	return out
}

// local keys an activity within one input: (name id, folded category,
// device). A name has one category, but for a generic collective kernel
// whose args name its op (window.Table.ActivityCategory).
type local struct {
	name   trace.NameID
	cat    window.CatID
	device int32
}

// localKey returns the key of activity i of input ii, and false when the
// table leaves the activity out (a memory operation without MemOps, a
// window the filter drops).
func (opt KernelOptions) localKey(tbl *window.Table, ii, i int) (local, bool) {
	in := &tbl.Inputs[ii]
	a := &in.Trace.Activities[i]
	if a.Kind != trace.KindKernel && !opt.MemOps {
		return local{}, false
	}
	if !opt.Filter.Keeps(in.Steps.ActivityClass(i)) {
		return local{}, false
	}
	l := local{name: a.Name, cat: tbl.Fold(tbl.ActivityCategory(ii, i))}
	if opt.PerDevice {
		l.device = a.Device
	}
	return l, true
}
