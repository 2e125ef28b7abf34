package efficiency

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// tableOf builds the window table of inputs, as the loader does.
func tableOf(t *testing.T, ins ...window.Input) *window.Table {
	t.Helper()
	tbl, err := window.Build(ins, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// builder makes small traces with attributes by hand.
type builder struct {
	t     *trace.Trace
	names map[string]trace.NameID
	in    *trace.AttrInterner
}

func newBuilder(device string, sms int) *builder {
	b := &builder{t: &trace.Trace{Procs: []trace.Proc{{PID: 1, Rank: -1}}}, names: map[string]trace.NameID{}, in: trace.NewAttrInterner()}
	b.t.Meta = trace.Meta{Format: trace.FormatChrome, Rank: -1, WorldSize: -1, Devices: []trace.Device{{ID: 0, Name: device, SMs: sms}}}
	b.t.Ops = []trace.Op{{}}
	b.name("")
	return b
}

func (b *builder) name(s string) trace.NameID {
	if id, ok := b.names[s]; ok {
		return id
	}
	id := trace.NameID(len(b.t.Names))
	b.t.Names = append(b.t.Names, s)
	b.names[s] = id
	return id
}

// arg is "TYPE:d1,d2" for a tensor, "=VALUE" for a scalar, "" for None.
func (b *builder) op(start trace.Time, name string, args ...string) trace.OpID {
	sig := trace.OpSig{Name: b.name(name)}
	for _, a := range args {
		var oa trace.OpArg
		switch {
		case strings.HasPrefix(a, "="):
			oa = trace.OpArg{Type: b.name("Scalar"), Dims: []int64{}, Value: b.name(a[1:])}
		case a == "":
			oa = trace.OpArg{Dims: []int64{}}
		default:
			i := strings.LastIndexByte(a, ':')
			typ, dims := a[:i], a[i+1:]
			oa = trace.OpArg{Type: b.name(typ), Dims: []int64{}}
			for _, d := range strings.Split(dims, ",") {
				if d != "" {
					var v int64
					fmt.Sscan(d, &v)
					oa.Dims = append(oa.Dims, v)
				}
			}
		}
		sig.Args = append(sig.Args, oa)
	}
	id := b.in.Sig(name+fmt.Sprint(args), func() trace.OpSig { return sig })
	b.t.Ops = append(b.t.Ops, trace.Op{Start: start, Dur: 1000, Sig: id})
	return trace.OpID(len(b.t.Ops) - 1)
}

func (b *builder) attr(op trace.OpID, kernel string, grid [3]int32) trace.AttrID {
	a := trace.Attr{Op: op}
	if kernel != "" {
		a.Kernel = b.name(kernel)
	}
	if grid != [3]int32{} {
		a.Config = b.in.Config(trace.Config{Grid: grid, Block: [3]int32{256, 1, 1}, SharedMem: -1, DynamicSharedMem: -1})
	}
	return b.in.Attr(a)
}

func (b *builder) kernel(start trace.Time, dur int64, name string, corr int64, attr trace.AttrID) {
	b.t.Activities = append(b.t.Activities, trace.Activity{Start: start, Dur: dur, Corr: corr, Name: b.name(name), Stream: 7, Attr: attr})
}

func (b *builder) launch(start trace.Time, name string, corr int64, attr trace.AttrID) {
	b.t.Launches = append(b.t.Launches, trace.Launch{Start: start, Dur: 100, Corr: corr, Thread: 1, Name: b.name(name), Attr: attr})
}

func (b *builder) done(t *testing.T) *trace.Trace {
	b.t.Attrs, b.t.Configs, b.t.OpSigs = b.in.Tables()
	if len(b.t.Ops) == 1 {
		b.t.Ops = nil
	}
	b.t.Sort()
	if err := b.t.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return b.t
}

const (
	gemmK   = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
	splitK  = "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, false, false, false>(cublasLt::cublasSplitKParams<float>)"
	rmsK    = "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)"
	pagedK  = "void vllm::paged_attention_v2_kernel<__nv_bfloat16>(float*)"
	ncclK   = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	memcpyK = "Memcpy HtoD (Pinned -> Device)"
	bf      = "c10::BFloat16"
)

// A prefill step launched op by op and a decode step replayed from a CUDA
// graph whose capture trace names its ops, on an H100 SXM (132 SMs,
// 989.5 TFLOP/s bf16, 3.35 TB/s).
func handTraces(t *testing.T) (window.Input, Capture) {
	b := newBuilder("NVIDIA H100 80GB HBM3", 132)
	mm := b.op(1000, "aten::mm", bf+":64,4096", bf+":4096,4096")
	paged := b.op(3000, "vllm::unified_attention_with_output", bf+":64,32,128", bf+":64,8,128", bf+":64,8,128", bf+":64,32,128")
	// Prefill: the mm's two kernels (15 µs on 32 blocks, 5 µs on 264),
	// the paged attention, a memcpy and an all-reduce without ops.
	b.launch(1000, "cudaLaunchKernel", 11, b.attr(mm, "", [3]int32{}))
	b.kernel(10_000, 15_000, gemmK, 11, b.attr(mm, "", [3]int32{32, 1, 1}))
	b.launch(1100, "cudaLaunchKernel", 12, b.attr(mm, "", [3]int32{}))
	b.kernel(25_000, 5_000, splitK, 12, b.attr(mm, "", [3]int32{132, 2, 1}))
	b.launch(3000, "cudaLaunchKernel", 13, b.attr(paged, "", [3]int32{}))
	b.kernel(30_000, 10_000, pagedK, 13, b.attr(paged, "", [3]int32{64, 1, 1}))
	b.t.Activities = append(b.t.Activities, trace.Activity{Start: 40_000, Dur: 3_000, Corr: 14, Name: b.name(memcpyK), Stream: 7, Kind: trace.KindMemcpy})
	b.kernel(43_000, 8_000, ncclK, 15, b.attr(0, "", [3]int32{24, 1, 1}))
	// Decode: one graph launch; its kernels have no op.
	b.launch(60_000, "cudaGraphLaunch", 500, 0)
	b.kernel(70_000, 1_000, rmsK, 500, b.attr(0, "", [3]int32{64, 1, 1}))
	b.kernel(71_000, 12_000, gemmK, 500, b.attr(0, "", [3]int32{32, 1, 1}))
	b.kernel(83_000, 4_000, pagedK, 500, b.attr(0, "", [3]int32{1, 32, 4}))
	tr := b.done(t)
	steps := &step.Steps{List: []step.Step{{Index: 0, Kind: step.Prefill}, {Index: 1, Kind: step.Decode}}}
	for i := range tr.Activities {
		s := int32(0)
		if tr.Activities[i].Start >= 60_000 {
			s = 1
		}
		steps.Of = append(steps.Of, s)
	}

	// The capture: a fill outside the graph, then the graph's three
	// launches naming their kernels and ops.
	c := newBuilder("NVIDIA H100 80GB HBM3", 132)
	fill := c.op(100, "aten::fill_", "long int:64", "=0")
	rms := c.op(1000, "_C::rms_norm", bf+":64,4096", bf+":64,4096", bf+":4096", "=1e-05")
	cmm := c.op(2000, "aten::mm", bf+":64,4096", bf+":4096,4096")
	cpaged := c.op(3000, "vllm::unified_attention_with_output", bf+":64,32,128", bf+":64,8,128", bf+":64,8,128", bf+":64,32,128")
	c.launch(100, "cudaLaunchKernel", 1, c.attr(fill, "fill", [3]int32{1, 1, 1}))
	c.launch(1000, "cudaLaunchKernel", 2, c.attr(rms, rmsK, [3]int32{64, 1, 1}))
	c.launch(2000, "cudaLaunchKernel", 3, c.attr(cmm, gemmK, [3]int32{32, 1, 1}))
	c.launch(3000, "cudaLaunchKernel", 4, c.attr(cpaged, pagedK, [3]int32{1, 32, 4}))
	return window.Input{Path: "exec.json", Run: "exec", Trace: tr, Steps: steps}, Capture{Path: "capture.json", Trace: c.done(t)}
}

func TestAnalyzeByHand(t *testing.T) {
	in, capt := handTraces(t)
	res := Analyze(tableOf(t, in), Options{Captures: []Capture{capt}})
	if len(res.Devices) != 1 || res.Devices[0].Spec == nil || res.Devices[0].Spec.Name != "H100 SXM" {
		t.Fatalf("devices %+v", res.Devices)
	}
	// The mm: 2·64·4096·4096 = 2,147,483,648 FLOPs, (64·4096 + 4096·4096 +
	// 64·4096)·2 = 34,603,008 bytes: 2170.3 → 2171 ns of compute, 10329.3
	// → 10330 ns of memory. rms_norm: (2·64·4096 + 4096)·2 = 1,056,768
	// bytes, 315.5 → 316 ns.
	const mmRoof, rmsRoof = 10_330, 316
	steps := map[step.Class]StepRow{}
	for _, s := range res.Steps {
		steps[s.Class] = s
	}
	pre, dec := steps[step.ClassOf(step.Prefill)], steps[step.ClassOf(step.Decode)]
	// Prefill: 15+5+10+3+8 µs; modelled the mm's 20 µs; the rest measured.
	if pre.KernelNS != 41_000 || pre.ModelledNS != 20_000 || pre.RooflineNS != mmRoof || pre.SpeedOfLightNS != mmRoof+21_000 || pre.Windows != 1 || pre.Steps != 1 {
		t.Errorf("prefill %+v", pre)
	}
	// Decode: rms 1 µs and the mm 12 µs priced through the capture; the
	// paged attention's 4 µs measured.
	if dec.KernelNS != 17_000 || dec.ModelledNS != 13_000 || dec.RooflineNS != mmRoof+rmsRoof || dec.SpeedOfLightNS != mmRoof+rmsRoof+4_000 ||
		dec.ReplayNS != 17_000 || dec.MatchedNS != 17_000 || dec.SpanP50 != 17_000 {
		t.Errorf("decode %+v", dec)
	}
	if len(res.Graphs) != 1 || res.Graphs[0].Replays != 1 || res.Graphs[0].Kernels != 3 || res.Graphs[0].Matched != 3 || res.Graphs[0].Captures[0] != "capture.json" {
		t.Errorf("graphs %+v", res.Graphs)
	}
	// The mm's row: one eager call and one replayed, 32 µs of kernels, its
	// work twice; efficiency 20660/32000.
	var mmRow *OpRow
	for i := range res.Ops {
		if res.Ops[i].Name == "aten::mm" {
			mmRow = &res.Ops[i]
		}
	}
	if mmRow == nil || mmRow.Instances != 2 || mmRow.KernelNS != 32_000 || mmRow.FLOPs != 2*2_147_483_648 || mmRow.Bytes != 2*34_603_008 ||
		mmRow.RooflineNS != 2*mmRoof || mmRow.Bound != MemoryBound || !mmRow.Modelled || mmRow.Category.String() != "gemm/cublas" ||
		len(mmRow.Kernels) != 2 || mmRow.Kernels[0] != gemmK || mmRow.Efficiency() != 20_660.0/32_000 {
		t.Errorf("mm row %+v", mmRow)
	}
	// SM coverage of the mm's kernels: 32/132 over 15+12 µs, 1 over 5 µs.
	if want := (32.0/132*27_000 + 5_000) / 32_000; mmRow != nil && (mmRow.SM.KnownNS != 32_000 || mmRow.SM.Value() != want) {
		t.Errorf("mm coverage %v over %d, want %v", mmRow.SM.Value(), mmRow.SM.KnownNS, want)
	}
	// Per kernel name: the gemm kernel ran 15 µs eager and 12 µs replayed,
	// all priced (its share of the mm's roofline: 7747 of the eager
	// call's 10330 split 15:5, and all 10330 of the replayed one); the
	// paged attention's 14 µs not priced; coverage from every kernel.
	kernels := map[string]KernelRow{}
	for _, k := range res.Kernels {
		kernels[k.Name] = k
	}
	if g := kernels[gemmK]; g.KernelNS != 27_000 || g.ModelledNS != 27_000 || g.RooflineNS != 7747+mmRoof || g.SM.KnownNS != 27_000 {
		t.Errorf("gemm kernel row %+v", g)
	}
	if p := kernels[pagedK]; p.KernelNS != 14_000 || p.ModelledNS != 0 || math.Abs(p.SM.Value()-(64.0/132*10_000+128.0/132*4_000)/14_000) > 1e-12 {
		t.Errorf("paged kernel row %+v", p)
	}
	// The paged attention is not modelled, and says why.
	for _, r := range res.Ops {
		if r.Name == "vllm::unified_attention_with_output" && (r.Modelled || r.Instances != 2 || r.KernelNS != 14_000 || !strings.Contains(r.Note, "paged attention")) {
			t.Errorf("paged row %+v", r)
		}
	}
	// The prefill's gemm category: both mm kernels, the FLOPs split 3:1
	// by duration and adding up.
	for _, c := range res.Categories {
		if c.Class == step.ClassOf(step.Prefill) && c.Category.String() == "gemm/cublas" {
			if c.KernelNS != 20_000 || c.ModelledNS != 20_000 || c.FLOPs != 2_147_483_648 || c.RooflineNS != mmRoof {
				t.Errorf("prefill gemm %+v", c)
			}
		}
	}
}

// Without the capture, the decode step's kernels are replays nothing
// prices: measured, and said.
func TestAnalyzeWithoutCapture(t *testing.T) {
	in, _ := handTraces(t)
	res := Analyze(tableOf(t, in), Options{Filter: step.Only(step.ClassOf(step.Decode))})
	if len(res.Steps) != 1 {
		t.Fatalf("steps %+v", res.Steps)
	}
	d := res.Steps[0]
	if d.ModelledNS != 0 || d.SpeedOfLightNS != 17_000 || d.ReplayNS != 17_000 || d.MatchedNS != 0 {
		t.Errorf("decode %+v", d)
	}
	if len(res.Graphs) != 1 || res.Graphs[0].Matched != 0 || res.Graphs[0].Kernels != 3 {
		t.Errorf("graphs %+v", res.Graphs)
	}
}

// An unknown device prices nothing; --gpu gives it a row.
func TestAnalyzeUnknownDevice(t *testing.T) {
	in, _ := handTraces(t)
	in.Trace.Meta.Devices[0].Name = "NVIDIA H800"
	res := Analyze(tableOf(t, in), Options{Filter: step.Only(step.ClassOf(step.Prefill))})
	if res.Devices[0].Spec != nil || res.Steps[0].ModelledNS != 0 {
		t.Fatalf("unknown device priced: %+v", res.Steps[0])
	}
	for _, r := range res.Ops {
		if r.Name == "aten::mm" && (r.Modelled || !strings.Contains(r.Note, "unknown device")) {
			t.Errorf("mm row %+v", r)
		}
	}
	res = Analyze(tableOf(t, in), Options{Filter: step.Only(step.ClassOf(step.Prefill)), GPU: gpu(t, "H100 SXM")})
	if !res.Devices[0].ByFlag || res.Steps[0].RooflineNS != 10_330 {
		t.Errorf("--gpu: %+v %+v", res.Devices[0], res.Steps[0])
	}
}
