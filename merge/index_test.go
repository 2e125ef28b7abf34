package merge

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/slice"
	"github.com/traceq/traceq/step"
)

// kinetoLayout rewrites a generated trace (events in time order) the way
// real Kineto files are laid out: metadata first, every CPU event of the
// run (each launch with a python_function and an ac2g flow start beside
// it, annotations with fwdbwd flows, an untimed instant, an event
// malformed inside), then every GPU
// event (each kernel with its ac2g flow end), metadata again, and the
// top-level values after the events array. longName, when set, is the
// name of one python_function event.
func kinetoLayout(t *testing.T, data []byte, longName string) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var events []json.RawMessage
	if err := json.Unmarshal(doc["traceEvents"], &events); err != nil {
		t.Fatal(err)
	}
	type fields struct {
		Ph, Cat string
		Pid     json.Number
		Tid     json.RawMessage
		Ts, Dur json.Number
		Args    struct{ Correlation json.Number }
	}
	var cpu, gpu []string
	var pid json.Number
	flows := 0
	odd := false
	for i, raw := range events {
		var f fields
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&f); err != nil {
			t.Fatal(err)
		}
		switch f.Cat {
		case "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation":
			gpu = append(gpu, string(raw))
			if f.Args.Correlation != "" {
				gpu = append(gpu, fmt.Sprintf(`{"ph": "f", "id": %s, "pid": %s, "tid": %s, "ts": %s, "cat": "ac2g", "name": "ac2g", "bp": "e"}`,
					f.Args.Correlation, f.Pid, f.Tid, f.Ts))
			}
			continue
		}
		pid = f.Pid
		cpu = append(cpu, string(raw))
		switch f.Cat {
		case "cuda_runtime":
			name := "torch/nn/modules/module.py(1501): _call_impl"
			if longName != "" && i > len(events)/3 {
				name, longName = longName, ""
			}
			cpu = append(cpu, fmt.Sprintf(`{"ph": "X", "cat": "python_function", "name": %q, "pid": %s, "tid": %s, "ts": %s, "dur": %s, "args": {"Python id": %d}}`,
				name, f.Pid, f.Tid, f.Ts, f.Dur, i))
			if f.Args.Correlation != "" {
				cpu = append(cpu, fmt.Sprintf(`{"ph": "s", "id": %s, "pid": %s, "tid": %s, "ts": %s, "cat": "ac2g", "name": "ac2g"}`,
					f.Args.Correlation, f.Pid, f.Tid, f.Ts))
			}
		case "user_annotation":
			flows++
			cpu = append(cpu, fmt.Sprintf(`{"ph": "s", "id": %d, "pid": %s, "tid": %s, "ts": %s, "cat": "fwdbwd", "name": "fwdbwd"}`, flows, f.Pid, f.Tid, f.Ts),
				fmt.Sprintf(`{"ph": "f", "id": %d, "pid": %s, "tid": %s, "ts": %s, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"}`, flows, f.Pid, f.Tid, f.Ts))
		}
		if i >= len(events)/2 && !odd {
			odd = true
			cpu = append(cpu, fmt.Sprintf(`{"ph": "i", "cat": "cpu_instant_event", "name": "untimed", "pid": %s, "tid": %s, "s": "t"}`, f.Pid, f.Tid),
				// Malformed inside (which no reader checks): its part of
				// the index is read whatever the window.
				fmt.Sprintf(`{"ph": "X", "cat": "python_function", "name": "odd", "x": 1 2, "pid": %s, "tid": %s, "ts": %s, "dur": 1}`, f.Pid, f.Tid, f.Ts))
		}
	}
	head := []string{
		fmt.Sprintf(`{"name": "process_name", "ph": "M", "ts": 0, "pid": %s, "tid": 0, "args": {"name": "python"}}`, pid),
		fmt.Sprintf(`{"name": "thread_name", "ph": "M", "ts": 0, "pid": %s, "tid": %s, "args": {"name": "thread 1 (python)"}}`, pid, pid),
	}
	tail := []string{
		`{"name": "process_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"name": "python"}}`,
		`{"name": "process_labels", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}`,
		`{"name": "thread_name", "ph": "M", "ts": 0, "pid": 0, "tid": 7, "args": {"name": "stream 7"}}`,
		`{"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": 0, "tid": 7, "args": {"sort_index": 7}}`,
	}
	all := append(append(append(head, cpu...), gpu...), tail...)
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"schemaVersion\": %s,\n  \"deviceProperties\": %s,\n  \"traceEvents\": [\n  %s\n  ],\n", doc["schemaVersion"], doc["deviceProperties"],
		strings.Join(all, ",\n  "))
	fmt.Fprintf(&b, "  \"distributedInfo\": %s,\n  \"baseTimeNanoseconds\": %s,\n  \"traceName\": %s\n}\n", doc["distributedInfo"], doc["baseTimeNanoseconds"], doc["traceName"])
	return []byte(b.String())
}

// kinetoRun writes a generated 3-rank run laid out as Kineto lays out its
// files (kinetoLayout, or layout when set), rank 2 gzipped.
func kinetoRun(t *testing.T, layout func(rank int, generated []byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	cfg := gen.Config{Ranks: 3, Steps: 40, DecodeEvery: 4, Shapes: true, Seed: 11}
	for r := range cfg.Ranks {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, cfg, r); err != nil {
			t.Fatal(err)
		}
		var data []byte
		if layout != nil {
			data = layout(r, buf.Bytes())
		} else {
			data = kinetoLayout(t, buf.Bytes(), "")
		}
		name := fmt.Sprintf("rank%d.json", r)
		if r == 2 {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(data)
			zw.Close()
			data, name = z.Bytes(), name+".gz"
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// indexedOptions parse with 16 workers: a file of a few MB is read in
// chunks of a sixteenth of it (at least 64 kB), the same on any machine.
func indexedOptions(opt Options) Options {
	opt.Load = load.Options{Parse: parse.Options{Workers: 16}}
	return opt
}

// mergeBoth merges args guided by the chunk indexes and reading every
// rank whole, and checks that the two write the same bytes and count the
// same events.
func mergeBoth(t *testing.T, what string, args []string, opt Options) (indexed, full *Result) {
	t.Helper()
	opt = indexedOptions(opt)
	var a, b bytes.Buffer
	indexed, err := mergeAll(args, &a, opt)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	opt.FullPass = true
	full, err = mergeAll(args, &b, opt)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("%s: the merge the indexes guided differs from the full pass's (%d and %d bytes)", what, a.Len(), b.Len())
	}
	for i := range full.Ranks {
		g, w := indexed.Ranks[i], full.Ranks[i]
		if g.Copy != w.Copy || g.Gaps != w.Gaps || g.Waits != w.Waits {
			t.Errorf("%s: rank %d: %+v, the full pass %+v", what, i, g.Copy, w.Copy)
		}
		if w.Reread.Indexed || w.Reread.Events != w.Copy.Read {
			t.Errorf("%s: rank %d: the full pass read %+v of %d events", what, i, w.Reread, w.Copy.Read)
		}
	}
	if indexed.Events != full.Events || indexed.Events == 0 {
		t.Errorf("%s: %d events written, the full pass %d", what, indexed.Events, full.Events)
	}
	return indexed, full
}

// runSpan is the time from the first GPU activity of the run's rank 0 to
// its last end.
func runSpan(t *testing.T, dir string) int64 {
	t.Helper()
	tbl, err := load.One(filepath.Join(dir, "rank0.json"), load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := tbl.Inputs[0].Trace
	var end int64
	for _, a := range tr.Activities {
		end = max(end, int64(a.End()))
	}
	return end - int64(tbl.Inputs[0].Origin)
}

// TestMergeIndexed: on a run laid out as Kineto does (CPU events of the
// whole run first, GPU events after, metadata at both ends, top-level
// values after the array), the second pass guided by the first pass's
// chunk indexes writes the bytes that reading every rank whole writes,
// with the same counts, for windows in the middle, at the start and at
// the end, by steps (of a kind) and by time — and reads fewer events.
func TestMergeIndexed(t *testing.T) {
	dir := kinetoRun(t, nil)
	span := runSpan(t, dir)
	decode, _ := step.ParseFilter("decode")
	cases := []struct {
		name    string
		opt     Options
		partial bool // the window is a small part of the run: fewer events read
	}{
		{"steps in the middle", Options{Steps: &slice.StepOptions{From: 20, To: 23}}, true},
		{"the first step", Options{Steps: &slice.StepOptions{From: 0, To: 1}}, true},
		{"the last steps", Options{Steps: &slice.StepOptions{From: 37, To: -1}}, true},
		{"decode steps", Options{Steps: &slice.StepOptions{From: 12, To: 18, Filter: decode}}, true},
		{"every step", Options{Steps: &slice.StepOptions{From: 0, To: -1}}, false},
		{"a time window in the middle", Options{From: span * 2 / 5, To: span/2 + 1}, true},
		{"a time window at the end", Options{From: span * 19 / 20, To: math.MaxInt64}, true},
		{"the whole run by time", Options{From: 0, To: math.MaxInt64}, false},
		{"aligned by the collectives", Options{From: span / 2, To: span/2 + span/10, Align: AlignCollectives}, true},
	}
	for _, c := range cases {
		got, _ := mergeBoth(t, c.name, []string{dir}, c.opt)
		for i, r := range got.Ranks {
			rr := r.Reread
			t.Logf("%s: rank %d: read %d of %d events, %d of %d chunks; kept %d", c.name, i, rr.Events, r.Copy.Read, rr.ChunksRead, rr.Chunks, r.Copy.Kept)
			if !rr.Indexed || rr.Chunks < 8 {
				t.Errorf("%s: rank %d: second pass %+v: not guided by an index of several chunks", c.name, i, rr)
			}
			if c.partial && (rr.Events*2 > r.Copy.Read || rr.ChunksRead*2 > rr.Chunks) {
				t.Errorf("%s: rank %d: the second pass read %d of %d events, %d of %d chunks", c.name, i, rr.Events, r.Copy.Read, rr.ChunksRead, rr.Chunks)
			}
			if !c.partial && rr.Events != r.Copy.Read {
				t.Errorf("%s: rank %d: the second pass read %d of %d events", c.name, i, rr.Events, r.Copy.Read)
			}
		}
	}
}

// TestMergeIndexNotUsed: a rank whose first pass did not read it in
// chunks that all held (a guess cut inside a long name, so that the
// splitter read it again; a cut file) has no index, and one that changed
// between the passes has a stale one: each is read whole, the others as
// their indexes say, and the output is the full pass's.
func TestMergeIndexNotUsed(t *testing.T) {
	long := strings.Repeat(`x}, {y`, 200<<10)
	dir := kinetoRun(t, func(rank int, data []byte) []byte {
		switch rank {
		case 0:
			return kinetoLayout(t, data, long)
		case 1:
			data = kinetoLayout(t, data, "")
			return data[:len(data)*3/4]
		}
		return kinetoLayout(t, data, "")
	})
	opt := Options{Steps: &slice.StepOptions{From: 20, To: 23}}
	got, _ := mergeBoth(t, "ranks without an index", []string{dir}, opt)
	for i, want := range []bool{false, false, true} {
		if got.Ranks[i].Reread.Indexed != want {
			t.Errorf("rank %d: second pass guided by an index %v, want %v", i, got.Ranks[i].Reread.Indexed, want)
		}
	}
	if got.Ranks[1].Copy.Truncated == "" {
		t.Error("rank 1 is cut, and its copy does not say so")
	}

	// A rank that changes between the passes: the same size and time,
	// its events in another order.
	dir = kinetoRun(t, nil)
	opt = indexedOptions(opt)
	m, err := Prepare([]string{dir}, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.FullPass = true
	mf, err := Prepare([]string{dir}, opt)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "rank0.json")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	start := bytes.Index(data, []byte("[\n  ")) + 4
	end := bytes.LastIndex(data, []byte("\n  ]"))
	events := strings.Split(string(data[start:end]), ",\n  ")
	n := len(events) / 3
	events = append(events[n:], events[:n]...)
	changed := append(append(append([]byte(nil), data[:start]...), strings.Join(events, ",\n  ")...), data[end:]...)
	if len(changed) != len(data) {
		t.Fatal("the changed rank's size changed")
	}
	if err := os.WriteFile(p, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, time.Time{}, fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	res, err := m.Write(&a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mf.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("with a rank changed between the passes, the merge differs from the full pass's")
	}
	if res.Ranks[0].Reread.Indexed || !res.Ranks[1].Reread.Indexed {
		t.Errorf("second passes %+v, %+v: the changed rank was read by its stale index, or the other not by its own", res.Ranks[0].Reread, res.Ranks[1].Reread)
	}
}
