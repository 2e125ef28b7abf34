package analyze

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// build makes a trace from (name, device, stream, start, dur) rows.
func build(rows ...act) *trace.Trace {
	in := trace.NewInterner()
	t := &trace.Trace{Procs: []trace.Proc{{PID: 7, Rank: -1}}, Meta: trace.Meta{Rank: -1, WorldSize: -1}}
	for _, r := range rows {
		t.Activities = append(t.Activities, trace.Activity{Name: in.ID(r.name), Device: r.dev, Stream: r.stream,
			Start: trace.Time(r.start), Dur: r.dur, Kind: r.kind})
	}
	t.Names = in.Names()
	t.Sort()
	return t
}

type act struct {
	name        string
	dev, stream int32
	start, dur  int64
	kind        trace.Kind
}

const (
	allreduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	gemm      = "nvjet_tst_128x64_64x8_1x2_h_bz_coopA_TNT"
)

func TestBreakdownOverlap(t *testing.T) {
	// Device 0: an AllReduce on stream 1 overlapping two GEMMs on stream 0;
	// the GEMMs overlap each other by 5 ns. Device 1: one GEMM.
	tr := build(
		act{gemm, 0, 0, 100, 50, trace.KindKernel},       // [100,150)
		act{gemm, 0, 0, 145, 20, trace.KindKernel},       // [145,165)
		act{allreduce, 0, 1, 120, 100, trace.KindKernel}, // [120,220)
		act{"Memcpy HtoD (Pageable -> Device)", 0, 0, 300, 10, trace.KindMemcpy},
		act{gemm, 1, 0, 1000, 7, trace.KindKernel},
	)
	r := breakdownOf(t, Options{}, window.Input{Path: "x", Trace: tr})
	if len(r.Groups) != 2 {
		t.Fatalf("got %d groups, want 2", len(r.Groups))
	}
	g := r.Groups[0]
	// kernel = 50+20+100+10; busy = [100,220) + [300,310) = 130; span = 310-100
	if g.Device != 0 || g.KernelNS != 180 || g.BusyNS != 130 || g.SpanNS != 210 || g.IdleNS != 80 {
		t.Errorf("device 0: %+v", g)
	}
	want := map[string]CategoryStat{
		"communication/allreduce": {KernelNS: 100, BusyNS: 100, Instances: 1},
		"gemm/cublaslt_nvjet":     {KernelNS: 70, BusyNS: 65, Instances: 2},
		"memcpy/memcpy":           {KernelNS: 10, BusyNS: 10, Instances: 1},
	}
	cl := classify.Default()
	if got := cl.Classify(gemm).String(); got != "gemm/cublaslt_nvjet" {
		t.Fatalf("classifier moved: %s is %s; update the test's categories", gemm, got)
	}
	var shares float64
	for _, c := range g.Categories {
		w, ok := want[c.Category.String()]
		if !ok || c.KernelNS != w.KernelNS || c.BusyNS != w.BusyNS || c.Instances != w.Instances {
			t.Errorf("category %s = %+v, want %+v", c.Category, c, w)
		}
		shares += c.Share
	}
	if len(g.Categories) != len(want) || shares < 0.999999 || shares > 1.000001 {
		t.Errorf("categories %+v: want %d summing to share 1", g.Categories, len(want))
	}
	if g.Categories[0].Category.String() != "communication/allreduce" || g.Top[0].TotalNS != 100 || g.Top[1].Instances != 2 {
		t.Errorf("order: categories %+v top %+v", g.Categories, g.Top)
	}
	if g1 := r.Groups[1]; g1.Device != 1 || g1.KernelNS != 7 || g1.BusyNS != 7 || g1.SpanNS != 7 {
		t.Errorf("device 1: %+v", g1)
	}
}

// TestBreakdownRandom compares busy time against a brute-force count over
// every nanosecond of random small traces.
func TestBreakdownRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	names := []string{gemm, allreduce, "rms_norm_kernel"}
	for iter := 0; iter < 200; iter++ {
		var rows []act
		for i := 0; i < 1+rng.Intn(12); i++ {
			rows = append(rows, act{names[rng.Intn(3)], int32(rng.Intn(2)), int32(rng.Intn(3)),
				int64(rng.Intn(200)), int64(rng.Intn(40)), trace.KindKernel})
		}
		tr := build(rows...)
		r := breakdownOf(t, Options{}, window.Input{Path: "x", Trace: tr})
		for _, g := range r.Groups {
			covered := map[int64]bool{}
			var kernel int64
			first, last := int64(1<<62), int64(-1)
			for _, a := range rows {
				if a.dev != g.Device {
					continue
				}
				kernel += a.dur
				first = min(first, a.start)
				last = max(last, a.start+a.dur)
				for x := a.start; x < a.start+a.dur; x++ {
					covered[x] = true
				}
			}
			if g.KernelNS != kernel || g.BusyNS != int64(len(covered)) || g.SpanNS != last-first {
				t.Fatalf("iter %d device %d: kernel/busy/span %d/%d/%d, brute force %d/%d/%d; rows %+v",
					iter, g.Device, g.KernelNS, g.BusyNS, g.SpanNS, kernel, len(covered), last-first, rows)
			}
		}
	}
}

func TestKernelsStats(t *testing.T) {
	tr := build(
		act{gemm, 0, 0, 0, 10, trace.KindKernel},
		act{gemm, 0, 0, 20, 20, trace.KindKernel},
		act{gemm, 1, 0, 50, 40, trace.KindKernel},
		act{gemm, 1, 0, 100, 30, trace.KindKernel},
		act{allreduce, 0, 1, 5, 300, trace.KindKernel},
		act{"Memset (Device)", 0, 0, 400, 3, trace.KindMemset},
	)
	ks := Kernels(tableOf(t, window.Input{Path: "x", Trace: tr}), KernelOptions{})
	if len(ks) != 2 {
		t.Fatalf("got %d rows, want 2 (memset excluded): %+v", len(ks), ks)
	}
	g := ks[1]
	// durations 10, 20, 30, 40: mean 25, median 25, sample sd sqrt(500/3)
	if g.Name != gemm || g.N != 4 || g.Total != 100 || g.Mean != 25 || g.P50 != 25 || g.Min != 10 || g.Max != 40 {
		t.Errorf("gemm row = %+v", g)
	}
	if d := g.StdDev - 12.909944487358056; d > 1e-9 || d < -1e-9 {
		t.Errorf("stddev = %v, want 12.90994...", g.StdDev)
	}
	if ks[0].Share != 0.75 || ks[1].Share != 0.25 {
		t.Errorf("shares = %v, %v; want 0.75, 0.25", ks[0].Share, ks[1].Share)
	}
	per := Kernels(tableOf(t, window.Input{Path: "x", Trace: tr}), KernelOptions{PerDevice: true, MemOps: true})
	var devs []int32
	for _, k := range per {
		if k.Name == gemm {
			devs = append(devs, *k.Device)
		}
	}
	slices.Sort(devs)
	if len(per) != 4 || len(devs) != 2 || devs[0] != 0 || devs[1] != 1 {
		t.Errorf("per-device rows: %+v", per)
	}
}
