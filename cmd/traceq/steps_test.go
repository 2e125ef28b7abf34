package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/golden"
)

const stepsTorch = "../../testdata/traces/torch/"

func stepsRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"traceq"}, args...), nil, &out, &errb)
	return code, out.String(), errb.String()
}

type stepsDoc struct {
	Steps []struct {
		Index       int     `json:"index"`
		Kind        string  `json:"kind"`
		Marker      string  `json:"marker"`
		Device      int32   `json:"device"`
		StartNS     int64   `json:"start_ns"`
		SpanNS      int64   `json:"span_ns"`
		BusyNS      int64   `json:"busy_ns"`
		IdleNS      int64   `json:"idle_ns"`
		KernelNS    int64   `json:"kernel_ns"`
		TopCategory string  `json:"top_category"`
		TopShare    float64 `json:"top_share"`
		Outlier     bool    `json:"outlier"`
		Categories  []struct {
			Category string `json:"category"`
			KernelNS int64  `json:"kernel_ns"`
		} `json:"categories"`
	} `json:"steps"`
	Summaries []struct {
		Steps          int   `json:"steps"`
		Empty          int   `json:"steps_without_gpu_work"`
		UnattributedNS int64 `json:"unattributed_kernel_ns"`
		Unattributed   int64 `json:"unattributed_activities"`
	} `json:"summaries"`
	Kinds []struct {
		StepKind string `json:"step_kind"`
		Stats    struct {
			Count int `json:"count"`
		} `json:"step_stats"`
	} `json:"kinds"`
}

// TestStepsCommandGraphDecode: the one decode step of the full-graph trace
// holds every activity, so its span, busy and kernel time are the whole
// trace's, computed here by the reference reader.
func TestStepsCommandGraphDecode(t *testing.T) {
	path := stepsTorch + "vllm_decode_full_graph.json.gz"
	code, out, errs := stepsRun(t, "steps", "--format", "json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc stepsDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	acts := refRead(t, path)
	first, last := acts[0].start, acts[0].end
	var kernel int64
	type iv struct{ s, e int64 }
	var ivs []iv
	for _, a := range acts {
		first, last = min(first, a.start), max(last, a.end)
		kernel += a.end - a.start
		ivs = append(ivs, iv{a.start, a.end})
	}
	slices.SortFunc(ivs, func(a, b iv) int { return int(a.s - b.s) })
	var busy int64
	cs, ce := ivs[0].s, ivs[0].e
	for _, x := range ivs[1:] {
		if x.s > ce {
			busy += ce - cs
			cs, ce = x.s, x.e
		} else {
			ce = max(ce, x.e)
		}
	}
	busy += ce - cs
	if len(doc.Steps) != 1 {
		t.Fatalf("%d steps, want 1", len(doc.Steps))
	}
	s := doc.Steps[0]
	if s.Kind != "decode" || !strings.HasPrefix(s.Marker, "execute_32_context_0(") || s.Device != int32(acts[0].device) {
		t.Errorf("step = %+v", s)
	}
	if s.StartNS != first || s.SpanNS != last-first || s.BusyNS != busy || s.IdleNS != last-first-busy || s.KernelNS != kernel {
		t.Errorf("start %d span %d busy %d idle %d kernel %d; reference %d %d %d %d %d",
			s.StartNS, s.SpanNS, s.BusyNS, s.IdleNS, s.KernelNS, first, last-first, busy, last-first-busy, kernel)
	}
	var sum int64
	for _, c := range s.Categories {
		sum += c.KernelNS
	}
	if sum != kernel || s.TopCategory != s.Categories[0].Category || s.TopShare != float64(s.Categories[0].KernelNS)/float64(kernel) {
		t.Errorf("categories sum %d (want %d), top %s %v", sum, kernel, s.TopCategory, s.TopShare)
	}
	if len(doc.Summaries) != 1 || doc.Summaries[0].Unattributed != 0 || doc.Summaries[0].Steps != 1 {
		t.Errorf("summaries = %+v", doc.Summaries)
	}
}

type breakdownDoc struct {
	Groups []struct {
		StepKind  string `json:"step_kind"`
		Steps     int    `json:"steps"`
		KernelNS  int64  `json:"kernel_ns"`
		StepStats *struct {
			Count    int   `json:"count"`
			Outliers []int `json:"outliers"`
			SpanNS   struct {
				Min int64 `json:"min"`
				Max int64 `json:"max"`
			} `json:"span_ns"`
		} `json:"step_stats"`
	} `json:"groups"`
}

func stepsBreakdown(t *testing.T, wantCode int, args ...string) (breakdownDoc, string) {
	t.Helper()
	code, out, errs := stepsRun(t, append([]string{"breakdown", "--format", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("breakdown %v: exit %d, want %d: %s", args, code, wantCode, errs)
	}
	var doc breakdownDoc
	if code == 0 {
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
	}
	return doc, errs
}

func TestBreakdownSteps(t *testing.T) {
	ns := stepsTorch + "hta_ns_resolution.json.gz"
	doc, _ := stepsBreakdown(t, 0, ns)
	if len(doc.Groups) != 1 || doc.Groups[0].StepKind != "step" || doc.Groups[0].Steps != 5 ||
		doc.Groups[0].StepStats == nil || doc.Groups[0].StepStats.Count != 5 {
		t.Errorf("ProfilerStep groups = %+v", doc.Groups)
	}
	all, _ := stepsBreakdown(t, 0, "--no-steps", ns)
	if len(all.Groups) != 1 || all.Groups[0].StepKind != "all" || all.Groups[0].Steps != 0 || all.Groups[0].StepStats != nil ||
		all.Groups[0].KernelNS != doc.Groups[0].KernelNS {
		t.Errorf("--no-steps groups = %+v", all.Groups)
	}
	// A filter that matches nothing says what there is, and exits 1.
	if _, errs := stepsBreakdown(t, 1, "--kind", "decode", ns); !strings.HasSuffix(errs, "no decode steps; found step ×5\n") {
		t.Errorf("--kind decode on a training trace: stderr %q", errs)
	}
	mixed, _ := stepsBreakdown(t, 0, "--kind", "mixed", stepsTorch+"vllm_mixed_piecewise.json.gz", stepsTorch+"vllm_decode_full_graph.json.gz")
	if len(mixed.Groups) != 1 || mixed.Groups[0].StepKind != "mixed" || mixed.Groups[0].Steps != 1 {
		t.Errorf("--kind mixed: %+v", mixed.Groups)
	}

	// No marker: a note on stderr, one whole-trace window.
	ann := stepsTorch + "hta_gpu_user_annotation.json.gz"
	doc, errs := stepsBreakdown(t, 0, ann)
	if !strings.Contains(errs, "no step markers") || len(doc.Groups) == 0 || doc.Groups[0].StepKind != "all" {
		t.Errorf("no markers: stderr %q, groups %+v", errs, doc.Groups)
	}
	// --step names them: five Optimizer.step ranges, the last of zero
	// length; the kernels launched outside them are unattributed.
	doc, errs = stepsBreakdown(t, 0, "--step", `^Optimizer\.step#`, ann)
	if errs != "" && strings.Contains(errs, "no step") {
		t.Errorf("stderr %q", errs)
	}
	kinds := map[string]int{}
	for _, g := range doc.Groups {
		kinds[g.StepKind] += g.Steps
	}
	if kinds["step"] != 4 || len(kinds) != 2 {
		t.Errorf("--step: groups by kind %v, want 4 steps with GPU work and the unattributed group", kinds)
	}
	if _, errs := stepsBreakdown(t, 2, "--step", "(", ann); !strings.Contains(errs, "--step") {
		t.Errorf("bad --step: stderr %q", errs)
	}
}

func TestStepsCommandFormats(t *testing.T) {
	path := stepsTorch + "hta_ns_resolution.json.gz"
	for _, f := range []string{"text", "markdown", "csv"} {
		code, out, errs := stepsRun(t, "steps", "--format", f, path)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errs)
		}
		golden.Check(t, "testdata/steps_hta_ns."+f+".golden", []byte(out))
	}
	code, out, _ := stepsRun(t, "steps", "--format", "json", stepsTorch+"hta_gpu_user_annotation.json.gz")
	var doc stepsDoc
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Steps) != 0 {
		t.Errorf("no markers: exit %d, %s", code, out)
	}
	if code, _, _ := stepsRun(t, "steps", "--format", "yaml", path); code != 2 {
		t.Errorf("--format yaml: exit %d, want 2", code)
	}
	if code, _, _ := stepsRun(t, "steps"); code != 2 {
		t.Errorf("no input: exit %d, want 2", code)
	}
}

// TestWarningsNameRealFlags: every flag a warning or error names (the
// loader's "no annotation range matches --step", "--verbose lists them",
// slice's and merge's remedies) is a flag of the command that printed it.
func TestWarningsNameRealFlags(t *testing.T) {
	dir := t.TempDir()
	in := "../../testdata/traces/torch/hta_triton.json.gz"
	odd := filepath.Join(dir, "odd.json")
	data := `{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "bad", "pid": 0, "tid": 7, "ts": "x", "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 2}}]}`
	if err := os.WriteFile(odd, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	nomatch := []string{"--step", "^nomatch$"}
	cases := [][]string{
		append([]string{"breakdown"}, nomatch...), append([]string{"advise"}, nomatch...),
		append([]string{"collectives"}, nomatch...), append([]string{"efficiency"}, nomatch...),
		append([]string{"steps"}, nomatch...), append([]string{"export", "-o", filepath.Join(dir, "ds")}, nomatch...),
		append([]string{"chart", "--type", "shares", "-o", filepath.Join(dir, "c.svg")}, nomatch...),
		append([]string{"slice", "-o", filepath.Join(dir, "s.json"), "--steps", "0"}, nomatch...),
		append([]string{"merge", "-o", filepath.Join(dir, "m.json"), "--steps", "0"}, nomatch...),
		{"kernels"}, {"report", "--out", filepath.Join(dir, "r")},
	}
	flagRE := regexp.MustCompile(`(?:^|[\s(])--([a-z][a-z-]*)`)
	app := newApp(&env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	for _, args := range cases {
		flags := map[string]bool{}
		for _, c := range app.Commands {
			if c.Name == args[0] {
				for _, f := range c.Flags {
					for _, n := range f.Names() {
						flags[n] = true
					}
				}
			}
		}
		for _, input := range []string{in, odd} {
			if args[0] == "slice" && input == odd {
				continue // slice reads no odd events into warnings
			}
			var out, errb bytes.Buffer
			run(append(append([]string{"traceq"}, args...), input), nil, &out, &errb)
			named := 0
			for _, m := range flagRE.FindAllStringSubmatch(errb.String(), -1) {
				named++
				if !flags[m[1]] {
					t.Errorf("%s on %s names --%s, not one of its flags: %s", args[0], filepath.Base(input), m[1], errb.String())
				}
			}
			if slices.Contains(args, "--step") && input == in && named == 0 {
				t.Errorf("%s: no flag named in %q", args[0], errb.String())
			}
		}
	}
}
