package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/internal/golden"
	"github.com/traceq/traceq/internal/testenv"
)

// scenario is the motivating run of issue 23 at a test's size: TP-4
// decode, rank 2 30 % slower, the all-reduces at 16 GB/s with a fixed
// cost; fixed is the same run with the straggler fixed.
var scenario = gen.RunConfig{Ranks: 4, Steps: 12, Layers: 2, Straggler: 2, SlowdownPct: 30, JitterNS: 400, BusGBps: 16, LatencyNS: 2000, Seed: 23}

// TestGoldenAdvise pins traceq advise in every format on the generated
// scenario and on the real 8-rank DLRM run, each twice for byte-identical
// output.
func TestGoldenAdvise(t *testing.T) {
	dir, _ := writeRun(t, scenario)
	bpt := strconv.FormatInt(scenario.BytesPerToken(), 10)
	for _, in := range []struct {
		name string
		args []string
	}{
		{"gen4", []string{"--bytes-per-token", bpt, "--link", "20", dir}},
		{"dlrm8", []string{"../../testdata/traces/torch/dlrm8"}},
	} {
		for _, format := range []string{"text", "markdown", "csv", "json"} {
			t.Run(in.name+"/"+format, func(t *testing.T) {
				args := append([]string{"traceq", "advise", "--format", format}, in.args...)
				checkGoldenTwice(t, args, dir, filepath.Join("testdata", "advise_"+in.name+"."+format+".golden"))
			})
		}
	}
}

// checkGoldenTwice runs a command twice, checks the outputs are byte for
// byte the same and match the golden file, the generated run's
// temporary directory dir written GEN.
func checkGoldenTwice(t *testing.T, args []string, dir, goldenFile string) {
	t.Helper()
	var out1, out2, errb bytes.Buffer
	if code := run(args, nil, &out1, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if code := run(args, nil, &out2, &errb); code != 0 || !bytes.Equal(out1.Bytes(), out2.Bytes()) {
		t.Fatalf("second run differs (exit %d)", code)
	}
	golden.Check(t, goldenFile, bytes.ReplaceAll(out1.Bytes(), []byte(dir), []byte("GEN")))
}

// adviseDoc is the JSON contract of a finding, read back.
type adviseDoc struct {
	Settings []struct {
		Name, Value, Source string
	} `json:"settings"`
	Findings []struct {
		Run      string          `json:"run"`
		StepKind string          `json:"step_kind"`
		Kind     string          `json:"kind"`
		Subject  string          `json:"subject"`
		SavingNS *int64          `json:"saving_ns_per_step"`
		Share    *float64        `json:"share_of_step"`
		Evidence json.RawMessage `json:"evidence"`
		Remedy   string          `json:"remedy"`
	} `json:"findings"`
}

// TestAdviseJSONContract reads the fields the issue names back from
// advise and breakdown, and checks the straggler's against the generator.
func TestAdviseJSONContract(t *testing.T) {
	dir, exp := writeRun(t, scenario)
	bpt := strconv.FormatInt(scenario.BytesPerToken(), 10)
	for _, cmd := range []string{"advise", "breakdown"} {
		var d adviseDoc
		runJSON(t, &d, cmd, "--format", "json", "--bytes-per-token", bpt, "--link", "20", dir)
		if len(d.Findings) < 2 {
			t.Fatalf("%s: %d findings", cmd, len(d.Findings))
		}
		f := d.Findings[0]
		if f.Kind != "straggler" || f.Subject != "rank 2" || f.StepKind != "decode" || f.Run != filepath.Base(dir) ||
			f.SavingNS == nil || f.Share == nil || f.Remedy == "" || !bytes.Contains(f.Evidence, []byte(`"lead_ns_per_step"`)) {
			t.Errorf("%s: first finding %+v", cmd, f)
		}
		// The lead is the generator's, summed over the decode all-reduces.
		want := (exp.Ops[0].LeadNS[2]*2 + int64(scenario.Steps)) / int64(2*scenario.Steps)
		if *f.SavingNS != want {
			t.Errorf("%s: straggler saving %d ns/step, the generator's %d", cmd, *f.SavingNS, want)
		}
		kinds := map[string]bool{}
		for _, f := range d.Findings {
			kinds[f.Kind] = true
		}
		if !kinds["transfer"] || !kinds["exposed_communication"] {
			t.Errorf("%s: kinds %v", cmd, kinds)
		}
		if len(d.Settings) != 2 || d.Settings[0].Source != "--link" || d.Settings[1].Name != "bytes_per_token" {
			t.Errorf("%s: settings %+v", cmd, d.Settings)
		}
	}
}

// TestSettingsGivenOnce: --link and --bytes-per-token from a traceq.toml
// beside the run (or a parent), from TRACEQ_* over it, from the flag over
// both; each time the output says where; bad values name their source.
func TestSettingsGivenOnce(t *testing.T) {
	root := t.TempDir()
	dir, _ := writeRun(t, scenario)
	runDir := filepath.Join(root, "runs", "slow")
	if err := os.MkdirAll(filepath.Dir(runDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, runDir); err != nil {
		t.Fatal(err)
	}
	nccl, err := filepath.Abs("../../testdata/nccl-tests/h100-2x8-all_reduce_perf.txt")
	if err != nil {
		t.Fatal(err)
	}
	toml := filepath.Join(root, "runs", "traceq.toml")
	write := func(text string) {
		if err := os.WriteFile(toml, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("link = \"pcie4\"\nbytes_per_token = " + strconv.FormatInt(scenario.BytesPerToken(), 10) + "\n")
	code, out, errs := stepsRun(t, "advise", runDir)
	if code != 0 || !strings.Contains(out, "AllReduce transfer against pcie4") ||
		!strings.Contains(out, "settings: --link pcie4 from "+toml+" · --bytes-per-token 8192 from "+toml) {
		t.Fatalf("from traceq.toml: exit %d (%s):\n%s", code, errs, out)
	}
	// The environment over the file; the flag over both.
	t.Setenv("TRACEQ_LINK", "20")
	if _, out, _ := stepsRun(t, "advise", runDir); !strings.Contains(out, "against 20 GB/s") || !strings.Contains(out, "--link 20 from TRACEQ_LINK") {
		t.Errorf("from TRACEQ_LINK:\n%s", out)
	}
	if _, out, _ := stepsRun(t, "advise", "--link", "pcie5", runDir); !strings.Contains(out, "against pcie5") || strings.Contains(out, "--link pcie5 from") {
		t.Errorf("from the flag:\n%s", out)
	}
	t.Setenv("TRACEQ_LINK", "")
	// A link file relative to the traceq.toml: an nccl-tests output.
	if err := os.Symlink(nccl, filepath.Join(root, "runs", "nccl.txt")); err != nil {
		t.Fatal(err)
	}
	write("link = \"nccl.txt\"\nbytes_per_token = 8192\n")
	var d struct {
		Link struct {
			Name, Source string
		} `json:"link"`
	}
	runJSON(t, &d, "collectives", "--format", "json", runDir)
	if d.Link.Name != "nccl-tests" || d.Link.Source != filepath.Join(root, "runs", "nccl.txt") {
		t.Errorf("link from an nccl-tests file named in traceq.toml: %+v", d.Link)
	}
	// Bad values: the file's is an input error naming it, the
	// variable's a usage error naming it.
	write("link = \"pcie9\"\n")
	if code, _, errs := stepsRun(t, "breakdown", runDir); code != exitInput || !strings.Contains(errs, toml+": link: unknown link \"pcie9\"") {
		t.Errorf("bad link in traceq.toml: exit %d, %s", code, errs)
	}
	write("lnk = 3\n")
	if code, _, errs := stepsRun(t, "advise", runDir); code != exitInput || !strings.Contains(errs, toml+`: unknown key "lnk"`) {
		t.Errorf("unknown key: exit %d, %s", code, errs)
	}
	write("")
	t.Setenv("TRACEQ_BYTES_PER_TOKEN", "many")
	if code, _, errs := stepsRun(t, "advise", runDir); code != exitUsage || !strings.Contains(errs, "TRACEQ_BYTES_PER_TOKEN") {
		t.Errorf("bad TRACEQ_BYTES_PER_TOKEN: exit %d, %s", code, errs)
	}
}

// TestFailIf: diff --fail-if exits 3 when the after run is slower beyond
// the threshold and noise, 0 when it is not, 1 when the metric cannot be
// checked, 2 for a condition it cannot read.
func TestFailIf(t *testing.T) {
	slow, _ := writeRun(t, scenario)
	fixedCfg := scenario
	fixedCfg.SlowdownPct = 0
	fixed, _ := writeRun(t, fixedCfg)
	code, out, errs := stepsRun(t, "diff", "--fail-if", "step_p50>+3%", fixed, slow)
	if code != exitGate || !strings.Contains(errs, "--fail-if: the after run is slower: decode: step time p50 ") ||
		!strings.Contains(errs, "grew) beyond step_p50>+3%") || !strings.HasPrefix(out, "decode: step time p50 ") {
		t.Errorf("slower: exit %d, %s", code, errs)
	}
	if code, out, errs := stepsRun(t, "diff", "--fail-if", "step_p50>+3%,wall>+3%", slow, fixed); code != 0 ||
		!strings.Contains(out, "the straggler is gone (rank 2, ≈") {
		t.Errorf("faster: exit %d, %s\n%s", code, errs, out)
	}
	if code, _, _ := stepsRun(t, "diff", "--fail-if", "step_p50>+90%", fixed, slow); code != 0 {
		t.Errorf("a threshold above the change: exit %d", code)
	}
	nsys := "../../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite"
	if code, _, errs := stepsRun(t, "diff", "--fail-if", "step_p50>+3%", nsys, nsys); code != exitInput || !strings.Contains(errs, "no step kind of the diff has it") {
		t.Errorf("no steps: exit %d, %s", code, errs)
	}
	if code, _, _ := stepsRun(t, "diff", "--fail-if", "wall>+3%", nsys, nsys); code != 0 {
		t.Errorf("wall on whole traces: exit %d", code)
	}
	if code, _, errs := stepsRun(t, "diff", "--fail-if", "p50>3", fixed, slow); code != exitUsage || !strings.Contains(errs, "--fail-if") {
		t.Errorf("bad condition: exit %d, %s", code, errs)
	}
}

// TestMinFinding: --min-finding counts what is under it; bad values are
// usage errors.
func TestMinFinding(t *testing.T) {
	dir, _ := writeRun(t, scenario)
	_, all, _ := stepsRun(t, "advise", "--min-finding", "0", "--bytes-per-token", "8192", "--link", "20", dir)
	_, some, _ := stepsRun(t, "advise", "--min-finding", "50%", "--bytes-per-token", "8192", "--link", "20", dir)
	if strings.Contains(all, "under") || !strings.Contains(some, "under 50.0% of the step") || strings.Count(some, "\n") >= strings.Count(all, "\n") {
		t.Errorf("--min-finding 0:\n%s\n--min-finding 50%%:\n%s", all, some)
	}
	for _, bad := range []string{"5", "-1%", "x%", "101%"} {
		if code, _, errs := stepsRun(t, "advise", "--min-finding", bad, dir); code != exitUsage || !strings.Contains(errs, "--min-finding") {
			t.Errorf("--min-finding %s: exit %d, %s", bad, code, errs)
		}
	}
}

// TestFirstScreenOutliers: breakdown's first screen names the outlier
// steps, as traceq steps flags them (a real HTA trace whose step 1 is
// 1.06× the median).
func TestFirstScreenOutliers(t *testing.T) {
	p := testenv.Shared(t, "traces", "torch", "hta", "df_index_resolver", "df_index_resolver.json.gz")
	_, out, _ := stepsRun(t, "breakdown", p)
	if !strings.Contains(out, "\n  outlier steps: step 1 (360.283 ms, 1.06× the median) (traceq steps lists them)\n") {
		t.Errorf("no outlier line:\n%s", out)
	}
	_, steps, _ := stepsRun(t, "steps", p)
	for _, l := range strings.Split(steps, "\n") {
		if strings.Contains(l, " ProfilerStep#3 ") && !strings.HasSuffix(l, "outlier") {
			t.Errorf("traceq steps does not flag step 1: %q", l)
		}
	}
}
