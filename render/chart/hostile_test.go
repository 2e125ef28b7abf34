package chart

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
)

// hostile are names no XML document may hold as they are: C0 controls,
// DEL and C1, invalid UTF-8, the noncharacters U+FFFE and U+FFFF, and
// markup.
var hostile = []string{
	"kern\x01el", "\x00", "tab\there", "esc\x1b[31mred", "del\x7f", "c1\u0085",
	"bad\xffutf8", "half\xe2\x82", "non\ufffechar", "non\uffffchar", "<b>&amp;</b>]]>",
}

// TestHostileNamesMakeValidXML draws every chart kind with hostile names
// in every place a trace can put text (kernel names, paths, step
// markers, the title) and parses each SVG with encoding/xml.
func TestHostileNamesMakeValidXML(t *testing.T) {
	title := strings.Join(hostile, " ")
	var ks []analyze.KernelStat
	var gs []analyze.Group
	var rows []analyze.StepRow
	tl := &Track{Start: 0, End: 1000, Lanes: []Lane{{Stream: 7}},
		Step: &step.Step{Index: 0, Kind: step.Decode, Marker: title}}
	for i, h := range hostile {
		ks = append(ks, analyze.KernelStat{Name: "void " + h + "<int>(float)", Category: classify.MustCategory("gemm/cublas"),
			Dist: stats.Dist{N: 1, Total: int64(100 + i)}, Share: 0.05})
		gs = append(gs, analyze.Group{Rank: rank(i, "", "/runs/"+h+"/rank0.json", nil, 0), KernelNS: 100,
			Categories: []analyze.CategoryStat{{Category: classify.MustCategory("gemm/cublas"), KernelNS: 100}}})
		rows = append(rows, analyze.StepRow{Step: step.Step{Index: i, Kind: step.Decode, Marker: h}, KernelNS: 10, SpanNS: int64(20 + i),
			Categories: []analyze.StepCat{{Category: classify.MustCategory("gemm/cublas"), KernelNS: 10}}})
		tl.Spans = append(tl.Spans, Span{Start: 0, End: 50, Name: h, Category: classify.MustCategory("gemm/cublas")})
	}
	d := &analyze.Diff{Kinds: []analyze.KindDiff{{Class: decode,
		Total:   analyze.CategoryDiff{DeltaNS: 5},
		Kernels: []analyze.KernelDiff{{Name: hostile[0]}}}}}
	opt := Options{Title: title}
	draw := map[string]func(io.Writer) error{
		"top":      func(w io.Writer) error { return Top(w, ks, nil, opt) },
		"shares":   func(w io.Writer) error { return Shares(w, gs, SharesOptions{Options: opt}) },
		"steps":    func(w io.Writer) error { return Steps(w, rows, opt) },
		"hist":     func(w io.Writer) error { return Hist(w, rows, opt) },
		"timeline": func(w io.Writer) error { return Timeline(w, tl, opt) },
		"diff":     func(w io.Writer) error { return Diff(w, d, opt) },
	}
	for kind, f := range draw {
		t.Run(kind, func(t *testing.T) {
			var buf bytes.Buffer
			if err := f(&buf); err != nil {
				t.Fatal(err)
			}
			texts := checkXML(t, buf.Bytes())
			// The escapes are visible: the reader sees that the name held
			// a control character.
			if !strings.Contains(strings.Join(texts, " "), `\x01`) {
				t.Errorf("no text shows the escaped \\x01")
			}
		})
	}
}

func TestSafeText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain <ok> & fine", "plain <ok> & fine"},
		{"a\x01b", `a\x01b`},
		{"x\xffy", `x\xffy`},
		{"n\ufffe\uffff", `n\ufffe\uffff`},
		{"計算 😀", "計算 😀"},
	} {
		if got := safeText(tc.in); got != tc.want {
			t.Errorf("safeText(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := safeText(safeText(tc.in)); got != safeText(tc.in) {
			t.Errorf("safeText is not idempotent on %q: %q", tc.in, got)
		}
	}
}
