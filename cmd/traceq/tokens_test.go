package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// markerTrace writes a trace of one kernel in each step marker.
func markerTrace(t *testing.T, dir, name string, markers ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"traceEvents": [`)
	for i, m := range markers {
		ts := 1000 * i
		fmt.Fprintf(&b, `{"ph": "X", "cat": "user_annotation", "name": %q, "pid": 1, "tid": 1, "ts": %d, "dur": 900},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": %d, "dur": 1, "args": {"correlation": %d}},
{"ph": "X", "cat": "kernel", "name": "nvjet_tst_128x64_64x8_1x2_h_bz_coopA_TNT", "pid": 0, "tid": 7, "ts": %d, "dur": 100, "args": {"device": 0, "stream": 7, "correlation": %d}},
`, m, ts, ts+10, i+1, ts+20, i+1)
	}
	b.WriteString(`{"ph": "X", "cat": "cpu_op", "name": "x", "pid": 1, "tid": 1, "ts": 0, "dur": 1}]}`)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTokenCounts (issue 19 item 11): a marker claiming 10¹⁸ tokens is
// odd input, its count ignored; 0 tokens leave µs/token undefined: no
// "-0.0" or "0.0 µs/token", JSON null.
func TestTokenCounts(t *testing.T) {
	dir := t.TempDir()
	huge := markerTrace(t, dir, "huge.json", "decode[bs=1 tok=999999999999999999]", "decode[bs=1 tok=4]")
	zero := markerTrace(t, dir, "zero.json", "decode[bs=1 tok=0]", "decode[bs=1 tok=0]")
	four := markerTrace(t, dir, "four.json", "decode[bs=1 tok=4]", "decode[bs=1 tok=4]")

	code, out, errs := runCLI("breakdown", huge)
	if code != 0 || strings.Contains(out, "-0.0") || !strings.Contains(out, "4 tokens/step (p50), 25.0 µs/token") {
		t.Errorf("huge: exit %d\n%s", code, out)
	}
	if want := "1 step marker claiming more than 10⁹ tokens: its count ignored"; !strings.Contains(errs, want) {
		t.Errorf("huge: stderr %q, want %q", errs, want)
	}

	code, out, errs = runCLI("breakdown", zero)
	if code != 0 || strings.Contains(out, "µs/token") || !strings.Contains(out, "0 tokens/step (p50)") {
		t.Errorf("zero: exit %d %s\n%s", code, errs, out)
	}
	_, out, _ = runCLI("breakdown", "--format", "json", zero)
	var br struct {
		Groups []struct {
			TokensP50  *float64 `json:"tokens_p50"`
			NSPerToken *float64 `json:"ns_per_token"`
			StepStats  struct {
				TokenSteps int             `json:"token_steps"`
				NSPerToken json.RawMessage `json:"ns_per_token"`
			} `json:"step_stats"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &br); err != nil || len(br.Groups) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	if g := br.Groups[0]; g.TokensP50 == nil || *g.TokensP50 != 0 || g.NSPerToken != nil || g.StepStats.TokenSteps != 2 ||
		string(g.StepStats.NSPerToken) != "null" {
		t.Errorf("zero json: %+v %s", g, g.StepStats.NSPerToken)
	}
	// The steps table: tokens 0, µs/token (the last column but the
	// empty outlier one) empty.
	_, out, _ = runCLI("steps", zero)
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "tok=0]") && !strings.HasSuffix(strings.TrimRight(l, " "), "100.0%       0") {
			t.Errorf("steps row %q", l)
		}
	}

	code, out, errs = runCLI("diff", "--format", "json", zero, four)
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, errs)
	}
	var d struct {
		Kinds []struct {
			Tokens map[string]json.RawMessage `json:"tokens"`
		} `json:"kinds"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Kinds) == 0 || d.Kinds[0].Tokens == nil {
		t.Fatalf("diff json %v:\n%s", err, out)
	}
	if tk := d.Kinds[0].Tokens; string(tk["before_ns_per_token"]) != "null" || string(tk["delta_ns_per_token"]) != "null" ||
		string(tk["after_ns_per_token"]) == "null" {
		t.Errorf("diff tokens %s", tk)
	}
	_, out, _ = runCLI("diff", zero, four)
	if !strings.Contains(out, "step time per token undefined → ") {
		t.Errorf("diff text:\n%s", out)
	}
}
