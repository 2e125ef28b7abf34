package classify

import (
	"slices"
	"testing"
)

func TestTops(t *testing.T) {
	want := []string{"communication", "gemm", "moe", "attention", "kv_cache", "cast", "norm",
		"activation", "rotary", "sampling", "embedding", "elementwise", "memcpy", "other"}
	tops := Tops()
	if len(tops) != NumTops || NumTops != len(want) {
		t.Fatalf("Tops() has %d, NumTops %d, want %d", len(tops), NumTops, len(want))
	}
	for i, top := range tops {
		if top != Top(i) || top.String() != want[i] {
			t.Errorf("Tops()[%d] = %d %q, want %d %q", i, top, top, i, want[i])
		}
		if got, ok := ParseTop(want[i]); !ok || got != top {
			t.Errorf("ParseTop(%q) = %v, %v", want[i], got, ok)
		}
	}
	if _, ok := ParseTop("conv"); ok {
		t.Error("ParseTop(conv) succeeded")
	}
}

func TestParseCategory(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Category
		err  bool
	}{
		{in: "gemm/marlin", want: Category{GEMM, "marlin"}},
		{in: "other/unknown", want: Unknown},
		{in: "kv_cache/x.y-z_1", want: Category{KVCache, "x.y-z_1"}},
		{in: "gemm", err: true},
		{in: "gemm/", err: true},
		{in: "conv/x", err: true},
		{in: "gemm/Marlin", err: true},
	} {
		got, err := ParseCategory(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseCategory(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err == nil && got.String() != tc.in {
			t.Errorf("%q round-trips to %q", tc.in, got.String())
		}
	}
}

func TestCompare(t *testing.T) {
	ids := []string{
		"communication/allreduce", "communication/send_recv", "communication/other",
		"gemm/cublas", "gemm/marlin", "gemm/other",
		"moe/fused_moe_triton",
		"memcpy/memcpy", "memcpy/memset",
		"other/hadamard", "other/other", "other/unknown",
	}
	want := make([]Category, len(ids))
	for i, s := range ids {
		want[i] = MustCategory(s)
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, Compare)
	if !slices.Equal(got, want) {
		t.Errorf("sorted = %v\nwant     %v", got, want)
	}
	for _, a := range want {
		if Compare(a, a) != 0 {
			t.Errorf("Compare(%v, %v) != 0", a, a)
		}
	}
}
