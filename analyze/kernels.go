package analyze

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/trace"
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

// KernelStat is one row of the per-kernel table.
type KernelStat struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	Dist
	// Share is TotalNS over the sum of TotalNS of all rows of the table
	// (before Limit), nsys's "Time (%)".
	Share  float64 `json:"share"`
	Path   string  `json:"path,omitempty"`
	Device *int32  `json:"device,omitempty"`
}

// Kernels computes the per-kernel-name statistics of the inputs: for each
// name, over its activities, the count, total, mean, median, min, max and
// sample standard deviation of the durations.
func Kernels(inputs []Input, opt KernelOptions) []KernelStat {
	cl := opt.classifier()
	type key struct {
		name   string
		input  int
		device int32
	}
	durs := map[key][]int64{}
	cats := map[key]string{}
	for ii, in := range inputs {
		t := in.Trace
		// Gather per (name id, device) of this input first: hashing a
		// small struct instead of long kernel names, with each duration
		// slice allocated once at its final size (a trace holds millions
		// of activities and a few hundred names).
		type local struct {
			name   trace.NameID
			device int32
		}
		keep := func(i int) bool {
			a := &t.Activities[i]
			if a.Kind != trace.KindKernel && !opt.MemOps {
				return false
			}
			return opt.Kind == "" || stepKindOf(in, i) == opt.Kind
		}
		idx := map[local]int{}
		var order []local
		var counts []int
		for i := range t.Activities {
			if !keep(i) {
				continue
			}
			a := &t.Activities[i]
			l := local{name: a.Name}
			if opt.PerDevice {
				l.device = a.Device
			}
			j, ok := idx[l]
			if !ok {
				j = len(order)
				idx[l] = j
				order = append(order, l)
				counts = append(counts, 0)
			}
			counts[j]++
		}
		lists := make([][]int64, len(order))
		for j, n := range counts {
			lists[j] = make([]int64, 0, n)
		}
		catOf := make([]string, len(t.Names))
		for i := range t.Activities {
			if !keep(i) {
				continue
			}
			a := &t.Activities[i]
			l := local{name: a.Name}
			if opt.PerDevice {
				l.device = a.Device
			}
			j := idx[l]
			lists[j] = append(lists[j], a.Dur)
			if catOf[a.Name] == "" {
				switch a.Kind {
				case trace.KindMemcpy:
					catOf[a.Name] = "memcpy/memcpy"
				case trace.KindMemset:
					catOf[a.Name] = "memcpy/memset"
				default:
					catOf[a.Name] = cl.Classify(t.Names[a.Name])
				}
			}
		}
		for j, l := range order {
			k := key{name: t.Names[l.name], input: -1, device: 0}
			if opt.PerDevice {
				k.input, k.device = ii, l.device
			}
			if durs[k] == nil {
				durs[k] = lists[j]
			} else {
				durs[k] = append(durs[k], lists[j]...)
			}
			cats[k] = catOf[l.name]
		}
	}
	var total int64
	out := make([]KernelStat, 0, len(durs))
	for k, ds := range durs {
		ks := KernelStat{Name: k.name, Category: cats[k], Dist: summarize(ds)}
		total += ks.Total
		if opt.PerDevice {
			ks.Path = inputs[k.input].Path
			d := k.device
			ks.Device = &d
		}
		out = append(out, ks)
	}
	for i := range out {
		out[i].Share = ratio(out[i].Total, total)
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

// stepKindOf is the step kind of activity i of in.
func stepKindOf(in Input, i int) string {
	if in.Steps == nil {
		return KindAll
	}
	return stepKind(in, in.Steps.Of[i])
}
