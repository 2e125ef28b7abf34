package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTrace puts smallTrace in dir as name and returns its path.
func writeTrace(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(smallTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// dirFiles lists dir's entries, to check that a failed run left nothing.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestOutputsNeverTouchInputs: an output that resolves to an input (by
// name, through a symlink, through a hard link) is a usage error, and the
// input keeps its bytes.
func TestOutputsNeverTouchInputs(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json")
	link := filepath.Join(dir, "link.svg")
	hard := filepath.Join(dir, "hard.svg")
	if err := os.Symlink(in, link); err != nil {
		t.Skip(err)
	}
	if err := os.Link(in, hard); err != nil {
		t.Skip(err)
	}
	// A report whose chart file is the input: the input is named like a
	// chart of the report.
	repDir := filepath.Join(dir, "rep")
	os.Mkdir(repDir, 0o755)
	chartIn := filepath.Join(repDir, "shares.svg")
	os.WriteFile(chartIn, []byte(smallTrace), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		in   string
	}{
		{"chart -o input (symlink)", []string{"chart", "--type", "top", "-o", link, in}, in},
		{"chart -o input (hard link)", []string{"chart", "--type", "top", "-o", hard, in}, in},
		{"report --append input", []string{"report", "--append", in, in}, in},
		{"diff --chart input", []string{"diff", "--chart", link, in, in}, in},
		{"report --out onto an input", []string{"report", "--out", repDir, "--input-format", "chrome", chartIn}, chartIn},
		{"report --out DIR holding report.md as input", []string{"report", "--out", dir, filepath.Join(dir, "report.md")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in == "" {
				os.WriteFile(filepath.Join(dir, "report.md"), []byte(smallTrace), 0o644)
				tc.in = filepath.Join(dir, "report.md")
			}
			code, _, errs := runCLI(tc.args...)
			if code != exitUsage || !strings.Contains(errs, "is an input") {
				t.Errorf("exit %d, stderr %q; want a usage error saying the output is an input", code, errs)
			}
			if b, _ := os.ReadFile(tc.in); string(b) != smallTrace {
				t.Errorf("the input was changed")
			}
		})
	}
}

// TestChartFormatFromExtension: -o x.png writes PNG without --format; an
// unknown extension and a contradiction are usage errors.
func TestChartFormatFromExtension(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json")
	png := filepath.Join(dir, "x.png")
	if code, _, errs := runCLI("chart", "--type", "top", "-o", png, in); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(png); !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("x.png is not a PNG: % x", b[:min(8, len(b))])
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"chart", "--type", "top", "-o", filepath.Join(dir, "x.pdf"), in}},
		{[]string{"chart", "--type", "top", "--format", "svg", "-o", filepath.Join(dir, "y.png"), in}},
		{[]string{"diff", "--chart", filepath.Join(dir, "d.txt"), in, in}},
	} {
		if code, _, errs := runCLI(tc.args...); code != exitUsage {
			t.Errorf("%v: exit %d (%s), want %d", tc.args, code, errs, exitUsage)
		}
	}
	if got := dirFiles(t, dir); !slices.Equal(got, []string{"t.json", "x.png"}) {
		t.Errorf("directory holds %v after the refused runs", got)
	}
	// Standard output takes --format.
	var out, errb bytes.Buffer
	if code := run([]string{"traceq", "chart", "--type", "top", "--format", "png", "-o", "-", in}, nil, &out, &errb); code != 0 || !bytes.HasPrefix(out.Bytes(), []byte("\x89PNG")) {
		t.Errorf("-o - --format png: exit %d %s", code, errb.String())
	}
}

// TestFailedRunLeavesNoDebris: a chart that cannot be drawn, and a report
// that fails half way, leave no file and no directory behind, and an
// existing file keeps its content.
func TestFailedRunLeavesNoDebris(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json") // no step markers: no steps chart
	old := filepath.Join(dir, "old.svg")
	os.WriteFile(old, []byte("old"), 0o644)
	if code, _, _ := runCLI("chart", "--type", "steps", "-o", old, in); code != exitInput {
		t.Fatalf("steps chart of a trace without steps: exit %d, want 1", code)
	}
	if b, _ := os.ReadFile(old); string(b) != "old" {
		t.Errorf("the existing output was replaced by a failed run: %q", b)
	}
	// report --append BENCH --out a new chart dir, on an input that fails
	// to load: neither the log nor the chart directory appears.
	bench := filepath.Join(dir, "BENCH.md")
	os.WriteFile(bench, []byte("# log\n"), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"traceEvents": [`), 0o644)
	if code, _, _ := runCLI("report", "--append", bench, "--out", filepath.Join(dir, "charts", "x"), "--date", "2026-11-30", bad); code != exitInput {
		t.Fatalf("report on a bad input: exit %d, want 1", code)
	}
	if b, _ := os.ReadFile(bench); string(b) != "# log\n" {
		t.Errorf("the log changed: %q", b)
	}
	want := []string{"BENCH.md", "bad.json", "old.svg", "t.json"}
	if got := dirFiles(t, dir); !slices.Equal(got, want) {
		t.Errorf("directory holds %v, want %v", got, want)
	}
}

// TestAppendRefusesNonRegular: report --append to a device or a FIFO is a
// usage error, before anything is read from it.
func TestAppendRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json")
	for _, target := range []string{"/dev/zero", os.DevNull} {
		if code, _, errs := runCLI("report", "--append", target, "--out", filepath.Join(dir, "c"), in); code != exitUsage || !strings.Contains(errs, "not a regular file") {
			t.Errorf("--append %s: exit %d %q", target, code, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "c")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("chart directory made for a refused run: %v", err)
	}
}

// TestReportOutReplaces: a second report into the same directory says it
// replaced the first.
func TestReportOutReplaces(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json")
	out := filepath.Join(dir, "rep")
	_, first, _ := runCLI("report", "--out", out, in)
	_, second, _ := runCLI("report", "--out", out, in)
	if !strings.HasPrefix(first, "wrote ") || !strings.HasPrefix(second, "replaced ") {
		t.Errorf("first %q, second %q", first, second)
	}
}

// TestFlagsAfterInputs: flags may follow the inputs; "--" ends them.
func TestFlagsAfterInputs(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json")
	code, out, errs := runCLI("kernels", in, "--format", "json")
	if code != 0 || !strings.HasPrefix(out, "{") {
		t.Errorf("kernels IN --format json: exit %d, %q %q", code, out[:min(20, len(out))], errs)
	}
	code, _, errs = runCLI("kernels", "--", "--format")
	if code != exitInput || !strings.Contains(errs, "--format") {
		t.Errorf("after --, --format is a file name: exit %d %q", code, errs)
	}
}

// hostileTrace has kernel names with an escape sequence, a newline, a
// control character and a spreadsheet formula.
const hostileTrace = `{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "evil\u001b[31mred\nline", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "=HYPERLINK(\"http://x\")", "pid": 0, "tid": 7, "ts": 20, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "ctl\u0001kernel|pipe", "pid": 0, "tid": 7, "ts": 30, "dur": 4, "args": {"device": 0, "stream": 7, "correlation": 3}}
]}`

// TestHostileNames: names reach text and markdown with control characters
// made visible, CSV with formulas neutralised, SVG as valid XML.
func TestHostileNames(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "evil.json")
	os.WriteFile(in, []byte(hostileTrace), 0o644)
	for _, format := range []string{"text", "markdown"} {
		_, out, _ := runCLI("kernels", "--format", format, in)
		if strings.ContainsAny(out, "\x1b\x01") || !strings.Contains(out, `\x1b[31mred\nline`) {
			t.Errorf("%s: control characters not escaped:\n%q", format, out)
		}
		if lines := strings.Count(out, "\n"); format == "text" && lines != 4 {
			t.Errorf("text: %d lines, want a header and 3 rows", lines)
		}
	}
	_, md, _ := runCLI("kernels", "--format", "markdown", in)
	if !strings.Contains(md, `ctl\x01kernel\|pipe`) {
		t.Errorf("markdown: pipe not escaped:\n%s", md)
	}
	_, out, _ := runCLI("kernels", "--format", "csv", in)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		if name := r[8]; strings.HasPrefix(name, "=") {
			t.Errorf("CSV cell %q would run as a formula", name)
		}
	}
	if !strings.Contains(out, `'=HYPERLINK`) {
		t.Errorf("CSV: formula not neutralised with a leading apostrophe:\n%s", out)
	}
}

// TestHostileNamesSVG: a chart of hostile names is valid XML.
func TestHostileNamesSVG(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "evil.json")
	os.WriteFile(in, []byte(hostileTrace), 0o644)
	svg := filepath.Join(dir, "top.svg")
	if code, _, errs := runCLI("chart", "--type", "top", "-o", svg, in); code != 0 {
		t.Fatalf("chart: %s", errs)
	}
	b, _ := os.ReadFile(svg)
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		if _, err := d.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("SVG is not valid XML: %v", err)
			}
			break
		}
	}
}

// TestOverflowRefused: a trace whose times cannot be summed in 64 bits is
// an error (exit 1), never a negative total.
func TestOverflowRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "ovf.json")
	os.WriteFile(in, []byte(`{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 9223372036854775, "dur": 1000, "args": {"device": 0, "stream": 7, "correlation": 1}}
]}`), 0o644)
	code, out, errs := runCLI("breakdown", in)
	if code != exitInput || out != "" || !strings.Contains(errs, "overflows 64-bit") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestFilterMatchingNothing: a --kind that selects nothing says what the
// inputs hold instead and exits 1, like grep.
func TestFilterMatchingNothing(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"breakdown", "--kind", "decode", torchDir + "/vllm_b200_eager_prefill.json.gz"}, "traceq: no decode steps; found prefill ×1\n"},
		{[]string{"kernels", "--kind", "decode", "../../testdata/traces/nsys/nsys2022.1.3_dlprof-rtx2070-cudnn.sqlite"}, "traceq: no decode steps; found 1 input without step markers\n"},
	} {
		code, out, errs := runCLI(tc.args...)
		if code != exitInput || out != "" || !strings.HasSuffix(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}

// TestOldFlagSpellings: chart's old --kind (the chart) and --step-kind
// give usage errors naming the new flags.
func TestOldFlagSpellings(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"chart", "--kind", "top", "-o", filepath.Join(dir, "x.svg"), in}, "the chart is --type top"},
		{[]string{"chart", "--type", "top", "--step-kind", "decode", "-o", filepath.Join(dir, "x.svg"), in}, "--step-kind is now --kind"},
		{[]string{"report", "--step-kind", "decode", "--out", filepath.Join(dir, "r"), in}, "--step-kind is now --kind"},
	} {
		if code, _, errs := runCLI(tc.args...); code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d %q, want usage error with %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestTimelineWindow: chart --from/--to draws part of a step; they are
// refused for other charts and when empty.
func TestTimelineWindow(t *testing.T) {
	dir := t.TempDir()
	in := torchDir + "/hta_ns_resolution.json.gz"
	out := filepath.Join(dir, "w.svg")
	if code, _, errs := runCLI("chart", "--type", "timeline", "--step-index", "2", "--from", "10ms", "--to", "14ms", "-o", out, in); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(out); !bytes.Contains(b, []byte("window 10.000 to 14.000 ms")) {
		t.Error("the chart does not say its window")
	}
	for _, args := range [][]string{
		{"chart", "--type", "top", "--from", "1ms", "-o", out, in},
		{"chart", "--type", "timeline", "--from", "5ms", "--to", "2ms", "-o", out, in},
	} {
		if code, _, errs := runCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d %q, want a usage error", args, code, errs)
		}
	}
}

// TestByTop: --by top folds each group's categories into their top level:
// the kernel time of a top is the sum of its categories', and every name
// is a bare top.
func TestByTop(t *testing.T) {
	in := torchDir + "/dlrm8"
	type doc struct {
		Groups []struct {
			Categories []struct {
				Category string `json:"category"`
				KernelNS int64  `json:"kernel_ns"`
			} `json:"categories"`
		} `json:"groups"`
	}
	read := func(args ...string) doc {
		code, out, errs := runCLI(append([]string{"breakdown", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var d doc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	full, top := read(in), read("--by", "top", in)
	if len(full.Groups) != len(top.Groups) {
		t.Fatalf("%d groups by category, %d by top", len(full.Groups), len(top.Groups))
	}
	for i, g := range full.Groups {
		want := map[string]int64{}
		for _, c := range g.Categories {
			want[strings.SplitN(c.Category, "/", 2)[0]] += c.KernelNS
		}
		got := map[string]int64{}
		for _, c := range top.Groups[i].Categories {
			got[c.Category] = c.KernelNS
		}
		if !maps.Equal(got, want) {
			t.Errorf("group %d by top %v, want %v", i, got, want)
		}
	}
	if code, _, _ := runCLI("breakdown", "--by", "sub", in); code != exitUsage {
		t.Errorf("--by sub: exit %d, want a usage error", code)
	}
}
