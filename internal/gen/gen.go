// Package gen writes synthetic vLLM-like Kineto traces together with the
// exact figures an analysis of them must produce. It is test and benchmark
// support: the step tests check traceq against Expected to the nanosecond,
// and the scale benchmarks stream multi-GB traces through Write.
//
// Each rank's trace is built step by step on integer-nanosecond clocks:
// a CPU cursor for the main thread and one "free at" time per GPU stream.
// A step is an execute_context_C(…)_generation_G(…) user_annotation on the
// main thread. Decode steps replay one CUDA graph: one cudaGraphLaunch
// whose correlation id every kernel of the replay shares. Prefill and
// mixed steps launch kernel by kernel (cudaLaunchKernel each), with the
// communication kernels on a second stream. The GPU lags the CPU, so a
// step's last kernels run after its marker has closed and while the next
// step's marker is already open: the case attribution by launch call gets
// right and attribution by time window does not.
//
// Everything the writer decides is recorded in Expected as it is written,
// so Expected is exact by construction, not recomputed from the output.
package gen

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
)

// Config describes the traces to write.
type Config struct {
	// Ranks is the world size written in distributedInfo (0 means 1).
	Ranks int
	// Steps is the number of steps of each rank.
	Steps int
	// DecodeEvery is the length of a prefill-then-decode cycle: steps 0,
	// N, 2N, … are prefill steps and the others decode steps. 0 means
	// every step is a decode step; 1 every step a prefill step.
	DecodeEvery int
	// MixedEvery makes step i a mixed step (chunked prefill alongside
	// decodes) when i%MixedEvery == MixedEvery-1 and it is not a prefill
	// step. 0: no mixed steps.
	MixedEvery int
	// Layers is the number of transformer layers per step (0 means 4).
	// A decode step has 12·Layers+5 kernels.
	Layers int
	// Streams is 1 or 2 (0 means 2): with 2, the all-reduces of eager
	// steps run on a second stream and overlap the compute stream.
	Streams int
	// DropCorrEvery, when > 0, writes every n-th kernel of eager steps
	// without a correlation id; Kineto's GPU-side mirror of the step
	// marker (gpu_user_annotation, always written) then places it.
	DropCorrEvery int
	// Seed makes the output deterministic: the same Config and rank give
	// the same bytes.
	Seed int64
	// SlowCategory and SlowNS make every kernel of that category
	// (classify.Default's, e.g. "attention/fa2") SlowNS longer: a run
	// with one category slowed by a known amount. The random draws do not
	// change, so with the same Seed the kernels of other categories keep
	// their durations.
	SlowCategory string
	SlowNS       int64
	// Shapes writes, for every kernel of an eager step, the CPU op that
	// launched it (a cpu_op event with Input Dims, Input type and Concrete
	// Inputs, as record_shapes=True does), sharing its External id with
	// the launch call and the kernel; gives each kernel family its own
	// launch grid; puts collective args on the NCCL all-reduces; and fills
	// StepExpect.Eff. Decode steps stay graph replays without ops:
	// WriteCapture writes their graph's capture trace. Off, the output is
	// byte for byte what it was before the option existed.
	Shapes bool
	// CaptureBatch is the batch size the decode graph was captured at
	// (its kernels' shapes), at least every decode step's token count
	// (0 means 64).
	CaptureBatch int
}

func (c Config) captureBatch() int64 {
	if c.CaptureBatch <= 0 {
		return 64
	}
	return int64(c.CaptureBatch)
}

func (c Config) layers() int {
	if c.Layers <= 0 {
		return 4
	}
	return c.Layers
}

func (c Config) streams() int {
	if c.Streams == 1 {
		return 1
	}
	return 2
}

// Kind returns the step kind of step i: "prefill", "decode" or "mixed".
func (c Config) Kind(i int) string {
	switch {
	case c.DecodeEvery > 0 && i%c.DecodeEvery == 0:
		return "prefill"
	case c.MixedEvery > 0 && i%c.MixedEvery == c.MixedEvery-1:
		return "mixed"
	}
	return "decode"
}

// Expected is what the analysis of one rank's trace must find.
type Expected struct {
	Rank   int
	Device int32
	PID    int64
	Steps  []StepExpect
	// Activities is the number of GPU activities written (kernels and
	// memcpys); Kernels the kernels among them.
	Activities int64
	Kernels    int64
	// Bytes is the size of the trace written.
	Bytes int64
}

// StepExpect is one step's exact figures on the rank's one device.
type StepExpect struct {
	Index  int
	Kind   string
	Marker string
	// Start and End bound the CPU marker range.
	Start, End trace.Time
	// Activities is the number of GPU activities of the step; AfterEnd
	// how many of them start after the marker range closed.
	Activities int
	AfterEnd   int
	// First is the first activity's start; SpanNS runs from it to the
	// last activity's end; BusyNS is the union of the activities;
	// KernelNS the sum of their durations, split by category in ByCat
	// (classify.Default's categories; memcpys are "memcpy/memcpy").
	First    trace.Time
	SpanNS   int64
	BusyNS   int64
	KernelNS int64
	ByCat    map[string]int64
	// Eff is what an efficiency analysis must find (Config.Shapes only).
	Eff *EffExpect
}

// family is one kind of kernel the generator writes.
type family struct {
	name string
	// lo and hi bound the duration in ns of a decode instance; eager
	// (prefill) instances are scaled by the step's token factor.
	lo, hi int64
	comm   bool // runs on the communication stream in eager steps
}

var (
	fRMS       = family{name: "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, float, int, int)", lo: 2500, hi: 4200}
	fQKV       = family{name: "void marlin::Marlin<(vllm::ScalarTypeId)5, 256, 1, 8, 8, 8, true, 4, 8, false>(int4 const*, int4 const*, int4*, int4*, int4 const*, int4 const*, int*, int, int, int, int, int*, bool, bool, int)", lo: 9000, hi: 14000}
	fRotary    = family{name: "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, int, int, int)", lo: 1800, hi: 2600}
	fCache     = family{name: "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16*, long const*, int, int, int, int, int, int, float const*, float const*)", lo: 1500, hi: 2400}
	fAttnDec   = family{name: "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, true, false, false, false, true, true, false, false>(flash::Flash_fwd_params)", lo: 11000, hi: 19000}
	fAttnPre   = family{name: "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(flash::Flash_fwd_params)", lo: 14000, hi: 24000}
	fOProj     = family{name: "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", lo: 6000, hi: 9000}
	fCustomAR  = family{name: "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", lo: 7000, hi: 16000, comm: true}
	fNCCLAR    = family{name: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", lo: 12000, hi: 30000, comm: true}
	fGateUp    = family{name: "void marlin::Marlin<(vllm::ScalarTypeId)5, 256, 1, 8, 8, 8, true, 4, 8, false>(int4 const*, int4 const*, int4*, int4*, int4 const*, int4 const*, int*, int, int, int, int, int*, bool, bool, int)", lo: 14000, hi: 21000}
	fSilu      = family{name: "void vllm::act_and_mul_kernel<c10::BFloat16, &(c10::BFloat16 vllm::silu_kernel<c10::BFloat16>(c10::BFloat16 const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)", lo: 2000, hi: 3200}
	fDown      = family{name: "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)", lo: 10000, hi: 15000}
	fEmbed     = family{name: "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)", lo: 2000, hi: 3000}
	fFinalNorm = family{name: "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)", lo: 2500, hi: 3500}
	fLMHead    = family{name: "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", lo: 30000, hi: 42000}
	fCast      = family{name: "void at::native::vectorized_elementwise_kernel<4, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)", lo: 3000, hi: 5000}
	fArgmax    = family{name: "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)", lo: 4000, hi: 6000}
)

const memcpyName = "Memcpy HtoD (Pinned -> Device)"

// stepKernels lists the kernels of one step in launch order.
func stepKernels(layers int, prefill bool) []*family {
	ks := []*family{&fEmbed}
	for l := 0; l < layers; l++ {
		attn, ar := &fAttnDec, &fCustomAR
		if prefill {
			attn, ar = &fAttnPre, &fNCCLAR
		}
		ks = append(ks, &fRMS, &fQKV, &fRotary, &fCache, attn, &fOProj, ar, &fRMS, &fGateUp, &fSilu, &fDown, ar)
	}
	return append(ks, &fFinalNorm, &fLMHead, &fCast, &fArgmax)
}

// Time base: Kineto writes absolute µs timestamps near 6.5e12 in the
// traces this mimics; 19 significant digits in ns, beyond float64.
const base = trace.Time(6_520_618_000_000_000)

const (
	computeStream = 7
	commStream    = 13
)

// writer streams one rank's trace.
type writer struct {
	w      *bufio.Writer
	n      int64 // bytes written
	err    error
	buf    []byte
	first  bool
	pid    int64
	device int32
	ext    int64 // External id counter
	// opExt, when not 0, is the External id of the next event instead of
	// a fresh one: a CPU op's, shared by its launch and its kernel.
	opExt int64
}

func (w *writer) flushBuf() {
	if w.err != nil {
		w.buf = w.buf[:0]
		return
	}
	n, err := w.w.Write(w.buf)
	w.n += int64(n)
	w.err = err
	w.buf = w.buf[:0]
}

// appendMicros writes ns as Kineto does: µs with three decimals.
func appendMicros(b []byte, ns int64) []byte {
	b = strconv.AppendInt(b, ns/1000, 10)
	r := ns % 1000
	b = append(b, '.', byte('0'+r/100), byte('0'+r/10%10), byte('0'+r%10))
	return b
}

// event writes one complete ("X") event. args is appended raw.
func (w *writer) event(cat, name string, pid, tid int64, ts trace.Time, dur int64, args func(b []byte) []byte) {
	b := w.buf
	if !w.first {
		b = append(b, ",\n  "...)
	}
	w.first = false
	b = append(b, `{"ph": "X", "cat": "`...)
	b = append(b, cat...)
	b = append(b, `", "name": `...)
	b = strconv.AppendQuote(b, name)
	b = append(b, `, "pid": `...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `, "tid": `...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `, "ts": `...)
	b = appendMicros(b, int64(ts))
	b = append(b, `, "dur": `...)
	b = appendMicros(b, dur)
	b = append(b, `, "args": {`...)
	ext := w.opExt
	if ext == 0 {
		w.ext++
		ext = w.ext
	}
	b = append(b, `"External id": `...)
	b = strconv.AppendInt(b, ext, 10)
	if args != nil {
		b = args(b)
	}
	b = append(b, "}}"...)
	w.buf = b
	if len(w.buf) > 32<<10 {
		w.flushBuf()
	}
}

// appendGrid writes a launch grid as Kineto does: [x, y, z].
func appendGrid(b []byte, g [3]int64) []byte {
	b = append(b, '[')
	for i, x := range g {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, x, 10)
	}
	return append(b, ']')
}

// interval is one activity of the step being built.
type interval struct {
	start, end trace.Time
	stream     int32
}

// Write writes rank's trace to w and returns what its analysis must find.
// Memory stays proportional to one step, whatever cfg.Steps.
func Write(out io.Writer, cfg Config, rank int) (*Expected, error) {
	ranks := max(cfg.Ranks, 1)
	if rank < 0 || rank >= ranks {
		return nil, fmt.Errorf("rank %d out of range (%d ranks)", rank, ranks)
	}
	if cfg.Steps < 0 {
		return nil, fmt.Errorf("negative step count %d", cfg.Steps)
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(rank)+0x9e3779b97f4a7c15))
	w := &writer{w: bufio.NewWriterSize(out, 256<<10), first: true, pid: 851 + int64(rank), device: int32(rank % 8)}
	exp := &Expected{Rank: rank, Device: w.device, PID: w.pid}
	cl := classify.Default()
	catOf := map[string]string{memcpyName: "memcpy/memcpy"}
	cat := func(name string) string {
		c, ok := catOf[name]
		if !ok {
			c = cl.Classify(name).String()
			catOf[name] = c
		}
		return c
	}

	slow := func(name string) int64 {
		if cfg.SlowNS != 0 && cat(name) == cfg.SlowCategory {
			return cfg.SlowNS
		}
		return 0
	}

	w.open(rank, ranks)

	layers := cfg.layers()
	twoStreams := cfg.streams() == 2
	var corr int64 = 1000
	cpu := base + trace.Time(rng.Int64N(1000)*1000)
	free := map[int32]trace.Time{computeStream: base, commStream: base}
	tid := w.pid
	dev := int64(w.device)
	var eagerKernel int64
	var acts []interval

	// placed writes a kernel's device, stream and correlation.
	placed := func(b []byte, c int64, stream int32, withCorr bool) []byte {
		b = append(b, `, "device": `...)
		b = strconv.AppendInt(b, dev, 10)
		b = append(b, `, "stream": `...)
		b = strconv.AppendInt(b, int64(stream), 10)
		if withCorr {
			b = append(b, `, "correlation": `...)
			b = strconv.AppendInt(b, c, 10)
		}
		return b
	}
	kernelArgs := func(c int64, stream int32, withCorr bool) func([]byte) []byte {
		return func(b []byte) []byte {
			b = placed(b, c, stream, withCorr)
			b = append(b, `, "registers per thread": 128, "shared memory": 49152, "blocks per SM": 1.2, "warps per SM": 9.7, "grid": [132, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 12`...)
			return b
		}
	}
	// With Shapes, a kernel's args carry its family's grid and, for a
	// sized collective, the collective args.
	shapedArgs := func(c int64, stream int32, withCorr bool, g [3]int64, op *opShape) func([]byte) []byte {
		return func(b []byte) []byte {
			b = placed(b, c, stream, withCorr)
			b = append(b, `, "registers per thread": 128, "shared memory": 49152, "grid": `...)
			b = appendGrid(b, g)
			b = append(b, `, "block": [256, 1, 1]`...)
			if op.msgElems > 0 {
				b = append(b, `, "Collective name": "allreduce", "In msg nelems": `...)
				b = strconv.AppendInt(b, op.msgElems, 10)
				b = append(b, `, "Out msg nelems": `...)
				b = strconv.AppendInt(b, op.msgElems, 10)
				b = append(b, `, "Group size": `...)
				b = strconv.AppendInt(b, int64(ranks), 10)
				b = append(b, `, "dtype": "BFloat16"`...)
			}
			return b
		}
	}
	launchArgs := func(c int64, cbid int) func([]byte) []byte {
		return func(b []byte) []byte {
			b = append(b, `, "cbid": `...)
			b = strconv.AppendInt(b, int64(cbid), 10)
			b = append(b, `, "correlation": `...)
			b = strconv.AppendInt(b, c, 10)
			return b
		}
	}

	for i := 0; i < cfg.Steps; i++ {
		kind := cfg.Kind(i)
		eager := kind != "decode"
		// Request counts and the marker text.
		var ctx, gen, ctxTok int64
		scale := int64(1) // eager kernel durations grow with the tokens
		switch kind {
		case "decode":
			gen = 8 + rng.Int64N(56)
		case "prefill":
			ctx = 1 + rng.Int64N(8)
			ctxTok = ctx * (256 + rng.Int64N(1800))
			scale = 2 + ctxTok/2048
		case "mixed":
			ctx = 1 + rng.Int64N(2)
			gen = 8 + rng.Int64N(48)
			ctxTok = ctx * (64 + rng.Int64N(400))
			scale = 2
		}
		marker := fmt.Sprintf("execute_context_%d(%d)_generation_%d(%d)", ctx, ctxTok, gen, gen)
		se := StepExpect{Index: i, Kind: kind, Marker: marker, Start: cpu, ByCat: map[string]int64{}}
		// The tokens and sequences the step's ops see: eager steps their
		// own, graph replays the captured batch.
		tokens, seqs := ctxTok+gen, ctx+gen
		if !eager {
			tokens, seqs = cfg.captureBatch(), cfg.captureBatch()
		}
		if cfg.Shapes {
			se.Eff = newEff()
		}
		acts = acts[:0]
		record := func(name string, s trace.Time, d int64, stream int32) {
			acts = append(acts, interval{s, s + trace.Time(d), stream})
			se.Activities++
			se.KernelNS += d
			se.ByCat[cat(name)] += d
		}

		t := cpu + trace.Time(15_000+rng.Int64N(10_000))
		// The input ids go up first: one cudaMemcpyAsync.
		corr++
		w.event("cuda_runtime", "cudaMemcpyAsync", w.pid, tid, t, 6_000, launchArgs(corr, 41))
		ms := max(free[computeStream], t+trace.Time(4_000+rng.Int64N(2_000)))
		md := 2_000 + rng.Int64N(3_000)
		mc := corr
		w.event("gpu_memcpy", memcpyName, dev, computeStream, ms, md, func(b []byte) []byte {
			b = append(b, `, "device": `...)
			b = strconv.AppendInt(b, dev, 10)
			b = append(b, `, "stream": 7, "correlation": `...)
			b = strconv.AppendInt(b, mc, 10)
			return append(b, `, "bytes": 4096, "memory bandwidth (GB/s)": 1.5`...)
		})
		record(memcpyName, ms, md, computeStream)
		if se.Eff != nil {
			se.Eff.other("memcpy/memcpy", md)
		}
		exp.Activities++
		free[computeStream] = ms + trace.Time(md)
		t += 8_000

		fams := stepKernels(layers, eager)
		if !eager {
			// One graph replay: a single launch, every kernel shares its
			// correlation id, back to back on the compute stream.
			corr++
			gc := corr
			w.event("cuda_runtime", "cudaGraphLaunch", w.pid, tid, t, 9_000+rng.Int64N(6_000), launchArgs(gc, 311))
			s := max(free[computeStream], t+trace.Time(8_000+rng.Int64N(4_000)))
			for _, f := range fams {
				d := f.lo + rng.Int64N(f.hi-f.lo) + slow(f.name)
				if cfg.Shapes {
					op, g := shapeOf(f, tokens, seqs, ranks), grid(f, tokens, seqs)
					w.event("kernel", f.name, dev, computeStream, s, d, shapedArgs(gc, computeStream, true, g, &op))
					se.Eff.kernel(&op, cat(f.name), d, g)
				} else {
					w.event("kernel", f.name, dev, computeStream, s, d, kernelArgs(gc, computeStream, true))
				}
				record(f.name, s, d, computeStream)
				exp.Activities++
				exp.Kernels++
				s += trace.Time(d + 600 + rng.Int64N(1_400))
			}
			free[computeStream] = s
			t += 30_000
		} else {
			for _, f := range fams {
				corr++
				ld := 3_000 + rng.Int64N(4_000)
				var op opShape
				if cfg.Shapes {
					// The op encloses its launch call; launch and kernel
					// carry its External id.
					op = shapeOf(f, tokens, seqs, ranks)
					w.ext++
					w.opExt = w.ext
					w.event("cpu_op", op.name, w.pid, tid, t-200, ld+400, op.appendOpArgs)
				}
				w.event("cuda_runtime", "cudaLaunchKernel", w.pid, tid, t, ld, launchArgs(corr, 211))
				stream := int32(computeStream)
				if f.comm && twoStreams {
					stream = commStream
				}
				// A kernel starts when its stream is free and it has been
				// launched; an all-reduce also waits for the compute
				// stream's previous kernel (its input).
				s := max(free[stream], t+trace.Time(3_000+rng.Int64N(3_000)))
				if stream == commStream {
					s = max(s, free[computeStream])
				}
				d := (f.lo+rng.Int64N(f.hi-f.lo))*scale + slow(f.name)
				eagerKernel++
				withCorr := cfg.DropCorrEvery <= 0 || eagerKernel%int64(cfg.DropCorrEvery) != 0
				// A sized collective keeps its correlation (its args are
				// found by it), so every eager all-reduce is sized.
				withCorr = withCorr || (cfg.Shapes && f.comm)
				if cfg.Shapes {
					g := grid(f, tokens, seqs)
					w.event("kernel", f.name, dev, int64(stream), s, d, shapedArgs(corr, stream, withCorr, g, &op))
					w.opExt = 0
					se.Eff.kernel(&op, cat(f.name), d, g)
				} else {
					w.event("kernel", f.name, dev, int64(stream), s, d, kernelArgs(corr, stream, withCorr))
				}
				record(f.name, s, d, stream)
				exp.Activities++
				exp.Kernels++
				free[stream] = s + trace.Time(d)
				t += trace.Time(ld + 500 + rng.Int64N(2_500))
			}
		}
		// The sampler's CPU work, then the marker closes.
		end := t + trace.Time(20_000+rng.Int64N(20_000))
		se.End = end
		w.event("user_annotation", marker, w.pid, tid, se.Start, int64(end-se.Start), nil)

		// Kineto mirrors the annotation on each stream the step ran on,
		// from its first to its last activity there.
		for _, stream := range []int32{computeStream, commStream} {
			lo, hi, ok := trace.Time(0), trace.Time(0), false
			for _, a := range acts {
				if a.stream != stream {
					continue
				}
				if !ok || a.start < lo {
					lo = a.start
				}
				if !ok || a.end > hi {
					hi = a.end
				}
				ok = true
			}
			if ok {
				w.event("gpu_user_annotation", marker, dev, int64(stream), lo, int64(hi-lo), nil)
			}
		}

		// Span, busy time and late starts by construction.
		slices.SortFunc(acts, func(a, b interval) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end))
		})
		se.First = acts[0].start
		last := acts[0].end
		cs, ce := acts[0].start, acts[0].end
		for _, a := range acts {
			last = max(last, a.end)
			if a.start >= se.End {
				se.AfterEnd++
			}
			if a.start > ce {
				se.BusyNS += int64(ce - cs)
				cs, ce = a.start, a.end
			} else if a.end > ce {
				ce = a.end
			}
		}
		se.BusyNS += int64(ce - cs)
		se.SpanNS = int64(last - se.First)
		exp.Steps = append(exp.Steps, se)

		// The next step opens after a short gap, or, when the GPU lags,
		// while this step's last kernels still run: vLLM overlaps the
		// next step's scheduling with the GPU's work.
		gpuEnd := max(free[computeStream], free[commStream])
		next := end + trace.Time(10_000+rng.Int64N(40_000))
		if lag := gpuEnd - trace.Time(50_000+rng.Int64N(250_000)); lag > next {
			next = lag
		}
		cpu = next
		if w.err != nil {
			return nil, w.err
		}
	}
	if err := w.close("gen"); err != nil {
		return nil, err
	}
	exp.Bytes = w.n
	return exp, nil
}

// open starts the trace document of rank of ranks: an H100 SXM, as
// Kineto describes it.
func (w *writer) open(rank, ranks int) {
	w.buf = fmt.Appendf(w.buf, `{
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": %d, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045706752, "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132}
  ],
  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d, "pg_count": 1},
  "baseTimeNanoseconds": 1700000000000000000,
  "traceEvents": [
  `, w.device, rank, ranks)
}

// close ends the trace document (named traceName) and flushes it.
func (w *writer) close(traceName string) error {
	w.buf = append(w.buf, "\n  ],\n  \"traceName\": \""+traceName+"\"\n}\n"...)
	w.flushBuf()
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}
