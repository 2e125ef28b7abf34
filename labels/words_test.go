package labels

import (
	"slices"
	"strings"
	"testing"
)

// TestHintWordsSplit: hintWords's byte loop splits a name as splitting
// it rune by rune would (a multi-byte rune separates words), on ASCII,
// multi-byte and invalid UTF-8.
func TestHintWordsSplit(t *testing.T) {
	ref := func(name, short string) []string {
		rest := name
		if i := strings.Index(name, short); i >= 0 {
			rest = name[i+len(short):]
		}
		var out []string
		seen := map[string]bool{}
		for _, w := range strings.FieldsFunc(rest, func(r rune) bool {
			return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) {
			if !hintStop[w] && !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
		return out
	}
	for _, name := range []string{
		"", "k", "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
		"gemm_256x128_k64_sm90_tn_ÄÖ€x_y𝔘z9", "a\xffb\xc3c", "__x__ _ 1 2_3", "ck_tile::kentry<64, ck_tile::FmhaFwd<ab>, 2>",
	} {
		for _, short := range []string{"", "k", "gemm_256x128_k64_sm90_tn", "kentry"} {
			if got, want := hintWords(name, short), ref(name, short); !slices.Equal(got, want) {
				t.Errorf("hintWords(%q, %q) = %q, want %q", name, short, got, want)
			}
		}
	}
}

// TestOfMemo: Of gives the same set and width the map it made last, and
// another set or width a map of its own, with that set's labels.
func TestOfMemo(t *testing.T) {
	a := []string{"void gemm<float, 128>(float*)", "void gemm<half, 64>(half*)", "relu_kernel"}
	b := []string{"relu_kernel", "void gemm<float, 128>(float*)"}
	first := Of(a, Width)
	reordered := append(slices.Clone(a[1:]), a[0], a[0])
	if again := Of(reordered, Width); !sameMap(first, again) {
		t.Error("the same set, reordered and repeated, was labelled anew")
	}
	other := Of(b, Width)
	if sameMap(first, other) || len(other) != 2 {
		t.Errorf("another set got the last set's map (%d labels)", len(other))
	}
	clipped := Of(a, 8)
	if sameMap(first, clipped) {
		t.Error("another width got the last width's map")
	}
	memo.Lock()
	memo.out = nil // a fresh computation of a
	memo.Unlock()
	fresh := Of(a, Width)
	for _, n := range a {
		if fresh[n] != first[n] {
			t.Errorf("%q: labelled %q afresh, %q remembered", n, fresh[n], first[n])
		}
	}
}

// sameMap reports whether a and b are one map.
func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	const probe = "\x00memo probe"
	a[probe] = "a"
	defer delete(a, probe)
	return b[probe] == "a"
}
