package opcost

import "slices"

// gemms are the dense matrix multiplies of ATen, by op name.
var gemms = map[string]func(Op) Cost{
	"aten::mm":                      func(o Op) Cost { return matmul2(o, -1, 0, 1) },
	"aten::addmm":                   func(o Op) Cost { return matmul2(o, 0, 1, 2) },
	"aten::_addmm_activation":       func(o Op) Cost { return matmul2(o, 0, 1, 2) },
	"aten::bmm":                     func(o Op) Cost { return batched(o, -1, 0, 1) },
	"aten::baddbmm":                 func(o Op) Cost { return batched(o, 0, 1, 2) },
	"aten::matmul":                  matmulLowered,
	"aten::linear":                  linear,
	"aten::_scaled_mm":              scaledMM,
	"_C::gptq_marlin_gemm":          marlin,
	"_C::marlin_gemm":               marlin,
	"_C::awq_gemm":                  nFromDims(2),
	"_C::gptq_gemm":                 nFromDims(1),
	"_moe_C::moe_wna16_marlin_gemm": moeMarlin,
	"_moe_C::moe_wna16_gemm":        moeWNA16,
}

// gemm is the cost of batch × (M×K)·(K×N) with A and B of their types,
// the output of A's type, plus extra bytes (a bias).
func gemm(name string, batch, m, n, k int64, a, b in, outSize, extra int64) Cost {
	if !nonNegative(batch, m, n, k, extra) {
		return shapeless(name, "negative dims")
	}
	dt, ok := dtypeOf(a.typ)
	if !ok {
		return shapeless(name, "no peak for the element type "+a.typ)
	}
	flops, ok := muls(2, batch, m, n, k)
	if !ok {
		return overflow(name)
	}
	s := newAcc()
	s.prod(batch, m, k, a.size())
	s.prod(batch, k, n, b.size())
	s.prod(batch, m, n, outSize)
	s.add(extra, true)
	if !s.ok {
		return overflow(name)
	}
	return Cost{Model: GEMM, FLOPs: flops, Bytes: s.n, DType: dt}
}

// matmul2 prices C = A·B (+ bias) with A [M,K] at input ia, B [K,N] at
// ib and an optional bias (any shape) at ibias.
func matmul2(o Op, ibias, ia, ib int) Cost {
	a, okA := o.tensor(ia)
	b, okB := o.tensor(ib)
	if !okA || !okB || len(a.dims) != 2 || len(b.dims) != 2 || a.dims[1] != b.dims[0] {
		return shapeless(o.Name, "want [M,K]·[K,N] inputs")
	}
	var extra int64
	if bias, ok := o.tensor(ibias); ok {
		var fits bool
		if extra, fits = bias.bytes(); !fits {
			return overflow(o.Name)
		}
	}
	return gemm(o.Name, 1, a.dims[0], b.dims[1], a.dims[1], a, b, a.size(), extra)
}

// batched prices bmm/baddbmm: A [B,M,K], B [B,K,N].
func batched(o Op, ibias, ia, ib int) Cost {
	a, okA := o.tensor(ia)
	b, okB := o.tensor(ib)
	if !okA || !okB || len(a.dims) != 3 || len(b.dims) != 3 || a.dims[0] != b.dims[0] || a.dims[2] != b.dims[1] {
		return shapeless(o.Name, "want [B,M,K]·[B,K,N] inputs")
	}
	var extra int64
	if bias, ok := o.tensor(ibias); ok {
		var fits bool
		if extra, fits = bias.bytes(); !fits {
			return overflow(o.Name)
		}
	}
	return gemm(o.Name, a.dims[0], a.dims[1], b.dims[2], a.dims[2], a, b, a.size(), extra)
}

// matmulLowered prices aten::matmul as ATen lowers it: a 1-D operand is a
// row (or column) vector; A [..., M, K] times a 2-D B folds A's leading
// dims into M (one mm); otherwise the leading dims broadcast into a batch
// (bmm).
func matmulLowered(o Op) Cost {
	a, okA := o.tensor(0)
	b, okB := o.tensor(1)
	if !okA || !okB || len(a.dims) == 0 || len(b.dims) == 0 {
		return shapeless(o.Name, "want two tensors of at least one dim")
	}
	ad, bd := slices.Clone(a.dims), slices.Clone(b.dims)
	if len(ad) == 1 {
		ad = []int64{1, ad[0]}
	}
	if len(bd) == 1 {
		bd = []int64{bd[0], 1}
	}
	m, k := ad[len(ad)-2], ad[len(ad)-1]
	if bd[len(bd)-2] != k {
		return shapeless(o.Name, "inner dims differ")
	}
	n := bd[len(bd)-1]
	if len(bd) == 2 {
		lead, ok := muls(ad[:len(ad)-2]...)
		if !ok {
			return overflow(o.Name)
		}
		if m, ok = mul(m, lead); !ok {
			return overflow(o.Name)
		}
		return gemm(o.Name, 1, m, n, k, a, b, a.size(), 0)
	}
	// Broadcast the batch dims, right-aligned.
	la, lb := ad[:len(ad)-2], bd[:len(bd)-2]
	batch := int64(1)
	for i := 1; i <= max(len(la), len(lb)); i++ {
		x, y := int64(1), int64(1)
		if i <= len(la) {
			x = la[len(la)-i]
		}
		if i <= len(lb) {
			y = lb[len(lb)-i]
		}
		if x != y && x != 1 && y != 1 {
			return shapeless(o.Name, "batch dims do not broadcast")
		}
		var ok bool
		if batch, ok = mul(batch, max(x, y)); !ok {
			return overflow(o.Name)
		}
	}
	// A and B are read as they are, not broadcast: bytes of the inputs
	// plus the batch·M·N output.
	ab, okA := a.bytes()
	bb, okB := b.bytes()
	flops, okF := muls(2, batch, m, n, k)
	s := newAcc()
	s.add(ab, okA)
	s.add(bb, okB)
	s.prod(batch, m, n, a.size())
	dt, okT := dtypeOf(a.typ)
	if !okF || !s.ok {
		return overflow(o.Name)
	}
	if !okT {
		return shapeless(o.Name, "no peak for the element type "+a.typ)
	}
	return Cost{Model: GEMM, FLOPs: flops, Bytes: s.n, DType: dt}
}

// linear prices aten::linear(input [..., K], weight [N, K], bias [N]?)
// when it has kernels of its own (its inner addmm/matmul usually does).
func linear(o Op) Cost {
	x, okX := o.tensor(0)
	w, okW := o.tensor(1)
	if !okX || !okW || len(x.dims) == 0 || len(w.dims) != 2 || x.dims[len(x.dims)-1] != w.dims[1] {
		return shapeless(o.Name, "want input [...,K] and weight [N,K]")
	}
	m, ok := muls(x.dims[:len(x.dims)-1]...)
	if !ok {
		return overflow(o.Name)
	}
	var extra int64
	if bias, ok := o.tensor(2); ok {
		if extra, ok = bias.bytes(); !ok {
			return overflow(o.Name)
		}
	}
	return gemm(o.Name, 1, m, w.dims[0], w.dims[1], x, w, x.size(), extra)
}

// scaledMM prices aten::_scaled_mm(A [M,K], B [K,N], scale_a, scale_b,
// bias?, scale_result?, out_dtype?, use_fast_accum): the output is of
// out_dtype when recorded, else of A's type (torch's default).
func scaledMM(o Op) Cost {
	a, okA := o.tensor(0)
	b, okB := o.tensor(1)
	if !okA || !okB || len(a.dims) != 2 || len(b.dims) != 2 || a.dims[1] != b.dims[0] {
		return shapeless(o.Name, "want [M,K]·[K,N] inputs")
	}
	outSize := a.size()
	if d, ok := o.input(6); ok {
		if v, ok := scalarInt(d.conc); ok {
			if s, ok := scalarTypeSizes[int(v)]; ok {
				outSize = s
			}
		}
	}
	extra := newAcc()
	for _, i := range []int{2, 3, 4, 5} {
		if t, ok := o.tensor(i); ok {
			extra.tensor(t)
		}
	}
	if !extra.ok {
		return overflow(o.Name)
	}
	return gemm(o.Name, 1, a.dims[0], b.dims[1], a.dims[1], a, b, outSize, extra.n)
}

// sizeTriple finds the (size_m, size_n, size_k) arguments of a Marlin op:
// three consecutive integer scalars after input from, the first equal to
// m and the last to k.
func (o *Op) sizeTriple(from int, m, k int64) (int64, bool) {
	for i := from; i+2 < len(o.Types); i++ {
		x, _ := o.input(i)
		y, _ := o.input(i + 1)
		z, _ := o.input(i + 2)
		vm, ok1 := scalarInt(x.conc)
		vn, ok2 := scalarInt(y.conc)
		vk, ok3 := scalarInt(z.conc)
		if ok1 && ok2 && ok3 && vm == m && vk == k && vn > 0 {
			return vn, true
		}
	}
	return 0, false
}

// tensorsBytes sums every tensor input's bytes except those in skip.
func (o *Op) tensorsBytes(skip ...int) (int64, bool) {
	s := newAcc()
	for i := range o.Types {
		if slices.Contains(skip, i) {
			continue
		}
		if t, ok := o.tensor(i); ok {
			s.tensor(t)
		}
	}
	return s.n, s.ok
}

// marlin prices vLLM's Marlin GEMM (_C::gptq_marlin_gemm, renamed
// _C::marlin_gemm): a [M,K] (input 0), an optional output c [M,N] (input
// 1), packed weights b_q_weight (input 2, K·N·bits/8 bytes), scales,
// zeros and index tensors. N is the size_n argument (the scalar triple
// size_m, size_n, size_k), else c's last dim. Bytes: every tensor input,
// plus the output when c is not given.
func marlin(o Op) Cost {
	a, okA := o.tensor(0)
	_, okW := o.tensor(2)
	if !okA || !okW || len(a.dims) != 2 {
		return shapeless(o.Name, "want a [M,K] and the packed weights")
	}
	m, k := a.dims[0], a.dims[1]
	n, ok := o.sizeTriple(3, m, k)
	c, hasC := o.tensor(1)
	if !ok && hasC && len(c.dims) == 2 {
		n, ok = c.dims[1], true
	}
	if !ok {
		return shapeless(o.Name, "no size_n argument recorded (Concrete Inputs) and no output tensor")
	}
	return quant(o, m, n, k, a, !hasC)
}

// quant builds a weight-only GEMM's cost: FLOPs 2·rows·N·K at the
// activation type, bytes every tensor input plus (when the op allocates
// it) the rows×N output.
func quant(o Op, m, n, k int64, a in, output bool) Cost {
	if !nonNegative(m, n, k) {
		return shapeless(o.Name, "negative dims")
	}
	dt, ok := dtypeOf(a.typ)
	if !ok {
		return shapeless(o.Name, "no peak for the element type "+a.typ)
	}
	flops, okF := muls(2, m, n, k)
	s := newAcc()
	s.add(o.tensorsBytes())
	if output {
		s.prod(m, n, a.size())
	}
	if !okF || !s.ok {
		return overflow(o.Name)
	}
	return Cost{Model: QuantGEMM, FLOPs: flops, Bytes: s.n, DType: dt}
}

// nFromDims prices a weight-only GEMM whose N is the last dim of input i:
// _C::awq_gemm(in [M,K], qweight [K, N/8], scales [K/G, N], zeros,
// split_k_iters) takes it from the scales (i = 2), _C::gptq_gemm(a [M,K],
// b_q_weight [K·bits/32, N], qzeros, scales, g_idx, …) from the packed
// weights (i = 1).
func nFromDims(i int) func(Op) Cost {
	return func(o Op) Cost {
		a, okA := o.tensor(0)
		w, okW := o.tensor(i)
		if !okA || !okW || len(a.dims) != 2 || len(w.dims) != 2 {
			return shapeless(o.Name, "want a [M,K] and a 2-D tensor ending in N")
		}
		return quant(o, a.dims[0], w.dims[1], a.dims[1], a, true)
	}
}

// moeMarlin prices vLLM's _moe_C::moe_wna16_marlin_gemm: a [M,K] (the
// rows of this call), packed expert weights b_q_weight [E, …] (input 2),
// the expert scales, and the scalars moe_block_size and top_k (the first
// two integer scalars) and size_m, size_n, size_k. Each of the M rows is
// multiplied by top_k experts' weights: FLOPs 2·M·top_k·N·K. Bytes are an
// upper bound: a, the M·top_k×N output (unless c is given), the expert
// tensors (3-D, E first: weights, scales, zeros) of min(E, M·top_k)
// experts, and every other tensor input (routing, bias, workspace) whole.
func moeMarlin(o Op) Cost {
	a, okA := o.tensor(0)
	wq, okW := o.tensor(2)
	if !okA || !okW || len(a.dims) != 2 || len(wq.dims) < 2 {
		return shapeless(o.Name, "want a [M,K] and packed expert weights [E,…]")
	}
	m, k, e := a.dims[0], a.dims[1], wq.dims[0]
	var scalars []int64
	for i := 3; i < len(o.Types) && len(scalars) < 2; i++ {
		x, _ := o.input(i)
		if _, tensor := ElemSize(x.typ); tensor {
			continue
		}
		if v, ok := scalarInt(x.conc); ok {
			scalars = append(scalars, v)
		}
	}
	n, ok := o.sizeTriple(3, m, k)
	if !ok || len(scalars) < 2 || scalars[1] <= 0 || e <= 0 {
		return shapeless(o.Name, "no top_k and size_n arguments recorded (Concrete Inputs)")
	}
	topk := scalars[1]
	rows, okR := mul(m, topk)
	if !okR {
		return overflow(o.Name)
	}
	_, hasC := o.tensor(1)
	// Expert tensors: those whose first dim is E (weights, scales,
	// zeros, bias); the rest (a, routing, workspace) are read in full.
	experts := newAcc()
	others := newAcc()
	for i := range o.Types {
		t, ok := o.tensor(i)
		if !ok || i == 0 {
			continue
		}
		if i >= 2 && len(t.dims) == 3 && t.dims[0] == e {
			experts.tensor(t)
		} else {
			others.tensor(t)
		}
	}
	return moe(o, a, rows, n, k, e, experts, others, !hasC)
}

// moeWNA16 prices _moe_C::moe_wna16_gemm(input [M,K], output [M,topk,N],
// b_qweight [E,…], b_scales [E,…], b_qzeros?, …): rows and N from the
// output.
func moeWNA16(o Op) Cost {
	a, okA := o.tensor(0)
	out, okO := o.tensor(1)
	wq, okW := o.tensor(2)
	if !okA || !okO || !okW || len(a.dims) != 2 || len(out.dims) < 2 || len(wq.dims) < 2 {
		return shapeless(o.Name, "want input [M,K], output [M,topk,N] and expert weights [E,…]")
	}
	rows, ok := muls(out.dims[:len(out.dims)-1]...)
	if !ok {
		return overflow(o.Name)
	}
	e := wq.dims[0]
	experts, others := newAcc(), newAcc()
	for i := range o.Types {
		t, ok := o.tensor(i)
		if !ok || i == 0 {
			continue
		}
		if i >= 2 && i <= 4 && len(t.dims) == 3 && t.dims[0] == e {
			experts.tensor(t)
		} else {
			others.tensor(t)
		}
	}
	return moe(o, a, rows, out.dims[len(out.dims)-1], a.dims[1], e, experts, others, false)
}

// moe finishes an MoE GEMM's cost: the touched experts' share of the
// expert tensors, a, the other inputs, and the rows×N output unless it is
// among the inputs already.
func moe(o Op, a in, rows, n, k, e int64, experts, others acc, output bool) Cost {
	if e <= 0 || !nonNegative(rows, n, k) {
		return shapeless(o.Name, "no experts or negative dims")
	}
	dt, ok := dtypeOf(a.typ)
	if !ok {
		return shapeless(o.Name, "no peak for the element type "+a.typ)
	}
	flops, okF := muls(2, rows, n, k)
	touched := min(e, rows)
	s := newAcc()
	ab, okA := a.bytes()
	s.add(ab, okA)
	s.add(others.n, others.ok)
	if output {
		s.prod(rows, n, a.size())
	}
	// experts.n is E whole experts' bytes: keep touched/E of it.
	part, okP := mul(experts.n/e, touched)
	s.add(part, okP && experts.ok)
	if !okF || !s.ok {
		return overflow(o.Name)
	}
	return Cost{Model: MoEGEMM, FLOPs: flops, Bytes: s.n, DType: dt, UpperBound: true,
		Note: "bytes an upper bound: the weights of min(E, M·topk) experts"}
}

// nonNegative reports whether no size is negative (a corrupt record).
func nonNegative(xs ...int64) bool {
	for _, x := range xs {
		if x < 0 {
			return false
		}
	}
	return true
}
