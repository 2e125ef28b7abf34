package chrometrace

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestStringEnd(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		in   string
		end  int
		esc  bool
		name string
	}{
		{`"" tail`, 2, false, "empty"},
		{`"abc",`, 5, false, "short"},
		{`"a\"b"`, 6, true, "escaped quote"},
		{`"a\\"b"`, 5, true, "escaped backslash before the quote"},
		{`"a\\\"b"`, 8, true, "three backslashes"},
		{`"abc`, -1, false, "unterminated"},
		{`"abc\`, -1, true, "ends in a backslash"},
		{`"abc\"`, -1, true, "ends in an escaped quote"},
		{`"` + long + `"x`, 102, false, "long"},
		{`"` + long + `\"` + long + `"`, 204, true, "long with an escaped quote"},
		{`"` + long + `\\"`, 104, true, "long ending in an escaped backslash"},
		{`"` + strings.Repeat(`\n`, 60) + `"`, 122, true, "many escapes"},
		{`"` + long + `\`, -1, true, "long, ends in a backslash"},
	} {
		end, esc := stringEnd(tc.in, 0)
		if end != tc.end || (end >= 0 && esc != tc.esc) { // esc is moot when the string does not end
			t.Errorf("%s: stringEnd(%q) = %d, %v; want %d, %v", tc.name, tc.in, end, esc, tc.end, tc.esc)
		}
	}
}

func TestValueEnd(t *testing.T) {
	for _, tc := range []struct {
		in  string
		end int
		err string
	}{
		{`{"a": [1, "]}"], "b": {}} x`, 25, ""},
		{`[[[]]]`, 6, ""},
		{`{"a": "}`, -1, ""},
		{`[1, 2`, -1, ""},
		{`123, 4`, 3, ""},
		{`-1.5e3}`, 6, ""},
		{`true`, 4, ""}, // may go on: the caller knows whether more text follows
		{"null\t", 4, ""},
		{`1"x"`, 0, `unexpected '"' in a literal`},
		{`tru:`, 0, `unexpected ':' in a literal`},
		{`]`, 0, `expected a value, found ']'`},
		{`,`, 0, `expected a value, found ','`},
	} {
		end, err := valueEnd(tc.in, 0)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if end != tc.end || got != tc.err {
			t.Errorf("valueEnd(%q) = %d, %q; want %d, %q", tc.in, end, got, tc.end, tc.err)
		}
	}
}

func TestSkipSpace(t *testing.T) {
	// Only RFC 8259 whitespace: a control byte is not skipped.
	for _, tc := range []struct {
		in   string
		want int
	}{{" \t\r\nx", 4}, {"\x01 x", 0}, {"\v", 0}, {"  ", 2}} {
		if got := skipSpace(tc.in, 0); got != tc.want {
			t.Errorf("skipSpace(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestStringEndAgrees compares stringEnd with a plain byte loop on random
// strings of quotes, backslashes, ASCII and UTF-8 bytes, at every offset
// of the eight-byte words.
func TestStringEndAgrees(t *testing.T) {
	ref := func(s string, i int) (int, bool) {
		esc := false
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '"':
				return j + 1, esc
			case '\\':
				esc = true
				j++
			}
		}
		return -1, false
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{'a', '"', '\\', 0xc3, 0xa9, 0x80, 0x22 ^ 0x80, 0x5c ^ 0x01, ' '}
	for range 50000 {
		b := make([]byte, rng.IntN(90))
		for k := range b {
			if rng.IntN(4) == 0 {
				b[k] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[k] = 'x'
			}
		}
		s := `"` + string(b)
		we, wesc := ref(s, 0)
		ge, gesc := stringEnd(s, 0)
		if ge != we || (we >= 0 && gesc != wesc) {
			t.Fatalf("stringEnd(%q) = %d, %v; want %d, %v", s, ge, gesc, we, wesc)
		}
	}
}

// TestCompositeEndAgrees compares compositeEnd with a plain byte loop on
// random nestings of brackets, strings and other bytes.
func TestCompositeEndAgrees(t *testing.T) {
	ref := func(s string) int {
		depth := 0
		for j := 0; j < len(s); j++ {
			switch s[j] {
			case '"':
				e, _ := stringEnd(s, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("{}[]\"\\ax ,:0")
	alphabet = append(alphabet, 0x5b^0x20, 0x5d^0x20, 0xfb, 0xfd, 0xdb, 0xdd)
	for range 50000 {
		b := make([]byte, 1+rng.IntN(60))
		for k := range b {
			if rng.IntN(3) == 0 {
				b[k] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[k] = 'x'
			}
		}
		b[0] = "{["[rng.IntN(2)]
		s := string(b)
		if got, want := compositeEnd(s, 0), ref(s); got != want {
			t.Fatalf("compositeEnd(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestScalarEndAgrees compares scalarEnd with a plain byte loop on random
// literals made mostly of number bytes, with every byte that borders the
// range it skips eight at a time ('.'..'9') and every byte that ends it.
func TestScalarEndAgrees(t *testing.T) {
	ref := func(s string) (int, byte) {
		for j := 0; j < len(s); j++ {
			switch c := s[j]; c {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j, 0
			case '{', '[', '"', ':':
				return j, c
			}
		}
		return len(s), 0
	}
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte(",}] \t\n\r{[\":-+eE/;\x00\x7f\x80\xae\xb9\xff")
	for range 100000 {
		b := make([]byte, 1+rng.IntN(40))
		for k := range b {
			if rng.IntN(12) == 0 {
				b[k] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[k] = "0123456789."[rng.IntN(11)]
			}
		}
		s := string(b)
		ge, gbad := scalarEnd(s, 0)
		we, wbad := ref(s)
		if ge != we || gbad != wbad {
			t.Fatalf("scalarEnd(%q) = %d, %q; want %d, %q", s, ge, gbad, we, wbad)
		}
	}
}
