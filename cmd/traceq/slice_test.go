package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
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
		{[]string{"--steps", "0:1", "-o", out, "../../testdata/traces/torch/hta_legacy_minimal.json.gz"}, exitInput, "no step markers: use --time"},
		{[]string{"--time", "1:2", "-o", in, in}, exitUsage, "is the input"},
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
