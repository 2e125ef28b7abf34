package opcost

// attention describes where an attention op keeps what its model needs.
type attention struct {
	// bshd: q, k, v are [B, S, H, D] (flash's own layout); else
	// [B, H, S, D] (SDPA's).
	bshd bool
	// causal is the input holding is_causal (a bool), or, with maskType,
	// the custom_mask_type (an int, causal when not 0); -1 when none.
	causal   int
	maskType bool
	// varlen is an input that, when it is a tensor, makes the op a
	// variable-length (packed) one whose per-sequence lengths are not
	// recorded; -1 when none.
	varlen int
	// bias is an input holding an additive mask tensor; -1 when none.
	bias int
}

var attentions = map[string]attention{
	"aten::scaled_dot_product_attention":            {causal: 5, varlen: -1, bias: 3},
	"aten::_scaled_dot_product_flash_attention":     {causal: 4, varlen: -1, bias: -1},
	"aten::_scaled_dot_product_efficient_attention": {causal: 6, varlen: -1, bias: 3},
	"aten::_scaled_dot_product_cudnn_attention":     {causal: 6, varlen: -1, bias: 3},
	"aten::_flash_attention_forward":                {bshd: true, causal: 8, varlen: 3, bias: -1},
	"aten::_efficient_attention_forward":            {bshd: true, causal: 9, maskType: true, varlen: 4, bias: 3},
	"flash_attn::_flash_attn_forward":               {bshd: true, causal: 5, varlen: -1, bias: -1},
}

func init() {
	for name, a := range attentions {
		special[name] = a.cost
	}
}

// special holds the models that are neither GEMMs nor table-driven memory
// ops (filled by init functions).
var special = map[string]func(Op) Cost{}

// cost prices attention over full q, k, v: FLOPs 2·B·H·Sq·Sk·(D + Dv)
// (4·B·H·Sq·Sk·D when v's head dim is q's: Q·Kᵀ and P·V), halved when
// causal; bytes q + k + v + the output (q's shape with v's head dim) +
// the additive mask when one is given.
func (at attention) cost(o Op) Cost {
	if at.varlen >= 0 {
		if _, ok := o.tensor(at.varlen); ok {
			return shapeless(o.Name, "variable-length attention: the sequence lengths are not in the op's inputs")
		}
	}
	q, okQ := o.tensor(0)
	k, okK := o.tensor(1)
	v, okV := o.tensor(2)
	if !okQ || !okK || !okV || len(q.dims) != 4 || len(k.dims) != 4 || len(v.dims) != 4 {
		return shapeless(o.Name, "want 4-D q, k and v")
	}
	// b, h, s, d of a 4-D tensor in the op's layout.
	bhsd := func(x []int64) (b, h, s, d int64) {
		if at.bshd {
			return x[0], x[2], x[1], x[3]
		}
		return x[0], x[1], x[2], x[3]
	}
	b, h, sq, dq := bhsd(q.dims)
	bk, _, sk, dk := bhsd(k.dims)
	bv, _, sv, dv := bhsd(v.dims)
	if b != bk || b != bv || sk != sv || dq != dk || !nonNegative(b, h, sq, sk, dq, dv) {
		return shapeless(o.Name, "q, k and v do not fit together")
	}
	dt, ok := dtypeOf(q.typ)
	if !ok {
		return shapeless(o.Name, "no peak for the element type "+q.typ)
	}
	flops, okF := muls(2, b, h, sq, sk, dq+dv)
	causal := false
	if at.causal >= 0 {
		if x, ok := o.input(at.causal); ok {
			if at.maskType {
				n, ok := scalarInt(x.conc)
				causal = ok && n != 0
			} else {
				causal = isTrue(x.conc)
			}
		}
	}
	if causal {
		flops /= 2
	}
	s := newAcc()
	s.tensor(q)
	s.tensor(k)
	s.tensor(v)
	s.prod(b, h, sq, dv, q.size())
	if mask, ok := o.tensor(at.bias); ok && at.bias >= 0 {
		s.tensor(mask)
	}
	if !okF || !s.ok {
		return overflow(o.Name)
	}
	c := Cost{Model: Attention, FLOPs: flops, Bytes: s.n, DType: dt}
	if causal {
		c.Note = "causal: FLOPs halved"
	}
	return c
}
