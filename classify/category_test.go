package classify

import (
	"slices"
	"testing"
)

func TestTops(t *testing.T) {
	want := []string{"communication", "gemm", "moe", "attention", "kv_cache", "cast", "norm",
		"activation", "rotary", "sampling", "embedding", "elementwise", "memcpy", "other"}
	got := Tops()
	if !slices.Equal(got, want) {
		t.Fatalf("Tops() = %v, want %v", got, want)
	}
	got[0] = "changed"
	if Tops()[0] != "communication" {
		t.Error("Tops returns the package's own slice")
	}
	for i, top := range want {
		if TopIndex(top) != i || TopIndex(top+"/x") != i {
			t.Errorf("TopIndex(%q) = %d, want %d", top, TopIndex(top), i)
		}
	}
	if TopIndex("conv/x") != -1 {
		t.Errorf("TopIndex(conv/x) = %d, want -1", TopIndex("conv/x"))
	}
}

func TestTop(t *testing.T) {
	for in, want := range map[string]string{"gemm/marlin": "gemm", "gemm": "gemm", "other/unknown": "other", "": ""} {
		if got := Top(in); got != want {
			t.Errorf("Top(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompare(t *testing.T) {
	want := []string{
		"communication/allreduce", "communication/send_recv", "communication/other",
		"gemm/cublas", "gemm/marlin", "gemm/other",
		"moe/fused_moe_triton",
		"memcpy/memcpy", "memcpy/memset",
		"other/hadamard", "other/other", "other/unknown",
		"aaa/x", "zzz/a", "zzz/other",
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, Compare)
	if !slices.Equal(got, want) {
		t.Errorf("sorted = %v\nwant     %v", got, want)
	}
	for _, a := range want {
		if Compare(a, a) != 0 {
			t.Errorf("Compare(%q, %q) != 0", a, a)
		}
	}
}
