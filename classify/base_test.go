package classify

import (
	"strings"
	"testing"
)

func TestBaseName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"void vllm::moe::topkGatingSoftmax<8, 128, 4, 16, 32, int>(float const*, bool const*, float*, int)", "vllm::moe::topkGatingSoftmax"},
		{"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<...> > >(...)", "cutlass::device_kernel"},
		{"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*, float const*, int, int, int)", "(anonymous namespace)::softmax_warp_forward"},
		{"<unnamed>::nvfuser_pointwise_f0_c1_r0_g0(<unnamed>::Tensor<float, (int)2, (int)2>)", "<unnamed>::nvfuser_pointwise_f0_c1_r0_g0"},
		// A return type other than void; a '>' inside parentheses compares.
		{"std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long)", "vllm::fused_add_rms_norm_kernel"},
		{"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float>(cublasGemvParams<float>)", "internal::gemvx::kernel"},
		// nsys's spelling, its comparison unbracketed, cut short by nsys stats.
		{"std::enable_if<T2>(int)0&&vllm::_typeConvert<T1>::exists, void>::type vllm::fused_add_rms_norm_kern…", "vllm::fused_add_rms_norm_kern…"},
		{"std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __half, __half, __half, float, (b…", "internal::gemvx::kernel"},
		// ROCm's kernel-descriptor symbol.
		{"_permute_kernel.kd", "_permute_kernel"},
		{"triton_poi_fused__to_copy_mul_silu_split_0.kd", "triton_poi_fused__to_copy_mul_silu_split_0"},
		// Nested names with template arguments in the middle.
		{"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 128, 1>(float*)", "at::native::(anonymous namespace)::CatArrayBatchedCopy"},
		{"void foo<int>::bar<float>::baz(int)", "foo::bar::baz"},
		// Cut short by a profiler table inside the template arguments.
		{"void reduce_1Block_kernel<float, 128, 7, cublasGemvT...", "reduce_1Block_kernel"},
		// Not C++: Triton, cubins, memcpy activities.
		{"_fwd_kernel_ep_scatter_1", "_fwd_kernel_ep_scatter_1"},
		{"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN"},
		{"Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD"},
		{"[CUDA memcpy Host-to-Device]", "[CUDA memcpy Host-to-Device]"},
		{"saxpy(double *, double *, double *, double, int)", "saxpy"},
		{"  void x  ", "x"},
		{"", ""},
	} {
		if got := BaseName(tc.name); got != tc.want {
			t.Errorf("BaseName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestScope checks the rule-matching mechanism behind issue 19 item 24: a
// rule matches the base name unless it says @full, so that a family word
// inside template arguments decides nothing.
func TestScope(t *testing.T) {
	const ck = "void ck::kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffle<ck::TensorDescriptor<ck::Tuple<ck::Embed<ck::Tuple<int, int>, ck::Tuple<int, int>, false> > > >(_Float16 const*)"
	base, err := Parse(strings.NewReader("embedding/x\tembed\n"), "f", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := New(base).Classify(ck); got != Unknown {
		t.Errorf("base-scoped rule: Classify(CK conv) = %s, want %s", got, Unknown)
	}
	full, err := Parse(strings.NewReader("embedding/x\t@full\tembed\n"), "f", nil)
	if err != nil {
		t.Fatal(err)
	}
	if full[0].Scope != ScopeFull || full[0].Pattern != "embed" {
		t.Fatalf("@full rule parsed as %+v", full[0])
	}
	if got := New(full).Classify(ck).String(); got != "embedding/x" {
		t.Errorf("@full rule: Classify(CK conv) = %s, want embedding/x", got)
	}
	// The default table: the CK convolution is a convolution.
	if got := Default().Classify(ck).String(); got != "gemm/cudnn_conv" {
		t.Errorf("Default: Classify(CK conv) = %s, want gemm/cudnn_conv", got)
	}
	// Anchors apply to the subject: ^ is the start of the base name, past "void ".
	anchored := New([]Rule{{Category: MustCategory("gemm/x"), Pattern: `^ck::kernel_\w+$`}})
	if got := anchored.Classify(ck).String(); got != "gemm/x" {
		t.Errorf("anchored base rule: Classify(CK conv) = %s, want gemm/x", got)
	}
}
