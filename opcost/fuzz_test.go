package opcost

import (
	"encoding/binary"
	"testing"
)

// FuzzOf prices ops made of arbitrary names, dims, types and scalars, as
// any trace may record them: no panic, no negative work, and a priced op
// has a model.
func FuzzOf(f *testing.F) {
	names := []string{"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear", "aten::_scaled_mm",
		"_C::marlin_gemm", "_C::gptq_marlin_gemm", "_C::awq_gemm", "_C::gptq_gemm", "_moe_C::moe_wna16_marlin_gemm", "_moe_C::moe_wna16_gemm",
		"aten::scaled_dot_product_attention", "aten::_flash_attention_forward", "aten::_efficient_attention_forward",
		"aten::copy_", "aten::add", "aten::_to_copy", "_C::fused_add_rms_norm", "_C::rotary_embedding",
		"_C_cache_ops::reshape_and_cache_flash", "triton_poi_fused_0", "triton_red_fused_1", "x::y"}
	types := []string{"c10::BFloat16", "float", "c10::Float8_e4m3fn", "int", "long int", "Scalar", "", "TensorList", "unsigned char"}
	f.Add(uint8(0), []byte{2, 0, 2, 0, 1, 0, 2, 3, 4, 5})
	f.Add(uint8(11), []byte{2, 0, 0, 3, 0, 5, 0, 7, 1, 2, 3, 4, 200, 255, 1, 1, 1})
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		o := Op{Name: names[int(which)%len(names)]}
		for len(data) >= 2 && len(o.Types) < 32 {
			nd := int(data[0] % 5)
			typ := types[int(data[1])%len(types)]
			data = data[2:]
			var dims []int64
			for i := 0; i < nd && len(data) >= 2; i++ {
				// Mostly small dims; now and then a huge or negative one.
				v := int64(int16(binary.LittleEndian.Uint16(data)))
				if v%97 == 0 {
					v *= 1 << 40
				}
				dims = append(dims, v)
				data = data[2:]
			}
			conc := ""
			if len(data) > 0 {
				conc = []string{"", "1", "True", "0", "15", "-1", "4096", "x"}[int(data[0])%8]
				data = data[1:]
			}
			o.Dims = append(o.Dims, dims)
			o.Types = append(o.Types, typ)
			o.Concrete = append(o.Concrete, conc)
		}
		c := Of(o)
		if c.FLOPs < 0 || c.Bytes < 0 {
			t.Fatalf("%+v: negative work %+v", o, c)
		}
		if c.Model == None && (c.FLOPs != 0 || c.Bytes != 0 || c.Note == "") {
			t.Fatalf("%+v: unmodelled with work or without a note: %+v", o, c)
		}
	})
}
