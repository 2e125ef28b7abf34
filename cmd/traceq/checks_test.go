package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// everyReader lists a command line of every command that reads traces
// into a table (all but slice, which copies events and sums none), with
// OUT standing for an output path in a fresh directory and IN for the
// input.
var everyReader = [][]string{
	{"breakdown", "IN"},
	{"breakdown", "--format", "json", "IN"},
	{"kernels", "IN"},
	{"steps", "IN"},
	{"collectives", "IN"},
	{"diff", "IN", "IN"},
	{"chart", "--type", "steps", "-o", "OUT.svg", "IN"},
	{"chart", "--type", "shares", "-o", "OUT.svg", "IN"},
	{"chart", "--type", "top", "-o", "OUT.svg", "IN"},
	{"chart", "--type", "hist", "-o", "OUT.svg", "IN"},
	{"chart", "--type", "timeline", "-o", "OUT.svg", "IN"},
	{"chart", "--type", "collectives", "-o", "OUT.svg", "IN"},
	{"report", "--out", "OUT", "IN"},
	{"export", "-o", "OUT", "IN"},
}

func commandLine(line []string, in, out string) []string {
	args := make([]string, len(line))
	for i, a := range line {
		a = strings.ReplaceAll(a, "OUT", out)
		if a == "IN" {
			a = in
		}
		args[i] = a
	}
	return args
}

// TestOverflowEveryCommand (issue 19 item 8): every command refuses a
// trace whose times overflow 64-bit nanoseconds, and writes nothing: the
// loader checks, so no command can skip it.
func TestOverflowEveryCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "overflow.json")
	const trace = `{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": -9e15, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 9e15, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 2}}]}`
	if err := os.WriteFile(in, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, line := range everyReader {
		out := filepath.Join(dir, "out", strings.Repeat("x", i+1))
		args := commandLine(line, in, out)
		code, stdout, errs := runCLI(args...)
		if code != exitInput || stdout != "" || !strings.Contains(errs, in+": the summed GPU time overflows 64-bit nanoseconds") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, errs)
		}
		if matches, _ := filepath.Glob(out + "*"); len(matches) > 0 {
			t.Errorf("%v wrote %v", args, matches)
		}
	}
}

// TestKindEveryCommand (issue 19 item 21): every command that takes
// --kind validates it once, the same way: an unknown kind is a usage
// error, a kind the inputs do not hold exits 1 saying so.
func TestKindEveryCommand(t *testing.T) {
	in := filepath.Join(torchDir, "vllm_decode_full_graph.json.gz") // decode steps only
	dir := t.TempDir()
	for i, line := range everyReader {
		if line[0] == "export" || line[0] == "steps" {
			continue // takes no --kind
		}
		withKind := func(kind string) []string {
			return append([]string{line[0], "--kind", kind}, line[1:]...)
		}
		out := filepath.Join(dir, strings.Repeat("x", i+1))
		args := commandLine(withKind("prefill"), in, out)
		code, stdout, errs := runCLI(args...)
		if code != exitInput || stdout != "" || !strings.Contains(errs, "no prefill steps") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, errs)
		}
		args = commandLine(withKind("sideways"), in, out)
		code, _, errs = runCLI(args...)
		if code != exitUsage || !strings.Contains(errs, `unknown --kind "sideways"`) {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
		args = commandLine(withKind("decode"), in, out)
		code, _, errs = runCLI(args...)
		if noColl := "no collective kernels"; code != 0 && !(line[0] == "chart" && line[2] == "collectives" && strings.Contains(errs, noColl)) {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}

// TestTimelineKind (issue 19 item 22): chart --type timeline honours
// --kind: it draws the first step of the kind, and refuses a
// --step-index of another kind.
func TestTimelineKind(t *testing.T) {
	dir := t.TempDir()
	in := markerTrace(t, dir, "pd.json", "prefill[bs=1 tok=4]", "decode[bs=1 tok=1]")
	out := filepath.Join(dir, "tl.svg")
	code, _, errs := runCLI("chart", "--type", "timeline", "--kind", "decode", "-o", out, in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	svg, _ := os.ReadFile(out)
	if !strings.Contains(string(svg), "step 1 (decode, decode[bs=1 tok=1])") {
		t.Errorf("the timeline does not draw the decode step:\n%.400s", svg)
	}
	code, _, errs = runCLI("chart", "--type", "timeline", "--kind", "decode", "--step-index", "0", "-o", filepath.Join(dir, "tl2.svg"), in)
	if code != exitInput || !strings.Contains(errs, "step 0 is a prefill step, not a decode step") {
		t.Errorf("--step-index 0 --kind decode: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI("chart", "--type", "timeline", "-o", filepath.Join(dir, "tl3.svg"), in)
	svg, _ = os.ReadFile(filepath.Join(dir, "tl3.svg"))
	if code != 0 || !strings.Contains(string(svg), "step 0 (prefill") {
		t.Errorf("no --kind: exit %d %s, want step 0", code, errs)
	}
}
