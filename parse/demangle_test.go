package parse

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/traceq/traceq/trace"
)

// aiterMangled is a kernel name as sglang_decode.json.gz (ROCm) records it.
const aiterMangled = "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib"

func TestDemangleName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Expected forms as c++filt prints them.
		{"_Z3foov", "foo()"},
		{"_ZN2at6native13reduce_kernelILi512ELi1EEEvv", "void at::native::reduce_kernel<512, 1>()"},
		{aiterMangled, "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 64, 8, false, false, true, 1>(std::bfloat16_t*, std::bfloat16_t*, float*, std::bfloat16_t*, std::bfloat16_t*, std::bfloat16_t*, double, int, int, int, int, int, int, int, bool)"},
		// ROCm's kernel-descriptor symbols (TraceLens and rocprof tables): the kernel's name.
		{"_ZN5aiter32fmha_fwd_hd192_hd128_bf16_causalE.kd", "aiter::fmha_fwd_hd192_hd128_bf16_causal"},
		{aiterMangled + ".kd", "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 64, 8, false, false, true, 1>(std::bfloat16_t*, std::bfloat16_t*, float*, std::bfloat16_t*, std::bfloat16_t*, std::bfloat16_t*, double, int, int, int, int, int, int, int, bool)"},
		{"attn_fwd.kd", "attn_fwd.kd"}, // not mangled: as it is (classify reads its base name)
		{"_Zbogus.kd", "_Zbogus.kd"},
		// Not mangled, or not valid: kept as they are.
		{"volta_sgemm_128x64_nn", "volta_sgemm_128x64_nn"},
		{"_Z", "_Z"},
		{"_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel", "_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel"},
		{"_RNvC6_123foo3bar", "_RNvC6_123foo3bar"}, // Rust v0: not a GPU kernel name
		{"", ""},
	} {
		if got := DemangleName(tc.in); got != tc.want {
			t.Errorf("DemangleName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDemangleDescriptor: a kernel recorded both by its symbol and by its
// code-object descriptor (".kd") is one kernel after demangling, and the
// descriptor's raw spelling is what Mangled keeps when it comes first.
func TestDemangleDescriptor(t *testing.T) {
	tr := &trace.Trace{
		Names:      []string{"", "_Z3quxv.kd", "_Z3quxv"},
		Activities: []trace.Activity{{Start: 1, Dur: 1, Name: 1}, {Start: 2, Dur: 1, Name: 2}},
	}
	tr.Sort()
	Demangle(tr)
	if err := tr.CheckValid(); err != nil {
		t.Fatal(err)
	}
	for i, a := range tr.Activities {
		if got := tr.Names[a.Name]; got != "qux()" {
			t.Errorf("activity %d named %q, want qux()", i, got)
		}
	}
	if tr.Activities[0].Name != tr.Activities[1].Name {
		t.Errorf("the symbol and its descriptor are two names: %d, %d", tr.Activities[0].Name, tr.Activities[1].Name)
	}
	if tr.Mangled[1] != "_Z3quxv.kd" {
		t.Errorf("Mangled = %v, want {1: _Z3quxv.kd}", tr.Mangled)
	}
}

// TestDemangle checks the model after demangling: names replaced in
// place, the raw spelling in Mangled, names not used by activities left
// alone, and a demangled name the trace already holds merged into it.
func TestDemangle(t *testing.T) {
	tr := &trace.Trace{
		Names: []string{"", "_Z3foov", "foo()", "_Z3barv", "_Z3bazv", "volta_sgemm"},
		Activities: []trace.Activity{
			{Start: 1, Dur: 1, Name: 1}, // _Z3foov: foo() exists already
			{Start: 2, Dur: 1, Name: 3}, // _Z3barv
			{Start: 3, Dur: 1, Name: 5},
			{Start: 4, Dur: 1, Name: 2},
		},
		Ranges: []trace.Range{{Start: 0, Dur: 9, Name: 4}}, // _Z3bazv: no activity's
	}
	tr.Sort()
	Demangle(tr)
	if err := tr.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "_Z3foov", "foo()", "bar()", "_Z3bazv", "volta_sgemm"}; !slices.Equal(tr.Names, want) {
		t.Errorf("names %q, want %q", tr.Names, want)
	}
	if len(tr.Mangled) != 1 || tr.Mangled[3] != "_Z3barv" {
		t.Errorf("Mangled = %v, want {3: _Z3barv}", tr.Mangled)
	}
	var got []string
	for _, a := range tr.Activities {
		got = append(got, tr.Names[a.Name])
	}
	if want := []string{"foo()", "bar()", "volta_sgemm", "foo()"}; !slices.Equal(got, want) {
		t.Errorf("activity names %q, want %q", got, want)
	}
	// A trace without mangled names is left as it is, Mangled nil.
	plain := &trace.Trace{Names: []string{"", "k"}, Activities: []trace.Activity{{Name: 1}}}
	Demangle(plain)
	if plain.Mangled != nil || plain.Names[1] != "k" {
		t.Errorf("plain trace changed: %v %q", plain.Mangled, plain.Names)
	}
}

// TestFileDemangles reads a real ROCm trace: no activity keeps a mangled
// name, and each raw spelling is kept.
func TestFileDemangles(t *testing.T) {
	tr, err := File("../testdata/traces/torch/sglang_decode.json.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range tr.Activities {
		if n := tr.Names[a.Name]; strings.HasPrefix(n, "_Z") {
			t.Fatalf("activity name %q left mangled", n)
		}
	}
	var raws []string
	for id, raw := range tr.Mangled {
		raws = append(raws, raw)
		if !strings.HasPrefix(raw, "_Z") || strings.HasPrefix(tr.Names[id], "_Z") {
			t.Errorf("Mangled[%d] = %q for name %q", id, raw, tr.Names[id])
		}
	}
	if !slices.Contains(raws, aiterMangled) {
		t.Errorf("raw names %q lack %q", raws, aiterMangled)
	}
}

// FuzzDemangleName: any input gives a name, never a panic; what is not
// "_Z…" comes back unchanged and a demangled name stays within the cap.
func FuzzDemangleName(f *testing.F) {
	for _, s := range []string{aiterMangled, "_Z3foov", "_ZN2at6native13reduce_kernelILi512ELi1EEEvv", "_Z", "kernel", "_ZZZZ", "_ZSt4cout"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := DemangleName(s)
		if !strings.HasPrefix(s, "_Z") && got != s {
			t.Fatalf("DemangleName(%q) = %q: not mangled, must be kept", s, got)
		}
		if got != s && len(got) > 1<<maxDemangled {
			t.Fatalf("DemangleName(%q): %d bytes, over the cap", s, len(got))
		}
		if got != s && !utf8.ValidString(got) && utf8.ValidString(s) {
			t.Fatalf("DemangleName(%q) = %q: invalid UTF-8", s, got)
		}
	})
}
