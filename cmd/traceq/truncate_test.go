package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runCLI runs traceq in process.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(append([]string{"traceq"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// gunzipFile returns the decompressed content of a testdata trace.
func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// refPrefix is what an independent reader (encoding/json's streaming
// decoder, no code shared with traceq's splitter) finds in a possibly cut
// trace: the complete events of traceEvents and the byte offset just past
// each one.
type refPrefix struct {
	kernels, gpu int     // complete kernel events; kernel+memcpy+memset events
	ends         []int64 // offset after each complete event
	kernelEnds   []int64 // offset after each complete kernel event
	nameAt       []int64 // offset of the "name" value's first letter, for kernels
}

func refScan(b []byte) refPrefix {
	var r refPrefix
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return r
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return r
		}
		if key != "traceEvents" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return r
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return r
		}
		for dec.More() {
			start := dec.InputOffset()
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return r
			}
			var ev struct {
				Ph, Cat string
			}
			if json.Unmarshal(raw, &ev) != nil {
				continue
			}
			end := dec.InputOffset()
			r.ends = append(r.ends, end)
			if ev.Ph != "X" {
				continue
			}
			switch ev.Cat {
			case "kernel", "Kernel":
				r.kernels++
				r.gpu++
				r.kernelEnds = append(r.kernelEnds, end)
				// The start offset is before the separator; find the name
				// inside the raw event.
				if i := bytes.Index(b[start:end], []byte(`"name": "`)); i >= 0 {
					r.nameAt = append(r.nameAt, start+int64(i)+int64(len(`"name": "`)))
				}
			case "gpu_memcpy", "gpu_memset", "Memcpy", "Memset":
				r.gpu++
			}
		}
		if _, err := dec.Token(); err != nil { // ']'
			return r
		}
	}
	return r
}

// kernelCount is the number of kernel instances a kernels --format json
// report lists.
func kernelCount(t *testing.T, stdout string) int {
	t.Helper()
	var rep struct {
		Kernels []struct {
			Instances int `json:"instances"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("kernels --format json: %v\n%s", err, stdout)
	}
	n := 0
	for _, k := range rep.Kernels {
		n += k.Instances
	}
	return n
}

// warnings returns the lines of stderr that are warnings.
func warnings(stderr string) []string {
	var w []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "traceq: warning: ") {
			w = append(w, l)
		}
	}
	return w
}

// checkCut runs traceq on a cut trace and compares with the reference.
// complete says the cut lost nothing (the whole document is there).
func checkCut(t *testing.T, path string, ref refPrefix, complete, strict bool) {
	t.Helper()
	code, out, errs := runCLI("kernels", "--format", "json", path)
	switch {
	case complete:
		if code != 0 || len(warnings(errs)) != 0 {
			t.Fatalf("whole document: exit %d, stderr %q", code, errs)
		}
	case ref.gpu == 0:
		// Nothing to report: an error that names the file and the cut.
		if code != 1 || !strings.HasPrefix(errs, "traceq: "+path+": truncated") || strings.Count(errs, "\n") != 1 {
			t.Fatalf("cut before any GPU activity: exit %d, stderr %q", code, errs)
		}
		return
	default:
		w := warnings(errs)
		if code != 0 || len(w) != 1 {
			t.Fatalf("exit %d, %d warning lines; stderr %q", code, len(w), errs)
		}
		if !strings.HasPrefix(w[0], "traceq: warning: "+path+": truncated: ") || !strings.Contains(w[0], "byte ") {
			t.Fatalf("warning does not name the file and the byte: %q", w[0])
		}
		if want := fmt.Sprintf("read the %d complete event", len(ref.ends)); !strings.Contains(w[0], want) {
			t.Errorf("warning %q does not say %q", w[0], want)
		}
	}
	if got := kernelCount(t, out); got != ref.kernels {
		t.Fatalf("reported %d kernels, %d complete kernel events before the cut", got, ref.kernels)
	}
	if strict {
		code, _, errs := runCLI("kernels", "--strict", "--format", "json", path)
		want := 1
		if complete {
			want = 0
		}
		if code != want || (want == 1 && (!strings.HasPrefix(errs, "traceq: "+path+": truncated") || strings.Count(errs, "\n") != 1)) {
			t.Fatalf("--strict: exit %d (want %d), stderr %q", code, want, errs)
		}
	}
}

// TestTruncatedAnywhere cuts real traces at many offsets: evenly spread
// ones, and ones right around event boundaries and inside kernel names.
// At each, traceq must report exactly the complete kernel events before
// the cut, with one warning line (an error under --strict).
func TestTruncatedAnywhere(t *testing.T) {
	for _, tc := range []struct {
		file    string
		kernels int   // in the whole trace
		even    int64 // evenly spread cuts
	}{
		{"sglang_decode.json.gz", 555, 200},           // kernels in the second half
		{"hta_gpu_user_annotation.json.gz", 130, 100}, // kernels from 40% on, with GPU annotations
	} {
		t.Run(tc.file, func(t *testing.T) { truncatedAnywhere(t, tc.file, tc.kernels, tc.even) })
	}
}

func truncatedAnywhere(t *testing.T, file string, kernels int, even int64) {
	full := gunzipFile(t, filepath.Join("../../testdata/traces/torch", file))
	whole := refScan(full)
	if whole.kernels != kernels {
		t.Fatalf("reference reads %d kernels in the whole trace, want %d", whole.kernels, kernels)
	}
	n := int64(len(full))
	var cuts []int64
	for i := int64(0); i <= even; i++ {
		cuts = append(cuts, i*n/even)
	}
	// Around event ends: the first events, every 97th event, every 50th
	// kernel, the last events; and inside kernel names.
	pick := func(offs []int64, every int) {
		for i, e := range offs {
			if i < 3 || i%every == 0 || i >= len(offs)-3 {
				cuts = append(cuts, e-1, e, e+1, e+2)
			}
		}
	}
	pick(whole.ends, 97)
	pick(whole.kernelEnds, 50)
	for i, p := range whole.nameAt {
		if i%60 == 0 {
			cuts = append(cuts, p, p+5)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	dir := t.TempDir()
	path := filepath.Join(dir, "cut.json")
	nonempty := 0
	for i, c := range cuts {
		if c <= 0 || c > n {
			continue
		}
		prefix := full[:c]
		if err := os.WriteFile(path, prefix, 0o644); err != nil {
			t.Fatal(err)
		}
		ref := refScan(prefix)
		complete := len(bytes.TrimSpace(full[c:])) == 0
		if ref.kernels > 0 && !complete {
			nonempty++
		}
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			checkCut(t, path, ref, complete, i%8 == 0 || complete)
		})
	}
	if len(cuts) < int(even)*3/2 || nonempty < int(even)/2 {
		t.Fatalf("only %d cuts, %d of them with kernels: the test covers too little", len(cuts), nonempty)
	}
}

// TestTruncatedGzip cuts the compressed file itself. The reference is what
// compress/gzip can decompress from the cut file, read by the independent
// scanner.
func TestTruncatedGzip(t *testing.T) {
	src := "../../testdata/traces/torch/sglang_decode.json.gz"
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	full := gunzipFile(t, src)
	n := len(raw)
	dir := t.TempDir()
	path := filepath.Join(dir, "cut.json.gz")
	for _, c := range []int{2, 9, 10, 100, 1000, n / 4, n / 3, n / 2, 2 * n / 3, 3 * n / 4, n - 1000, n - 100, n - 9, n - 8} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			if err := os.WriteFile(path, raw[:c], 0o644); err != nil {
				t.Fatal(err)
			}
			var data []byte
			if zr, err := gzip.NewReader(bytes.NewReader(raw[:c])); err == nil {
				data, _ = io.ReadAll(zr)
			}
			// A cut in the 8-byte trailer loses no JSON: no warning.
			checkCut(t, path, refScan(data), bytes.Equal(data, full), true)
		})
	}
}
