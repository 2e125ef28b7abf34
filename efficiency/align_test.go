package efficiency

import (
	"slices"
	"strings"
	"testing"
)

// alignStrings aligns two sequences of one-letter names.
func alignStrings(r, s string) ([]int32, int) {
	pair, n, _ := align(len(r), len(s), func(i, j int) bool { return r[i] == s[j] })
	return pair, n
}

func TestAlign(t *testing.T) {
	for _, c := range []struct {
		replay, capture string
		want            []int32
	}{
		// Equal sequences: k-th with k-th.
		{"abcd", "abcd", []int32{0, 1, 2, 3}},
		// The capture holds eager launches before the graph (the real
		// vLLM capture's fills): the graph is found after them.
		{"abcd", "xxabcd", []int32{2, 3, 4, 5}},
		// Three captured launches more than replayed kernels (428 vs 425):
		// the extra ones are skipped.
		{"abcd", "abXcYdZ", []int32{0, 1, 3, 5}},
		// A replayed kernel the capture lacks stays unmatched.
		{"abQcd", "abcd", []int32{0, 1, -1, 2, 3}},
		// Two graphs in one capture trace: the replay takes the one it
		// matches contiguously, not letters scattered over both.
		{"pqrs", "abcdpqrsabcd", []int32{4, 5, 6, 7}},
		{"abcd", "pqrsabcdabcd", []int32{4, 5, 6, 7}}, // two equal graphs: the first
		// Nothing in common.
		{"abc", "xyz", []int32{-1, -1, -1}},
		{"", "abc", []int32{}},
		{"ab", "", []int32{-1, -1}},
	} {
		pair, n := alignStrings(c.replay, c.capture)
		if !slices.Equal(pair, c.want) {
			t.Errorf("align(%q, %q) = %v, want %v", c.replay, c.capture, pair, c.want)
		}
		m := 0
		for i, j := range pair {
			if j >= 0 {
				m++
				if c.replay[i] != c.capture[j] {
					t.Errorf("align(%q, %q): %c paired with %c", c.replay, c.capture, c.replay[i], c.capture[j])
				}
			}
		}
		if n != m {
			t.Errorf("align(%q, %q): matched %d, pairs %d", c.replay, c.capture, n, m)
		}
	}
}

// Pairs never cross: the k-th match precedes the k+1-th on both sides.
func TestAlignMonotone(t *testing.T) {
	r := strings.Repeat("abcab", 40)
	s := strings.Repeat("acbab", 45)
	pair, n := alignStrings(r, s)
	last := int32(-1)
	for _, j := range pair {
		if j >= 0 {
			if j <= last {
				t.Fatalf("pairs cross at %d", j)
			}
			last = j
		}
	}
	if n < len(r)/2 {
		t.Errorf("only %d of %d matched", n, len(r))
	}
}
