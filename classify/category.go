package classify

import (
	"cmp"
	"fmt"
	"strings"
)

// Top is a top-level category. Its values are in the canonical order that
// reports use for columns, legends and colours, so the order is part of
// the contract: do not reorder or insert.
type Top uint8

const (
	Communication Top = iota
	GEMM
	MoE
	Attention
	KVCache
	Cast
	Norm
	Activation
	Rotary
	Sampling
	Embedding
	Elementwise
	Memcpy
	Other

	// NumTops is the number of top-level categories.
	NumTops = int(Other) + 1
)

var topNames = [NumTops]string{
	Communication: "communication",
	GEMM:          "gemm",
	MoE:           "moe",
	Attention:     "attention",
	KVCache:       "kv_cache",
	Cast:          "cast",
	Norm:          "norm",
	Activation:    "activation",
	Rotary:        "rotary",
	Sampling:      "sampling",
	Embedding:     "embedding",
	Elementwise:   "elementwise",
	Memcpy:        "memcpy",
	Other:         "other",
}

func (t Top) String() string {
	if int(t) < NumTops {
		return topNames[t]
	}
	return fmt.Sprintf("top(%d)", t)
}

// Tops returns the top-level categories in canonical order.
func Tops() []Top {
	out := make([]Top, NumTops)
	for i := range out {
		out[i] = Top(i)
	}
	return out
}

// ParseTop returns the Top named s ("gemm").
func ParseTop(s string) (Top, bool) {
	for i, n := range topNames {
		if n == s {
			return Top(i), true
		}
	}
	return 0, false
}

// Category is a "top/sub" category: the top level and the family or
// library within it ("gemm/marlin"; for communication, the collective:
// "communication/allreduce"). The zero value is not a valid category.
type Category struct {
	Top Top
	Sub string
}

// Unknown is the category of a name that no rule matches.
var Unknown = Category{Other, "unknown"}

// Memcpy and memset activities are categorised by their kind, whatever
// their name.
var (
	MemcpyCategory = Category{Memcpy, "memcpy"}
	MemsetCategory = Category{Memcpy, "memset"}
)

// String is "top/sub", or "top" for a top-level category alone (a sum
// over its subs, as breakdown --by top reports).
func (c Category) String() string {
	if c.Sub == "" {
		return c.Top.String()
	}
	return c.Top.String() + "/" + c.Sub
}

// ParseCategory reads a "top/sub" category id, checking that the top is
// one of Tops and the sub level uses only a-z, 0-9, '_', '-' and '.'.
func ParseCategory(s string) (Category, error) {
	top, sub, ok := strings.Cut(s, "/")
	if !ok || top == "" || sub == "" {
		return Category{}, fmt.Errorf("bad category %q: want top/sub, e.g. gemm/cublas", s)
	}
	t, ok := ParseTop(top)
	if !ok {
		return Category{}, fmt.Errorf("unknown top-level category %q in %q: want one of %s", top, s, strings.Join(topNames[:], ", "))
	}
	for _, c := range sub {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return Category{}, fmt.Errorf("bad category %q: the sub level may use only a-z, 0-9, '_', '-' and '.'", s)
		}
	}
	return Category{t, sub}, nil
}

// MustCategory is ParseCategory for literals in code; it panics on a bad id.
func MustCategory(s string) Category {
	c, err := ParseCategory(s)
	if err != nil {
		panic(err)
	}
	return c
}

// Compare is the total order of categories: by top in canonical order,
// then by sub level with "other" and then "unknown" last within their top,
// then by name.
func Compare(a, b Category) int {
	if c := cmp.Compare(a.Top, b.Top); c != 0 {
		return c
	}
	if c := cmp.Compare(subRank(a.Sub), subRank(b.Sub)); c != 0 {
		return c
	}
	return strings.Compare(a.Sub, b.Sub)
}

// subRank puts the catch-all subs after the named families, so that a
// legend reads "gemm/cublas, gemm/marlin, gemm/other".
func subRank(s string) int {
	switch s {
	case "other":
		return 1
	case "unknown":
		return 2
	}
	return 0
}
