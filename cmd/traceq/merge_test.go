package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeCommand: the merged trace is written atomically (gzip for a
// .gz name), its summary names every rank and its shift, and a rerun
// gives the same bytes; bad flags are usage errors (exit 2) that write
// nothing, and an output that is an input is refused.
func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.json.gz")
	var stdout, stderr bytes.Buffer
	args := []string{"traceq", "merge", "--steps", "0:1", "-o", out, "../../testdata/traces/torch/dlrm8"}
	if code := run(args, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 9 || !strings.HasPrefix(lines[0], out+": 8 ranks, 1 step (0 ProfilerStep#10) of each rank: kept 23925 of 26538 events, 1815 idle gaps and 56 waits annotated; clocks: as recorded (not aligned); the ends of the 8 matched collectives lie within 7.000 µs of each other (median 2.000 µs)") ||
		lines[8] != "  rank 7: not moved" {
		t.Errorf("summary:\n%s", stdout.String())
	}
	first := readGz(t, out)
	var doc struct {
		TraceEvents []json.RawMessage `json:"traceEvents"`
		Traceq      struct {
			Ranks []struct {
				PID  int64 `json:"pid"`
				Rank int   `json:"rank"`
			} `json:"ranks"`
		} `json:"traceq"`
	}
	if err := json.Unmarshal(first, &doc); err != nil || len(doc.TraceEvents) < 23925 || len(doc.Traceq.Ranks) != 8 {
		t.Fatalf("merged trace: %v, %d events, %d ranks", err, len(doc.TraceEvents), len(doc.Traceq.Ranks))
	}
	stdout.Reset()
	if code := run(args, nil, &stdout, &stderr); code != 0 || !bytes.Equal(readGz(t, out), first) {
		t.Errorf("a rerun: exit %d, same bytes %v", code, bytes.Equal(readGz(t, out), first))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the output directory holds %d entries", len(ents))
	}
	for _, bad := range [][]string{
		{"merge", "--steps", "0", "../../testdata/traces/torch/dlrm8"},                                        // no -o
		{"merge", "--steps", "0", "--time", "0:1ms", "-o", "x.json", "../../testdata/traces/torch/dlrm8"},     // both
		{"merge", "-o", "x.json", "../../testdata/traces/torch/dlrm8"},                                        // neither
		{"merge", "--time", "0:1ms", "--kind", "decode", "-o", "x.json", "../../testdata/traces/torch/dlrm8"}, // --kind without --steps
		{"merge", "--steps", "0", "--align", "sideways", "-o", "x.json", "../../testdata/traces/torch/dlrm8"},
		{"merge", "--steps", "0", "-o", "../../testdata/traces/torch/dlrm8/rank0.json.gz", "../../testdata/traces/torch/dlrm8"},
		{"merge", "--steps", "0", "-o", "x.json"},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(append([]string{"traceq"}, bad...), nil, &stdout, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%v: exit %d, %q", bad, code, stderr.String())
		}
	}
	if _, err := os.Stat("x.json"); err == nil {
		t.Error("a refused merge wrote x.json")
	}
	// A rank without step markers: exit 1, naming it, nothing written.
	stderr.Reset()
	noSteps := filepath.Join(dir, "no-steps.json")
	if code := run([]string{"traceq", "merge", "--steps", "0", "-o", noSteps, "../../testdata/traces/torch/hta_legacy_minimal.json.gz"},
		nil, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "hta_legacy_minimal.json.gz: no step markers") {
		t.Errorf("no steps: exit %d, %q", code, stderr.String())
	}
	if _, err := os.Stat(noSteps); err == nil {
		t.Error("a failed merge left its output")
	}
}

func readGz(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
