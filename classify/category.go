package classify

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Unknown is the category of a name that no rule matches.
const Unknown = "other/unknown"

// tops is the canonical order of the top-level categories. Reports use it
// for column order, legend order and colours, so it is part of the contract:
// append-only changes would still reorder every chart, so do not change it.
var tops = [...]string{
	"communication",
	"gemm",
	"moe",
	"attention",
	"kv_cache",
	"cast",
	"norm",
	"activation",
	"rotary",
	"sampling",
	"embedding",
	"elementwise",
	"memcpy",
	"other",
}

// Tops returns the top-level category ids in canonical order.
func Tops() []string { return slices.Clone(tops[:]) }

// Top returns the top level of a category id: Top("gemm/marlin") is "gemm".
// A bare top ("gemm") is returned unchanged.
func Top(category string) string {
	top, _, _ := strings.Cut(category, "/")
	return top
}

// sub returns the part after the first "/", or "" for a bare top.
func sub(category string) string {
	_, s, _ := strings.Cut(category, "/")
	return s
}

// TopIndex returns the canonical index (0 for "communication" … 13 for
// "other") of the top level of category, or -1 if it is not one of Tops.
func TopIndex(category string) int {
	return slices.Index(tops[:], Top(category))
}

// Compare is a total order on category ids: by canonical top, then by sub
// level with "other" and then "unknown" last within their top, then by string.
// Ids whose top is not one of Tops (Parse rejects them, so they only come
// from hand-built values) sort after every known top, by top name.
func Compare(a, b string) int {
	ia, ib := topRank(a), topRank(b)
	if c := cmp.Compare(ia, ib); c != 0 {
		return c
	}
	if ia == len(tops) {
		if c := strings.Compare(Top(a), Top(b)); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(subRank(sub(a)), subRank(sub(b))); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func topRank(category string) int {
	if i := TopIndex(category); i >= 0 {
		return i
	}
	return len(tops)
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

// checkCategory reports why category is not a valid "top/sub" id.
func checkCategory(category string) error {
	top, s, ok := strings.Cut(category, "/")
	if !ok || top == "" || s == "" {
		return fmt.Errorf("bad category %q: want top/sub, e.g. gemm/cublas", category)
	}
	if TopIndex(top) < 0 {
		return fmt.Errorf("unknown top-level category %q in %q: want one of %s", top, category, strings.Join(tops[:], ", "))
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("bad category %q: the sub level may use only a-z, 0-9, '_', '-' and '.'", category)
		}
	}
	return nil
}
