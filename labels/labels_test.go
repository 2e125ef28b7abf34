package labels_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/labels"
	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/window"
)

// cijk returns a hipBLASLt kernel name (from vllm_decode_full_graph)
// whose variants differ only hundreds of runes in.
func cijk(nta, nepbs string) string {
	return "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA512_LBSPPB512_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_" +
		nta + "_NTB0_NTC0_NTD4_NTM0_" + nepbs + "_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1"
}

func TestKernelLabels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names []string
		width int
		want  []string
	}{
		{"template hints", []string{
			"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
			"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
			"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float)",
			"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float)",
			"volta_sgemm_64x64_nt",
			strings.Repeat("x", 1000),
		}, 0, []string{
			"at::native::vectorized_elementwise_kernel<CUDAFunctor_add>",
			"at::native::vectorized_elementwise_kernel<FillFunctor>",
			"cudnn::bn_bw_1C11_kernel_new<128>",
			"cudnn::bn_bw_1C11_kernel_new<32>",
			"volta_sgemm_64x64_nt",
			strings.Repeat("x", 1000),
		}},
		// No single word of the three tells each apart: a pair does.
		{"word pairs", []string{
			"void k<Add, float>(int)", "void k<Add, half>(int)", "void k<Mul, float>(int)", "void k<Mul, half>(int)",
		}, 0, []string{"k<Add,float>", "k<Add,half>", "k<Mul,float>", "k<Mul,half>"}},
		// Clipped to 64 runes the two hipBLASLt names are equal: the
		// first token only each has follows the ellipsis.
		{"clip collisions", []string{cijk("NTA0", "NEPBS8"), cijk("NTA4", "NEPBS16")}, labels.Width, []string{
			"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI…NTA0",
			"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI…NTA4",
		}},
		// Nothing tells these apart (they differ in spaces only):
		// numbers, in name order.
		{"numbers", []string{"void k<1>(int)", "void k<1>( int)", "void k<1>(int )"}, 0,
			[]string{"k #3", "k", "k #2"}},
		// Dispatching templates say what they run.
		{"wrappers", []string{
			"void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdPipelineOnePass<int> >, int>(int)",
			"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
		}, labels.Width, []string{"ck_tile::kentry<Rmsnorm2dFwd>", "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_a…"}},
		{"clipped plain names", []string{strings.Repeat("y", 100)}, 20, []string{strings.Repeat("y", 19) + "…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := labels.Ordered(tc.names, tc.width)
			if !slices.Equal(got, tc.want) {
				t.Errorf("DisplayNames:\n got %q\nwant %q", got, tc.want)
			}
			// The set decides, not the order.
			rev := slices.Clone(tc.names)
			slices.Reverse(rev)
			back := labels.Ordered(rev, tc.width)
			slices.Reverse(back)
			if !slices.Equal(back, got) {
				t.Errorf("reversed input gives %q", back)
			}
		})
	}
}

// TestKernelLabelsUnique checks the promise on names built to collide:
// long shared prefixes, shared short names, names equal after clipping
// and numbered labels that already exist as names.
func TestKernelLabelsUnique(t *testing.T) {
	var names []string
	long := strings.Repeat("cutlass_", 10)
	for i := range 300 {
		names = append(names, fmt.Sprintf("%s%d", long, i), fmt.Sprintf("void k<%d>(int)", i%7), fmt.Sprintf("void k<%d>(float)", i%7),
			fmt.Sprintf("k #%d", i), fmt.Sprintf("void at::f<%s, x%d>(int)", long, i))
	}
	for _, width := range []int{0, 12, 30, labels.Width, 100} {
		m := labels.Of(names, width)
		seen := map[string]string{}
		for n, l := range m {
			if prev, dup := seen[l]; dup {
				t.Errorf("width %d: %q and %q share label %q", width, prev, n, l)
			}
			seen[l] = n
			if width > 0 && utf8.RuneCountInString(l) > width {
				t.Errorf("width %d: label %q is %d runes", width, l, utf8.RuneCountInString(l))
			}
		}
	}
}

func TestClipLabel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"at::native::vectorized_elementwise_kernel<CUDAFunctor_add>", 40, "at::native::vectorized…<CUDAFunctor_add>"},
		{"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x2…NTA4", 30, "Cijk_Alik_Bljk_BBS_BH_Bia…NTA4"},
		{"short", 40, "short"},
		{strings.Repeat("x", 1000), 56, strings.Repeat("x", 55) + "…"},
		{"k #12", 0, "k #12"},
	} {
		if got := labels.Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("ClipLabel(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestLabelsIndependentOfTop checks issue 14's complaint on a real trace:
// the labels of `kernels --top 5` are those of the full table, and the
// full table's labels are unique, hipBLASLt's Cijk_ variants included.
func TestLabelsIndependentOfTop(t *testing.T) {
	tbl := table(t, "../testdata/traces/torch/vllm_decode_full_graph.json.gz")
	names := labels.Of(tbl.Names(), labels.Width)
	all := analyze.Kernels(tbl, analyze.KernelOptions{MemOps: true})
	top := analyze.Kernels(tbl, analyze.KernelOptions{MemOps: true, Limit: 5})
	for i, k := range top {
		if k.Name != all[i].Name || names[k.Name] == "" {
			t.Errorf("row %d: --top 5 row %q (label %q), full table %q", i, k.Name, names[k.Name], all[i].Name)
		}
	}
	seen := map[string]string{}
	cijks := 0
	for _, k := range all {
		l := names[k.Name]
		if prev, dup := seen[l]; dup {
			t.Errorf("%q and %q share label %q", prev, k.Name, l)
		}
		seen[l] = k.Name
		if strings.HasPrefix(k.Name, "Cijk_") {
			cijks++
		}
	}
	if cijks < 4 {
		t.Errorf("%d hipBLASLt kernels: the trace no longer tests clip collisions", cijks)
	}
}

// table loads one trace as the command does.
func table(t *testing.T, path string) *window.Table {
	t.Helper()
	tbl, err := load.Load([]string{path}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// BenchmarkKernelLabelsOneShortName labels 10^5 names that share one
// short name (a hostile trace): the work stays linear in the names.
func BenchmarkKernelLabelsOneShortName(b *testing.B) {
	names := make([]string, 100_000)
	for i := range names {
		names[i] = fmt.Sprintf("void k<%d, float>(int)", i)
	}
	names = append(names, "void k<float>(int)", "void k<float >(int)")
	for b.Loop() {
		labels.Of(names, labels.Width)
	}
}

// TestDemangledRows checks a ROCm trace end to end: its mangled kernel
// names reach the tables demangled and classified, with labels that tell
// the three add_rmsnorm_quant_kernel variants apart, and the raw name kept
// in Mangled for JSON.
func TestDemangledRows(t *testing.T) {
	tbl := table(t, "../testdata/traces/torch/sglang_decode.json.gz")
	names := labels.Of(tbl.Names(), labels.Width)
	var got []string
	for _, k := range analyze.Kernels(tbl, analyze.KernelOptions{MemOps: true}) {
		if strings.HasPrefix(k.Name, "_Z") || strings.HasPrefix(names[k.Name], "_Z") {
			t.Errorf("row %q (label %q) is still mangled", k.Name, names[k.Name])
		}
		if !strings.Contains(k.Name, "aiter::add_rmsnorm_quant_kernel<") {
			continue
		}
		got = append(got, names[k.Name])
		if !strings.HasPrefix(k.Mangled, "_ZN5aiter24add_rmsnorm_quant_kernel") {
			t.Errorf("%q: Mangled = %q", k.Name, k.Mangled)
		}
		if k.Category.String() != "norm/rocm" {
			t.Errorf("%q classified %s, want norm/rocm", k.Name, k.Category)
		}
	}
	slices.Sort(got)
	want := []string{"aiter::add_rmsnorm_quant_kernel<256,16,false>", "aiter::add_rmsnorm_quant_kernel<256,16,true>", "aiter::add_rmsnorm_quant_kernel<64>"}
	if !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}

// TestSequenceHint: two ck_tile kernels (vllm_mixed_piecewise) whose
// names differ in one enum value deep in their template arguments; the
// label keeps what the wrapper runs.
func TestSequenceHint(t *testing.T) {
	ck := func(fusedAdd string) string {
		return "void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdPipelineOnePass<ck_tile::Rmsnorm2dFwdTraits<true, false, (ck_tile::Rmsnorm2dFusedAddEnum)" +
			fusedAdd + ", (ck_tile::Rmsnorm2dFusedQuantEnum)0> > >, ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdTraits<true, false, (ck_tile::Rmsnorm2dFusedAddEnum)" + fusedAdd + "> >::Kargs>(int)"
	}
	got := labels.Ordered([]string{ck("0"), ck("1")}, labels.Width)
	want := []string{"ck_tile::kentry<Rmsnorm2dFwd,Rmsnorm2dFusedAddEnum=0>", "ck_tile::kentry<Rmsnorm2dFwd,Rmsnorm2dFusedAddEnum=1>"}
	if !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}

// TestLabelsWithoutNumbers: TensorRT's sm80_xmma kernels (from an nsys
// export) are equal for 64 runes and differ in tiles and suffixes; each
// label says where, none falls back to a number.
func TestLabelsWithoutNumbers(t *testing.T) {
	const p = "sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwckrsc_nhwc_"
	names := []string{
		p + "tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16_t1r3s3_aACCESS_execute_kernel_trt",
		p + "tilesize128x64x64_stage3_warpsize2x2x1_g1_tensor16x8x16_t1r3s3_aACCESS_execute_kernel_trt",
		p + "tilesize256x64x32_stage3_warpsize4x1x1_g1_tensor16x8x16_t1r3s3_execute_kernel_trt",
		p + "tilesize256x64x32_stage3_warpsize4x1x1_g1_tensor16x8x16_t1r3s3_aACCESS_execute_kernel_trt",
		p + "tilesize256x128x32_stage3_warpsize4x2x1_g1_tensor16x8x16_t1r3s3_execute_kernel_trt",
		p + "tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16_execute_kernel_trt",
		p + "tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16_t1r1s1_execute_kernel_trt",
	}
	got := labels.Ordered(names, labels.Width)
	seen := map[string]bool{}
	for i, l := range got {
		if seen[l] || strings.Contains(l, " #") || utf8.RuneCountInString(l) > labels.Width {
			t.Errorf("label %q of %q: duplicate, numbered or too long", l, names[i])
		}
		seen[l] = true
	}
	if want := "sm80_xmma_fprop_implicit_gemm_f16f16_f…tilesize128x128x32,t1r3s3"; got[0] != want {
		t.Errorf("label %q, want %q", got[0], want)
	}
}
