package analyze

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
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
// durations the table recorded of each input (window.Durations), so it
// needs no model.
func Kernels(tbl *window.Table, opt KernelOptions) []KernelStat {
	type key struct {
		name   window.NameID
		cat    window.CatID // folded
		input  int
		device int32
	}
	type rec struct {
		key
		d *window.Durations
	}
	// The rows' records first, then one row at a time: its durations
	// merged, described, let go. What the analysis holds beyond the
	// records is the largest row's durations. The records are grouped by
	// sorting them (a row's records are adjacent), not through a map and a
	// list per row: a trace of 100k distinct names has 100k rows.
	n := 0
	for ii := range tbl.Inputs {
		n += len(tbl.Inputs[ii].Durations)
	}
	recs := make([]rec, 0, n)
	for ii := range tbl.Inputs {
		ds := tbl.Inputs[ii].Durations
		for j := range ds {
			d := &ds[j]
			if (!d.Kernel && !opt.MemOps) || !opt.Filter.Keeps(d.Class) {
				continue
			}
			k := key{name: d.Name, cat: tbl.Fold(d.Cat), input: -1}
			if opt.PerDevice {
				k.input, k.device = ii, d.Device
			}
			recs = append(recs, rec{k, d})
		}
	}
	slices.SortStableFunc(recs, func(a, b rec) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.cat, b.cat), cmp.Compare(a.input, b.input), cmp.Compare(a.device, b.device))
	})
	rows := 0
	for i := range recs {
		if i == 0 || recs[i].key != recs[i-1].key {
			rows++
		}
	}
	var total int64
	out := make([]KernelStat, 0, rows)
	var buf64 []int64
	var buf32 []int32
	for lo := 0; lo < len(recs); {
		hi := lo + 1
		for hi < len(recs) && recs[hi].key == recs[lo].key {
			hi++
		}
		row, k := recs[lo:hi], recs[lo].key
		lo = hi
		// Kernels are shorter than 2.1 s: their durations are held in 32
		// bits when they fit (half the memory) and described as they are.
		fits := true
		for _, r := range row {
			fits = fits && r.d.Fits32()
		}
		var dist stats.Dist
		if fits {
			buf32 = buf32[:0]
			for _, r := range row {
				buf32 = window.AppendTo(buf32, r.d)
			}
			dist = stats.Of(buf32)
		} else {
			buf64 = buf64[:0]
			for _, r := range row {
				buf64 = window.AppendTo(buf64, r.d)
			}
			dist = stats.Of(buf64)
		}
		ks := KernelStat{Name: tbl.Name(k.name), Mangled: tbl.Mangled(k.name), Category: tbl.Category(k.cat), Dist: dist}
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
