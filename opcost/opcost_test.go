package opcost

import (
	"strings"
	"testing"

	"github.com/traceq/traceq/gpuspec"
)

const bf, f32, i32, i64, u8 = "c10::BFloat16", "float", "int", "long int", "unsigned char"

// op builds an Op from (dims, type, concrete) triples.
func op(name string, ins ...in) Op {
	o := Op{Name: name}
	for _, x := range ins {
		o.Dims = append(o.Dims, x.dims)
		o.Types = append(o.Types, x.typ)
		o.Concrete = append(o.Concrete, x.conc)
	}
	return o
}

func t(typ string, dims ...int64) in { return in{dims: dims, typ: typ} }
func sc(v string) in                 { return in{typ: "Scalar", conc: v} }

var none = in{}

// The expected figures are computed by hand from each model's definition
// (docs/definitions.md#flops-and-bytes); the arithmetic is in the comments.
func TestModels(t_ *testing.T) {
	for _, c := range []struct {
		what  string
		op    Op
		model Model
		flops int64
		bytes int64
		dtype gpuspec.DType
	}{
		// The B200 trace's first addmm: bias [640], [888,2880]·[2880,640].
		// FLOPs 2·888·640·2880; bytes (888·2880 + 2880·640 + 888·640)·2 + 640·2.
		{"addmm", op("aten::addmm", t(bf, 640), t(bf, 888, 2880), t(bf, 2880, 640), sc("1"), sc("1")),
			GEMM, 3_273_523_200, 9_939_200, gpuspec.BF16},
		// mm.out with its output among the inputs: not counted twice.
		// 2·32768·2048·2048; (32768·2048·2 + 2048·2048)·2.
		{"mm out", op("aten::mm", t(bf, 32768, 2048), t(bf, 2048, 2048), t(bf, 32768, 2048)),
			GEMM, 274_877_906_944, 276_824_064, gpuspec.BF16},
		// 2·1024·96·8·50; 4·(1024·96·50 + 1024·50·8 + 1024·96·8).
		{"bmm", op("aten::bmm", t(f32, 1024, 96, 50), t(f32, 1024, 50, 8)),
			GEMM, 78_643_200, 24_444_928, gpuspec.FP32},
		// matmul [1024,96,50]·[50,15] lowers to mm [98304,50]·[50,15]:
		// 2·98304·15·50; 4·(98304·50 + 50·15 + 98304·15).
		{"matmul folded", op("aten::matmul", t(f32, 1024, 96, 50), t(f32, 50, 15)),
			GEMM, 147_456_000, 25_562_040, gpuspec.FP32},
		{"mm same", op("aten::mm", t(f32, 98304, 50), t(f32, 50, 15)),
			GEMM, 147_456_000, 25_562_040, gpuspec.FP32},
		// Broadcast batch: [2,1,4,8]·[3,8,5] is 6 × [4,8]·[8,5]:
		// 2·6·4·5·8 = 1920; 2·(2·4·8) + 2·(3·8·5) + 2·(6·4·5) = 608.
		{"matmul batched", op("aten::matmul", t(bf, 2, 1, 4, 8), t(bf, 3, 8, 5)),
			GEMM, 1920, 608, gpuspec.BF16},
		// 1-D times 2-D: a row vector. 2·1·3·4; 2·(4 + 12 + 3).
		{"matmul vector", op("aten::matmul", t(bf, 4), t(bf, 4, 3)), GEMM, 24, 38, gpuspec.BF16},
		// SGLang's linear without bias: 2·15360·6144·4096;
		// 2·(15360·4096 + 6144·4096 + 15360·6144).
		{"linear", op("aten::linear", t(bf, 15360, 4096), t(bf, 6144, 4096), none),
			GEMM, 773_094_113_280, 364_904_448, gpuspec.BF16},
		// linear with bias and a 3-D input: M = 2·3. 2·6·5·4; 2·(24 + 20 + 5 + 30).
		{"linear bias", op("aten::linear", t(bf, 2, 3, 4), t(bf, 5, 4), t(bf, 5)), GEMM, 240, 158, gpuspec.BF16},
		// FP8 with a bf16 output (out_dtype 15): 2·128·512·256;
		// 128·256 + 256·512 + 128·512·2 + two fp32 scales.
		{"scaled_mm", op("aten::_scaled_mm", t("c10::Float8_e4m3fn", 128, 256), t("c10::Float8_e4m3fn", 256, 512),
			t(f32), t(f32), none, none, sc("15"), sc("False")), GEMM, 33_554_432, 294_920, gpuspec.FP8},
		// baddbmm: bias [2,3,5] added. 2·2·3·5·4; 2·(24+40+30) + 2·30.
		{"baddbmm", op("aten::baddbmm", t(bf, 2, 3, 5), t(bf, 2, 3, 4), t(bf, 2, 4, 5), sc("1"), sc("1")),
			GEMM, 240, 248, gpuspec.BF16},
		// Marlin 4-bit, K=4096, N=11008, group 128: 2·16·11008·4096; a
		// 16·4096·2 + weights 256·22016·4 (= K·N·4/8) + scales 32·11008·2
		// + workspace 528·4 + output 16·11008·2.
		{"marlin", op("_C::marlin_gemm", t(bf, 16, 4096), none, t(i32, 256, 22016), none, t(bf, 32, 11008), none, none,
			none, none, none, t(i32, 528), sc("1"), sc("16"), sc("11008"), sc("4096"), sc("True"), sc("False"), sc("True"), sc("False")),
			QuantGEMM, 1_442_840_576, 23_734_336, gpuspec.BF16},
		// The older spelling, without bias and a_scales: the same sizes.
		{"gptq_marlin", op("_C::gptq_marlin_gemm", t(bf, 16, 4096), none, t(i32, 256, 22016), t(bf, 32, 11008), none,
			none, none, t(i32, 528), sc("1"), sc("16"), sc("11008"), sc("4096"), sc("True")),
			QuantGEMM, 1_442_840_576, 23_734_336, gpuspec.BF16},
		// AWQ 4-bit, fp16, N from the scales: 2·8·11008·4096; in
		// 8·4096·2 + qweight 4096·1376·4 + scales 32·11008·2 + zeros
		// 32·1376·4 + output 8·11008·2.
		{"awq", op("_C::awq_gemm", t("c10::Half", 8, 4096), t(i32, 4096, 1376), t("c10::Half", 32, 11008), t(i32, 32, 1376), sc("8")),
			QuantGEMM, 721_420_288, 23_666_688, gpuspec.FP16},
		// GPTQ (exllama), N from the packed weights [K·4/32, N]: the same
		// FLOPs; bytes add g_idx (4096·4) and swap the weights' layout.
		{"gptq", op("_C::gptq_gemm", t("c10::Half", 8, 4096), t(i32, 512, 11008), t(i32, 32, 1376), t("c10::Half", 32, 11008),
			t(i32, 4096), sc("True"), sc("4")), QuantGEMM, 721_420_288, 23_683_072, gpuspec.FP16},
		// MoE Marlin, 4 tokens × top 8 of 64 experts, K=2048, N=2816:
		// FLOPs 2·32·2816·2048; bytes a 4·2048·2 + routing and workspace
		// (640+40+4+128+2112) + output 32·2816·2 + 32 experts' weights
		// (128·5632·4) and scales (16·2816·2).
		{"moe marlin", op("_moe_C::moe_wna16_marlin_gemm", t(bf, 4, 2048), none, t(i32, 64, 128, 5632), none,
			t(bf, 64, 16, 2816), none, none, none, none, none, t(i32, 528), t(i32, 160), t(i32, 10), t(i32, 1), t(f32, 4, 8),
			sc("16"), sc("8"), sc("False"), sc("1"), sc("4"), sc("2816"), sc("2048"), sc("True"), sc("False"), sc("True"), sc("False")),
			MoEGEMM, 369_098_752, 95_357_804, gpuspec.BF16},
		// moe_wna16_gemm: rows and N from the output [4, 8, 2816] (an
		// input, so not added again); 32 of 64 experts' uint8 weights
		// (2816·1024) and scales (2816·16·2); a 4·2048·2, output
		// 4·8·2816·2, topk_weights 128, routing 640+40+4.
		{"moe wna16", op("_moe_C::moe_wna16_gemm", t(bf, 4, 2048), t(bf, 4, 8, 2816), t(u8, 64, 2816, 1024), t(bf, 64, 2816, 16), none,
			t(f32, 4, 8), t(i32, 160), t(i32, 10), t(i32, 1), sc("8"), sc("16"), sc("64"), sc("64"), sc("4")),
			MoEGEMM, 369_098_752, 95_355_692, gpuspec.BF16},
		// SDPA over [8,16,4096,128]: 4·8·16·4096·4096·128; 4 tensors of 8·16·4096·128·2.
		{"sdpa flash", op("aten::_scaled_dot_product_flash_attention", t(bf, 8, 16, 4096, 128), t(bf, 8, 16, 4096, 128),
			t(bf, 8, 16, 4096, 128), sc("0."), sc("False"), sc("False"), sc("0.088")), Attention, 1_099_511_627_776, 536_870_912, gpuspec.BF16},
		// The same in flash's [B,S,H,D] layout, causal: FLOPs halved.
		{"flash forward causal", op("aten::_flash_attention_forward", t(bf, 8, 4096, 16, 128), t(bf, 8, 4096, 16, 128),
			t(bf, 8, 4096, 16, 128), none, none, sc("4096"), sc("4096"), sc("0."), sc("True"), sc("False"), sc("0.088")),
			Attention, 549_755_813_888, 536_870_912, gpuspec.BF16},
		// GQA: 32 query heads, 8 KV heads, Sq=Sk=128, D=64:
		// 4·1·32·128·128·64; (32·128·64·2)·2 + (8·128·64·2)·2.
		{"sdpa gqa", op("aten::scaled_dot_product_attention", t(bf, 1, 32, 128, 64), t(bf, 1, 8, 128, 64), t(bf, 1, 8, 128, 64),
			none, sc("0."), sc("False"), none, sc("True")), Attention, 134_217_728, 1_310_720, gpuspec.BF16},
		// fused_add_rms_norm: input and residual read and written, weight
		// read: 2·(888·2880·2)·2 + 2880·2.
		{"fused_add_rms_norm", op("_C::fused_add_rms_norm", t(bf, 888, 2880), t(bf, 888, 2880), t(bf, 2880), sc("1e-05")),
			Memory, 0, 20_465_280, 0},
		// copy_: destination written, source read.
		{"copy_", op("aten::copy_", t(i32, 1, 512), t(i32, 1, 512), sc("True")), Memory, 0, 4096, 0},
		// A cast to bf16 (ScalarType 15): 131072·64·4 + 131072·64·2.
		{"_to_copy", op("aten::_to_copy", t(f32, 131072, 64), sc("15"), none, none, none, sc("False"), none),
			Memory, 0, 50_331_648, 0},
		// Broadcast add: [4,1] + [3] → [4,3]: 16 + 12 + 48.
		{"add broadcast", op("aten::add", t(f32, 4, 1), t(f32, 3), sc("1")), Memory, 0, 76, 0},
		// In-place add: self read and written, other read: 3·(10·4).
		{"add_", op("aten::add_", t(f32, 10), t(f32, 10), sc("1")), Memory, 0, 120, 0},
		// Filling an empty tensor moves nothing, and that is a model.
		{"fill_ empty", op("aten::fill_", t(i64, 0), sc("-1")), Memory, 0, 0, 0},
		// Rotary: positions 888·8, q and k read and written
		// (2·888·512·2 + 2·888·64·2), one cache row per position (888·64·2).
		{"rotary", op("_C::rotary_embedding", t(i64, 888), t(bf, 888, 512), t(bf, 888, 64), sc("64"), t(bf, 131072, 64), sc("True")),
			Memory, 0, 2_166_720, 0},
		// KV-cache write into fp8 (uint8) caches: key and value read
		// (888·64·2 each), slots 888·8, 888·64 one-byte elements written twice.
		{"reshape_and_cache_flash", op("_C_cache_ops::reshape_and_cache_flash", t(bf, 888, 1, 64), t(bf, 888, 1, 64),
			t(u8, 4213816, 16, 1, 64), t(u8, 4213816, 16, 1, 64), t(i64, 888), in{typ: ""}, t(f32), t(f32)),
			Memory, 0, 348_096, 0},
		// Inductor pointwise kernel: its buffers once each, 131072·64·(4+2).
		{"inductor", op("triton_poi_fused__to_copy_1", t(f32, 131072, 64), t(bf, 131072, 64), sc("8388608")),
			Memory, 0, 50_331_648, 0},
		// A fused gather reads as many table elements as it visits
		// (xnumel, the last scalar: 888), not the table: 888·4 + 888·8 +
		// 888·1, the other scalars being the kernel's parameters.
		{"inductor gather", op("triton_poi_fused_add_0", t(i32, 888), t(i64, 201088, 2880), t("bool", 888), sc("0"), sc("25136"), sc("888")),
			Memory, 0, 888*4 + 888*8 + 888, 0},
		// A reduction visits xnumel·rnumel = 32768·2048 elements: the
		// weight [2048] whole, input and output whole: (2·32768·2048 + 2048)·2.
		{"inductor reduction", op("triton_red_fused_add_mean_mul_pow_rsqrt_0", t(bf, 8, 4096, 2048), t(bf, 2048), t(bf, 8, 4096, 2048), sc("32768"), sc("2048")),
			Memory, 0, (2*32768*2048 + 2048) * 2, 0},
	} {
		got := Of(c.op)
		if got.Model != c.model || got.FLOPs != c.flops || got.Bytes != c.bytes || (c.flops > 0 && got.DType != c.dtype) {
			t_.Errorf("%s: %v %d FLOPs %d bytes %v (%s), want %v %d %d %v", c.what, got.Model, got.FLOPs, got.Bytes, got.DType, got.Note,
				c.model, c.flops, c.bytes, c.dtype)
		}
		if got.UpperBound != (c.model == MoEGEMM) {
			t_.Errorf("%s: upper bound %v", c.what, got.UpperBound)
		}
	}
}

func TestNotModelled(t_ *testing.T) {
	for _, c := range []struct {
		what string
		op   Op
		note string
	}{
		{"paged", op("vllm::unified_attention_with_output", t(bf, 888, 8, 64), t(bf, 888, 1, 64), t(bf, 888, 1, 64), t(bf, 888, 8, 64)),
			"paged attention: the context lengths are not in the op's inputs"},
		{"unknown op", op("foo::bar", t(bf, 3)), "no model for foo::bar"},
		{"varlen", op("aten::_flash_attention_forward", t(bf, 100, 16, 128), t(bf, 100, 16, 128), t(bf, 100, 16, 128), t(i32, 3), t(i32, 3)),
			"variable-length attention"},
		{"no shapes", op("aten::mm"), "want [M,K]·[K,N] inputs"},
		{"mismatch", op("aten::mm", t(bf, 2, 3), t(bf, 4, 5)), "want [M,K]·[K,N] inputs"},
		{"overflow", op("aten::mm", t(bf, 1<<40, 1<<20), t(bf, 1<<20, 1<<20)), "shape too large"},
		{"marlin without sizes", op("_C::marlin_gemm", t(bf, 16, 4096), none, t(i32, 256, 22016)), "no size_n argument"},
		{"int gemm", op("aten::mm", t(i64, 2, 3), t(i64, 3, 4)), "no peak for the element type long int"},
		{"scalars only", op("aten::add", sc("1"), sc("2")), "inputs do not broadcast"},
		{"no broadcast", op("aten::add", t(f32, 3), t(f32, 4)), "inputs do not broadcast"},
		{"copy_ without tensors", op("aten::copy_", sc("1")), "no tensor inputs recorded"},
		{"inductor without xnumel", op("triton_poi_fused_0", t(i32, 32), t(bf, 201088, 2880)), "without its element counts"},
	} {
		got := Of(c.op)
		if got.Model != None || !strings.Contains(got.Note, c.note) {
			t_.Errorf("%s: %v %q, want none, %q", c.what, got.Model, got.Note, c.note)
		}
	}
}

func TestElemSize(t_ *testing.T) {
	for typ, want := range map[string]int64{"c10::BFloat16": 2, "float": 4, "c10::Float8_e4m3fn": 1, "long int": 8, "int": 4, "double": 8, "c10::Half": 2, "bool": 1} {
		if got, ok := ElemSize(typ); !ok || got != want {
			t_.Errorf("ElemSize(%q) = %d, %v; want %d", typ, got, ok, want)
		}
	}
	for _, typ := range []string{"Scalar", "", "TensorList", "GenericList", "ScalarList"} {
		if _, ok := ElemSize(typ); ok {
			t_.Errorf("ElemSize(%q) is a tensor type", typ)
		}
	}
}
