package opcost

// memoryOp is the model of an op that moves data and makes no FLOPs claim
// (elementwise, norm, cast, copy): its bytes are every tensor input, each
// read or written once, plus:
//   - rw: inputs both read and written in place (counted twice);
//   - out: the op allocates an output shaped like the broadcast of its
//     tensor inputs, of the first tensor input's type (or outType's).
type memoryOp struct {
	rw  []int
	out bool
	// castTo is the input holding a dtype argument (a c10::ScalarType
	// number) that sets the output's type; -1 when none.
	castTo int
}

// Ops with a write-only first argument (copy_, fill_, vLLM's out-first
// kernels) are plain memoryOp{}: the destination counts once, as written.
var (
	writeFirst = memoryOp{castTo: -1}
	inPlace    = memoryOp{rw: []int{0}, castTo: -1}
	newOutput  = memoryOp{out: true, castTo: -1}
)

var memoryOps = map[string]memoryOp{
	// ATen: destination first, written only.
	"aten::copy_": writeFirst, "aten::fill_": writeFirst, "aten::zero_": writeFirst,
	// ATen in place: the first argument is read and written.
	"aten::add_": inPlace, "aten::sub_": inPlace, "aten::mul_": inPlace, "aten::div_": inPlace,
	"aten::clamp_": inPlace, "aten::relu_": inPlace, "aten::silu_": inPlace, "aten::masked_fill_": inPlace,
	"aten::neg_": inPlace, "aten::exp_": inPlace, "aten::sigmoid_": inPlace, "aten::tanh_": inPlace,
	// ATen out of place: a new output.
	"aten::add": newOutput, "aten::sub": newOutput, "aten::mul": newOutput, "aten::div": newOutput,
	"aten::neg": newOutput, "aten::exp": newOutput, "aten::silu": newOutput, "aten::gelu": newOutput,
	"aten::relu": newOutput, "aten::sigmoid": newOutput, "aten::tanh": newOutput, "aten::pow": newOutput,
	"aten::rsqrt": newOutput, "aten::sqrt": newOutput, "aten::clamp": newOutput, "aten::abs": newOutput,
	"aten::cos": newOutput, "aten::sin": newOutput, "aten::maximum": newOutput, "aten::minimum": newOutput,
	"aten::where": newOutput, "aten::masked_fill": newOutput,
	"aten::native_layer_norm": newOutput,
	"aten::_to_copy":          {out: true, castTo: 1},
	// vLLM kernels that write their first argument.
	"_C::rms_norm": writeFirst, "_C::silu_and_mul": writeFirst, "_C::mul_and_silu": writeFirst,
	"_C::gelu_and_mul": writeFirst, "_C::gelu_tanh_and_mul": writeFirst, "_C::fatrelu_and_mul": writeFirst,
	"_C::swigluoai_and_mul": writeFirst, "_C::gelu_new": writeFirst, "_C::gelu_fast": writeFirst,
	"_C::gelu_quick": writeFirst, "_C::silu_and_mul_quant": writeFirst,
	"_C::static_scaled_fp8_quant": writeFirst, "_C::dynamic_scaled_fp8_quant": writeFirst,
	"_C::dynamic_per_token_scaled_fp8_quant": writeFirst, "_C::rms_norm_static_fp8_quant": writeFirst,
	// vLLM kernels that update arguments in place.
	"_C::fused_add_rms_norm":                  {rw: []int{0, 1}, castTo: -1},
	"_C::fused_add_rms_norm_static_fp8_quant": {rw: []int{2}, castTo: -1},
	// ROCm aiter norms: outputs passed in, written once.
	"aiter::rmsnorm2d_fwd_with_add_ck": writeFirst, "aiter::rms_norm": writeFirst,
	"aiter::rmsnorm2d_fwd": writeFirst,
}

func init() {
	special["_C::rotary_embedding"] = rotary
	special["_C_cache_ops::reshape_and_cache_flash"] = kvCacheWrite
	special["_C_cache_ops::reshape_and_cache"] = kvCacheWrite
}

func (m memoryOp) cost(o Op) Cost {
	s := newAcc()
	s.add(o.tensorsBytes())
	for _, i := range m.rw {
		if t, ok := o.tensor(i); ok {
			s.tensor(t)
		}
	}
	if m.out {
		shape, first, ok := o.broadcast()
		if !ok {
			return shapeless(o.Name, "inputs do not broadcast")
		}
		size := first.size()
		if x, ok := o.input(m.castTo); ok && m.castTo >= 0 {
			if v, ok := scalarInt(x.conc); ok {
				if sz, ok := scalarTypeSizes[int(v)]; ok {
					size = sz
				}
			}
		}
		s.add(in{dims: shape, typ: first.typ}.numelTimes(size))
	}
	if !s.ok {
		return overflow(o.Name)
	}
	if !o.hasTensor() {
		return shapeless(o.Name, "no tensor inputs recorded")
	}
	return Cost{Model: Memory, Bytes: s.n}
}

// hasTensor reports whether any input is a tensor.
func (o *Op) hasTensor() bool {
	for i := range o.Types {
		if _, ok := o.tensor(i); ok {
			return true
		}
	}
	return false
}

func (x in) numelTimes(size int64) (int64, bool) {
	n, ok := x.numel()
	if !ok {
		return 0, false
	}
	return mul(n, size)
}

// broadcast returns the broadcast shape of the tensor inputs (numpy's
// rule, right-aligned) and the first tensor input.
func (o *Op) broadcast() ([]int64, in, bool) {
	var shapes [][]int64
	var first in
	for i := range o.Types {
		if t, ok := o.tensor(i); ok {
			if shapes == nil {
				first = t
			}
			shapes = append(shapes, t.dims)
		}
	}
	if shapes == nil {
		return nil, in{}, false
	}
	n := 0
	for _, s := range shapes {
		n = max(n, len(s))
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := n - len(s)
		for j, d := range s {
			switch o := out[off+j]; {
			case o == d || d == 1:
			case o == 1:
				out[off+j] = d
			default:
				return nil, in{}, false
			}
		}
	}
	return out, first, true
}

// rotary prices vLLM's _C::rotary_embedding(positions [T], query, key?,
// head_size, cos_sin_cache [P, rot], is_neox): positions read, query and
// key read and written, and one cache row per position read (not the
// whole cache).
func rotary(o Op) Cost {
	pos, okP := o.tensor(0)
	cache, okC := o.tensor(4)
	if !okP || !okC || len(cache.dims) != 2 {
		return shapeless(o.Name, "want positions and cos_sin_cache [P, rot]")
	}
	s := newAcc()
	s.tensor(pos)
	for _, i := range []int{1, 2} {
		if t, ok := o.tensor(i); ok {
			s.tensor(t)
			s.tensor(t)
		}
	}
	t, ok := pos.numel()
	s.add(muls(t, cache.dims[1], cache.size()))
	if !ok || !s.ok {
		return overflow(o.Name)
	}
	return Cost{Model: Memory, Bytes: s.n}
}

// kvCacheWrite prices vLLM's reshape_and_cache(_flash)(key, value,
// key_cache, value_cache, slot_mapping, …): key, value and slot_mapping
// read, and as many elements as key and value hold written into the
// caches, in the caches' type (fp8 caches take one byte).
func kvCacheWrite(o Op) Cost {
	k, okK := o.tensor(0)
	v, okV := o.tensor(1)
	kc, okKC := o.tensor(2)
	vc, okVC := o.tensor(3)
	slots, okS := o.tensor(4)
	if !okK || !okV || !okKC || !okVC || !okS {
		return shapeless(o.Name, "want key, value, key_cache, value_cache and slot_mapping")
	}
	s := newAcc()
	s.tensor(k)
	s.tensor(v)
	s.tensor(slots)
	s.add(k.numelTimes(kc.size()))
	s.add(v.numelTimes(vc.size()))
	if !s.ok {
		return overflow(o.Name)
	}
	return Cost{Model: Memory, Bytes: s.n}
}
