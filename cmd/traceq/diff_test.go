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

	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/internal/golden"
	"github.com/traceq/traceq/render"
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
	Change          string   `json:"change"`
	BeforeStdDevNS  *int64   `json:"before_stddev_ns"`
	NoiseNS         *int64   `json:"noise_ns"`
}

type diffJSON struct {
	Comparable bool     `json:"comparable"`
	Notes      []string `json:"notes"`
	BeforeRun  string   `json:"before_run"`
	AfterRun   string   `json:"after_run"`
	MinChange  struct {
		NS  int64   `json:"ns"`
		Pct float64 `json:"pct"`
	} `json:"min_change"`
	NoiseK int `json:"noise_k"`
	Kinds  []struct {
		StepKind      string    `json:"step_kind"`
		BeforeWindows int       `json:"before_windows"`
		AfterWindows  int       `json:"after_windows"`
		Total         catJSON   `json:"total"`
		Categories    []catJSON `json:"categories"`
		Kernels       []struct {
			Name            string `json:"name"`
			Category        string `json:"category"`
			Match           string `json:"match"`
			Change          string `json:"change"`
			BeforeNS        int64  `json:"before_ns"`
			AfterNS         int64  `json:"after_ns"`
			BeforePerStepNS int64  `json:"before_per_step_ns"`
			AfterPerStepNS  int64  `json:"after_per_step_ns"`
			DeltaNS         int64  `json:"delta_ns"`
			NoiseNS         *int64 `json:"noise_ns"`
		} `json:"kernels"`
		Idle struct {
			Total catJSON `json:"total"`
		} `json:"idle"`
		StepTime *struct {
			BeforeP50 float64 `json:"before_p50_ns"`
			AfterP50  float64 `json:"after_p50_ns"`
			DeltaP50  float64 `json:"delta_p50_ns"`
			Change    string  `json:"change"`
			NoiseNS   *int64  `json:"noise_ns"`
		} `json:"step_time"`
		Tokens *struct {
			BeforeP50        float64 `json:"before_tokens_p50"`
			BeforeNSPerToken int64   `json:"before_ns_per_token"`
			AfterNSPerToken  int64   `json:"after_ns_per_token"`
		} `json:"tokens"`
	} `json:"kinds"`
}

// wantChange is the change diff must call a per-step delta of a row whose
// spread is unknown (one window per device: whole traces), by the
// threshold of --min-change ns and pct % (docs/definitions.md#change).
func wantChange(beforeNS, afterNS, beforePerStep, delta, ns int64, pct float64) string {
	d := delta
	if d < 0 {
		d = -d
	}
	switch {
	case beforeNS == 0 && afterNS != 0:
		return "appeared"
	case afterNS == 0 && beforeNS != 0:
		return "vanished"
	case d == 0 || d < ns || float64(d)*100 < pct*float64(beforePerStep):
		return "unchanged"
	case delta > 0:
		return "grew"
	}
	return "shrank"
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
	// Each side is one run, named after its export; the default threshold
	// is 1 µs and 1 %.
	if d.BeforeRun != "nsys2026.2.1_torchrun-2gpu-nccl-before" || d.AfterRun != "nsys2026.2.1_torchrun-2gpu-nccl-after" ||
		d.MinChange.NS != 1000 || d.MinChange.Pct != 1 || d.NoiseK != 3 {
		t.Errorf("runs %q → %q, threshold %+v, k %d", d.BeforeRun, d.AfterRun, d.MinChange, d.NoiseK)
	}
	// The figures docs/diff-slice.md quotes, and their verdicts: whole
	// traces have no step-to-step spread (one window per device), so only
	// the threshold judges them.
	k := d.Kinds[0]
	if render.MS(k.Total.BeforePerStepNS) != "270.553" || render.MS(k.Total.AfterPerStepNS) != "247.055" || k.Total.Change != "shrank" ||
		k.Total.NoiseNS != nil || k.Total.BeforeStdDevNS != nil || k.StepTime != nil || k.Tokens != nil {
		t.Errorf("total %+v, step time %v, tokens %v; want 270.553 → 247.055 ms per device, shrank, no spread", k.Total, k.StepTime, k.Tokens)
	}
	for _, c := range k.Categories {
		if want := wantChange(c.BeforeNS, c.AfterNS, c.BeforePerStepNS, c.DeltaNS, 1000, 1); c.Change != want || c.NoiseNS != nil {
			t.Errorf("%s: %s (noise %v), want %s", c.Category, c.Change, c.NoiseNS, want)
		}
		switch c.Category {
		case "attention/fa2":
			if render.MS(c.DeltaNS) != "-15.781" || c.Change != "shrank" {
				t.Errorf("flash attention: %s ms, %s; want -15.781, shrank", render.MS(c.DeltaNS), c.Change)
			}
		case "communication/send_recv":
			if render.MS(c.DeltaNS) != "4.170" || c.Change != "grew" {
				t.Errorf("SendRecv: %s ms, %s; want +4.170, grew", render.MS(c.DeltaNS), c.Change)
			}
		}
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
		want := wantChange(bt[k.Name], at[k.Name], k.BeforePerStepNS, k.DeltaNS, 1000, 1)
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
	// Without a threshold, every delta that is not 0 is a change.
	var d0 diffJSON
	runJSON(t, &d0, "diff", "--format", "json", "--top", "1000", "--min-change", "0", before, after)
	for _, k := range d0.Kinds[0].Kernels {
		if want := wantChange(bt[k.Name], at[k.Name], k.BeforePerStepNS, k.DeltaNS, 0, 0); k.Change != want {
			t.Errorf("--min-change 0: kernel %s: %s, want %s", k.Name, k.Change, want)
		}
	}
	if d0.MinChange.NS != 0 || d0.MinChange.Pct != 0 {
		t.Errorf("--min-change 0: threshold %+v", d0.MinChange)
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
	if !d.Comparable || d.Kinds[0].StepKind != "step" || d.BeforeRun != "dlrm8" || d.AfterRun != "dlrm8" {
		t.Errorf("dlrm8 against itself: comparable %v, first kind %s, runs %q, %q; want the ProfilerStep kind of run dlrm8",
			d.Comparable, d.Kinds[0].StepKind, d.BeforeRun, d.AfterRun)
	}
	for _, k := range d.Kinds {
		if k.StepKind != "unattributed" && k.BeforeWindows < 8 {
			t.Errorf("%s: %d windows, want one per rank at least", k.StepKind, k.BeforeWindows)
		}
		for _, c := range append(k.Categories, k.Total, k.Idle.Total) {
			if c.DeltaNS != 0 || c.ShareChange != 0 || c.Change != "unchanged" {
				t.Errorf("%s/%s changed against itself: %+v", k.StepKind, c.Category, c)
			}
		}
		if st := k.StepTime; (st == nil) != (k.StepKind == "unattributed") || st != nil && (st.DeltaP50 != 0 || st.Change != "unchanged") {
			t.Errorf("%s: step time %+v against itself", k.StepKind, st)
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
	if !d.Comparable || d.Kinds[0].BeforeWindows != 4 || d.Kinds[0].AfterWindows != 4 || d.BeforeRun != "lo" || d.AfterRun != "hi" {
		t.Errorf("comparable %v, windows %d/%d, runs %q, %q; want 4 ranks a side, runs lo and hi", d.Comparable,
			d.Kinds[0].BeforeWindows, d.Kinds[0].AfterWindows, d.BeforeRun, d.AfterRun)
	}
	// The text names each side by its run, not by its files.
	code, out, errs := stepsRun(t, "diff", filepath.Join(tmp, "lo"), filepath.Join(tmp, "hi"))
	if code != 0 || !strings.Contains(out, "before: lo (4 files in "+filepath.Join(tmp, "lo")+")\n") ||
		!strings.Contains(out, "after : hi (4 files in ") || strings.Contains(out, "rank0.json.gz") {
		t.Errorf("exit %d (%s); text:\n%s", code, errs, out)
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
		for _, want := range []string{"gemm/cudnn_conv", "cudnn::cnn::wgrad_alg0_engine", "appeared", "noise", "grew", "step_time", "hta_ns_resolution"} {
			if f == "csv" && want == "hta_ns_resolution" || f != "csv" && want == "step_time" {
				continue
			}
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

// writeGenRun writes every rank of a generated run into dir.
func writeGenRun(t *testing.T, dir string, cfg gen.Config) []*gen.Expected {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var exps []*gen.Expected
	for r := range cfg.Ranks {
		f, err := os.Create(filepath.Join(dir, "rank"+strconv.Itoa(r)+".json"))
		if err != nil {
			t.Fatal(err)
		}
		exp, err := gen.Write(f, cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		exps = append(exps, exp)
	}
	return exps
}

// Directories of generated rank files: two runs of one workload (other
// seeds) differ by noise only; a run whose attention is 5 µs slower per
// kernel differs by exactly that, a real change, in its decode steps.
func TestDiffGeneratedRuns(t *testing.T) {
	tmp := t.TempDir()
	cfg := gen.Config{Ranks: 2, Steps: 50, DecodeEvery: 10, Layers: 2, Seed: 3}
	base := filepath.Join(tmp, "base")
	writeGenRun(t, base, cfg)
	again, slow := filepath.Join(tmp, "again"), filepath.Join(tmp, "slow")
	cfg.Seed = 4
	writeGenRun(t, again, cfg)
	cfg.Seed, cfg.SlowCategory, cfg.SlowNS = 3, "attention/fa2", 5_000
	writeGenRun(t, slow, cfg)
	const perStep = 2 * 5_000 // two layers

	for _, mc := range []string{"1us,1%", "0"} {
		var d diffJSON
		runJSON(t, &d, "diff", "--format", "json", "--top", "100", "--min-change", mc, base, again)
		if d.BeforeRun != "base" || d.AfterRun != "again" || len(d.Kinds) != 2 {
			t.Fatalf("runs %q → %q, %d kinds", d.BeforeRun, d.AfterRun, len(d.Kinds))
		}
		noise := 0
		for _, k := range d.Kinds {
			for _, c := range append(k.Categories, k.Total, k.Idle.Total) {
				if c.Change != "noise" && c.Change != "unchanged" {
					t.Errorf("--min-change %s: %s %s %s by %d ns (noise %v)", mc, k.StepKind, c.Category, c.Change, c.DeltaNS, c.NoiseNS)
				}
				if c.Change == "noise" {
					noise++
				}
			}
			for _, kd := range k.Kernels {
				if kd.Change != "noise" && kd.Change != "unchanged" {
					t.Errorf("--min-change %s: %s kernel %s %s by %d ns", mc, k.StepKind, kd.Name, kd.Change, kd.DeltaNS)
				}
			}
			if k.StepTime == nil || k.StepTime.NoiseNS == nil || k.Tokens == nil || k.StepTime.Change == "grew" || k.StepTime.Change == "shrank" {
				t.Errorf("%s: step time %+v, tokens %+v", k.StepKind, k.StepTime, k.Tokens)
			}
		}
		if mc == "0" && noise == 0 {
			t.Error("--min-change 0: no row is noise")
		}
	}

	var d diffJSON
	runJSON(t, &d, "diff", "--format", "json", "--top", "100", "--kind", "decode", base, slow)
	if len(d.Kinds) != 1 || d.AfterRun != "slow" {
		t.Fatalf("%d kinds, after %q", len(d.Kinds), d.AfterRun)
	}
	k := d.Kinds[0]
	for _, c := range k.Categories {
		attn := c.Category == "attention/fa2"
		if attn && (c.DeltaNS != perStep || c.Change != "grew") || !attn && (c.DeltaNS != 0 || c.Change != "unchanged") {
			t.Errorf("%s: %+d ns, %s", c.Category, c.DeltaNS, c.Change)
		}
	}
	if k.Categories[0].Category != "attention/fa2" || k.StepTime.DeltaP50 != perStep || k.StepTime.Change != "grew" {
		t.Errorf("first category %s, step time %+v; want attention first and the step %d ns slower", k.Categories[0].Category, *k.StepTime, perStep)
	}

	// The text: a change column, the step time line, the threshold.
	code, out, errs := stepsRun(t, "diff", "--kind", "decode", "--min-change", "2us,0.5%", base, slow)
	for _, want := range []string{"before: base (2 files in ", "unchanged below --min-change 2us,0.5% per step",
		"step time p50 ", "tokens per step p50 ", " noise ms  change ", "  attention/fa2 "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d (%s): text lacks %q:\n%s", code, errs, want, out)
		}
	}
	// The answer first: the step time, no finding changed (the
	// collectives and idle time are the same), then the one category that
	// did, and nothing else.
	lines := strings.SplitN(out, "\n", 3)
	if !strings.HasPrefix(lines[0], "decode: step time p50 ") || !strings.HasSuffix(lines[0], ", grew)") ||
		!strings.HasPrefix(lines[1], "  kernel time per step ") || !strings.HasSuffix(lines[1], ", grew): attention/fa2 +0.010 ms") {
		t.Errorf("answer %q: want the decode step time, then attention/fa2 +0.010 ms alone", lines[:2])
	}
	for _, bad := range []string{"-1us", "1%,2%", "1us,2us", "x", "1us,", "NaN%"} {
		if code, _, errs := stepsRun(t, "diff", "--min-change", bad, base, slow); code != exitUsage || !strings.Contains(errs, "--min-change") {
			t.Errorf("--min-change %s: exit %d, %s", bad, code, errs)
		}
	}
}
