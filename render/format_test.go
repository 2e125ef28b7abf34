package render

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/window"
)

func TestMS(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		want string
	}{
		{0, "0.000"}, {499, "0.000"}, {500, "0.001"}, {1_234_567, "1.235"}, {1_234_499, "1.234"},
		{84_487_000, "84.487"}, {-1_500, "-0.002"}, {-400, "0.000"}, {9_999_999_500, "10000.000"},
	} {
		if got := MS(tc.ns); got != tc.want {
			t.Errorf("MS(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
	if got := Pct(0.18249); got != "18.2%" {
		t.Errorf("Pct = %q", got)
	}
}

func TestDisplayNames(t *testing.T) {
	a := "void at::native::elementwise_kernel<128, 2, Foo>(int, Foo)"
	b := "void at::native::elementwise_kernel<128, 4, Bar>(int, Bar)"
	c := "void vllm::rms_norm_kernel<c10::BFloat16>(float)"
	// Rows without labels (made by hand) are labelled among themselves:
	// a and b share a short form, so each gets the word only it has.
	var none Labels
	got := none.List([]string{a, b, c}, 200)
	if want := []string{"at::native::elementwise_kernel<Foo>", "at::native::elementwise_kernel<Bar>", "vllm::rms_norm_kernel"}; !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
	// Labels made over the whole input's names are shown as they are,
	// only clipped to the width, hint kept: a's label tells it from b
	// though b is not shown.
	got = LabelsOf([]string{a, b, c}).List([]string{a, c}, 20)
	if want := []string{"at::native::el…<Foo>", "vllm::rms_norm_kern…"}; !slices.Equal(got, want) {
		t.Errorf("List with labels = %q, want %q", got, want)
	}
}

func TestBreakdownFormats(t *testing.T) {
	rank := 3
	cublas := classify.MustCategory("gemm/cublas")
	tbl := table([]window.Input{{Path: "a|b.json", Format: "chrome-trace", Rank: &rank}})
	r := &analyze.GroupTable{Table: tbl,
		Groups: []analyze.Group{{Rank: &tbl.Ranks[0], Device: 1, Class: whole,
			KernelNS: 2_000_000, BusyNS: 1_500_000, SpanNS: 3_000_000, IdleNS: 1_500_000,
			Categories: []analyze.CategoryStat{{Category: cublas, KernelNS: 2_000_000, BusyNS: 1_500_000, Share: 1, Instances: 4}},
			Top:        []analyze.TopKernel{{Name: "k<int>", Category: cublas, Instances: 4, TotalNS: 2_000_000, Share: 1}}}},
	}
	for _, tc := range []struct{ format, want string }{
		{"text", "  gemm/cublas      2.000  100.0%    1.500          4"},
		{"markdown", "| gemm/cublas | 2.000 | 100.0% | 1.500 | 4 |"},
		{"csv", "a|b.json,3,0,1,all,0,2000000,1500000,3000000,gemm/cublas,2000000,1500000,1.000000,4"},
		{"json", `"kernel_ns": 2000000`},
	} {
		var buf bytes.Buffer
		if err := Breakdown(&buf, r, nil, Answer{}, Options{Format: tc.format, Detail: DetailGroups}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), tc.want) {
			t.Errorf("%s output lacks %q:\n%s", tc.format, tc.want, buf.String())
		}
	}
	var buf bytes.Buffer
	Breakdown(&buf, r, nil, Answer{}, Options{Format: "markdown", Detail: DetailGroups})
	if !strings.Contains(buf.String(), "### a|b.json · rank 3 · device 1 · whole trace") || !strings.Contains(buf.String(), "| k | 2.000 |") {
		t.Errorf("markdown title or escaping:\n%s", buf.String())
	}
	if err := Breakdown(&buf, r, nil, Answer{}, Options{Format: "yaml"}); err == nil {
		t.Error("unknown format: want an error")
	}
}

func TestMicros(t *testing.T) {
	for ns, want := range map[int64]string{0: "0.000", 7500: "+7.500", -250: "-0.250", -1 << 63: "-9223372036854775.808", 1<<63 - 1: "+9223372036854775.807"} {
		if got := SignedMicros(ns); got != want {
			t.Errorf("SignedMicros(%d) = %s, want %s", ns, got, want)
		}
	}
	if Micros(1_500) != "1.500" || Micros(-3) != "0.000" {
		t.Errorf("Micros: %s %s", Micros(1_500), Micros(-3))
	}
}
