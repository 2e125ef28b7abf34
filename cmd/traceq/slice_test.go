package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/gen"
)

type stepsJSON struct {
	Steps []map[string]any `json:"steps"`
}

// The slice of steps K..M-1 of a real multi-step trace gives, step by step,
// the same figures as the full trace for those steps: marker, span, busy,
// idle, kernel time and every category.
func TestSliceStepsMatchFullTrace(t *testing.T) {
	const dir = "../../testdata/traces/torch/"
	for _, tc := range []struct {
		file     string
		from, to int
		kind     string
	}{
		{file: "hta_ns_resolution.json.gz", from: 1, to: 3},               // ProfilerStep#102, #103
		{file: "kineto2021_resnet50.json.gz", from: 2, to: 5},             // ProfilerStep#7..#9, 2021 format
		{file: "kineto2021_resnet50.json.gz", from: 5, to: 6},             // the last step
		{file: "hta_ns_resolution.json.gz", from: 0, to: 1, kind: "step"}, // the first step, by kind
	} {
		name := tc.file + "/" + strconv.Itoa(tc.from) + ":" + strconv.Itoa(tc.to)
		t.Run(name, func(t *testing.T) {
			in := dir + tc.file
			out := filepath.Join(t.TempDir(), "slice.json.gz")
			args := []string{"traceq", "slice", "--steps", strconv.Itoa(tc.from) + ":" + strconv.Itoa(tc.to), "-o", out}
			if tc.kind != "" {
				args = append(args, "--kind", tc.kind)
			}
			var stdout, stderr bytes.Buffer
			if code := run(append(args, in), nil, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			var full, sl stepsJSON
			runJSON(t, &full, "steps", "--format", "json", in)
			runJSON(t, &sl, "steps", "--format", "json", out)
			if len(sl.Steps) != tc.to-tc.from {
				t.Fatalf("slice has %d steps, want %d", len(sl.Steps), tc.to-tc.from)
			}
			for i, got := range sl.Steps {
				want := full.Steps[tc.from+i]
				for _, k := range []string{"marker", "kind", "device", "marker_start_ns", "marker_end_ns", "start_ns",
					"span_ns", "busy_ns", "idle_ns", "kernel_ns", "categories"} {
					if !reflect.DeepEqual(got[k], want[k]) {
						t.Errorf("step %d %s: slice %v, full trace %v", tc.from+i, k, got[k], want[k])
					}
				}
				if got["index"].(float64) != float64(i) {
					t.Errorf("slice step %d has index %v", i, got["index"])
				}
			}
			// Nothing in the slice falls outside its steps.
			var bd bdJSON
			runJSON(t, &bd, "breakdown", "--format", "json", out)
			var sum int64
			for _, g := range bd.Groups {
				if g.StepKind == "unattributed" {
					t.Errorf("the slice has %d ns of kernel time outside its steps", g.KernelNS)
				}
				sum += g.KernelNS
			}
			var want int64
			for _, s := range full.Steps[tc.from:tc.to] {
				want += int64(s["kernel_ns"].(float64))
			}
			if sum != want {
				t.Errorf("slice breakdown kernel time %d, want %d (the steps' sum in the full trace)", sum, want)
			}
			if !strings.Contains(stdout.String(), "ProfilerStep#") {
				t.Errorf("summary does not name the steps: %s", stdout.String())
			}
		})
	}
}

func TestSliceTimeAndErrors(t *testing.T) {
	const in = "../../testdata/traces/torch/kineto2021_resnet50.json.gz"
	out := filepath.Join(t.TempDir(), "w.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"traceq", "slice", "--time", "200ms:300ms", "-o", out, in}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// The summary's count is the number of events in the file written.
	var doc struct {
		TraceEvents []json.RawMessage `json:"traceEvents"`
	}
	var o, e bytes.Buffer
	run([]string{"traceq", "breakdown", "--format", "json", out}, nil, &o, &e)
	if o.Len() == 0 {
		t.Fatalf("the slice does not parse: %s", e.String())
	}
	data := readFile(t, out)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if want := "kept " + strconv.Itoa(len(doc.TraceEvents)) + " of 75718 events"; !strings.Contains(stdout.String(), want) {
		t.Errorf("summary %q does not say %q", stdout.String(), want)
	}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--time", "1:2", in}, exitUsage, "-o FILE is required"},
		{[]string{"--time", "1:2", "--steps", "1:2", "-o", out, in}, exitUsage, "exactly one of"},
		{[]string{"-o", out, in}, exitUsage, "exactly one of"},
		{[]string{"--time", "2:1", "-o", out, in}, exitUsage, "end is before the start"},
		{[]string{"--kind", "decode", "--time", "1:2", "-o", out, in}, exitUsage, "--kind needs --steps"},
		{[]string{"--steps", "40:50", "-o", out, in}, exitInput, "no steps with index in [40, 50)"},
		{[]string{"--steps", "0:2", "--kind", "decode", "-o", out, in}, exitInput, "no decode steps"},
		{[]string{"--steps", "0:1", "-o", out, "../../testdata/traces/torch/hta_legacy_minimal.json.gz"}, exitInput, "no step markers (ProfilerStep#N, vLLM execute_…, SGLang step[…], ATOM prefill[…]/decode[…]): use --time"},
		{[]string{"--time", "1:2", "-o", in, in}, exitUsage, "is an input"},
		{[]string{"--time", "1:2", "-o", out, "../../testdata/traces/nsys/nsys2022.1.3_dlprof-rtx2070-cudnn.sqlite"}, exitInput, "slice reads Chrome traces"},
	} {
		var so, se bytes.Buffer
		code := run(append([]string{"traceq", "slice"}, tc.args...), nil, &so, &se)
		if code != tc.code || !strings.Contains(se.String(), tc.msg) {
			t.Errorf("slice %v: exit %d, %q; want %d, %q", tc.args, code, se.String(), tc.code, tc.msg)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Slices of generated vLLM-like traces (decode steps replayed from one CUDA
// graph, eager prefill and mixed steps, kernels that run after their
// step's marker closed, some without a correlation id) hold exactly the
// chosen steps, with the figures the generator recorded for them.
func TestSliceGeneratedSteps(t *testing.T) {
	for _, tc := range []struct {
		cfg      gen.Config
		steps    string
		kind     string
		from, to int
	}{
		{cfg: gen.Config{Steps: 30, DecodeEvery: 10, MixedEvery: 4, Layers: 3, Seed: 11}, steps: "8:14", from: 8, to: 14},
		{cfg: gen.Config{Steps: 30, DecodeEvery: 10, MixedEvery: 4, Layers: 3, Seed: 11}, steps: "8:14", kind: "decode", from: 8, to: 14},
		{cfg: gen.Config{Steps: 12, DecodeEvery: 4, Layers: 2, Streams: 1, DropCorrEvery: 5, Seed: 7}, steps: "3:6", from: 3, to: 6},
		{cfg: gen.Config{Steps: 12, DecodeEvery: 4, Layers: 2, DropCorrEvery: 3, Seed: 9}, steps: "4", kind: "prefill", from: 4, to: 5},
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.steps, tc.kind), func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "gen.json")
			var buf bytes.Buffer
			exp, err := gen.Write(&buf, tc.cfg, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var want []gen.StepExpect
			for _, s := range exp.Steps {
				if s.Index >= tc.from && s.Index < tc.to && (tc.kind == "" || s.Kind == tc.kind) {
					want = append(want, s)
				}
			}
			if len(want) == 0 || (tc.kind != "" && len(want) == tc.to-tc.from && tc.to-tc.from > 1) {
				t.Fatalf("the case does not exercise --kind: %d steps chosen", len(want))
			}
			out := filepath.Join(dir, "slice.json.gz")
			args := []string{"traceq", "slice", "--steps", tc.steps, "-o", out}
			if tc.kind != "" {
				args = append(args, "--kind", tc.kind)
			}
			var so, se bytes.Buffer
			if code := run(append(args, in), nil, &so, &se); code != 0 {
				t.Fatalf("exit %d: %s", code, se.String())
			}
			var sl stepsJSON
			runJSON(t, &sl, "steps", "--format", "json", out)
			if len(sl.Steps) != len(want) {
				t.Fatalf("slice has %d steps, want %d", len(sl.Steps), len(want))
			}
			for i, got := range sl.Steps {
				e := want[i]
				cats := map[string]int64{}
				for _, c := range got["categories"].([]any) {
					m := c.(map[string]any)
					cats[m["category"].(string)] = int64(m["kernel_ns"].(float64))
				}
				if got["marker"] != e.Marker || got["kind"] != e.Kind || int64(got["marker_start_ns"].(float64)) != int64(e.Start) ||
					int64(got["start_ns"].(float64)) != int64(e.First) || int64(got["span_ns"].(float64)) != e.SpanNS ||
					int64(got["busy_ns"].(float64)) != e.BusyNS || int64(got["kernel_ns"].(float64)) != e.KernelNS || !maps.Equal(cats, e.ByCat) {
					t.Errorf("slice step %d: %v\nwant %+v", i, got, e)
				}
			}
			var bd bdJSON
			runJSON(t, &bd, "breakdown", "--format", "json", out)
			for _, g := range bd.Groups {
				if g.StepKind == "unattributed" {
					t.Errorf("the slice has %d ns of kernel time outside its steps", g.KernelNS)
				}
			}
		})
	}
}
