package analyze

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// diffAct is one kernel of a hand-made trace: name, device, duration, step.
type diffAct struct {
	name   string
	device int32
	dur    int64
	step   int32
}

// handTrace builds an input from acts; steps lists the step kinds (nil:
// no step markers).
func diffTrace(path string, steps []string, acts []diffAct) window.Input {
	in := trace.NewInterner()
	t := &trace.Trace{Procs: []trace.Proc{{PID: 1, Rank: -1}}, Meta: trace.Meta{Rank: -1, WorldSize: -1}}
	var of []int32
	for i, a := range acts {
		t.Activities = append(t.Activities, trace.Activity{Start: trace.Time(i * 1000), Dur: a.dur, Name: in.ID(a.name), Device: a.device, Stream: 7})
		of = append(of, a.step)
	}
	t.Names = in.Names()
	inp := window.Input{Path: path, Trace: t}
	if steps != nil {
		st := &step.Steps{Of: of}
		for i, k := range steps {
			f, _ := step.ParseFilter(k)
			c, _ := f.Class()
			st.List = append(st.List, step.Step{Index: i, Kind: c.Kind, Marker: k})
		}
		inp.Steps = st
	}
	return inp
}

const (
	gemmA  = "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)"
	gemmB  = "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_relu_bf16_128x64_64x4_tn_align8>(Params)"
	ar     = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	rms    = "void vllm::rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, float)"
	rmsNew = "void vllm::rms_norm_kernel<c10::BFloat16, 16>(c10::BFloat16*, float)"
	silu   = "void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel>(c10::BFloat16*)"
)

func TestCompareHand(t *testing.T) {
	// Before: 2 decode steps on one device. After: 3 decode steps on one
	// device, a new GEMM tile (same short name), AllReduce faster, SiLU
	// gone, a new kernel name that shares no short name.
	before := diffTrace("b", []string{"decode", "decode"}, []diffAct{
		{gemmA, 0, 1000, 0}, {ar, 0, 600, 0}, {rms, 0, 100, 0}, {silu, 0, 50, 0},
		{gemmA, 0, 1000, 1}, {ar, 0, 600, 1}, {rms, 0, 100, 1}, {silu, 0, 50, 1},
	})
	after := diffTrace("a", []string{"decode", "decode", "decode"}, []diffAct{
		{gemmB, 0, 900, 0}, {ar, 0, 300, 0}, {rmsNew, 0, 100, 0}, {"triton_poi_fused_mul_0", 0, 40, 0},
		{gemmB, 0, 900, 1}, {ar, 0, 300, 1}, {rmsNew, 0, 100, 1}, {"triton_poi_fused_mul_0", 0, 40, 1},
		{gemmB, 0, 900, 2}, {ar, 0, 300, 2}, {rmsNew, 0, 101, 2}, {"triton_poi_fused_mul_0", 0, 40, 2},
	})
	// Nanosecond changes: no threshold.
	none := &MinChange{}
	d := Compare(tableOf(t, before), tableOf(t, after), Options{MinChange: none})
	if !d.Comparable || len(d.Kinds) != 1 || len(d.OnlyBefore)+len(d.OnlyAfter) != 0 || d.Kinds[0].Unshared {
		t.Fatalf("comparable %v, %d kinds, %+v", d.Comparable, len(d.Kinds), d)
	}
	k := d.Kinds[0]
	if k.Class != decode || k.BeforeWindows != 2 || k.AfterWindows != 3 || k.BeforeSteps != 2 || k.AfterSteps != 3 {
		t.Errorf("kind %+v", k)
	}
	// Totals: before 3500 ns over 2 windows = 1750; after 2700+900+301+120
	// = 4021 over 3 = 1340.33, rounded to 1340.
	if k.Total.BeforePerStepNS != 1750 || k.Total.AfterPerStepNS != 1340 || k.Total.DeltaNS != -410 {
		t.Errorf("total %+v", k.Total)
	}
	if p := k.Total.DeltaPct; p == nil || *p != float64(-410)/1750*100 {
		t.Errorf("total delta %% %v", p)
	}
	byName := map[string]KernelDiff{}
	for _, kd := range k.Kernels {
		byName[kd.Name] = kd
	}
	want := []struct {
		name, match, change string
		b, a                int64 // per step
		bn, an              int64 // instances
	}{
		{"cutlass::Kernel2", "short_name", changeShrank, 1000, 900, 2, 3},
		{ar, "name", changeShrank, 600, 300, 2, 3},
		{"vllm::rms_norm_kernel", "short_name", changeUnchanged, 100, 100, 2, 3}, // 301/3 = 100.33 → 100
		{silu, "", changeVanished, 50, 0, 2, 0},
		{"triton_poi_fused_mul_0", "", changeAppeared, 0, 40, 0, 3},
	}
	for _, w := range want {
		kd, ok := byName[w.name]
		if !ok {
			t.Errorf("no row for %s among %v", w.name, diffKeys(byName))
			continue
		}
		change := w.change
		if kd.Match != w.match || kd.Change != change || kd.BeforePerStepNS != w.b || kd.AfterPerStepNS != w.a ||
			kd.BeforeInstances != w.bn || kd.AfterInstances != w.an {
			t.Errorf("%s: %+v; want match %q change %s per step %d → %d, instances %d → %d", w.name, kd, w.match, change, w.b, w.a, w.bn, w.an)
		}
	}
	if kd := byName["cutlass::Kernel2"]; !slices.Equal(kd.BeforeNames, []string{gemmA}) || !slices.Equal(kd.AfterNames, []string{gemmB}) {
		t.Errorf("short-name match joins %q and %q", kd.BeforeNames, kd.AfterNames)
	}
	if len(k.Kernels) != 5 {
		t.Errorf("%d kernel rows, want 5", len(k.Kernels))
	}
	// Largest change first: AllReduce (-300), then the GEMM (-100).
	if k.Kernels[0].Name != ar || k.Kernels[1].Name != "cutlass::Kernel2" {
		t.Errorf("order: %s, %s", k.Kernels[0].Name, k.Kernels[1].Name)
	}
	for i := 1; i < len(k.Categories); i++ {
		if abs(k.Categories[i].DeltaNS) > abs(k.Categories[i-1].DeltaNS) {
			t.Errorf("categories not sorted by the size of the change: %+v", k.Categories)
		}
	}
	// The default threshold (1 µs) calls them all unchanged but for the
	// kernels on one side only.
	for _, kd := range Compare(tableOf(t, before), tableOf(t, after), Options{}).Kinds[0].Kernels {
		want := byName[kd.Name].Change
		if want != changeAppeared && want != changeVanished {
			want = changeUnchanged
		}
		if kd.Change != want {
			t.Errorf("%s: %s under the default threshold, want %s", kd.Name, kd.Change, want)
		}
	}
	if got := Compare(tableOf(t, before), tableOf(t, after), Options{Top: 2}).Kinds[0].Kernels; len(got) != 2 || got[0].Name != ar {
		t.Errorf("--top 2: %d rows", len(got))
	}
}

func diffKeys(m map[string]KernelDiff) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestCompareNotComparable(t *testing.T) {
	stepped := diffTrace("s", []string{"decode"}, []diffAct{{gemmA, 0, 10, 0}})
	wholeIn := diffTrace("w", nil, []diffAct{{gemmA, 0, 10, 0}})
	prefillIn := diffTrace("p", []string{"prefill"}, []diffAct{{gemmA, 0, 10, 0}})
	other := diffTrace("o", nil, []diffAct{{ar, 0, 10, 0}})
	for _, tc := range []struct {
		name                  string
		b, a                  window.Input
		comp                  bool
		kinds                 int
		onlyBefore, onlyAfter []step.Class
		unshared              bool
		options               Options
	}{
		{name: "steps vs none", b: stepped, a: wholeIn, onlyBefore: []step.Class{decode}, onlyAfter: []step.Class{whole}},
		{name: "decode vs prefill", b: stepped, a: prefillIn, onlyBefore: []step.Class{decode}, onlyAfter: []step.Class{prefill}},
		{name: "no common category", b: wholeIn, a: other, kinds: 1, unshared: true},
		{name: "same", b: wholeIn, a: wholeIn, comp: true, kinds: 1},
		{name: "kind filter", b: stepped, a: prefillIn, options: Options{Filter: step.Only(decode)}, onlyBefore: []step.Class{decode}},
	} {
		d := Compare(tableOf(t, tc.b), tableOf(t, tc.a), tc.options)
		if d.Comparable != tc.comp || len(d.Kinds) != tc.kinds {
			t.Errorf("%s: comparable %v, %d kinds; want %v, %d", tc.name, d.Comparable, len(d.Kinds), tc.comp, tc.kinds)
		}
		if !slices.Equal(d.OnlyBefore, tc.onlyBefore) || !slices.Equal(d.OnlyAfter, tc.onlyAfter) {
			t.Errorf("%s: only before %v, after %v; want %v, %v", tc.name, d.OnlyBefore, d.OnlyAfter, tc.onlyBefore, tc.onlyAfter)
		}
		if tc.kinds > 0 && d.Kinds[0].Unshared != tc.unshared {
			t.Errorf("%s: unshared %v", tc.name, d.Kinds[0].Unshared)
		}
	}
}

// The verdict rule by hand: threshold first, then k standard errors.
func TestJudge(t *testing.T) {
	// Two sides of 4 windows with a standard deviation of 100 ns: the
	// standard error of the difference is √(100²/4 + 100²/4) = 70.71 ns,
	// 3 of them 212 ns (266 for medians: × √(π/2)).
	sd100 := spread{n: 4, dof: 2, sd: 100}
	one := spread{n: 1}
	none := MinChange{}
	for _, tc := range []struct {
		name          string
		delta, before float64
		b, a          spread
		mc            MinChange
		factor        float64
		want          Verdict
	}{
		{"zero", 0, 5000, sd100, sd100, none, 1, Verdict{changeUnchanged, 100, 100, 212}},
		{"below noise", 211, 5000, sd100, sd100, none, 1, Verdict{changeNoise, 100, 100, 212}},
		{"at noise", -212, 5000, sd100, sd100, none, 1, Verdict{changeShrank, 100, 100, 212}},
		{"above noise", 213, 5000, sd100, sd100, none, 1, Verdict{changeGrew, 100, 100, 212}},
		{"median", 265, 5000, sd100, sd100, none, medianSE, Verdict{changeNoise, 100, 100, 266}},
		{"median above", 266, 5000, sd100, sd100, none, medianSE, Verdict{changeGrew, 100, 100, 266}},
		{"below floor", 999, 5000, sd100, sd100, MinChange{NS: 1000}, 1, Verdict{changeUnchanged, 100, 100, 212}},
		{"at floor", 1000, 5000, sd100, sd100, MinChange{NS: 1000}, 1, Verdict{changeGrew, 100, 100, 212}},
		{"below 1%", -9_999, 1_000_000, sd100, sd100, MinChange{Pct: 1}, 1, Verdict{changeUnchanged, 100, 100, 212}},
		{"at 1%", -10_000, 1_000_000, sd100, sd100, MinChange{Pct: 1}, 1, Verdict{changeShrank, 100, 100, 212}},
		{"one window", 5, 5000, one, sd100, none, 1, Verdict{changeGrew, -1, 100, -1}},
		{"one window per device", 5, 5000, sd100, spread{n: 8}, none, 1, Verdict{changeGrew, 100, -1, -1}},
		{"no spread", 1, 5000, spread{n: 3, dof: 1}, spread{n: 2, dof: 1}, none, 1, Verdict{changeGrew, 0, 0, 0}},
	} {
		if got := judge(tc.delta, tc.before, tc.b, tc.a, tc.mc, tc.factor); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// One device: the sample standard deviation, n − 1: 2, 4, 4, 4, 5, 5,
	// 7, 9 has a population deviation of 2 and a sample one of √(32/7).
	xs := []int64{2, 4, 4, 4, 5, 5, 7, 9}
	if s := spreadOf(xs, make([]int, 8), 1); s.n != 8 || s.dof != 7 || s.sd != math.Sqrt(32.0/7) {
		t.Errorf("spread %+v", s)
	}
	// The same values on two devices whose means differ by 1000: only the
	// deviations from each device's mean count, over 8 − 2 degrees of
	// freedom. Device 0: 2, 4, 5, 7 (mean 4.5, squares 6.25+0.25+0.25+6.25
	// = 13); device 1: 1004, 1004, 1005, 1009 (mean 1005.5, squares
	// 2.25+2.25+0.25+12.25 = 17).
	ys := []int64{2, 1004, 4, 1004, 5, 1005, 7, 1009}
	if s := spreadOf(ys, []int{0, 1, 0, 1, 0, 1, 0, 1}, 2); s.n != 8 || s.dof != 6 || s.sd != math.Sqrt(30.0/6) {
		t.Errorf("two devices: %+v, want sd √5", s)
	}
	// One window per device: no step-to-step spread.
	if s := spreadOf([]int64{7, 9}, []int{0, 1}, 2); s.known() || s.sd != 0 {
		t.Errorf("one window per device: %+v", s)
	}
	for _, tc := range []struct {
		mc   MinChange
		want string
	}{{DefaultMinChange, "1us,1%"}, {MinChange{}, "0"}, {MinChange{NS: 2_000_000}, "2ms"}, {MinChange{NS: 1500, Pct: 0.5}, "1500ns,0.5%"}} {
		if got := tc.mc.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.mc, got, tc.want)
		}
	}
}

// Rounding of the time per token: half up.
func TestDivRound(t *testing.T) {
	for _, tc := range []struct{ a, b, want int64 }{{10, 4, 3}, {9, 4, 2}, {7, 2, 4}, {6, 3, 2}, {5, 0, 0}, {0, 3, 0}} {
		if got := divRound(tc.a, tc.b); got != tc.want {
			t.Errorf("divRound(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestCompareNameInTwoCategories: a generic NCCL kernel takes the
// category of the op its args name, so one name runs as an all-reduce and
// as an all-gather: two rows, each compared with its own (they merged into
// one, of the first category seen, 150 → 110 ns per step).
func TestCompareNameInTwoCategories(t *testing.T) {
	const generic = "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"
	side := func(path string, arNS, agNS int64) window.Input {
		tr := &trace.Trace{
			Names: []string{generic, "cudaLaunchKernel", "allreduce", "_allgather_base", "BFloat16"},
			Procs: []trace.Proc{{PID: 1, Rank: -1}},
			Meta:  trace.Meta{Rank: -1, WorldSize: -1},
		}
		var of []int32
		for s := range 2 {
			for i, d := range []int64{arNS, agNS} {
				corr := int64(s*2 + i + 1)
				at := trace.Time(corr * 1000)
				tr.Activities = append(tr.Activities, trace.Activity{Start: at, Dur: d, Corr: corr, Name: 0, Stream: 7})
				tr.Launches = append(tr.Launches, trace.Launch{Start: at - 10, Dur: 1, Corr: corr, Thread: 1, Name: 1})
				tr.Collectives = append(tr.Collectives, trace.Collective{Source: trace.CollectiveOnKernel, Corr: corr, Op: trace.NameID(2 + i), DType: 4,
					InElems: -1, OutElems: -1, GroupSize: -1})
				of = append(of, int32(s))
			}
		}
		st := &step.Steps{Of: of}
		for i := range 2 {
			st.List = append(st.List, step.Step{Index: i, Kind: step.Decode, Marker: "decode"})
		}
		return window.Input{Path: path, Trace: tr, Steps: st}
	}
	d := Compare(tableOf(t, side("b", 100, 50)), tableOf(t, side("a", 60, 50)), Options{MinChange: &MinChange{}})
	if len(d.Kinds) != 1 {
		t.Fatalf("%d kinds", len(d.Kinds))
	}
	var got []string
	for _, k := range d.Kinds[0].Kernels {
		got = append(got, fmt.Sprintf("%s %s %d→%d %s", k.Category, k.Match, k.BeforePerStepNS, k.AfterPerStepNS, k.Change))
		if k.Name != generic {
			t.Errorf("row %q", k.Name)
		}
	}
	want := []string{"communication/allreduce name 100→60 shrank", "communication/allgather name 50→50 unchanged"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}
