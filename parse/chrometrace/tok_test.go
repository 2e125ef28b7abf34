package chrometrace

import (
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
