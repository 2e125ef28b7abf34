// Package opcost computes the work of a CPU operator from what the
// profiler recorded of it with record_shapes=True: its name, input dims,
// input types and concrete (scalar) inputs. The work is FLOPs and bytes of
// memory traffic, the two numbers a roofline needs; each model is a pure
// function of the recorded op, defined once in
// docs/definitions.md#flops-and-bytes with what it assumes.
//
// Of returns the cost, or a Cost with Model None and a Note saying why the
// op is not modelled (paged attention whose context lengths are not in the
// inputs, an op no model covers, shapes missing).
package opcost

import (
	"math/bits"
	"strconv"
	"strings"

	"github.com/traceq/traceq/gpuspec"
)

// Op is a CPU operator as Kineto records it ("cpu_op" events with
// record_shapes=True): the args "Input Dims", "Input type" and "Concrete
// Inputs", one entry per input, in the operator's argument order.
type Op struct {
	Name string
	// Dims are the inputs' shapes; nil or empty for a non-tensor or a
	// 0-dim tensor (a 0-dim tensor has a tensor type and one element).
	Dims [][]int64
	// Types are the inputs' types: "c10::BFloat16", "float", "Scalar", "".
	Types []string
	// Concrete are the values of scalar inputs ("1", "True", "0."); ""
	// where not recorded. May be shorter than Dims (absent in old traces).
	Concrete []string
}

// Model names the model that priced an op.
type Model uint8

const (
	None      Model = iota // not modelled
	GEMM                   // dense matrix multiply: 2·M·N·K
	QuantGEMM              // weight-only quantized GEMM (Marlin, AWQ, GPTQ)
	MoEGEMM                // quantized MoE expert GEMM: bytes an upper bound
	Attention              // attention with full q, k, v
	Memory                 // elementwise, norm, cast, copy: bytes only
	numModels
)

var modelNames = [numModels]string{"none", "gemm", "quant_gemm", "moe_gemm", "attention", "memory"}

func (m Model) String() string {
	if m < numModels {
		return modelNames[m]
	}
	return "model(" + strconv.Itoa(int(m)) + ")"
}

// Cost is the work of one execution of an op.
type Cost struct {
	Model Model
	// FLOPs counts floating-point (or integer) operations, a multiply-add
	// as 2; 0 for Memory, which makes no FLOPs claim.
	FLOPs int64
	// Bytes is the memory traffic: what the op reads and writes once.
	Bytes int64
	// DType is the type whose peak FLOPs are compared with (the GEMM's
	// activation type); meaningless when FLOPs is 0.
	DType gpuspec.DType
	// UpperBound: Bytes is an upper bound (MoE: every touched expert's
	// weights counted, at most min(E, M·topk) experts).
	UpperBound bool
	// Note says why an op is not modelled, or what a model assumed.
	Note string
}

// ElemSize returns the size in bytes of one element of a tensor of the
// recorded type, and whether the type is a tensor type at all ("Scalar",
// "" and list types are not).
func ElemSize(typ string) (int64, bool) {
	s, ok := elemSizes[typ]
	return s, ok
}

// elemSizes are the sizes of the element types Kineto writes (the C++
// type names of c10's scalar types).
var elemSizes = map[string]int64{
	"double": 8, "float": 4, "c10::Half": 2, "c10::BFloat16": 2,
	"c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1, "c10::Float8_e4m3fnuz": 1, "c10::Float8_e5m2fnuz": 1,
	"c10::Float8_e8m0fnu": 1, "c10::Float4_e2m1fn_x2": 1,
	"long int": 8, "long": 8, "int": 4, "short int": 2, "short": 2, "signed char": 1, "unsigned char": 1, "bool": 1,
	"unsigned short": 2, "unsigned int": 4, "unsigned long": 8,
	"c10::complex<float>": 8, "c10::complex<double>": 16, "c10::complex<c10::Half>": 4,
	"c10::qint8": 1, "c10::quint8": 1, "c10::qint32": 4, "c10::quint4x2": 1,
}

// dtypeOf maps an element type to the peak it runs at in a matrix
// multiply. float is FP32 (PyTorch's default matmul precision is
// "highest": no TF32).
func dtypeOf(typ string) (gpuspec.DType, bool) {
	switch typ {
	case "c10::BFloat16":
		return gpuspec.BF16, true
	case "c10::Half":
		return gpuspec.FP16, true
	case "float":
		return gpuspec.FP32, true
	case "double":
		return gpuspec.FP64, true
	case "c10::Float8_e4m3fn", "c10::Float8_e5m2", "c10::Float8_e4m3fnuz", "c10::Float8_e5m2fnuz":
		return gpuspec.FP8, true
	case "c10::Float4_e2m1fn_x2":
		return gpuspec.FP4, true
	case "signed char", "c10::qint8":
		return gpuspec.INT8, true
	}
	return 0, false
}

// scalarTypeSizes are the element sizes of c10::ScalarType by number, as
// a dtype argument appears in Concrete Inputs ("15" is BFloat16).
var scalarTypeSizes = map[int]int64{
	0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 8: 4, 9: 8, 10: 16, 11: 1,
	12: 1, 13: 1, 14: 4, 15: 2, 16: 1, 17: 1, 23: 1, 24: 1, 25: 1, 26: 1,
}

// Of returns the cost of one execution of op.
func Of(op Op) Cost {
	name := op.Name
	if f, ok := gemms[name]; ok {
		return f(op)
	}
	if f, ok := special[name]; ok {
		return f(op)
	}
	if m, ok := memoryOps[name]; ok {
		return m.cost(op)
	}
	if n := inductorScalars(name); n > 0 {
		return inductor(op, n)
	}
	if why, ok := notModelled[name]; ok {
		return Cost{Note: why}
	}
	return Cost{Note: "no model for " + name}
}

// in is one recorded input.
type in struct {
	dims []int64
	typ  string
	conc string
}

// input returns the i-th input; ok is false past the end.
func (o *Op) input(i int) (in, bool) {
	if i < 0 || i >= len(o.Types) {
		return in{}, false
	}
	x := in{typ: o.Types[i]}
	if i < len(o.Dims) {
		x.dims = o.Dims[i]
	}
	if i < len(o.Concrete) {
		x.conc = o.Concrete[i]
	}
	return x, true
}

// tensor returns the i-th input if it is a tensor.
func (o *Op) tensor(i int) (in, bool) {
	x, ok := o.input(i)
	if !ok {
		return in{}, false
	}
	_, t := ElemSize(x.typ)
	return x, t
}

// numel is the element count of a tensor; false on overflow or a negative
// dim.
func (x in) numel() (int64, bool) {
	n := int64(1)
	for _, d := range x.dims {
		if d < 0 {
			return 0, false
		}
		var ok bool
		if n, ok = mul(n, d); !ok {
			return 0, false
		}
	}
	return n, true
}

// bytes is the tensor's size in bytes.
func (x in) bytes() (int64, bool) {
	n, ok := x.numel()
	if !ok {
		return 0, false
	}
	s, _ := ElemSize(x.typ)
	return mul(n, s)
}

func (x in) size() int64 { s, _ := ElemSize(x.typ); return s }

// mul multiplies non-negative int64s, false on overflow.
func mul(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > 1<<63-1 {
		return 0, false
	}
	return int64(lo), true
}

// muls multiplies its arguments, false on overflow.
func muls(xs ...int64) (int64, bool) {
	p := int64(1)
	for _, x := range xs {
		var ok bool
		if p, ok = mul(p, x); !ok {
			return 0, false
		}
	}
	return p, true
}

// add adds non-negative int64s, false on overflow.
func add(xs ...int64) (int64, bool) {
	var s int64
	for _, x := range xs {
		if s > 1<<63-1-x {
			return 0, false
		}
		s += x
	}
	return s, true
}

// acc sums sizes and remembers an overflow.
type acc struct {
	n  int64
	ok bool
}

func newAcc() acc { return acc{ok: true} }

func (a *acc) add(v int64, ok bool) {
	if !ok || !a.ok {
		a.ok = false
		return
	}
	a.n, a.ok = add(a.n, v)
}

func (a *acc) tensor(x in) { a.add(x.bytes()) }

func (a *acc) prod(xs ...int64) { a.add(muls(xs...)) }

// shapeless is the Cost of an op whose recorded inputs do not fit its
// model.
func shapeless(name, what string) Cost {
	return Cost{Note: name + ": " + what}
}

var overflow = func(name string) Cost { return shapeless(name, "shape too large") }

// isTrue reads a recorded bool.
func isTrue(s string) bool { return s == "True" || s == "true" || s == "1" }

// scalarInt reads a recorded integer scalar.
func scalarInt(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// notModelled names ops whose work the inputs do not fix.
var notModelled = map[string]string{
	"vllm::unified_attention_with_output": "paged attention: the context lengths are not in the op's inputs",
	"vllm::unified_attention":             "paged attention: the context lengths are not in the op's inputs",
	"_C::paged_attention_v1":              "paged attention: the context lengths are not in the op's inputs",
	"_C::paged_attention_v2":              "paged attention: the context lengths are not in the op's inputs",
	"_rocm_C::paged_attention":            "paged attention: the context lengths are not in the op's inputs",
	"vllm::moe_forward":                   "MoE layer: the expert weights are not among the op's inputs",
	"vllm::moe_forward_shared":            "MoE layer: the expert weights are not among the op's inputs",
}

// inductorScalars says whether name is one of Inductor's generated
// pointwise (triton_poi_) or reduction (triton_red_, triton_per_)
// kernels, which appear as CPU ops named like the kernel, and how many
// trailing integer arguments count its elements: xnumel, or xnumel and
// rnumel. 0 for other ops.
func inductorScalars(name string) int {
	switch {
	case strings.HasPrefix(name, "triton_poi_"):
		return 1
	case strings.HasPrefix(name, "triton_red_"), strings.HasPrefix(name, "triton_per_"):
		return 2
	}
	return 0
}

// inductor prices an Inductor kernel: its inputs are the buffers it reads
// or writes, and its last integer arguments the elements it visits
// (xnumel, times rnumel for a reduction). Each buffer counts once, but at
// most as many elements as the kernel visits: a fused gather reads a few
// rows of a large table, not the table. Without the element counts
// recorded, the op is not modelled.
func inductor(o Op, n int) Cost {
	var counts []int64
	for i := len(o.Types) - 1; i >= 0 && len(counts) < n; i-- {
		x, _ := o.input(i)
		if _, tensor := ElemSize(x.typ); tensor {
			break
		}
		if v, ok := scalarInt(x.conc); ok && v >= 0 {
			counts = append(counts, v)
		} else {
			break
		}
	}
	if len(counts) < n {
		return shapeless(o.Name, "Inductor kernel without its element counts (xnumel) recorded")
	}
	visit, ok := muls(counts...)
	if !ok {
		return overflow(o.Name)
	}
	s := newAcc()
	for i := range o.Types {
		t, isT := o.tensor(i)
		if !isT {
			continue
		}
		e, ok := t.numel()
		s.add(mul(min(e, visit), t.size()))
		if !ok {
			s.ok = false
		}
	}
	if !s.ok {
		return overflow(o.Name)
	}
	return Cost{Model: Memory, Bytes: s.n}
}
