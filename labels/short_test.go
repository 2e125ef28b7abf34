package labels

import "testing"

func TestShort(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)", "at::native::vectorized_elementwise_kernel"},
		{"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"},
		{"nvjet_tst_128x64_64x8_1x2_h_bz_coopA_TNT", "nvjet_tst_128x64_64x8_1x2_h_bz_coopA_TNT"},
		{"void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 1, 128, 1>(int)", "at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig"},
		{"Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD"},
		{"Memset (Device)", "Memset"},
		{"(weird)", "(weird)"},
		{"std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, int)", "vllm::fused_add_rms_norm_kernel"},
		{"void (anonymous namespace)::multimem_all_reduce_kernel<16>(float*)", "(anonymous namespace)::multimem_all_reduce_kernel"},
		{"", ""},
	} {
		if got := Short(tc.in); got != tc.want {
			t.Errorf("Short(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
