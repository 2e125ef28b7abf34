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
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/findings"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/internal/golden"
	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/report"
	"github.com/traceq/traceq/step"
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
// is golden, it leads with breakdown's summary and ends with its details,
// every image link points at a written, well-formed SVG, and a second run
// gives the same bytes.
func TestReportOut(t *testing.T) {
	in := rtTorch + "hta_ns_resolution.json.gz"
	dir := filepath.Join(t.TempDir(), "rep")
	rtRun(t, "report", "--out", dir, in)
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The golden file holds what report writes itself; the summary and
	// the breakdown section are render's markdown, which has its own
	// tests, and must equal it byte for byte.
	head, tail, ok := bytes.Cut(md, []byte("## Breakdown by group\n\n"))
	if !ok {
		t.Fatal("no breakdown section")
	}
	golden.Check(t, "testdata/report_hta.golden.md", head)
	g := reportFor(t, in)
	var sum, bb bytes.Buffer
	if err := render.Summary(&sum, g, answerOf(g), render.Options{Format: "markdown", Level: 2}); err != nil {
		t.Fatal(err)
	}
	if want := "# traceq report: hta_ns_resolution\n\n" + sum.String() + "\n## "; !strings.HasPrefix(string(md), want) {
		t.Errorf("report does not lead with the summary:\n%s", golden.Diff(want, string(md[:min(len(md), len(want))])))
	}
	if err := render.BreakdownDetail(&bb, g, nil, render.Options{Format: "markdown", Top: 5, NameWidth: 80, Level: 3,
		Detail: render.DetailGroups | render.DetailRanks}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tail, bb.Bytes()) {
		t.Errorf("breakdown section differs from render.BreakdownDetail:\n%s", golden.Diff(bb.String(), string(tail)))
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

// TestReportRanks checks the per-group comparison of the dlrm8 run: one
// row per rank, named by rank, whose kernel time is the rank's in-step
// activity time summed here from the parsed trace and the step assignment;
// the two groups outside any step (0.7% of the run's kernel time) are left
// out, with a note, unless --unattributed.
func TestReportRanks(t *testing.T) {
	dir := t.TempDir()
	rtRun(t, "report", "--out", dir, rtTorch+"dlrm8")
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	if !strings.HasPrefix(md, "# traceq report: dlrm8\n\n## dlrm8 · 8 ranks · 1 step on each of 8 devices\n") {
		t.Errorf("report does not lead with the run's summary:\n%s", md[:min(len(md), 200)])
	}
	if !strings.Contains(md, "### Per-group comparison") {
		t.Fatal("no per-group comparison")
	}
	for _, rank := range []string{"0", "3", "7"} {
		tr, err := parse.File(rtTorch+"dlrm8/rank"+rank+".json.gz", parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := step.Find(tr, step.Options{})
		if err != nil || st == nil {
			t.Fatalf("rank %s: steps %v %v", rank, st, err)
		}
		var ns int64
		for i, a := range tr.Activities {
			if st.Of[i] >= 0 {
				ns += a.Dur
			}
		}
		row := "| rank " + rank + " · step ×1 | " + render.MS(ns) + " |"
		if !strings.Contains(md, row) {
			t.Errorf("no row %q", row)
		}
	}
	const left = "*Not shown: 2 groups outside any step, 0.379 ms of kernel time (0.7% of the run's); `--unattributed` shows them.*"
	if strings.Contains(md, "| rank 1 · outside steps |") || strings.Count(md, left) != 2 {
		t.Errorf("groups outside any step shown, or no note %q under the comparison and the idle tables", left)
	}
	if svg, _ := os.ReadFile(filepath.Join(dir, "shares.svg")); !bytes.Contains(svg, []byte("not drawn: 2 groups outside any step")) {
		t.Error("the shares chart does not say what it left out")
	}
	// Per-input charts for the first maxInputCharts inputs only, named
	// after the run and the rank.
	links := rtImageLinks(md)
	if !slices.Contains(links, "timeline-dlrm8-rank3.svg") || slices.Contains(links, "timeline-dlrm8-rank4.svg") {
		t.Errorf("links %q", links)
	}
	if !strings.Contains(md, "\n### dlrm8 · rank 3\n") {
		t.Error("per-input heading does not name the run and the rank")
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
	// (DLRM's SendRecv kernels are its embeddings' all-to-all: launched
	// inside nccl:all_to_all ranges.)
	if !strings.Contains(md, "| communication/all_to_all | 37.935 | 66.3% | 0.389 | 5.027 | 9.506 | 1.89 | rank 7 (last in 80.0%) | rank 1 |") {
		t.Error("cross-rank table without the all_to_all straggler")
	}
	for _, l := range links {
		rtWellFormed(t, filepath.Join(dir, l))
	}

	all := t.TempDir()
	rtRun(t, "report", "--out", all, "--unattributed", rtTorch+"dlrm8")
	b, _ = os.ReadFile(filepath.Join(all, "report.md"))
	if !strings.Contains(string(b), "| rank 1 · outside steps | 0.203 |") || strings.Contains(string(b), "Not shown") {
		t.Error("--unattributed: the groups outside any step are not shown")
	}
	if svg, _ := os.ReadFile(filepath.Join(all, "shares.svg")); !bytes.Contains(svg, []byte("rank 3 · outside steps")) {
		t.Error("--unattributed: the shares chart lacks the groups outside any step")
	}
}

// TestReportAppend checks --append: what the file held stays byte for
// byte, the section is dated and named after the run, its image links
// resolve relative to the file, the whole report lies with the charts and
// its links resolve there, and a second append adds a second section with
// its own charts.
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
	if !strings.HasPrefix(string(b), orig+"\n\n## rank0 — 2026-11-30\n") {
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
	if !strings.Contains(string(b), "\n[The whole report](traceq-2026-11-30-rank0/report.md) ") {
		t.Error("no link to the whole report")
	}
	whole, err := os.ReadFile(filepath.Join(filepath.Dir(bench), "traceq-2026-11-30-rank0", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(whole), "# traceq report: rank0 — 2026-11-30\n") || !strings.Contains(string(whole), "\n## Top kernels\n") {
		t.Errorf("whole report:\n%s", whole[:min(len(whole), 200)])
	}
	for _, l := range rtImageLinks(string(whole)) {
		rtWellFormed(t, filepath.Join(filepath.Dir(bench), "traceq-2026-11-30-rank0", l))
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
	// A new file is created; --out puts the charts and the whole report
	// there, linked relative to the markdown file.
	newBench := filepath.Join(dir, "new.md")
	rtRun(t, "report", "--append", newBench, "--out", filepath.Join(dir, "charts"), "--date", "2026-12-01", in)
	b3, _ := os.ReadFile(newBench)
	if !strings.HasPrefix(string(b3), "## rank0 — 2026-12-01\n") || !strings.Contains(string(b3), "](charts/shares.svg)") ||
		!strings.Contains(string(b3), "](charts/report.md)") {
		t.Errorf("new bench file:\n%s", b3[:min(len(b3), 300)])
	}
	rtRunCode(t, exitUsage, "report", "--date", "2026-11-30", in)
	rtRunCode(t, exitUsage, "report", "--append", bench, "--date", "30/11/2026", in)
	rtRunCode(t, exitUsage, "report", "--out", dir, "--full", in)
}

// TestReportAppendShort checks the size and content of the section
// --append adds by default, on the 8-rank dlrm8 run and a generated 8-rank
// vLLM-like run with a straggler: at most 60 lines, the run's summary as
// breakdown prints it, the shares (and steps) charts, the collectives'
// answer lines as traceq collectives prints them, the idle verdict and the
// link to the whole report; --full appends the whole report instead.
func TestReportAppendShort(t *testing.T) {
	gen8, _ := writeRun(t, gen.RunConfig{Ranks: 8, Steps: 12, DecodeEvery: 6, Layers: 2, Straggler: 5, SlowdownPct: 30, JitterNS: 500,
		BusGBps: 16, Seed: 7})
	for _, tc := range []struct {
		name, in string
		charts   []string
	}{
		{"dlrm8", rtTorch + "dlrm8", []string{"shares.svg"}},
		{"gen8", gen8, []string{"shares.svg", "steps-" + filepath.Base(gen8) + "-rank0.svg"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bench := filepath.Join(dir, "bench.md")
			rtRun(t, "report", "--append", bench, "--date", "2026-11-30", tc.in)
			b, _ := os.ReadFile(bench)
			md := string(b)
			lines := strings.Count(md, "\n")
			t.Logf("%s: the appended section has %d lines", tc.name, lines)
			if lines > 60 {
				t.Errorf("%d lines, want at most 60:\n%s", lines, md)
			}
			run := filepath.Base(tc.in)
			chartDir := "traceq-2026-11-30-" + run
			var sum strings.Builder
			g := reportForRun(t, tc.in)
			if err := render.Summary(&sum, g, answerOf(g), render.Options{Format: "markdown", Level: 3}); err != nil {
				t.Fatal(err)
			}
			// The speed-of-light lines (docs/efficiency.md) are breakdown's,
			// as its first screen prints them; the rest is the summary.
			var sol, mdSol []string
			for _, l := range strings.Split(rtRun(t, "breakdown", tc.in), "\n") {
				if l = strings.TrimSpace(l); strings.HasPrefix(l, "at the speed of light ") {
					sol = append(sol, l)
				}
			}
			var rest []string
			for _, l := range strings.SplitAfter(md, "\n") {
				if strings.HasPrefix(l, "at the speed of light ") {
					mdSol = append(mdSol, strings.TrimSuffix(l, "  \n"))
					continue
				}
				rest = append(rest, l)
			}
			if (len(sol) > 0) != (tc.name == "dlrm8") || !slices.Equal(sol, mdSol) {
				t.Errorf("speed-of-light lines %q, breakdown prints %q", mdSol, sol)
			}
			if want, md := "## "+run+" — 2026-11-30\n\n"+sum.String(), strings.Join(rest, ""); !strings.HasPrefix(md, want) {
				t.Errorf("the section does not lead with the summary:\n%s", golden.Diff(want, md[:min(len(md), len(want))]))
			}
			var want []string
			for _, c := range tc.charts {
				want = append(want, chartDir+"/"+c)
			}
			if links := rtImageLinks(md); !slices.Equal(links, want) {
				t.Errorf("charts %q, want %q", links, want)
			}
			verdicts := strings.SplitN(rtRun(t, "collectives", tc.in), "\n\n", 2)[0]
			for _, v := range strings.Split(verdicts, "\n") {
				if !strings.Contains(md, "\n- "+v+"\n") {
					t.Errorf("no collectives verdict %q", v)
				}
			}
			if !strings.Contains(md, "\nThe GPU was idle ") || !strings.HasSuffix(md, "\n[The whole report]("+chartDir+"/report.md) has the tables behind these figures and every chart.\n") {
				t.Errorf("no idle verdict or link to the whole report:\n%s", md)
			}

			full := filepath.Join(dir, "full.md")
			rtRun(t, "report", "--append", full, "--full", "--date", "2026-11-30", tc.in)
			fb, _ := os.ReadFile(full)
			t.Logf("%s: --full appends %d lines", tc.name, bytes.Count(fb, []byte("\n")))
			if !bytes.Contains(fb, []byte("\n### Top kernels\n")) || !bytes.Contains(fb, []byte("\n### Breakdown by group\n")) {
				t.Error("--full does not append the whole report")
			}
		})
	}
}

// reportFor is the breakdown report of one trace with its steps, as the
// CLI computes it.
func reportFor(t *testing.T, path string) *analyze.GroupTable {
	return reportForRun(t, path)
}

// reportForRun is the breakdown of a trace file, or of the rank files of
// a directory as one run, as the CLI computes it: through the loader.
func reportForRun(t *testing.T, path string) *analyze.GroupTable {
	t.Helper()
	// The models kept: answerOf runs the efficiency analysis on them.
	tbl, err := load.Load([]string{path}, load.Options{Steps: true, Keep: func(int) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	return analyze.Breakdown(tbl, analyze.Options{})
}

// answerOf is what the report's summary leads with, computed as the
// report does without settings: the collectives when there are any, the
// efficiency analysis when an input records shapes or launch
// configurations, and the findings.
func answerOf(g *analyze.GroupTable) render.Answer {
	var ct *collectives.Table
	if g.AnyCommunication() {
		// The link of every command: none given, so the devices' default.
		ct = collectives.Match(g.Table, collectives.Options{}.WithDefault(efficiency.DefaultLink(efficiency.Devices(g.Table, nil, nil))))
	}
	var eff *efficiency.Result
	for _, in := range g.Table.Inputs {
		if in.OpSigs > 0 || in.Configs > 0 {
			eff = efficiency.Analyze(g.Table, efficiency.Options{})
			break
		}
	}
	opt := findings.Options{}
	opt.Roofline, opt.Priced = render.RooflineRows(eff)
	return render.Answer{Collectives: ct, Findings: findings.Find(g, ct, opt)}
}

// TestReportBeforeAfter checks that two runs (two files, or two
// directories) get traceq diff's comparison (its chart and its tables,
// byte for byte), that two ranks of one run do not, and that three runs
// say they are not compared.
func TestReportBeforeAfter(t *testing.T) {
	dir := t.TempDir()
	a, b := rtTorch+"hta_ns_resolution.json.gz", rtTorch+"kineto2021_resnet50.json.gz"
	rtRun(t, "report", "--out", dir, a, b)
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(md, []byte("# traceq report: hta_ns_resolution → kineto2021_resnet50\n")) ||
		!bytes.Contains(md, []byte("\n## Before → after\n\n*`hta_ns_resolution` is before, `kineto2021_resnet50` after")) ||
		!slices.Contains(rtImageLinks(string(md)), "diff.svg") {
		t.Fatalf("no before/after section with its chart:\n%s", md)
	}
	rtWellFormed(t, filepath.Join(dir, "diff.svg"))
	var want bytes.Buffer
	var errb bytes.Buffer
	if code := run([]string{"traceq", "diff", "--format", "markdown", a, b}, nil, &want, &errb); code != exitOK {
		t.Fatalf("diff: %s", errb.String())
	}
	if !bytes.Contains(md, want.Bytes()) {
		t.Errorf("report lacks traceq diff's tables:\n%s", want.String())
	}

	// Two directories: two runs, named after them.
	runs := t.TempDir()
	for _, name := range []string{"runA", "runFix"} {
		if err := os.MkdirAll(filepath.Join(runs, name), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, r := range []string{"0", "1"} {
			src, err := os.ReadFile(rtTorch + "dlrm8/rank" + r + ".json.gz")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(runs, name, "rank"+r+".json.gz"), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := t.TempDir()
	bench := filepath.Join(out, "bench.md")
	rtRun(t, "report", "--append", bench, "--date", "2026-11-30", filepath.Join(runs, "runA"), filepath.Join(runs, "runFix"))
	md, _ = os.ReadFile(bench)
	for _, s := range []string{"## runA → runFix — 2026-11-30\n", "\n### runA · 2 ranks · ", "\n### runFix · 2 ranks · ", "\n### Before → after\n",
		"](traceq-2026-11-30-runA-vs-runFix/diff.svg)", "\n- runA: The GPU was idle ", "\n- runFix: The GPU was idle "} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("two runs: the section lacks %q:\n%s", s, md)
		}
	}
	whole, _ := os.ReadFile(filepath.Join(out, "traceq-2026-11-30-runA-vs-runFix", "report.md"))
	if !bytes.Contains(whole, []byte("| runFix · rank 1 · step ×1 |")) {
		t.Error("the whole report's rows are not named by run and rank")
	}

	ranks := t.TempDir()
	rtRun(t, "report", "--out", ranks, rtTorch+"dlrm8/rank0.json.gz", rtTorch+"dlrm8/rank1.json.gz")
	md, _ = os.ReadFile(filepath.Join(ranks, "report.md"))
	if bytes.Contains(md, []byte("Before → after")) {
		t.Error("two ranks of one run compared as before/after")
	}

	three := t.TempDir()
	rtRun(t, "report", "--out", three, a, b, rtTorch+"hta_triton.json.gz")
	md, _ = os.ReadFile(filepath.Join(three, "report.md"))
	if bytes.Contains(md, []byte("Before → after\n")) || !bytes.Contains(md, []byte("\n*3 runs: the summary shows each; no before → after.")) {
		t.Error("three runs: no line saying they are not compared")
	}
}
