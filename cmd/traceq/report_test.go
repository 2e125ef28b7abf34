package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/golden"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/report"
)

const rtTorch = "../../testdata/traces/torch/"

func rtRun(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append([]string{"traceq"}, args...), nil, &out, &errb); code != exitOK {
		t.Fatalf("traceq %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

func rtRunCode(t *testing.T, want int, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append([]string{"traceq"}, args...), nil, &out, &errb); code != want {
		t.Fatalf("traceq %s: exit %d, want %d: %s", strings.Join(args, " "), code, want, errb.String())
	}
	return errb.String()
}

func rtWellFormed(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: not XML: %v", path, err)
		}
	}
}

func TestChartCommand(t *testing.T) {
	dir := t.TempDir()
	in := rtTorch + "hta_ns_resolution.json.gz"
	for _, k := range report.ChartKinds() {
		kind := k.String()
		out := filepath.Join(dir, kind+".svg")
		src := in
		if k == report.Collectives {
			src = rtTorch + "dlrm8" // collectives need collective kernels
		}
		rtRun(t, "chart", "--type", kind, "-o", out, src)
		rtWellFormed(t, out)
	}
	// The same chart twice: the same bytes.
	a := filepath.Join(dir, "a.svg")
	rtRun(t, "chart", "--type", "timeline", "--step-index", "2", "-o", a, in)
	first, _ := os.ReadFile(a)
	rtRun(t, "chart", "--type", "timeline", "--step-index", "2", "-o", a, in)
	if second, _ := os.ReadFile(a); !bytes.Equal(first, second) {
		t.Error("timeline differs between two runs")
	}
	if !bytes.Contains(first, []byte("Timeline of step 2 ")) {
		t.Error("timeline title does not name step 2")
	}
	p := filepath.Join(dir, "top.png")
	rtRun(t, "chart", "--type", "top", "--format", "png", "-o", p, in)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("png: %v", err)
	}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"chart", "--type", "pie", "-o", a, in}, exitUsage, "unknown --type"},
		{[]string{"chart", "--type", "top", "--format", "pdf", "-o", a, in}, exitUsage, "unknown --format"},
		{[]string{"chart", "--type", "top", in}, exitUsage, "output"},
		{[]string{"chart", "--type", "timeline", "--step-index", "5", "-o", a, in}, exitInput, "step index 5 out of range"},
		{[]string{"chart", "--type", "steps", "--no-steps", "-o", a, in}, exitInput, "no step markers"},
		{[]string{"chart", "--type", "collectives", "-o", a, in}, exitInput, "no collective kernels"},
	} {
		if msg := rtRunCode(t, tc.code, tc.args...); !strings.Contains(msg, tc.msg) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, msg, tc.msg)
		}
	}
}

// rtImageLinks returns the targets of the markdown image links in md.
func rtImageLinks(md string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`!\[[^\]]*\]\(([^)]+)\)`).FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestReportOut checks report --out on one trace with steps: the markdown
// is golden, every image link points at a written, well-formed SVG, and a
// second run gives the same bytes.
func TestReportOut(t *testing.T) {
	in := rtTorch + "hta_ns_resolution.json.gz"
	dir := filepath.Join(t.TempDir(), "rep")
	rtRun(t, "report", "--out", dir, in)
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The golden file holds what report writes itself; the breakdown
	// section is render.Breakdown's markdown, which has its own tests, and
	// must equal it byte for byte.
	head, tail, ok := bytes.Cut(md, []byte("## Breakdown by group\n\n"))
	if !ok {
		t.Fatal("no breakdown section")
	}
	golden.Check(t, "testdata/report_hta.golden.md", head)
	var bb bytes.Buffer
	g, st := reportFor(t, in)
	if err := render.Breakdown(&bb, g, st, nil, render.Options{Format: "markdown", Top: 5, NameWidth: 80, Level: 3,
		Detail: render.DetailGroups | render.DetailRanks, NoHint: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tail, bb.Bytes()) {
		t.Errorf("breakdown section differs from render.Breakdown:\n%s", golden.Diff(bb.String(), string(tail)))
	}
	links := rtImageLinks(string(md))
	if want := []string{"shares.svg", "top.svg", "steps.svg", "hist.svg", "timeline.svg"}; !slices.Equal(links, want) {
		t.Errorf("links %q, want %q", links, want)
	}
	first := map[string][]byte{}
	for _, l := range links {
		rtWellFormed(t, filepath.Join(dir, l))
		first[l], _ = os.ReadFile(filepath.Join(dir, l))
	}
	rtRun(t, "report", "--out", dir, in)
	md2, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !bytes.Equal(md, md2) {
		t.Error("report.md differs between two runs")
	}
	for _, l := range links {
		if b, _ := os.ReadFile(filepath.Join(dir, l)); !bytes.Equal(b, first[l]) {
			t.Errorf("%s differs between two runs", l)
		}
	}
}

// TestReportRanks checks the per-rank comparison of the dlrm8 set: one row
// per rank, whose kernel time is the rank's in-step activity time summed
// here from the parsed trace and the step assignment.
func TestReportRanks(t *testing.T) {
	dir := t.TempDir()
	rtRun(t, "report", "--out", dir, rtTorch+"dlrm8")
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	if !strings.Contains(md, "### Per-input comparison") {
		t.Fatal("no per-input comparison")
	}
	for _, rank := range []string{"0", "3", "7"} {
		tr, err := parse.File(rtTorch+"dlrm8/rank"+rank+".json.gz", parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := analyze.FindSteps(tr, analyze.StepOptions{})
		if err != nil || st == nil {
			t.Fatalf("rank %s: steps %v %v", rank, st, err)
		}
		var ns int64
		for i, a := range tr.Activities {
			if st.Of[i] >= 0 {
				ns += a.Dur
			}
		}
		row := "| rank" + rank + ".json.gz · step ×1 | " + render.MS(ns) + " |"
		if !strings.Contains(md, row) {
			t.Errorf("no row %q", row)
		}
	}
	// Per-input charts for the first maxInputCharts inputs only.
	links := rtImageLinks(md)
	if !slices.Contains(links, "timeline-rank3.svg") || slices.Contains(links, "timeline-rank4.svg") {
		t.Errorf("links %q", links)
	}
	// The collectives section: the answer line, the chart, the tables;
	// the same lines traceq collectives prints first.
	verdict := strings.SplitN(rtRun(t, "collectives", rtTorch+"dlrm8"), "\n", 2)[0]
	if !strings.Contains(md, "## Collectives\n\n- "+verdict+"\n") || !slices.Contains(links, "collectives.svg") ||
		!strings.Contains(md, "| rank 7 (straggler) |") {
		t.Errorf("no collectives section with %q", verdict)
	}
	// The breakdown's cross-rank table names the straggler of each
	// collective, not just the rank with the most time.
	if !strings.Contains(md, "| communication/send_recv | 37.935 | 66.3% | 0.389 | 5.027 | 9.506 | 1.89 | rank 7 (last in 80.0%) | rank 1 |") {
		t.Error("cross-rank table without the send_recv straggler")
	}
	for _, l := range links {
		rtWellFormed(t, filepath.Join(dir, l))
	}
}

// TestReportAppend checks --append: what the file held stays byte for
// byte, the section is dated and named, its image links resolve relative
// to the file, and a second append adds a second section with its own
// charts.
func TestReportAppend(t *testing.T) {
	dir := t.TempDir()
	bench := filepath.Join(dir, "logs", "bench.md")
	if err := os.MkdirAll(filepath.Dir(bench), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := "# k25 bench\n\nnotes without a final newline"
	if err := os.WriteFile(bench, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	in := rtTorch + "dlrm8/rank0.json.gz"
	rtRun(t, "report", "--append", bench, "--date", "2026-11-30", in)
	b, _ := os.ReadFile(bench)
	if !strings.HasPrefix(string(b), orig+"\n\n## rank0.json.gz — 2026-11-30\n") {
		t.Fatalf("appended section does not follow the original text:\n%s", b[:min(len(b), 200)])
	}
	links := rtImageLinks(string(b))
	if len(links) == 0 {
		t.Fatal("no image links")
	}
	for _, l := range links {
		if !strings.HasPrefix(l, "traceq-2026-11-30-rank0/") {
			t.Errorf("link %q not in the section's chart directory", l)
		}
		rtWellFormed(t, filepath.Join(filepath.Dir(bench), l))
	}
	if strings.Contains(string(b), "\n# ") {
		t.Error("appended section has a level-1 heading")
	}
	rtRun(t, "report", "--append", bench, "--date", "2026-11-30", in)
	b2, _ := os.ReadFile(bench)
	if !bytes.HasPrefix(b2, b) {
		t.Fatal("second append changed the first section")
	}
	if !strings.Contains(string(b2[len(b):]), "](traceq-2026-11-30-rank0-2/") {
		t.Error("second section does not use a fresh chart directory")
	}
	// A new file is created; --out puts the charts there, linked relative
	// to the markdown file.
	newBench := filepath.Join(dir, "new.md")
	rtRun(t, "report", "--append", newBench, "--out", filepath.Join(dir, "charts"), "--date", "2026-12-01", in)
	b3, _ := os.ReadFile(newBench)
	if !strings.HasPrefix(string(b3), "## rank0.json.gz — 2026-12-01\n") || !strings.Contains(string(b3), "](charts/shares.svg)") {
		t.Errorf("new bench file:\n%s", b3[:min(len(b3), 300)])
	}
	rtRunCode(t, exitUsage, "report", "--date", "2026-11-30", in)
	rtRunCode(t, exitUsage, "report", "--append", bench, "--date", "30/11/2026", in)
}

// reportFor is the breakdown report of one trace with its steps, as the
// CLI computes it.
func reportFor(t *testing.T, path string) (*analyze.GroupTable, *analyze.StepTable) {
	t.Helper()
	tr, err := parse.File(path, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := analyze.FindSteps(tr, analyze.StepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inputs := []analyze.Input{{Path: path, Trace: tr, Steps: st}}
	analyze.AssignRuns(inputs, []analyze.Source{{Arg: path, Inputs: []int{0}}})
	return analyze.Breakdown(inputs, analyze.Options{})
}

// TestReportBeforeAfter checks that two inputs that are not ranks of one
// run get traceq diff's comparison (its chart and its tables, byte for
// byte), and that two ranks of one run do not.
func TestReportBeforeAfter(t *testing.T) {
	dir := t.TempDir()
	a, b := rtTorch+"hta_ns_resolution.json.gz", rtTorch+"kineto2021_resnet50.json.gz"
	rtRun(t, "report", "--out", dir, a, b)
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md, []byte("### Before → after\n")) || !slices.Contains(rtImageLinks(string(md)), "diff.svg") {
		t.Fatalf("no before/after section with its chart:\n%s", md)
	}
	rtWellFormed(t, filepath.Join(dir, "diff.svg"))
	var want bytes.Buffer
	var errb bytes.Buffer
	if code := run([]string{"traceq", "diff", "--format", "markdown", a, b}, nil, &want, &errb); code != exitOK {
		t.Fatalf("diff: %s", errb.String())
	}
	body := strings.ReplaceAll("\n"+want.String(), "\n### ", "\n#### ")[1:]
	if !bytes.Contains(md, []byte(body)) {
		t.Errorf("report lacks traceq diff's tables:\n%s", body)
	}

	ranks := t.TempDir()
	rtRun(t, "report", "--out", ranks, rtTorch+"dlrm8/rank0.json.gz", rtTorch+"dlrm8/rank1.json.gz")
	md, _ = os.ReadFile(filepath.Join(ranks, "report.md"))
	if bytes.Contains(md, []byte("Before → after")) {
		t.Error("two ranks of one run compared as before/after")
	}
}
