package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/golden"
	"github.com/traceq/traceq/internal/testenv"
	"github.com/traceq/traceq/parse"
)

// priced fails a test whose output depends on op attributes when the
// Kineto parser fills none.
func priced(t *testing.T, path string) {
	t.Helper()
	tr, err := parse.File(path, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.OpSigs) == 0 {
		t.Fatal("the Kineto parser filled no op attributes")
	}
}

// TestGoldenEfficiency pins traceq efficiency in every format on the
// bundled vLLM B200 prefill (108 aten::addmm with shapes) and, in text, on
// the vLLM ROCm decode step replayed from a HIP graph, priced through the
// capture trace found beside it.
func TestGoldenEfficiency(t *testing.T) {
	b200 := "../../testdata/traces/torch/vllm_b200_eager_prefill.json.gz"
	priced(t, b200)
	cases := map[string][]string{}
	for _, f := range []string{"text", "markdown", "csv", "json"} {
		cases["vllm_b200."+f] = []string{"traceq", "efficiency", "--format", f, b200}
	}
	if dir := testenv.SharedIfPresent(t, "traces", "torch", "tracelens", "inference", "vllm_decode_full"); dir != "" {
		cases["vllm_decode_full.text"] = []string{"traceq", "efficiency", filepath.Join(dir, "graph_execution.json.gz")}
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out1, out2, errb bytes.Buffer
			if code := run(args, nil, &out1, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if code := run(args, nil, &out2, &errb); code != 0 || !bytes.Equal(out1.Bytes(), out2.Bytes()) {
				t.Fatalf("second run differs (exit %d)", code)
			}
			got := out1.Bytes()
			if strings.HasPrefix(name, "vllm_decode_full") {
				// The reference data's path is not the repository's.
				got = bytes.ReplaceAll(got, []byte(filepath.Dir(args[len(args)-1])), []byte("$DIR"))
			}
			golden.Check(t, filepath.Join("testdata", "efficiency_"+name+".golden"), got)
		})
	}
}

// The efficiency figures beside the other commands: breakdown's speed of
// light line and kernels' columns appear for a priced trace and nowhere
// else.
func TestEfficiencyElsewhere(t *testing.T) {
	b200 := "../../testdata/traces/torch/vllm_b200_eager_prefill.json.gz"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"traceq", "breakdown", "../../testdata/traces/torch/hta_ns_resolution.json.gz"}, ""},
		{[]string{"traceq", "breakdown", b200}, "at the speed of light"},
		{[]string{"traceq", "breakdown", "--detail", "efficiency", b200}, "op shapes, most kernel time first"},
		{[]string{"traceq", "kernels", "--top", "3", b200}, "TFLOP/s"},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, nil, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args[1:], code, errb.String())
		}
		if c.want == "" {
			if strings.Contains(out.String(), "speed of light") {
				t.Errorf("%v: a speed of light without shapes", c.args[1:])
			}
			continue
		}
		priced(t, b200)
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%v: no %q in\n%s", c.args[1:], c.want, out.String())
		}
	}
}

// Bad flags and files: one line each, exit 2 for flags, 1 for files.
func TestEfficiencyErrors(t *testing.T) {
	trace := "../../testdata/traces/torch/hta_triton.json.gz"
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"traceq", "efficiency", "--gpu", "H800", trace}, 2, `efficiency: --gpu: unknown GPU "H800" ('traceq gpus' lists the known ones)`},
		{[]string{"traceq", "efficiency", "--gpu-spec", filepath.Join(dir, "none.txt"), trace}, 1, filepath.Join(dir, "none.txt") + ": no such file or directory"},
		{[]string{"traceq", "efficiency", "--capture", filepath.Join(dir, "none.json"), trace}, 1, "none.json"},
		{[]string{"traceq", "efficiency", "--top", "0", trace}, 2, "--top must be at least 1"},
		{[]string{"traceq", "efficiency", "--format", "xml", trace}, 2, `unknown format "xml"`},
		{[]string{"traceq", "efficiency", "--kind", "decode", trace}, 1, "decode"},
		{[]string{"traceq", "efficiency"}, 2, "no input files"},
		{[]string{"traceq", "chart", "--type", "roofline", "-o", filepath.Join(dir, "r.svg"), trace}, 1, "roofline chart: nothing to draw: no op with FLOPs was priced"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, nil, &out, &errb)
		msg := strings.TrimSpace(errb.String())
		if code != c.code || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") > 0 {
			t.Errorf("%v: exit %d %q, want %d and %q on one line", c.args[1:], code, msg, c.code, c.want)
		}
	}
}

// Without shapes, efficiency says so and how to record them; the GPU is
// still recognised and every kernel's time is counted.
func TestEfficiencyWithoutShapes(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"traceq", "efficiency", "../../testdata/traces/torch/hta_ns_resolution.json.gz"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"step: step 95.663 ms (p50), kernels 94.491 ms/step; at the speed of light 94.491 ms/step (modelled 0.0% of kernel time)",
		`device "Tesla V100-SXM2-32GB": row V100 SXM2`, "record_shapes=True"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}

// A capture_traces folder beside an input is read without a word about
// vLLM's execution_details.json; a file in it that is no capture trace,
// or a folder without any, is a warning and the analysis goes on, while
// the same folder given with --capture is an error.
func TestCaptureFolderFound(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "hta_triton.json.gz")
	data, err := os.ReadFile("../../testdata/traces/torch/hta_triton.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	caps := filepath.Join(dir, parse.CaptureDir)
	for name, body := range map[string]string{in: string(data), filepath.Join(caps, "execution_details.json"): `[{"x":1}]`} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runIt := func(want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(append([]string{"traceq", "efficiency"}, args...), nil, &out, &errb); code != want {
			t.Fatalf("%v: exit %d, want %d: %s", args, code, want, errb.String())
		}
		return errb.String()
	}
	if msg := runIt(0, in); !strings.Contains(msg, "warning: no capture trace read: ") || strings.Contains(msg, "execution_details") {
		t.Errorf("folder without capture traces: %q", msg)
	}
	if err := os.WriteFile(filepath.Join(caps, "empty.json"), []byte(`{"traceEvents":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg := runIt(0, in); !strings.Contains(msg, "warning: capture trace not read: ") || strings.Contains(msg, "execution_details") || strings.Count(msg, "\n") != 1 {
		t.Errorf("a capture trace without GPU activity: %q", msg)
	}
	if msg := runIt(1, "--capture", caps, in); !strings.Contains(msg, "empty.json") {
		t.Errorf("--capture: %q", msg)
	}
}

// A capture trace without GPU activity (its kernels ran in the replays)
// is read from a capture_traces folder, with no warning, and prices the
// replays as the same trace with its few GPU events does; given as an
// input anywhere else, it is refused with one line.
func TestCaptureOnlyTrace(t *testing.T) {
	dir := t.TempDir()
	caps := filepath.Join(dir, parse.CaptureDir)
	launches := filepath.Join(caps, "launches.json")
	in := filepath.Join(dir, "hta_triton.json.gz")
	data, err := os.ReadFile("../../testdata/traces/torch/hta_triton.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(caps, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{in: data, launches: []byte(`{"traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 1, "ts": 120, "dur": 5, "args": {"kernel": "rope", "correlation": 8, "grid": [4, 1, 1], "block": [64, 1, 1]}}]}`)} {
		if err := os.WriteFile(name, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"traceq", "efficiency", in}, nil, &out, &errb); code != 0 || errb.Len() != 0 {
		t.Errorf("efficiency beside a launch-only capture trace: exit %d, %q", code, errb.String())
	}
	for _, cmd := range []string{"breakdown", "efficiency"} {
		errb.Reset()
		code := run([]string{"traceq", cmd, launches}, nil, &out, &errb)
		if msg := errb.String(); code != 1 || !strings.HasPrefix(msg, "traceq: "+launches+": no GPU activity") || strings.Count(msg, "\n") != 1 {
			t.Errorf("%s of a launch-only trace: exit %d, %q; want 1 and one line", cmd, code, msg)
		}
	}

	// The real capture trace without its 11 GPU events prices the replays
	// as the whole one does (the golden).
	src := testenv.SharedIfPresent(t, "traces", "torch", "tracelens", "inference", "vllm_decode_full")
	if src == "" {
		return
	}
	rd := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(filepath.Join(rd, parse.CaptureDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(src, "graph_execution.json.gz"), filepath.Join(rd, "graph_execution.json.gz")); err != nil {
		t.Fatal(err)
	}
	name := "graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"
	n := stripGPU(t, filepath.Join(src, parse.CaptureDir, name), filepath.Join(rd, parse.CaptureDir, name))
	if n != 11 {
		t.Fatalf("%d GPU events stripped, want 11", n)
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"traceq", "efficiency", filepath.Join(rd, "graph_execution.json.gz")}, nil, &out, &errb); code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	golden.Check(t, filepath.Join("testdata", "efficiency_vllm_decode_full.text.golden"), bytes.ReplaceAll(out.Bytes(), []byte(rd), []byte("$DIR")))
}

// stripGPU writes the Kineto trace src to dst without its GPU events
// (kernels, memcpys, memsets, GPU annotations), gzipped, and returns how
// many it dropped.
func stripGPU(t *testing.T, src, dst string) int {
	t.Helper()
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(readGz(t, src)))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	evs, _ := doc["traceEvents"].([]any)
	kept := evs[:0]
	for _, e := range evs {
		switch m, _ := e.(map[string]any); m["cat"] {
		case "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation":
			continue
		}
		kept = append(kept, e)
	}
	n := len(evs) - len(kept)
	doc["traceEvents"] = kept
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(doc); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return n
}
