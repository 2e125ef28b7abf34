package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/golden"
)

// runJSON runs traceq with args and decodes its JSON output into v.
func runJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append([]string{"traceq"}, args...), nil, &out, &errb); code != 0 {
		t.Fatalf("traceq %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		t.Fatalf("traceq %s: %v", strings.Join(args, " "), err)
	}
}

// gunzipTo decompresses a fixture into dir (the nsys reader needs a file).
func gunzipTo(t *testing.T, src, dir string) string {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".gz"))
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// The parts of breakdown's and diff's JSON the test reads.
type bdJSON struct {
	Groups []struct {
		StepKind   string `json:"step_kind"`
		Steps      int    `json:"steps"`
		KernelNS   int64  `json:"kernel_ns"`
		Categories []struct {
			Category string `json:"category"`
			KernelNS int64  `json:"kernel_ns"`
		} `json:"categories"`
	} `json:"groups"`
}

type catJSON struct {
	Category        string   `json:"category"`
	BeforeNS        int64    `json:"before_kernel_ns"`
	AfterNS         int64    `json:"after_kernel_ns"`
	BeforePerStepNS int64    `json:"before_per_step_ns"`
	AfterPerStepNS  int64    `json:"after_per_step_ns"`
	DeltaNS         int64    `json:"delta_ns"`
	DeltaPct        *float64 `json:"delta_pct"`
	BeforeShare     float64  `json:"before_share"`
	AfterShare      float64  `json:"after_share"`
	ShareChange     float64  `json:"share_change"`
}

type diffJSON struct {
	Comparable bool     `json:"comparable"`
	Notes      []string `json:"notes"`
	Kinds      []struct {
		StepKind      string    `json:"step_kind"`
		BeforeWindows int       `json:"before_windows"`
		AfterWindows  int       `json:"after_windows"`
		Total         catJSON   `json:"total"`
		Categories    []catJSON `json:"categories"`
		Kernels       []struct {
			Name            string `json:"name"`
			Match           string `json:"match"`
			Change          string `json:"change"`
			BeforeNS        int64  `json:"before_ns"`
			AfterNS         int64  `json:"after_ns"`
			BeforePerStepNS int64  `json:"before_per_step_ns"`
			AfterPerStepNS  int64  `json:"after_per_step_ns"`
			DeltaNS         int64  `json:"delta_ns"`
		} `json:"kernels"`
	} `json:"kinds"`
}

// side is one run's figures per step kind, summed from breakdown's JSON.
type side struct {
	windows map[string]int
	total   map[string]int64
	cats    map[string]map[string]int64
}

func sideOf(b bdJSON) side {
	s := side{windows: map[string]int{}, total: map[string]int64{}, cats: map[string]map[string]int64{}}
	for _, g := range b.Groups {
		w := g.Steps
		if w == 0 {
			w = 1 // a device's whole trace, or its unattributed time
		}
		s.windows[g.StepKind] += w
		s.total[g.StepKind] += g.KernelNS
		if s.cats[g.StepKind] == nil {
			s.cats[g.StepKind] = map[string]int64{}
		}
		for _, c := range g.Categories {
			s.cats[g.StepKind][c.Category] += c.KernelNS
		}
	}
	return s
}

// roundDiv divides non-negative a by b, rounding half up.
func roundDiv(a int64, b int) int64 { return (2*a + int64(b)) / (2 * int64(b)) }

func closeTo(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// checkDiff checks every category row of diff against the two breakdowns
// subtracted.
func checkDiff(t *testing.T, d diffJSON, before, after side) {
	t.Helper()
	if len(d.Kinds) == 0 {
		t.Fatal("no step kind compared")
	}
	for _, k := range d.Kinds {
		kind := k.StepKind
		bw, aw := before.windows[kind], after.windows[kind]
		if k.BeforeWindows != bw || k.AfterWindows != aw {
			t.Errorf("%s: windows %d, %d; want %d, %d", kind, k.BeforeWindows, k.AfterWindows, bw, aw)
		}
		check := func(c catJSON, b, a, bt, at int64) {
			wantB, wantA := roundDiv(b, bw), roundDiv(a, aw)
			if c.BeforeNS != b || c.AfterNS != a || c.BeforePerStepNS != wantB || c.AfterPerStepNS != wantA || c.DeltaNS != wantA-wantB {
				t.Errorf("%s/%s: got %+v; want kernel %d → %d, per step %d → %d, delta %d", kind, c.Category, c, b, a, wantB, wantA, wantA-wantB)
			}
			if wantB > 0 && (c.DeltaPct == nil || !closeTo(*c.DeltaPct, float64(wantA-wantB)/float64(wantB)*100)) {
				t.Errorf("%s/%s: delta %% %v", kind, c.Category, c.DeltaPct)
			}
			sb, sa := float64(b)/float64(bt), float64(a)/float64(at)
			if !closeTo(c.BeforeShare, sb) || !closeTo(c.AfterShare, sa) || !closeTo(c.ShareChange, sa-sb) {
				t.Errorf("%s/%s: shares %v → %v (%v); want %v → %v", kind, c.Category, c.BeforeShare, c.AfterShare, c.ShareChange, sb, sa)
			}
		}
		bt, at := before.total[kind], after.total[kind]
		check(k.Total, bt, at, bt, at)
		seen := map[string]bool{}
		for _, c := range k.Categories {
			seen[c.Category] = true
			check(c, before.cats[kind][c.Category], after.cats[kind][c.Category], bt, at)
		}
		for _, m := range []map[string]int64{before.cats[kind], after.cats[kind]} {
			for c := range m {
				if !seen[c] {
					t.Errorf("%s: category %s missing from the diff", kind, c)
				}
			}
		}
	}
}

// The nsys before/after pair (2 processes × 1 GPU, NCCL): diff equals the
// two breakdowns subtracted, and its kernel rows match the kernels tables.
func TestDiffNsysPair(t *testing.T) {
	dir := t.TempDir()
	before := gunzipTo(t, "../../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-before.sqlite.gz", dir)
	after := "../../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite"
	var bb, ab bdJSON
	runJSON(t, &bb, "breakdown", "--format", "json", before)
	runJSON(t, &ab, "breakdown", "--format", "json", after)
	var d diffJSON
	runJSON(t, &d, "diff", "--format", "json", "--top", "1000", before, after)
	if !d.Comparable {
		t.Errorf("not comparable: %v", d.Notes)
	}
	checkDiff(t, d, sideOf(bb), sideOf(ab))
	if len(d.Kinds) != 1 || d.Kinds[0].StepKind != "all" || d.Kinds[0].BeforeWindows != 2 {
		t.Fatalf("want one whole-trace kind over 2 devices, got %+v", d.Kinds)
	}

	// Kernel rows against 'traceq kernels --memops' of each side.
	type kjson struct {
		Kernels []struct {
			Name  string `json:"name"`
			Total int64  `json:"total_ns"`
			N     int64  `json:"instances"`
		} `json:"kernels"`
	}
	var bk, ak kjson
	runJSON(t, &bk, "kernels", "--format", "json", "--memops", before)
	runJSON(t, &ak, "kernels", "--format", "json", "--memops", after)
	bt, at := map[string]int64{}, map[string]int64{}
	for _, k := range bk.Kernels {
		bt[k.Name] = k.Total
	}
	for _, k := range ak.Kernels {
		at[k.Name] = k.Total
	}
	rows := d.Kinds[0].Kernels
	names := map[string]bool{}
	for _, k := range rows {
		if k.Match == "short_name" {
			t.Errorf("%s matched by short name: both runs use the same kernels", k.Name)
			continue
		}
		names[k.Name] = true
		if k.BeforeNS != bt[k.Name] || k.AfterNS != at[k.Name] || k.BeforePerStepNS != roundDiv(bt[k.Name], 2) ||
			k.AfterPerStepNS != roundDiv(at[k.Name], 2) || k.DeltaNS != k.AfterPerStepNS-k.BeforePerStepNS {
			t.Errorf("kernel %s: got %+v; want %d → %d", k.Name, k, bt[k.Name], at[k.Name])
		}
		want := "unchanged"
		switch {
		case bt[k.Name] == 0:
			want = "appeared"
		case at[k.Name] == 0:
			want = "vanished"
		case k.DeltaNS > 0:
			want = "grew"
		case k.DeltaNS < 0:
			want = "shrank"
		}
		if k.Change != want {
			t.Errorf("kernel %s: change %s, want %s", k.Name, k.Change, want)
		}
	}
	for n := range bt {
		if !names[n] {
			t.Errorf("kernel %s missing from the diff", n)
		}
	}
	for n := range at {
		if !names[n] {
			t.Errorf("kernel %s missing from the diff", n)
		}
	}
	// The biggest change comes first: flash attention got faster.
	if rows[0].Change != "shrank" || !strings.Contains(rows[0].Name, "flash_fwd_kernel") {
		t.Errorf("first kernel row %+v, want flash_fwd_kernel shrank", rows[0])
	}
}

// Directories of rank files compare per step kind; a run against itself
// changes nothing.
func TestDiffRankDirectories(t *testing.T) {
	const dir = "../../testdata/traces/torch/dlrm8"
	var bb bdJSON
	runJSON(t, &bb, "breakdown", "--format", "json", dir)
	var d diffJSON
	runJSON(t, &d, "diff", "--format", "json", dir, dir)
	s := sideOf(bb)
	checkDiff(t, d, s, s)
	if !d.Comparable || d.Kinds[0].StepKind != "step" {
		t.Errorf("dlrm8 against itself: comparable %v, first kind %s; want the ProfilerStep kind", d.Comparable, d.Kinds[0].StepKind)
	}
	for _, k := range d.Kinds {
		if k.StepKind != "unattributed" && k.BeforeWindows < 8 {
			t.Errorf("%s: %d windows, want one per rank at least", k.StepKind, k.BeforeWindows)
		}
		for _, c := range append(k.Categories, k.Total) {
			if c.DeltaNS != 0 || c.ShareChange != 0 {
				t.Errorf("%s/%s changed against itself: %+v", k.StepKind, c.Category, c)
			}
		}
		for _, kd := range k.Kernels {
			if kd.Change != "unchanged" {
				t.Errorf("kernel %s: %s against itself", kd.Name, kd.Change)
			}
		}
	}
}

// Two different directories: ranks 0-3 against ranks 4-7 of dlrm8, checked
// against the breakdowns of the same files.
func TestDiffRankHalves(t *testing.T) {
	const src = "../../testdata/traces/torch/dlrm8/"
	tmp := t.TempDir()
	var lo, hi []string
	for r := range 8 {
		name := "rank" + strconv.Itoa(r) + ".json.gz"
		dir := filepath.Join(tmp, "lo")
		if r >= 4 {
			dir = filepath.Join(tmp, "hi")
		}
		os.MkdirAll(dir, 0o755)
		abs, _ := filepath.Abs(src + name)
		if err := os.Symlink(abs, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if r < 4 {
			lo = append(lo, filepath.Join(dir, name))
		} else {
			hi = append(hi, filepath.Join(dir, name))
		}
	}
	var bb, ab bdJSON
	runJSON(t, &bb, append([]string{"breakdown", "--format", "json"}, lo...)...)
	runJSON(t, &ab, append([]string{"breakdown", "--format", "json"}, hi...)...)
	var d diffJSON
	runJSON(t, &d, "diff", "--format", "json", filepath.Join(tmp, "lo"), filepath.Join(tmp, "hi"))
	checkDiff(t, d, sideOf(bb), sideOf(ab))
	if !d.Comparable || d.Kinds[0].BeforeWindows != 4 || d.Kinds[0].AfterWindows != 4 {
		t.Errorf("comparable %v, windows %d/%d; want 4 ranks a side", d.Comparable, d.Kinds[0].BeforeWindows, d.Kinds[0].AfterWindows)
	}
	changed := 0
	for _, c := range d.Kinds[0].Categories {
		if c.DeltaNS != 0 {
			changed++
		}
	}
	if changed == 0 {
		t.Error("no category differs between the two halves: the test checks nothing")
	}
}

// Traces with different step kinds are not comparable, and diff says so.
func TestDiffNotComparable(t *testing.T) {
	const dir = "../../testdata/traces/torch/"
	var d diffJSON
	runJSON(t, &d, "diff", "--format", "json", dir+"vllm_decode_full_graph.json.gz", dir+"sglang_prefill.json.gz")
	if d.Comparable || len(d.Kinds) != 0 {
		t.Errorf("decode vs prefill: comparable %v, %d kinds", d.Comparable, len(d.Kinds))
	}
	joined := strings.Join(d.Notes, "\n")
	for _, want := range []string{`"decode" is in before only`, `"prefill" is in after only`, "not comparable"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes %q do not say %q", d.Notes, want)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"traceq", "diff", dir + "sglang_decode.json.gz"}, nil, &out, &errb); code != exitUsage {
		t.Errorf("one input: exit %d, want %d", code, exitUsage)
	}
}

// The text, markdown and csv forms carry the same rows; golden files pin
// their layout.
func TestDiffFormats(t *testing.T) {
	const dir = "../../testdata/traces/torch/"
	a, b := dir+"hta_ns_resolution.json.gz", dir+"kineto2021_resnet50.json.gz"
	for _, f := range []string{"text", "markdown", "csv"} {
		var out, errb bytes.Buffer
		if code := run([]string{"traceq", "diff", "--format", f, "--top", "3", a, b}, nil, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errb.String())
		}
		s := out.String()
		golden.Check(t, "testdata/diff_hta_kineto."+f+".golden", out.Bytes())
		for _, want := range []string{"gemm/cudnn_conv", "cudnn::cnn::wgrad_alg0_engine", "appeared"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s output lacks %q:\n%s", f, want, s)
			}
		}
	}
	svg := filepath.Join(t.TempDir(), "d.svg")
	var out, errb bytes.Buffer
	if code := run([]string{"traceq", "diff", "--chart", svg, a, b}, nil, &out, &errb); code != 0 {
		t.Fatalf("--chart: exit %d: %s", code, errb.String())
	}
	if data, err := os.ReadFile(svg); err != nil || !bytes.Contains(data, []byte("+22.135 ms (+61.1%)")) {
		t.Errorf("--chart wrote no diff chart (%v)", err)
	}
}
