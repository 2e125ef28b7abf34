package gen

import (
	"math/big"
	"strconv"
	"strings"
)

// This file gives the generator's kernels the CPU ops that launch them,
// with the shapes torch.profiler records (record_shapes=True), and works
// out by construction what an efficiency analysis of them must find
// (Config.Shapes): each op's FLOPs and bytes by the definitions of
// docs/definitions.md#flops-and-bytes, written here from the shapes the
// generator chose, and the roofline times on the device the traces name,
// an H100 SXM.

// The model: a Llama-7B-like layer (hidden 4096, 32 query and 8 KV heads
// of 128, intermediate 11008, vocabulary 32000), 4-bit Marlin QKV and
// gate/up weights in groups of 128, bf16 elsewhere.
const (
	hidden  = 4096
	heads   = 32
	kvHeads = 8
	headDim = 128
	inter   = 11008
	vocab   = 32000
	qkvN    = (heads + 2*kvHeads) * headDim
	sms     = 132 // the H100's SMs, as deviceProperties says
)

// The H100 SXM's roofs (gpuspec/gpus.txt, from NVIDIA's H100 datasheet):
// dense BF16 989.5 TFLOP/s, 3.35 TB/s of memory bandwidth; and NVLink 4's
// 450 GB/s per direction, its default link.
var (
	peakBF16  = big.NewInt(989_500_000_000_000)
	bandwidth = big.NewInt(3_350_000_000_000)
	linkBps   = big.NewInt(450_000_000_000)
)

// opShape is a CPU op as the trace records it, with its work.
type opShape struct {
	name     string
	dims     [][]int64
	types    []string
	concrete []string
	// modelled: a model of docs/definitions.md prices the op; flops and
	// bytes are then its work (flops 0 for memory-only ops).
	modelled     bool
	flops, bytes int64
	// busBytes: a collective's message size × the all-reduce bus factor
	// 2(n−1)/n, when the kernel carries its collective args; 0 otherwise.
	busBytes int64
	msgElems int64
}

const bf16, long, i32, f32 = "c10::BFloat16", "long int", "int", "float"

// arg is one recorded input: a tensor (dims and type) or a scalar.
type arg struct {
	dims []int64
	typ  string
	conc string
}

func tensor(typ string, dims ...int64) arg { return arg{dims: dims, typ: typ} }
func scalar(v string) arg                  { return arg{typ: "Scalar", conc: v} }

var noneArg = arg{}

func mkOp(name string, args ...arg) opShape {
	o := opShape{name: name}
	for _, a := range args {
		d := a.dims
		if d == nil {
			d = []int64{}
		}
		o.dims = append(o.dims, d)
		o.types = append(o.types, a.typ)
		o.concrete = append(o.concrete, a.conc)
	}
	return o
}

// shapeOf returns the op that launches family f's kernel in a step of t
// tokens and s sequences (rows of logits).
func shapeOf(f *family, t, s int64, ranks int) opShape {
	marlin := func(n int64) opShape {
		// vLLM's _C::gptq_marlin_gemm before it took a bias: a, c,
		// b_q_weight [K/16, N·16·4/32], b_scales [K/128, N], b_zeros,
		// g_idx, perm (empty), workspace, b_q_type, size_m, size_n,
		// size_k, four flags.
		o := mkOp("_C::gptq_marlin_gemm", tensor(bf16, t, hidden), noneArg, tensor(i32, hidden/16, n*2),
			tensor(bf16, hidden/128, n), tensor(i32, 0), tensor(i32, 0), tensor(i32, 0), tensor(i32, 528),
			scalar("5"), scalar(itoa(t)), scalar(itoa(n)), scalar(itoa(hidden)), scalar("True"), scalar("False"), scalar("True"), scalar("False"))
		o.modelled = true
		o.flops = 2 * t * n * hidden
		// a, the packed weights (K·N·4/8), the scales, the workspace and
		// the output the op allocates.
		o.bytes = t*hidden*2 + hidden*n/2 + hidden/128*n*2 + 528*4 + t*n*2
		return o
	}
	mm := func(m, k, n int64) opShape {
		o := mkOp("aten::mm", tensor(bf16, m, k), tensor(bf16, k, n))
		o.modelled, o.flops, o.bytes = true, 2*m*n*k, (m*k+k*n+m*n)*2
		return o
	}
	switch f {
	case &fEmbed:
		return mkOp("aten::embedding", tensor(bf16, vocab, hidden), tensor(long, t), scalar("-1"), scalar("False"), scalar("False"))
	case &fRMS:
		o := mkOp("_C::fused_add_rms_norm", tensor(bf16, t, hidden), tensor(bf16, t, hidden), tensor(bf16, hidden), scalar("1e-05"))
		// input and residual read and written, the weight read.
		o.modelled, o.bytes = true, 2*2*t*hidden*2+hidden*2
		return o
	case &fQKV:
		return marlin(qkvN)
	case &fGateUp:
		return marlin(2 * inter)
	case &fRotary:
		o := mkOp("_C::rotary_embedding", tensor(long, t), tensor(bf16, t, heads*headDim), tensor(bf16, t, kvHeads*headDim),
			scalar(itoa(headDim)), tensor(bf16, 8192, headDim), scalar("True"))
		// positions; q and k read and written; a cache row per position.
		o.modelled, o.bytes = true, t*8+2*t*heads*headDim*2+2*t*kvHeads*headDim*2+t*headDim*2
		return o
	case &fCache:
		o := mkOp("_C_cache_ops::reshape_and_cache_flash", tensor(bf16, t, kvHeads, headDim), tensor(bf16, t, kvHeads, headDim),
			tensor(bf16, 2048, 16, kvHeads, headDim), tensor(bf16, 2048, 16, kvHeads, headDim), tensor(long, t),
			arg{typ: "", conc: "auto"}, tensor(f32), tensor(f32))
		// key and value read, slots read, key and value written again.
		o.modelled, o.bytes = true, 2*t*kvHeads*headDim*2+t*8+2*t*kvHeads*headDim*2
		return o
	case &fAttnDec:
		return mkOp("vllm::unified_attention_with_output", tensor(bf16, t, heads, headDim), tensor(bf16, t, kvHeads, headDim),
			tensor(bf16, t, kvHeads, headDim), tensor(bf16, t, heads, headDim), noneArg, noneArg, noneArg)
	case &fAttnPre:
		// One sequence of t tokens, causal: half of 4·H·t·t·D.
		o := mkOp("aten::_scaled_dot_product_flash_attention", tensor(bf16, 1, heads, t, headDim), tensor(bf16, 1, heads, t, headDim),
			tensor(bf16, 1, heads, t, headDim), scalar("0."), scalar("True"), scalar("False"), scalar("0.088388347648318433"))
		o.modelled, o.flops, o.bytes = true, 4*heads*t*t*headDim/2, 4*heads*t*headDim*2
		return o
	case &fOProj:
		return mm(t, heads*headDim, hidden)
	case &fDown:
		return mm(t, inter, hidden)
	case &fLMHead:
		return mm(s, hidden, vocab)
	case &fSilu:
		o := mkOp("_C::silu_and_mul", tensor(bf16, t, inter), tensor(bf16, t, 2*inter))
		o.modelled, o.bytes = true, t*inter*2+t*2*inter*2
		return o
	case &fFinalNorm:
		o := mkOp("_C::rms_norm", tensor(bf16, t, hidden), tensor(bf16, t, hidden), tensor(bf16, hidden), scalar("1e-05"))
		o.modelled, o.bytes = true, 2*t*hidden*2+hidden*2
		return o
	case &fCast:
		o := mkOp("aten::copy_", tensor(f32, s, vocab), tensor(bf16, s, vocab), scalar("False"))
		o.modelled, o.bytes = true, s*vocab*(4+2)
		return o
	case &fArgmax:
		return mkOp("aten::argmax", tensor(f32, s, vocab), scalar("-1"), scalar("False"))
	case &fCustomAR:
		return mkOp("_C_custom_ar::all_reduce", tensor(i32, 1), tensor(bf16, t, hidden), tensor(bf16, t, hidden), tensor(i32, 1), scalar("0"))
	case &fNCCLAR:
		// The NCCL kernel carries its collective args (t·hidden bf16
		// elements, the world as the group): an all-reduce's bus bytes
		// are 2(n−1)/n of the message.
		o := mkOp("record_param_comms", tensor(bf16, t, hidden), scalar("1"), scalar("0"))
		o.msgElems = t * hidden
		n := int64(ranks)
		o.busBytes = t * hidden * 2 * 2 * (n - 1) / n
		return o
	}
	panic("gen: no op for " + f.name)
}

// grid is the launch grid of family f's kernel for t tokens and s
// sequences: small decode GEMMs and the all-reduces use few SMs.
func grid(f *family, t, s int64) [3]int64 {
	switch f {
	case &fQKV, &fGateUp:
		return [3]int64{sms, 1, 1}
	case &fOProj, &fDown:
		return [3]int64{32, 1, 1}
	case &fAttnDec:
		return [3]int64{1, heads, 4}
	case &fAttnPre:
		return [3]int64{(t + 127) / 128, heads, 1}
	case &fCustomAR:
		return [3]int64{16, 1, 1}
	case &fNCCLAR:
		return [3]int64{24, 1, 1}
	case &fLMHead:
		return [3]int64{250, 1, 1}
	case &fCast:
		return [3]int64{min(1024, (s*vocab+1023)/1024), 1, 1}
	case &fArgmax:
		return [3]int64{s, 1, 1}
	}
	return [3]int64{t, 1, 1} // one block per token
}

// coverage is min(1, blocks / SMs).
func coverage(g [3]int64) float64 {
	return min(1, float64(g[0]*g[1]*g[2])/sms)
}

// ceilDiv is ⌈work · 10⁹ / rate⌉ in big integers: a time in ns.
func ceilDiv(work int64, rate *big.Int) int64 {
	if work == 0 {
		return 0
	}
	q, r := new(big.Int).QuoRem(new(big.Int).Mul(big.NewInt(work), big.NewInt(1e9)), rate, new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// roofline is the op's roofline time on the H100: the longer of its
// FLOPs at the BF16 peak and its bytes at the bandwidth.
func (o *opShape) roofline() int64 {
	return max(ceilDiv(o.flops, peakBF16), ceilDiv(o.bytes, bandwidth))
}

// key names an op shape as the efficiency table aggregates it.
func (o *opShape) key() string { return OpKey(o.name, o.dims, o.types) }

// OpKey names an op shape, the key of EffExpect.Ops: its name, then each
// argument's dims and type.
func OpKey(name string, dims [][]int64, types []string) string {
	var b strings.Builder
	b.WriteString(name)
	for i, d := range dims {
		b.WriteString(" [")
		for j, x := range d {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(itoa(x))
		}
		b.WriteString("]")
		b.WriteString(types[i])
	}
	return b.String()
}

// appendOpArgs writes the op's record_shapes args.
func (o *opShape) appendOpArgs(b []byte) []byte {
	b = append(b, `, "Input Dims": [`...)
	for i, d := range o.dims {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '[')
		for j, x := range d {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, x, 10)
		}
		b = append(b, ']')
	}
	b = append(b, `], "Input type": [`...)
	for i, t := range o.types {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendQuote(b, t)
	}
	b = append(b, `], "Concrete Inputs": [`...)
	for i, c := range o.concrete {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendQuote(b, c)
	}
	return append(b, ']')
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// EffExpect is what an efficiency analysis of one step must find
// (Config.Shapes), on an H100 SXM with NVLink 4, decode steps priced by
// the capture trace of WriteCapture.
type EffExpect struct {
	// ModelledNS is the kernel time of the kernels a model prices; FLOPs,
	// Bytes and RooflineNS their sums.
	ModelledNS, FLOPs, Bytes, RooflineNS int64
	// LinkedNS is the kernel time of the collectives whose size the trace
	// gives (the eager all-reduces' args), LinkNS their bus bytes at
	// NVLink 4's 450 GB/s.
	LinkedNS, LinkNS int64
	// SpeedOfLightNS = RooflineNS + LinkNS + the rest of the step's
	// activity time as measured.
	SpeedOfLightNS int64
	// SMWeighted is Σ coverage × duration over the step's kernels (not
	// memcpys), GridNS the duration summed.
	SMWeighted float64
	GridNS     int64
	ByCat      map[string]*CatEff
	// Ops are the step's kernels by op shape (OpShape keys).
	Ops map[string]*OpEff
}

// CatEff is one category's share of a step's EffExpect.
type CatEff struct {
	KernelNS, ModelledNS, FLOPs, Bytes, RooflineNS int64
	SMWeighted                                     float64
	GridNS                                         int64
}

// OpEff is one op shape's kernels in a step.
type OpEff struct {
	Instances, KernelNS, FLOPs, Bytes, RooflineNS int64
}

// Add adds x to c (sums over steps).
func (c *CatEff) Add(x *CatEff) {
	c.KernelNS += x.KernelNS
	c.ModelledNS += x.ModelledNS
	c.FLOPs += x.FLOPs
	c.Bytes += x.Bytes
	c.RooflineNS += x.RooflineNS
	c.SMWeighted += x.SMWeighted
	c.GridNS += x.GridNS
}

// Add adds x to o (sums over steps).
func (o *OpEff) Add(x *OpEff) {
	o.Instances += x.Instances
	o.KernelNS += x.KernelNS
	o.FLOPs += x.FLOPs
	o.Bytes += x.Bytes
	o.RooflineNS += x.RooflineNS
}

func newEff() *EffExpect {
	return &EffExpect{ByCat: map[string]*CatEff{}, Ops: map[string]*OpEff{}}
}

// kernel records one kernel of duration d, category cat, launched by op
// with grid g.
func (e *EffExpect) kernel(op *opShape, cat string, d int64, g [3]int64) {
	c := e.ByCat[cat]
	if c == nil {
		c = &CatEff{}
		e.ByCat[cat] = c
	}
	c.KernelNS += d
	cov := coverage(g) * float64(d)
	e.SMWeighted += cov
	e.GridNS += d
	c.SMWeighted += cov
	c.GridNS += d
	switch {
	case op.modelled:
		r := op.roofline()
		e.ModelledNS += d
		e.FLOPs += op.flops
		e.Bytes += op.bytes
		e.RooflineNS += r
		e.SpeedOfLightNS += r
		c.ModelledNS += d
		c.FLOPs += op.flops
		c.Bytes += op.bytes
		c.RooflineNS += r
		k := op.key()
		oe := e.Ops[k]
		if oe == nil {
			oe = &OpEff{}
			e.Ops[k] = oe
		}
		oe.Instances++
		oe.KernelNS += d
		oe.FLOPs += op.flops
		oe.Bytes += op.bytes
		oe.RooflineNS += r
	case op.busBytes > 0:
		l := ceilDiv(op.busBytes, linkBps)
		e.LinkedNS += d
		e.LinkNS += l
		e.SpeedOfLightNS += l
	default:
		e.SpeedOfLightNS += d
	}
}

// other records a measured activity no model prices (a memcpy).
func (e *EffExpect) other(cat string, d int64) {
	c := e.ByCat[cat]
	if c == nil {
		c = &CatEff{}
		e.ByCat[cat] = c
	}
	c.KernelNS += d
	e.SpeedOfLightNS += d
}
