package classify

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultRules(t *testing.T) {
	rules := Default().rules
	if len(rules) < 100 {
		t.Fatalf("Default has %d rules, want the full table", len(rules))
	}
	for _, r := range rules {
		if !strings.HasPrefix(r.Source, "rules.txt:") {
			t.Errorf("rule %q has Source %q, want rules.txt:N", r.Pattern, r.Source)
		}
	}
	if Default() != Default() {
		t.Error("Default returns a new classifier per call, want one shared")
	}
}

// TestRulesFileComments checks the house rule for rules.txt: every group of
// rule lines is preceded by a comment (naming the kernels it is for).
func TestRulesFileComments(t *testing.T) {
	prev := ""
	for i, line := range strings.Split(defaultRules, "\n") {
		line = strings.TrimSpace(line)
		isRule := line != "" && line[0] != '#' && line[0] != '!'
		if isRule && prev == "" {
			t.Errorf("rules.txt:%d: rule not preceded by a comment: %s", i+1, line)
		}
		prev = line
	}
}

func TestParse(t *testing.T) {
	base := []Rule{{Category: MustCategory("gemm/base"), Pattern: "base", Source: "base:1"}}
	for _, tc := range []struct {
		name, in string
		want     []string // category<space>pattern<space>source of each rule
	}{
		{"extend", "# mine\nattention/mine\tmy_attn\n", []string{"attention/mine my_attn f:2", "gemm/base base base:1"}},
		{"replace", "!replace\n\n  # indented comment\nattention/mine   my attn  \r\n", []string{"attention/mine my attn f:4"}},
		{"replace after a rule", "moe/a\ta\n!replace\n", []string{"moe/a a f:1"}},
		{"empty", "", []string{"gemm/base base base:1"}},
		{"BOM", "\ufeff# c\nnorm/x\tx\n", []string{"norm/x x f:2", "gemm/base base base:1"}},
		{"full scope", "norm/x\t@full\t<.*x\nnorm/y   @full   y z\n", []string{"norm/x @full <.*x f:1", "norm/y @full y z f:2", "gemm/base base base:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := Parse(strings.NewReader(tc.in), "f", base)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rules {
				scope := ""
				if r.Scope == ScopeFull {
					scope = "@full "
				}
				got = append(got, r.Category.String()+" "+scope+r.Pattern+" "+r.Source)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Parse = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# c\n\ngemm/x\t(abc\n", "my.rules:3: bad regexp \"(abc\": error parsing regexp: missing closing ): `(abc`"},
		{"foo/bar\tx\n", "my.rules:1: unknown top-level category \"foo\" in \"foo/bar\": want one of communication, gemm, moe, attention, kv_cache, cast, norm, activation, rotary, sampling, embedding, elementwise, memcpy, other"},
		{"gemm\tx\n", "my.rules:1: bad category \"gemm\": want top/sub, e.g. gemm/cublas"},
		{"gemm/\tx\n", "my.rules:1: bad category \"gemm/\": want top/sub, e.g. gemm/cublas"},
		{"gemm/Cublas\tx\n", "my.rules:1: bad category \"gemm/Cublas\": the sub level may use only a-z, 0-9, '_', '-' and '.'"},
		{"gemm/x\n", "my.rules:1: want \"category<TAB>regexp\", got \"gemm/x\""},
		{"!extend\n", "my.rules:1: unknown directive \"!extend\" (the only one is !replace)"},
		{"gemm/x\t@base\tx\n", "my.rules:1: unknown scope \"@base\" (the only one is @full)"},
		{"gemm/x\t@full\n", "my.rules:1: want \"category<TAB>@full<TAB>regexp\", got \"gemm/x\\t@full\""},
		{"gemm/x @full  \n", "my.rules:1: want \"category<TAB>@full<TAB>regexp\", got \"gemm/x @full\""},
	} {
		_, err := Parse(strings.NewReader(tc.in), "my.rules", nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q) error = %v, want %s", tc.in, err, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const kernel = "ncclDevKernel_AllGather_RING_LL"

	ext, err := Load(write("extend.rules", "# my library's gather, counted as GEMM here\ngemm/mine\tallgather\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ext.Classify(kernel); got.String() != "gemm/mine" {
		t.Errorf("extended: Classify(%q) = %s, want gemm/mine (user rules first)", kernel, got)
	}
	if got := ext.Classify("volta_sgemm_128x64_nn"); got.String() != "gemm/cublas" {
		t.Errorf("extended: Classify(volta_sgemm_128x64_nn) = %s, want the default gemm/cublas", got)
	}
	if n, d := len(ext.rules), len(Default().rules); n != d+1 {
		t.Errorf("extended table has %d rules, want %d", n, d+1)
	}

	rep, err := Load(write("replace.rules", "!replace\n# only this\nmoe/mine\tmine\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Classify(kernel); got != Unknown {
		t.Errorf("replaced: Classify(%q) = %s, want %s (defaults gone)", kernel, got, Unknown)
	}
	if got := rep.Classify("my_mine_kernel"); got.String() != "moe/mine" {
		t.Errorf("replaced: Classify(my_mine_kernel) = %s, want moe/mine", got)
	}

	bad := write("bad.rules", "# ok\ngemm/x\tfine\nnorm/y\t[z\n")
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":3: bad regexp \"[z\": ") {
		t.Errorf("Load(bad) error = %v, want it to start with %s:3: bad regexp", err, bad)
	}
	top := write("top.rules", "conv/x\tconv\n")
	if _, err := Load(top); err == nil || !strings.Contains(err.Error(), top+":1: unknown top-level category \"conv\"") {
		t.Errorf("Load(top) error = %v, want unknown top-level category", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.rules")); !os.IsNotExist(err) {
		t.Errorf("Load(missing) error = %v, want not-exist", err)
	}
}

// TestWriteRulesRoundTrip checks that the printed table, parsed again, is
// the same table, and that it replaces (rather than extends) the defaults.
func TestWriteRulesRoundTrip(t *testing.T) {
	ext, err := Parse(strings.NewReader("attention/mine\tmy attn # not a comment\nattention/wrapped\t@full\twrapper<.*attn\n"), "user", Default().rules)
	if err != nil {
		t.Fatal(err)
	}
	c := New(ext)
	var buf bytes.Buffer
	if err := c.WriteRules(&buf); err != nil {
		t.Fatal(err)
	}
	printed := buf.String()
	back, err := Parse(strings.NewReader(printed), "printed", Default().rules)
	if err != nil {
		t.Fatal(err)
	}
	want := c.rules
	if len(back) != len(want) {
		t.Fatalf("round trip: %d rules, want %d", len(back), len(want))
	}
	for i := range want {
		if back[i].Category != want[i].Category || back[i].Pattern != want[i].Pattern || back[i].Scope != want[i].Scope {
			t.Errorf("round trip rule %d = %s %d %q, want %s %d %q", i, back[i].Category, back[i].Scope, back[i].Pattern, want[i].Category, want[i].Scope, want[i].Pattern)
		}
	}
	if !strings.Contains(printed, "\n!replace\n") {
		t.Error("WriteRules output has no !replace line, so loading it would duplicate the defaults")
	}
	if back[0].Pattern != "my attn # not a comment" {
		t.Errorf("first rule pattern = %q, want the user rule", back[0].Pattern)
	}
	if !strings.Contains(printed, "\nattention/wrapped\t@full\twrapper<.*attn\n") {
		t.Error("WriteRules does not print the @full scope")
	}
}

func TestNew(t *testing.T) {
	c := New([]Rule{{Category: MustCategory("norm/x"), Pattern: "^x$"}})
	if got := c.Classify("X"); got.String() != "norm/x" {
		t.Errorf("Classify(X) = %s, want norm/x (case-insensitive)", got)
	}
	c = New([]Rule{{Category: MustCategory("norm/x"), Pattern: "(?-i)^x$"}})
	if got := c.Classify("X"); got != Unknown {
		t.Errorf("Classify(X) with (?-i) = %s, want %s", got, Unknown)
	}
	defer func() {
		if recover() == nil {
			t.Error("New with a bad pattern did not panic")
		}
	}()
	New([]Rule{{Category: MustCategory("norm/x"), Pattern: "("}})
}
