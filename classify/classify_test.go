package classify

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ruleGroups holds real kernel and activity names (from torch.profiler and
// nsys traces, and kernel entry points in the libraries' sources), one table
// per rule group of rules.txt, in file order. TestRuleGroups checks each
// classification; TestEveryRuleUsed checks that each default rule is the
// first match for at least one name here or in testdata/labelled.tsv.
var ruleGroups = []struct {
	group string
	cases []struct{ name, want string }
}{
	{"memcpy", []struct{ name, want string }{
		{"Memcpy HtoD (Pageable -> Device)", "memcpy/memcpy"},
		{"Memcpy DtoD (Device -> Device)", "memcpy/memcpy"},
		{"Memcpy DtoH (Device -> Pinned)", "memcpy/memcpy"},
		{"Memcpy PtoP (Device -> Device)", "memcpy/memcpy"},
		{"[CUDA memcpy Host-to-Device]", "memcpy/memcpy"},
		{"[CUDA memcpy HtoD]", "memcpy/memcpy"},
		{"[CUDA memcpy Device-to-Device]", "memcpy/memcpy"},
		{"Memset (Device)", "memcpy/memset"},
		{"[CUDA memset]", "memcpy/memset"},
		{"memcpy32_post", "memcpy/memcpy"},
		// ROCm runs hipMemcpy/hipMemset as the runtime's blit kernels.
		{"__amd_rocclr_copyBuffer", "memcpy/memcpy"},
		{"__amd_rocclr_fillBufferAligned", "memcpy/memset"},
	}},
	{"inductor", []struct{ name, want string }{
		{"triton_poi_fused_add_all_reduce_4", "elementwise/inductor"},
		{"triton_poi_fused_constant_pad_nd_moe_forward_0", "elementwise/inductor"},
		{"triton_red_fused__to_copy_add_copy__fused_add_rms_norm_moe_forward_shared_3", "norm/inductor"},
		{"triton_red_fused_add_mean_mul_pow_rsqrt_0", "norm/inductor"},
		{"triton_per_fused_native_layer_norm_0", "norm/inductor"},
		{"triton_poi_fused__to_copy_1", "cast/inductor_to_copy"},
		{"triton_poi_fused__to_copy_clone_2", "cast/inductor_to_copy"},
		{"triton_poi_fused__to_copy_add_3", "elementwise/inductor"},
		// The op list decides: an activation in it is the MLP's activation.
		{"triton_poi_fused__unsafe_view_mul_silu_2", "activation/inductor"},
		{"triton_poi_fused_gelu_0", "activation/inductor"},
		{"triton_poi_fused_add_all_reduce_bitwise_and_bitwise_not_bitwise_or_embedding_ge_lt_masked_fill_mul_1", "embedding/inductor"},
		{"triton_tem_fused_mm_0", "gemm/triton_inductor_template"},
		{"triton_tem_fused_flex_attention_0", "attention/flex"},
		{"triton__0d1d2d3d", "elementwise/inductor"},
	}},
	{"runner metadata", []struct{ name, want string }{
		{"_prepare_pos_seq_lens_kernel", "other/runner_metadata"},
		{"_combine_sampled_and_draft_tokens_kernel", "other/runner_metadata"},
		{"_gather_block_tables_kernel", "other/runner_metadata"},
		{"_compute_slot_mappings_kernel", "other/runner_metadata"},
		{"_get_num_sampled_and_rejected_kernel", "other/runner_metadata"},
		{"eagle_prepare_inputs_padded_kernel", "other/runner_metadata"},
		{"compute_position_kernel", "other/runner_metadata"},
		{"create_flashinfer_kv_indices_triton", "other/runner_metadata"},
		{"write_req_to_token_pool_triton", "other/runner_metadata"},
		{"void vllm::advance_step_flashinfer_kernel<256>(int, int, int, long*, long const*, long const*, int*, long*, int, int const*, int*, int*, int*, int*)", "other/runner_metadata"},
	}},
	{"communication", []struct{ name, want string }{
		{"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "communication/allreduce"},
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "communication/allreduce"},
		{"ncclAllReduceRingLLKernel_sum_f32(ncclColl)", "communication/allreduce"},
		{"ncclSymkDevKernel_AllReduce_RSxLD_AGxST_sum_bf16", "communication/allreduce"},
		{"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "communication/allgather"},
		{"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "communication/reduce_scatter"},
		{"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", "communication/send_recv"},
		{"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)", "communication/send_recv"},
		{"ncclSendRecvKernel_copy_i8(ncclColl)", "communication/send_recv"},
		{"ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "communication/broadcast"},
		{"ncclDevKernel_AllToAll_RING_SIMPLE", "communication/all_to_all"},
		{"ncclDevKernel_Reduce_Sum_bf16_RING_LL", "communication/reduce"},
		{"ncclKernel_Reduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "communication/reduce"},
		{"ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", "communication/other"},
		{"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", "communication/allreduce"},
		{"void sglang::cross_device_reduce_2stage<__nv_bfloat16, 8>", "communication/allreduce"},
		{"quickreduce::allreduce_prototype_twoshot", "communication/allreduce"},
		{"void quick_reduce_kernel<__hip_bfloat16>", "communication/allreduce"},
		{"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)", "communication/allreduce"},
		{"two_shot_all_reduce_kernel", "communication/allreduce"},
		{"void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<(flashinfer::trtllm_allreduce_fusion::AllReduceFusionPattern)1, __nv_bfloat16, 2, true, true>(flashinfer::trtllm_allreduce_fusion::AllReduceFusionParams<__nv_bfloat16>)", "communication/allreduce"},
		{"flashinfer::trtllm_mnnvl_allreduce::twoshotAllreduceKernel", "communication/allreduce"},
		{"void flashinfer::trtllm_allreduce::lamport_initialize_kernel<float>(float*, int)", "communication/allreduce"},
		{"c10d::symmetric_memory::multimem_all_gather_kernel", "communication/allgather"},
		{"void c10d::symmetric_memory::reduce_scatter_kernel<float>", "communication/reduce_scatter"},
		{"void moe_comm::moeA2ADispatchKernel<8>", "communication/all_to_all"},
		{"deep_ep::intranode::dispatch", "communication/all_to_all"},
		{"void deep_ep::internode_ll::combine<false, 7168>(void*, int*, ...)", "communication/all_to_all"},
		{"(anonymous namespace)::dispatchKernel<", "communication/all_to_all"},
		{"void combineKernel<__nv_bfloat16, 256>(pplx::CombineArgs)", "communication/all_to_all"},
		// pplx-kernels' generic names count only in their template form.
		{"void (anonymous namespace)::dispatchKernel<4u, true, true>(int*, unsigned long, std::byte*, unsigned long, unsigned long, float*)", "communication/all_to_all"},
		{"dispatchKernel", "other/unknown"},
		{"userbuffers_fp16_sum_inplace_gpu_rr_rs", "communication/reduce_scatter"},
		{"userbuffers_fp16_sum_inplace_gpu_rr_ag", "communication/allgather"},
		{"void c10d::symmetric_memory::barrier_kernel(unsigned int**, int, int, int)", "communication/other"},
	}},
	{"multi_tensor_apply", []struct{ name, want string }{
		{"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::CopyFunctor<int, long, 2, 1, 1>, at::native::Copy<int, long> >(at::native::(anonymous namespace)::TensorListMetadata<2>)", "elementwise/copy"},
		{"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float, float, float, float, float, adamMode_t, float, int, int>(int, int volatile*, TensorListMetadata<4>&)", "elementwise/optimizer"},
		{"void multi_tensor_apply_kernel<TensorListMetadata<1>, L2NormFunctor<float, 8, 1, 1>, float*, float*, bool, int>(...)", "elementwise/optimizer"},
		{"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 3, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float*, float*>", "elementwise/optimizer"},
		{"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float>", "elementwise/aten"},
	}},
	{"gemm and conv libraries", []struct{ name, want string }{
		{"void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)", "gemm/cudnn_conv"},
		{"volta_scudnn_128x64_relu_interior_nn_v1", "gemm/cudnn_conv"},
		{"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer", "gemm/cudnn_conv"},
		{"void cutlass_cudnn_train::Kernel<cutlass_tensorop_s1688wgrad_optimized_tf32_256x64_16x4_nhwc_align4>(cutlass_tensorop_s1688wgrad_optimized_tf32_256x64_16x4_nhwc_align4::Params)", "gemm/cudnn_conv"},
		{"void cutlass_cudnn_train::Kernel<cutlass_cudnn_train::conv::kernel::ImplicitGemmConvolution<cutlass_cudnn_train::conv::threadblock::ImplicitGemmMultistage<cutlass_cudnn_train::gemm::GemmShape<128, 128, 32>, ", "gemm/cudnn_conv"},
		{"void cudnn::cnn::wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)", "gemm/cudnn_conv"},
		{"void fft2d_r2c_32x32<float, false, 0u, false>(float2*, float const*, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)", "gemm/cudnn_conv"},
		{"cudnn::gemm::computeOffsetsKernel(cudnn::gemm::ComputeOffsetsParams)", "gemm/cudnn_conv"},
		{"miopenSp3AsmConv_v21_1_3_gfx9_fp32_stride1", "gemm/cudnn_conv"},
		{"Im2d2Col_v2", "gemm/cudnn_conv"},
		{"Col2Im2dU", "gemm/cudnn_conv"},
		// Composable Kernel: the ck::Embed<...> descriptors of the template
		// arguments are no embedding (issue 19 item 24).
		{"void ck::kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffle<ck::GridwiseGemmMultipleABD_xdl_cshuffle<ck::Tuple<_Float16>, ck::Tuple<_Float16>, float, _Float16>, ck::TensorDescriptor<ck::Tuple<ck::Embed<ck::Tuple<int, int>, ck::Tuple<int, int>, false> >, ck::Tuple<ck::Sequence<0> >, ck::Tuple<ck::Sequence<1, 2> >, ck::Sequence<1, 2>, long> >(_Float16 const*, _Float16 const*, _Float16*)", "gemm/cudnn_conv"},
		{"volta_sgemm_128x64_nn", "gemm/cublas"},
		{"ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x6_tn", "gemm/cublas"},
		{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "gemm/cublas"},
		{"trt_ampere_h16816gemm_64x64_ldg8_relu_stages_64x5_tn_v1", "gemm/cublas"},
		{"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)", "gemm/cublas"},
		{"cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x128x64_1x1x1_0_tnn_align8_warpspecialized_cooperative_epi_tma", "gemm/cublas"},
		{"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<...>, float, float)", "gemm/cublas"},
		{"void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>(cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*)", "gemm/cublas"},
		{"void dot_kernel<float, 128, 0, cublasDotParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> > >(cublasDotParams<...>)", "gemm/cublas"},
		{"void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, cublasLtEpilogue_t, int, float*, long, void*, long, int, float*)", "gemm/cublas"},
		{"void magma_sgemmEx_kernel<float, float, float, false, false, 6, 3, 5, 3, 3>(int, int, int, Tensor, int, Tensor, int, Tensor, int, Tensor, int, int, int, float const*, float const*, float, float, int)", "gemm/cublas"},
		{"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", "gemm/cublaslt_nvjet"},
		{"Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1", "gemm/rocm_hipblaslt"},
	}},
	{"weight prep", []struct{ name, want string }{
		{"void marlin::gptq_marlin_repack_kernel<256, 4, false>(unsigned int const*, unsigned int const*, unsigned int*, int, int)", "other/weight_prep"},
		{"gptq_marlin_moe_repack_kernel", "other/weight_prep"},
		{"machete::prepack_B_kernel", "other/weight_prep"},
		// A GEMM over pre-shuffled weights is a GEMM.
		{"aiter::fp8gemm_bf16_blockscale_BpreShuffle_32x128", "gemm/fp8_blockscale"},
		{"_ZN2ck40kernel_gemm_xdl_cshuffle_v3_multi_d_b_preshuffle", "gemm/triton"},
	}},
	{"hyper-connections", []struct{ name, want string }{
		{"mhc_post_tilelang_kernel", "elementwise/mhc"},
		{"void aiter::mhc_post_kernel<std::bfloat16_t, 256, 4, 1024, false>(std::bfloat16_t*, float*, int)", "elementwise/mhc"},
		{"mhc_pre_big_fuse_with_norm_tilelang_kernel", "norm/mhc"},
		{"void deep_gemm::sm100_mega_mhc_impl<5120u, 40u, 148u, true, true, false, 0u>(CUtensorMap_st, CUtensorMap_st)", "norm/mhc"},
		{"void aiter::mhc_pre_gemm_sqrsum_kernel<std::bfloat16_t, 256, 64, 16, 128>(float*, float*)", "gemm/other"},
		{"void deep_gemm::sm100_tf32_hc_prenorm_gemm_impl<24u, 16384u, 64u, 32u, 64u, 2u, 128u, 12u, 128u, 128u>(unsigned int, CUtensorMap_st, float*)", "gemm/deepgemm"},
	}},
	{"moe", []struct{ name, want string }{
		{"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x256x128x1_swiglu", "moe/triton_kernels_matmul_ogs"},
		{"bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f", "moe/trtllm_gen_bmm"},
		{"void marlin_moe_wna16::Marlin<(vllm::ScalarType::Id)5, 256, 1, 8, 8, 4, true, 4, 8, false>(...)", "moe/marlin_moe"},
		{"void deep_gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 128u, 128u, 4u, 8u, 128u, 2u, (deep_gemm::GemmType)1>(__nv_bfloat16*, float*, int*, unsigned int, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap)", "moe/deepgemm_grouped"},
		{"void deep_gemm::sm90_fp8_gemm_1d2d_impl<(cute::UMMA::Major)0, 0u, 0u, 0u, 128u, (deep_gemm::GemmType)2, false>", "moe/deepgemm_grouped"},
		{"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int> >, ...> >", "moe/cutlass_grouped"},
		{"void cutlass::Kernel<cutlass::gemm::kernel::MoeFCGemm<cutlass::gemm::threadblock::MmaMultistage<...> > >", "moe/cutlass_grouped"},
		{"fused_moe_kernel_gptq_awq", "moe/wna16_gemm"},
		{"void moe_wna16_gemm_kernel<__nv_bfloat16, 4, 1, 2, 32>", "moe/wna16_gemm"},
		{"fused_moe_kernel", "moe/fused_moe_triton"},
		{"void tensorrt_llm::kernels::expandInputRowsKernel<__nv_bfloat16, __nv_bfloat16, false>(...)", "moe/permute_unpermute"},
		{"void tensorrt_llm::kernels::finalizeMoeRoutingKernel<__nv_bfloat16, __nv_bfloat16, 1>(...)", "moe/permute_unpermute"},
		{"_fwd_kernel_ep_scatter_1", "moe/permute_unpermute"},
		{"_finalize_matmul_scatter_bf16", "moe/permute_unpermute"},
		{"deepep_permute_triton_kernel", "moe/permute_unpermute"},
		{"void moe::dev::activation::activationKernel<moe::dev::activation::KernelParams<__nv_bfloat16, true> >", "moe/activation"},
		{"void tensorrt_llm::kernels::doActivationKernel<__nv_bfloat16, __nv_bfloat16, cutlass::epilogue::thread::SiLu<float> >", "moe/activation"},
		{"void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, int, unsigned long, int*)", "moe/align_sort"},
		{"count_and_sort_expert_tokens_kernel", "moe/align_sort"},
		{"_count_expert_num_tokens", "moe/align_sort"},
		{"void moe::dev::routing::routingRenormalize::routingIndicesHistogramScoresKernel<moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true> >", "moe/routing"},
		{"void vllm::moe::topkGatingSoftmax<8, 128, 4, 16, 32, int>(float const*, bool const*, float*, int, int*, int*, int, int, int)", "moe/routing"},
		{"void vllm::moe::grouped_topk_kernel<__nv_bfloat16>", "moe/routing"},
		{"moe_fused_gate_kernel_dynamic", "moe/routing"},
		{"_combined_routing_memset", "moe/routing"},
		{"_topk_forward", "moe/routing"},
		{"void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, float*)", "moe/routing"},
		{"moe_lora_align_block_size_kernel", "moe/align_sort"},
		{"void get_group_gemm_starts<cutlass::float_e4m3_t, cutlass::bfloat16_t, float>(int*, cutlass::float_e4m3_t**, cutlass::float_e4m3_t**, cutlass::bfloat16_t**, float**, float**, cutlass::float_e4m3_t*, cutlass::float_e4m3_t*, cutlass::bfloat16_t*, float*, float*, long, long, bool, bool)", "moe/align_sort"},
		{"void ck::kernel_grouped_gemm_xdl<ck::GridwiseGemm_k0mk1_k0nk1_mn_xdl_cshuffle_v1<_Float16, float, _Float16>, ck::tensor_operation::device::GemmDesc>(void const*, int)", "moe/cutlass_grouped"},
		// ROCm AITER's fused-MoE expert GEMMs: assembly, two-stage, CK's.
		{"aiter::fmoe_int8_g1u1_subGU_256", "moe/rocm_aiter"},
		{"mfma_moe1_silu_mul_afp8_wfp4_fp8_t32x128x256_pm1_fp8q_sort_async_v32", "moe/rocm_aiter"},
		{"ck::kernel_moe_gemm", "moe/rocm_aiter"},
		// expert sorting (AITER, CK, TRT-LLM's expert maps) and the combine's top-k sum.
		{"void aiter::opus_moe_sorting_entry<aiter::MoeSortingKernel<aiter::MoeSortingProblemEx<int, float, 1, true, false, false, true, 0>>>(...)", "moe/align_sort"},
		{"tensorrt_llm::kernels::cutlass_kernels::globalExpertPrefixSumKernel", "moe/align_sort"},
		{"tensorrt_llm::kernels::cutlass_kernels::fusedBuildExpertMapsSortFirstTokenKernel", "moe/align_sort"},
		{"moe_reduction_kernel_plain_bf16_topk8_md7168", "moe/permute_unpermute"},
		// dynB: the dynamic batch of routed tokens, with or without a fused SwiGLU.
		{"bmm_E4m3_E4m3E4m3_Fp32_t128x8x128u2_s8_et64x8_m64x8x32_c1x1x1_rM_TN_transOut_noShfl_dsFp8_schedS_bN_tma_tmaSf_rgTma_clmp_lbW2_dynB_sm100f", "moe/trtllm_gen_bmm"},
		{"bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s6_et128x8_m128x8x16", "gemm/trtllm_gen_bmm"},
		{"void flashinfer::trtllm_dsv3_router_gemm::router_gemm_kernel<__nv_bfloat16, float, 128, 8, 16, 256, 7168>(float*)", "moe/routing"},
		{"void aiter::topk_softplus_kernel_opt<hip_bfloat16, hip_bfloat16, 8>", "moe/routing"},
		// TransformerEngine's permutation; ROCm's descriptor symbol.
		{"_permute_kernel", "moe/permute_unpermute"},
		{"_permute_kernel.kd", "moe/permute_unpermute"},
		{"_sort_chunks_by_map_kernel", "moe/permute_unpermute"},
		// DeepSeek-V4's top-k is its indexer's; V3's is the router's.
		{"_dsv4_topk_kernel", "attention/sparse_indexer"},
		{"tensorrt_llm::kernels::deepseek_v3_topk_kernel", "moe/routing"},
	}},
	{"attention and kv_cache", []struct{ name, want string }{
		{"indexer_k_quant_and_cache_kernel", "attention/sparse_indexer"},
		{"_build_flashinfer_mixed_sparse_indices_kernel", "attention/sparse_indexer"},
		// A fusion that ends by storing K/V is a cache write.
		{"void (anonymous namespace)::fused_rope_store_kernel<true, 128l, true, __nv_bfloat16, long, 16u>", "kv_cache/write"},
		{"_fused_kv_compress_norm_rope_insert_sparse_attn", "kv_cache/write"},
		{"kernel_mha", "attention/trtllm_gen"},
		{"_paged_decode_split_kernel", "attention/triton"},
		{"_paged_decode_reduce_kernel", "attention/triton"},
		{"_sparse_attn_decode_partial_kernel", "attention/triton"},
		{"sage_fwd", "attention/sage"},
		{"sage_fwd_mxfp4", "attention/sage"},
		{"void qk_int8_sv_f8_attn_kernel<128u, 128u, 128u, 64u, 128u, 4u, (QuantGranularity)2, (QuantGranularity)2, float, false, __nv_bfloat16, (ComputeUnit)0, (MaskMode)0, false, true, false>(CUtensorMap, CUtensorMap, CUtensorMap, __nv_bfloat16*, float*, float*, float*, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, float)", "attention/sage"},
		{"aiter::fmha_bwd_hd64_dq_convert_fp16", "attention/rocm_ck"},
		{"void ck::kernel_grouped_gemm_softmax_gemm_xdl_cshuffle_v1<ck::GridwiseBatchedGemmSoftmaxGemm_Xdl_CShuffle<_Float16, float, _Float16> >(void const*, int)", "attention/rocm_ck"},
		{"deep_gemm::sm100_paged_mqa_logits", "attention/sparse_indexer"},
		{"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>(__nv_bfloat16 const*, __nv_bfloat16 const*, unsigned char*, unsigned char*, long const*, long, long, long, long, long, int, int, int, float const*, float const*, int)", "kv_cache/write"},
		{"void flashinfer::RopeQuantizeAppendPagedKVCacheKernel<...>", "kv_cache/write"},
		{"void (anonymous namespace)::store_kvcache<2048l, 4, false, long>((anonymous namespace)::StoreKVCacheParams)", "kv_cache/write"},
		{"cp_gather_and_upconvert_fp8_kv_cache", "kv_cache/gather"},
		{"void vllm::gather_cache<__nv_bfloat16, 576>", "kv_cache/gather"},
		{"void vllm::copy_blocks_kernel<c10::BFloat16>(long*, long*, long const*, int)", "kv_cache/copy_convert"},
		{"void vllm::convert_fp8_kernel<unsigned char, __nv_bfloat16, (vllm::Fp8KVCacheDataType)1>", "kv_cache/copy_convert"},
		{"void flash::flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512>, true>", "attention/flashmla"},
		{"smxx::decode::get_mla_metadata_kernel", "attention/flashmla"},
		{"void flashinfer::mla::BatchMLAPagedAttentionKernel<...>", "attention/flashinfer_mla"},
		{"void cutlass::device_kernel<cutlass::fmha::kernel::Sm100FmhaMlaKernelTmaWarpspecialized<...> >", "attention/cutlass_mla"},
		{"void flashinfer::MergeStateInPlaceKernel<8u, 16u, 8u, 8u, __nv_bfloat16>", "attention/merge_states"},
		{"void ck_tile::kentry<2, ck_tile::FmhaBatchPrefillWithPagedKVCacheKernel<ck_tile::BlockFmhaBatchPrefillPipelineQRKSVSAsync<", "attention/rocm_ck"},
		{"void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 1, 128, 256, false, 4, 1>", "attention/rocm_paged"},
		{"void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<...>, (flashinfer::MaskMode)1>", "attention/flashinfer"},
		{"void flashinfer::PODWithKVCacheTensorKernel<...>", "attention/flashinfer"},
		{"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, true, false, true, true, true, true, false>, flash::CollectiveEpilogueFwd<...>, flash::VarlenDynamicPersistentTileScheduler<128, 256, 128, false, true, true>, true> > >(...)", "attention/fa3"},
		{"kernel_cutlass_FlashAttentionForwardSm100_object_at__0x7f", "attention/fa4"},
		{"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", "attention/torch_sdpa_flash"},
		{"fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)", "attention/xformers_memeff"},
		{"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128, (int)64, (int)4, (bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)128, (int)64, (int)4, cutlass::bfloat16_t>>, (bool)0, (bool)1, (bool)0, (bool)0, (bool)1, (bool)1, (bool)0, (bool)0>(flash::Flash_fwd_params)", "attention/fa2"},
		{"void vllm::paged_attention_v2_kernel<unsigned short, unsigned short, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>", "attention/paged"},
		{"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext", "attention/trtllm_gen"},
		{"void kernel_mha<...>(xqa::KernelParams)", "attention/trtllm_gen"},
		{"kernel_unified_attention_3d", "attention/triton"},
		{"_fwd_kernel_stage2", "attention/triton"},
		{"attn_fwd", "attention/triton"},
		{"_chunk_scan_fwd_kernel", "attention/linear_ssm"},
		{"_causal_conv1d_update_kernel", "attention/linear_ssm"},
		{"chunk_gated_delta_rule_fwd_kernel_h_blockdim64", "attention/linear_ssm"},
		{"merge_16x16_to_64x64_inverse_kernel", "attention/linear_ssm"},
		{"void selective_scan_fwd_kernel<Selective_Scan_fwd_kernel_traits<32, 4, 1, true, true, true, true, false, c10::BFloat16, float, c10::BFloat16> >(SSMParamsBase)", "attention/linear_ssm"},
		{"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0", "attention/other"},
		{"void cutlass::device_kernel<cutlass::fmha::kernel::Sm100FmhaFwdKernelTmaWarpspecialized<...> >", "attention/other"},
	}},
	{"rotary", []struct{ name, want string }{
		{"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)", "rotary/rotary"},
		{"flashinfer::BatchQKApplyLlama31RotaryPosIdsKernel", "rotary/rotary"},
		{"_triton_mrope_forward", "rotary/rotary"},
		{"void tensorrt_llm::kernels::fusedQKNormRopeKernel<__nv_bfloat16, 128, true>", "rotary/rotary"},
		{"_triton_rope_qk_kernel", "rotary/rotary"},
	}},
	{"norm", []struct{ name, want string }{
		{"void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 256, 16, false, false, true, 1>(std::bfloat16_t*, std::bfloat16_t*, float*, std::bfloat16_t*, std::bfloat16_t*, std::bfloat16_t*, double, int, int, int, int, int, int, int, bool)", "norm/rocm"},
		{"void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdPipelineOnePass<", "norm/rocm"},
		{"void vllm::rms_norm_static_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>", "norm/fused_quant"},
		{"void flashinfer::norm::RMSNormQuantKernel<8u, __nv_bfloat16, __nv_fp8_e4m3>", "norm/fused_quant"},
		{"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)", "norm/batch_norm"},
		{"void at::native::batch_norm_collect_statistics_kernel<at::native::InvStd, float, float, float, int>", "norm/batch_norm"},
		{"MIOpenBatchNormFwdTrainSpatial", "norm/batch_norm"},
		{"void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, float, int, int)", "norm/norm"},
		{"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, long, float const*, float const*, float const*, float const*, float*, float*)", "norm/norm"},
		{"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, float*, float*)", "norm/norm"},
		{"void cuApplyLayerNorm<float, float, float>(float*, float*, float*, float const*, int, int, float, float const*, float const*)", "norm/norm"},
		{"l2norm_fwd_kernel", "norm/norm"},
		{"void (anonymous namespace)::fused_qknorm_warp<128l, true, __nv_bfloat16>", "norm/norm"},
		{"_fused_rms_fp8_group_quant_kernel", "norm/fused_quant"},
		{"_q_kv_norm_quant_kernel", "norm/fused_quant"},
		// nsys's spelling of a SFINAE return type, cut short by nsys stats.
		{"std::enable_if<T2>(int)0&&vllm::_typeConvert<T1>::exists, void>::type vllm::fused_add_rms_norm_kern…", "norm/norm"},
	}},
	{"activation fused with quant", []struct{ name, want string }{
		{"_silu_mul_fp8_quant_deep_gemm", "activation/fused_quant"},
		{"void vllm::silu_and_mul_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>", "activation/fused_quant"},
		{"silu_and_mul_nvfp4_quant_kernel", "activation/fused_quant"},
	}},
	{"cast", []struct{ name, want string }{
		{"void vllm::cvt_fp16_to_fp4<c10::BFloat16, false>", "cast/fp4_quant"},
		{"nvfp4QuantAndPerTokenScaleKernel", "cast/fp4_quant"},
		{"void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)2, __nv_bfloat16, 32, true>(int, int, int, int, __nv_bfloat16 const*, float const*, unsigned int*, unsigned int*, tensorrt_llm::QuantizationSFLayout)", "cast/fp4_quant"},
		{"void vllm::dynamic_per_token_scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>", "cast/fp8_quant"},
		{"void vllm::segmented_max_reduction<c10::BFloat16, c10::Float8_e4m3fn>(float*, c10::BFloat16 const*, long)", "cast/fp8_quant"},
		{"void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu(at::Tensor const&, long, long, double)::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, fbgemm_gpu::_float_to_hfp8_gpu(at::Tensor const&, long, long, double)::{lambda(float)#1}, at::detail::Array<char*, 2>)", "cast/fp8_quant"},
		{"void vllm::static_scaled_int8_quant_kernel<c10::BFloat16, float>", "cast/int8_quant"},
		{"_per_token_quant_int8", "cast/int8_quant"},
		{"SubTensorOpWithCastTensor4d", "cast/miopen"},
		{"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, ...)", "cast/aten_copy_cast"},
		{"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, ...)", "cast/aten_copy_cast"},
		{"void at::native::elementwise_kernel<(int)128, (int)4, void at::native::gpu_kernel_impl<at::native::<unnamed>::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]...", "cast/aten_copy_cast"},
		{"void at::native::vectorized_elementwise_kernel<(int)8, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)", "cast/aten_copy_cast"},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::float8_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}", "cast/aten_copy_cast"},
	}},
	{"not sampling, then sampling", []struct{ name, want string }{
		{"void at::native::(anonymous namespace)::upsample_bilinear2d_out_frame<float, float>(int, float, float, bool, at::GenericPackedTensorAccessor<float, 4ul, at::DefaultPtrTraits, long>, at::GenericPackedTensorAccessor<float, 4ul, at::DefaultPtrTraits, long>)", "elementwise/aten"},
		{"void cunn_ClassNLLCriterion_updateOutput_kernel<float, float>(float*, float*, float*, long*, float*, int, int, int, int, long)", "elementwise/aten"},
		{"void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxBackwardEpilogue>(float*, float const*, float const*, long)", "elementwise/aten"},
		{"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4>)", "sampling/sampling"},
		{"void at::native::mbtopk::radixFindKthValues<float, unsigned int, unsigned int, 2>(...)", "sampling/sampling"},
		{"void at_cuda_detail::cub::DeviceSegmentedRadixSortKernel<at_cuda_detail::cub::DeviceRadixSortPolicy<float, long, int>::Policy800, false, true, float, long, int, int*, int*, int, at_cuda_detail::cub::detail::identity_decomposer_t>(...)", "sampling/sampling"},
		{"void at::native::bitonicSortKVInPlace<2, -1, 16, 16, float, long, at::native::LTOp<float, true>, unsigned int>(...)", "sampling/sampling"},
		{"void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub::BlockScanAlgorithm)0, (cub::BlockReduceAlgorithm)2, 4u, true, float, int>(...)", "sampling/sampling"},
		{"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)", "sampling/sampling"},
		{"void vllm::apply_repetition_penalties_kernel<c10::BFloat16>", "sampling/sampling"},
		{"apply_token_bitmask_inplace_kernel", "sampling/sampling"},
		{"argmax_kernel_1", "sampling/sampling"},
		{"void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, at::native::templates::cuda::exponential_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, at::CUDAGeneratorImpl*)::{lambda()#1}", "sampling/sampling"},
	}},
	{"embedding", []struct{ name, want string }{
		{"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(...)", "embedding/gather_index"},
		{"void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)", "embedding/gather_index"},
		{"void at::native::_scatter_gather_elementwise_kernel<128, 4, at::native::_cuda_scatter_gather_internal_kernel<true, float>::operator()<at::native::ReduceAdd>(...)", "embedding/gather_index"},
		{"void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float, long>(long const*, float const*, float*, int, long, int)", "embedding/gather_index"},
		{"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 2ul>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, ...)", "embedding/gather_index"},
		{"void fbgemm_gpu::_block_bucketize_sparse_features_cuda_kernel1<int, int>(int, int, int const*, int, int const*, int const*, int*)", "embedding/gather_index"},
		{"void at::native::take_kernel<float>", "embedding/gather_index"},
	}},
	{"other", []struct{ name, want string }{
		{"hadamard_transform_kernel", "other/hadamard"},
		{"void marlin::permute_cols_kernel(int4 const*, int const*, int4*, int, int, int)", "other/quant_prep"},
	}},
	{"gemm families", []struct{ name, want string }{
		{"void marlin::Marlin<(vllm::ScalarType::Id)5, 256, 1, 8, 8, 4, true, 4, 8, false>(...)", "gemm/marlin"},
		{"void cutlass::device_kernel<machete::MacheteKernelTemplate<...> >", "gemm/machete"},
		{"void deep_gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 128u, 128u, 4u, 8u, 128u, 2u, (deep_gemm::GemmType)0>", "gemm/deepgemm"},
		{"_lora_shrink_kernel", "gemm/lora"},
		{"_bgmv_expand_kernel", "gemm/lora"},
		{"void gemm_half_q_half_gptq_4bit_kernel<true, 1>(__half const*, unsigned int const*, unsigned int const*, __half const*, __half*, int, int, int, int, int const*, bool)", "gemm/gptq_awq"},
		{"_w8a8_block_fp8_matmul", "gemm/fp8_blockscale"},
		{"void cutlass::device_kernel<vllm::cutlass_3x_gemm_fp8_blockwise<...> >", "gemm/fp8_blockscale"},
		{"DeviceGemmFp4GemmSm100", "gemm/nvfp4"},
		{"bmm_Bfloat16_Bfloat16_Fp32_t128x64x64_s4_et128x64_m128x64x16_cga1x1x1_16dp256b_TN_schedS_sm100a", "gemm/trtllm_gen_bmm"},
		{"void wvSplitK_hf_sml_<__hip_bfloat16, 64, 2, 16, 8, 2, 1>", "gemm/rocm_skinny"},
		{"void cutlass::Kernel2<cutlass_2x_gemm<...> >", "gemm/cutlass"},
		{"void cutlass::device_kernel<vllm::(anonymous namespace)::cutlass_3x_gemm<cutlass::float_e4m3_t, cutlass::bfloat16_t, vllm::c3x::ScaledEpilogue> >", "gemm/cutlass"},
		{"mm_kernel_general_host_tma", "gemm/triton"},
		{"matmul_kernel", "gemm/triton"},
		{"void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<...> >", "gemm/other"},
		{"compute_gemm_pointers(float2 **, const float2 *, int, const float2 *, int, const float2 *, int, int)", "gemm/other"},
		{"void ck::kernel_batched_gemm_xdlops_v2r3<ck::GridwiseGemm_k0mk1_k0nk1_mn_xdlops_v2r3<256, _Float16, float, _Float16>, ck::TensorDescriptor<ck::Tuple<ck::Embed<ck::Tuple<int, int>, ck::Tuple<int, int>, false> >, ck::Tuple<ck::Sequence<0> >, ck::Tuple<ck::Sequence<1, 2> >, ck::Sequence<1, 2>, long> >(_Float16 const*, _Float16 const*, _Float16*)", "gemm/other"},
	}},
	{"late quant and activations", []struct{ name, want string }{
		{"void transformer_engine::detail::cast_transpose_kernel<8, false, float, __nv_bfloat16, __nv_fp8_e4m3>", "cast/quant"},
		{"dequantize_kernel", "cast/quant"},
		{"void vllm::act_and_mul_kernel<c10::BFloat16, &(c10::BFloat16 vllm::silu_kernel<c10::BFloat16>(c10::BFloat16 const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)", "activation/gated"},
		{"void sgl_hip::activation::act_and_mul_kernel<__hip_bfloat16, &(silu<__hip_bfloat16>)>(__hip_bfloat16*, __hip_bfloat16 const*, int)", "activation/gated"},
		{"swiglu_kernel", "activation/gated"},
		{"void vllm::activation_kernel<c10::BFloat16, &(c10::BFloat16 vllm::gelu_new_kernel<c10::BFloat16>(c10::BFloat16 const&))>", "activation/unary"},
		{"void at::native::vectorized_elementwise_kernel<(int)8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase &, at::native::GeluType)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)", "activation/unary"},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3>)", "activation/unary"},
	}},
	{"elementwise", []struct{ name, want string }{
		{"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, ...)", "elementwise/copy"},
		{"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 128, 1>(float*, ...)", "elementwise/copy"},
		{"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)0>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)", "elementwise/copy"},
		{"void genericReformat::copyVectorizedKernel<double, __half, __half, (bool)1, (bool)0, (int)1>(unsigned int, const void *, genericReformat::ArrayN<T6>)", "elementwise/copy"},
		{"fused_adam_kernel", "elementwise/optimizer"},
		{"void at::native::amp_update_scale_cuda_kernel(float*, int*, float const*, double, double, int)", "elementwise/optimizer"},
		{"SubTensorOpWithSubTensor2d", "elementwise/copy"},
		{"SubTensorOpWithScalar1d", "elementwise/miopen"},
		{"SubTensorOpWithTransform5d", "elementwise/miopen"},
		{"lamb_stage_1_kernel", "elementwise/optimizer"},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)", "elementwise/aten"},
		{"void at::native::reduce_kernel<128, 4, at::native::R...", "elementwise/aten"},
		{"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*, float const*, int, int, int)", "elementwise/aten"},
		{"void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(...)", "elementwise/aten"},
		{"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, float*, long*)", "elementwise/aten"},
		{"void cub::DeviceScanKernel<cub::DeviceScanPolicy<int>::Policy600, int*, int*, cub::ScanTileState<int, true>, cub::Sum, cub::NullType, int>(int*, int*, cub::ScanTileState<int, true>, int, cub::Sum, cub::NullType, int)", "elementwise/aten"},
		{"void at::to_dense_representation_kernel<float>(long, long, long const*, float const*, long const*, float*)", "elementwise/aten"},
		{"sm50_xmma_pooling_fw_4d_FP16FP32NHWC_Average_FastDiv_CAlign8_execute_kernel_trt", "elementwise/aten"},
		{"<unnamed>::nvfuser_pointwise_f0_c1_r0_g0(<unnamed>::Tensor<float, (int)2, (int)2>, <unnamed>::Tensor<float, (int)2, (int)2>)", "elementwise/nvfuser"},
		{"add_func_kernel_rank_1", "elementwise/flaggems_triton"},
		{"cupy_true_divide__float32_float32_float32", "elementwise/cupy"},
	}},
	// Families that held-out set D's first measurement missed (testdata/README.md).
	{"set D families", []struct{ name, want string }{
		// PyTorch's embedding backward (aten/src/ATen/native/cuda/EmbeddingBackwardKernel.cu).
		{"void at::native::(anonymous namespace)::krn_partials_per_segment<long>(long*, long const*, long, long)", "embedding/gather_index"},
		{"compute_num_of_partial_segments", "embedding/gather_index"},
		{"void at::native::(anonymous namespace)::compute_grad_weight_bags<float, long>(long const*, float const*, long const*, long const*, long const*, long, long, long, long, long const*, float const*, float*)", "embedding/gather_index"},
		{"sum_and_scatter", "embedding/gather_index"},
		{"lpnorm_cleanup", "elementwise/aten"},
		// The CUDA runtime's copy and fill kernels as a CUDA graph records them.
		{"memcpy64", "memcpy/memcpy"},
		{"memset32", "memcpy/memset"},
		// FP8 quantizers that do not say "quant", and a GEMM that does.
		{"_per_token_fp8_kernel", "cast/fp8_quant"},
		{"_grouped_per_block_fp8_kernel", "cast/fp8_quant"},
		{"_quantized_linear_fp8_kernel", "gemm/triton"},
		{"void deep_gemm::transpose_fp32<512u, 64u, 32u, 33u>(float const*, float*, unsigned int)", "other/quant_prep"},
		{"chunk_kda_fwd_kernel_inter_solve_fused", "attention/linear_ssm"},
		{"fused_qkvzba_split_reshape_cat_contiguous_kernel", "elementwise/copy"},
		{"void at::native::detail::chunk_cat_cuda_kernel<float, float>(char**, long*, long*, long*, long*, long, long, long)", "elementwise/copy"},
		{"_router_triton_kernel", "moe/routing"},
		{"_hc_split_pre_kernel", "elementwise/mhc"},
		// ck_tile::kentry<block, min-blocks, Kernel>: the kernel argument names the family even when the name is cut.
		{"void ck_tile::kentry<256, 1, ck_tile::FmhaBwdDQDKDVK...", "attention/rocm_ck"},
		{"void kn_mla_reduce_v1_ps<MlaReduceKernelV1Traits<512, 16, 1>, float, std::bfloat16_t>(MlaReduceKernelV1Params)", "attention/rocm_ck"},
		{"_fused_qk_rope_cat_and_cache_mla_kernel", "kv_cache/write"},
	}},
	// Families that sets A-D still missed after their rounds (issue 19 item 27).
	{"sets A-D families", []struct{ name, want string }{
		// FlashInfer's push-style MegaMoE all-to-all: publish, acknowledge, combine.
		{"(anonymous namespace)::store_publish_dedup_fp8_kernel", "communication/all_to_all"},
		{"(anonymous namespace)::wait_acks_kernel", "communication/all_to_all"},
		{"(anonymous namespace)::combine_reduce_fp8_grouped_kernel", "communication/all_to_all"},
		// FlagGems: stream-K GEMM, a norm's affine backward, torch.unique and the scan phases.
		{"first_wave_for_bf16", "gemm/triton"},
		{"weight_bias_backward_kernel", "norm/norm"},
		{"local_quick_unique_flat_kernel", "elementwise/flaggems_triton"},
		{"reduce_then_scan_root_scan_kernel_row", "elementwise/flaggems_triton"},
		{"_tensor_copy_3dim", "elementwise/copy"},
	}},
	// Families that held-out set E's first measurement missed (testdata/README.md).
	{"set E families", []struct{ name, want string }{
		// Decode context parallelism's cross-rank exchanges and signals; an allreduce over PCIe IPC buffers.
		{"(anonymous namespace)::direct_dcp_q_gather_multimem_kernel(uint4 const*, uint4*, unsigned int*, unsigned int)", "communication/allgather"},
		{"void (anonymous namespace)::wait_lse_combine_kernel<__nv_bfloat16>(__nv_bfloat16 const*, float const*, unsigned int)", "communication/other"},
		{"vllm::direct_dcp::increment_epoch_kernel(long*)", "communication/other"},
		{"flashinfer::comm::pcie_ipc::ipc_tp2_remote_push_kernel", "communication/allreduce"},
		// The recurrent-state cache's block copies are cache copies, not linear attention.
		{"postprocess_mamba_fused_kernel", "kv_cache/copy_convert"},
		{"_zero_kv_blocks_kernel", "kv_cache/copy_convert"},
		{"void vllm::kimi_k3_fused_ops::fusedKimiK3MLADecodeQConcatKVCacheKernel<c10::BFloat16, true, true, true, 3>(c10::BFloat16*)", "kv_cache/write"},
		// Per-step input preparation after attention; FlashMLA's metadata stays attention.
		{"_stage_spec_decode_metadata_kernel", "other/runner_metadata"},
		{"_prepare_prefill_inputs_kernel", "other/runner_metadata"},
		{"smxx::decode::get_mla_metadata_kernel", "attention/flashmla"},
		// Speculative decoding's resampling is sampling; an image resampling is not.
		{"_resample_kernel", "sampling/sampling"},
		{"_insert_resampled_kernel", "other/runner_metadata"},
		{"_compute_local_logits_stats_kernel", "sampling/sampling"},
		{"void at::native::upsample_bilinear2d_out_frame<float, float>(int, float, float, bool, at::GenericPackedTensorAccessor<float, 4ul>)", "elementwise/aten"},
		// Attention backward by pass and mask; attention named by its scheme.
		{"_bwd_kernel_split_dkdv_causal", "attention/triton"},
		{"la_persistent_paged", "attention/other"},
		{"void gqa_d192_v128_kernel<opus_gqa_d192_traits<32, 64, 8, true, true> >", "attention/other"},
		// Conversions, a GEMM's split-K reduction, a scale layout step, ROCm's stream write.
		{"tensorrt_llm::common::cudaD2DcpyHalf2fp8", "cast/convert"},
		{"void splitk_reduce_kernel<16, 64, std::bfloat16_t, false, std::bfloat16_t, true>(opus_splitk_ws_handle const*)", "gemm/other"},
		{"tensorrt_llm::kernels::fp8_blockscale_gemm::scale_1x128_reshape_kernel", "other/quant_prep"},
		{"__amd_rocclr_streamOpsWrite.kd", "memcpy/memset"},
		{"void vllm::situ_and_mul_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, int, float, float)", "activation/gated"},
		{"flashinfer::group_gemm::compute_sm120_cutlass_group_gemm_args", "moe/align_sort"},
	}},
	// Families that held-out set F's first measurement missed (testdata/README.md).
	{"set F families", []struct{ name, want string }{
		// "gemma" followed by "_" or a digit is the Gemma model, not a GEMM; a GEMM name that goes on with "a" still is one.
		{"_grouped_gemma_rmsnorm_kernel", "norm/norm"},
		{"gemma_fused_add_rms_norm_kernel", "norm/norm"},
		{"_gemm_a16_w16_kernel", "gemm/triton"},
		{"ck::kernel_grouped_gemm_xdl", "moe/cutlass_grouped"},
		// Allreduce named by its shots, after the collectives whose names also say "one shot".
		{"kernel_cutlass_kernel_b12xcommroce_oneshot_cute_RoceOneshotLaunch_object_at__ptri32gmemalign16_", "communication/allreduce"},
		{"mori::collective::OneShotAllGatherSdmaKernel", "communication/allgather"},
		{"mori::collective::OneShotAll2allKernel", "communication/all_to_all"},
		// Hyper-connections' combine, with and without the norm; DeepGEMM's prenorm GEMM stays a GEMM.
		{"_hc_combine_kernel", "elementwise/mhc"},
		{"_hc_combine_norm_kernel", "norm/mhc"},
		{"void deep_gemm::sm100_tf32_hc_prenorm_gemm_impl<24u, 16384u, 64u, 32u, 64u, 2u, 128u, 12u, 128u, 128u>(unsigned int)", "gemm/deepgemm"},
		// Sparse attention: indexer scores, SM120 sparse MLA, paged GQA/MQA, split-K merges; a dequantizing K-cache gather.
		{"decode_index_score_topk_partial_fp8", "attention/sparse_indexer"},
		{"void flashinfer::sparse_mla_sm120::sparse_mla_decode_dsv3_2_kernel<(ModelType)2, 32, 2048, 64>(", "attention/flashinfer_mla"},
		{"_qsa_mqa_paged_kernel", "attention/other"},
		{"_qsa_merge_splitk_kernel", "attention/merge_states"},
		{"kernel_cutlass_kernel_vllmv1attentionopsdeepseek_v4_opsdequant_gather_k_cutedslDequantGatherKCac...", "kv_cache/gather"},
		{"mxfp8_linear_kernel", "gemm/triton"},
	}},
	{"unknown", []struct{ name, want string }{
		{"saxpy(double *, double *, double *, double, int)", "other/unknown"},
		{"calcAllLowestResidualsGPU", "other/unknown"},
		{"", "other/unknown"},
	}},
}

func TestRuleGroups(t *testing.T) {
	c := Default()
	for _, g := range ruleGroups {
		t.Run(strings.ReplaceAll(g.group, " ", "_"), func(t *testing.T) {
			for _, tc := range g.cases {
				if got := c.Classify(tc.name).String(); got != tc.want {
					r, _ := c.matchRule(tc.name)
					t.Errorf("Classify(%q) = %s (rule %s), want %s", tc.name, got, r.Source, tc.want)
				}
			}
		})
	}
}

// TestEveryRuleUsed fails for a default rule that no test name reaches:
// either it lacks a real example or an earlier rule shadows it.
func TestEveryRuleUsed(t *testing.T) {
	c := Default()
	used := make([]bool, len(c.rules))
	mark := func(name string) {
		if i := c.match(name); i >= 0 {
			used[i] = true
		}
	}
	for _, g := range ruleGroups {
		for _, tc := range g.cases {
			mark(tc.name)
		}
	}
	for _, r := range readLabelled(t) {
		mark(r.name)
	}
	for i, u := range used {
		if !u {
			t.Errorf("%s: rule %s %q matches no test name", c.rules[i].Source, c.rules[i].Category, c.rules[i].Pattern)
		}
	}
}

// TestPrefilter checks that the literal prefilter never changes an answer:
// matching every rule's regexp directly must give the same first match.
func TestPrefilter(t *testing.T) {
	c := Default()
	names := []string{"KKernel", "\u212Aernel_AllReduce", "ſampling_kernel", "Memcpy … (…)"}
	for _, g := range ruleGroups {
		for _, tc := range g.cases {
			names = append(names, tc.name, strings.ToUpper(tc.name))
		}
	}
	for _, r := range readLabelled(t) {
		names = append(names, r.name)
	}
	// Nearly every branch must be prefiltered, or the speed-up is lost.
	branches, filtered := 0, 0
	for _, r := range c.rules {
		for _, b := range r.branches {
			branches++
			if b.lit != "" || b.need != nil {
				filtered++
			}
		}
	}
	if filtered < branches*95/100 {
		t.Errorf("%d of %d branches have a literal prefilter, want at least 95%%", filtered, branches)
	}
	for _, name := range names {
		want := -1
		for i := range c.rules {
			subject := BaseName(name)
			if c.rules[i].Scope == ScopeFull {
				subject = name
			}
			if c.rules[i].re.MatchString(subject) {
				want = i
				break
			}
		}
		if got := c.match(name); got != want {
			t.Errorf("first(%q) = %d with prefilter, %d without", name, got, want)
		}
	}
}

func TestRequired(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    string // branches separated by " || "; groups by " & "; members by "|"
	}{
		{"foo", "=foo"},
		{"^nccl\\w*allreduce", "allreduce & nccl"},
		// Alternatives as written: two substring tests.
		{"allreduce|allgather", "=allreduce || =allgather"},
		// A flag group holds past the '|': the parsed tree's
		// alternatives (the parser factored out "all").
		{"(?-i)allreduce|allgather", "reduce|gather & all"},
		{"ab|c+", "=ab || c"},
		{"x*", ""},
		{"a|.*", "=a || "},
		{"(?:Kernel)+", "kernel"},
		{"fmha_cutlass[fb]", "fmha_cutlass"},
		{"multi_tensor_apply\\w*<.*(copyfunctor|::copy<)", "multi_tensor_apply & copyfunctor|::copy< & <"},
		{"…", ""},
	} {
		r := Rule{Category: MustCategory("other/x"), Pattern: tc.pattern}
		if err := r.compile(); err != nil {
			t.Fatal(err)
		}
		var bs []string
		for _, b := range r.branches {
			if b.lit != "" {
				bs = append(bs, "="+b.lit)
				continue
			}
			var gs []string
			for _, g := range b.need {
				gs = append(gs, strings.Join(g, "|"))
			}
			bs = append(bs, strings.Join(gs, " & "))
		}
		if got := strings.Join(bs, " || "); got != tc.want {
			t.Errorf("branches(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}

func TestTopAlternatives(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    string // alternatives separated by " || "; "!" when the text cannot tell
	}{
		{"a", "a"},
		{"a|b|", "a || b || "},
		{"(a|b)c|d", "(a|b)c || d"},
		{`a\|b|c`, `a\|b || c`},
		{"[|]|x", "[|] || x"},
		{"[]|]|x", "[]|] || x"},
		{"[^]|]|x", "[^]|] || x"},
		{`[\]|]|x`, `[\]|] || x`},
		{"[[:alpha:]|]|x", "[[:alpha:]|] || x"},
		{"(?:a|b)|(?P<n>c|d)|(?i:e|f)", "(?:a|b) || (?P<n>c|d) || (?i:e|f)"},
		{"a|(?-i)b|c", "!"},
		{"(a(?s)b|c)|d", "!"},
		{`\Qa|b\E|c`, "!"},
	} {
		alts, ok := topAlternatives(tc.pattern)
		got := strings.Join(alts, " || ")
		if !ok {
			got = "!"
		}
		if got != tc.want {
			t.Errorf("topAlternatives(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}

func TestClassifyCacheAndConcurrency(t *testing.T) {
	c := New(Default().rules)
	names := []string{}
	for _, g := range ruleGroups {
		for _, tc := range g.cases {
			names = append(names, tc.name)
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, n := range names {
				if got := c.Classify(n); got.Sub == "" {
					t.Errorf("Classify(%q) = %v, not a category", n, got)
				}
			}
		}()
	}
	wg.Wait()
	for _, n := range names {
		want := Unknown
		if r, ok := c.matchRule(n); ok {
			want = r.Category
		}
		if got := c.Classify(n); got != want {
			t.Errorf("cached Classify(%q) = %s, Match says %s", n, got, want)
		}
	}
	// One entry per distinct name, however often it is asked for.
	c2 := New(Default().rules)
	for range 3 {
		if got := c2.Classify("ncclDevKernel_AllGather_RING_LL").String(); got != "communication/allgather" {
			t.Fatalf("Classify = %s", got)
		}
	}
	if len(c2.cache) != 1 {
		t.Fatalf("cache has %d entries, want 1", len(c2.cache))
	}
}

// TestCacheKeepsNoNames: the cache holds no copy of the names it has seen
// (issue 19: 100k distinct 2 KB kernel names were held twice, once by the
// trace and once here). Retained bytes, measured after collections.
func TestCacheKeepsNoNames(t *testing.T) {
	c := Default()
	names := make([]string, 2000)
	for i := range names {
		names[i] = strings.Repeat("void at::native::elementwise_kernel<", 120) + strconv.Itoa(i)
	}
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := live()
	for _, n := range names {
		c.Classify(n)
	}
	retained := int64(live()) - int64(before)
	bytes := int64(len(names) * len(names[0]))
	t.Logf("cache of %d names of %d bytes: %d bytes retained", len(names), len(names[0]), retained)
	if retained > bytes/10 {
		t.Errorf("the cache retained %d bytes for %d bytes of names: it keeps copies", retained, bytes)
	}
	runtime.KeepAlive(names)
}
