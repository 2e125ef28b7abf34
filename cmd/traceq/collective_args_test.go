package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/traceq/traceq/render/parquet"
)

// genericTrace is one rank's trace of three ncclDevKernel_Generic
// kernels (RCCL/NCCL's kernel for every op): an all-reduce and a
// broadcast by their Kineto args, and one without args.
const genericTrace = `{"traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 7, "ts": 10, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 1, "Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 1, "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": "[0]"}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 40, "dur": 1, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 7, "ts": 50, "dur": 30, "args": {"device": 0, "stream": 7, "correlation": 2, "Collective name": "broadcast", "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 1, "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": "[0]"}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 90, "dur": 1, "args": {"correlation": 3}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 7, "ts": 100, "dur": 40, "args": {"device": 0, "stream": 7, "correlation": 3}}
]}`

// TestGenericCollectiveCategory (issue 19 item 26): a generic collective
// kernel whose args name its op takes the op's category in breakdown,
// kernels, collectives and the export alike; without args it stays
// communication/other.
func TestGenericCollectiveCategory(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gen.json")
	if err := os.WriteFile(p, []byte(genericTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"communication/allreduce": 20000, "communication/broadcast": 30000, "communication/other": 40000}

	code, out, errs := runCLI("breakdown", "--format", "json", p)
	if code != 0 {
		t.Fatalf("breakdown: exit %d: %s", code, errs)
	}
	var br struct {
		Groups []struct {
			Categories []struct {
				Category string `json:"category"`
				KernelNS int64  `json:"kernel_ns"`
			} `json:"categories"`
			TopKernels []struct {
				Name     string `json:"name"`
				Category string `json:"category"`
				TotalNS  int64  `json:"total_ns"`
			} `json:"top"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &br); err != nil || len(br.Groups) != 1 {
		t.Fatalf("breakdown json (%v):\n%s", err, out)
	}
	got := map[string]int64{}
	for _, c := range br.Groups[0].Categories {
		got[c.Category] = c.KernelNS
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("breakdown categories %v, want %v", got, want)
	}
	got = map[string]int64{}
	for _, k := range br.Groups[0].TopKernels {
		got[k.Category] = k.TotalNS
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("breakdown top kernels %v, want %v", got, want)
	}

	code, out, errs = runCLI("kernels", "--format", "json", p)
	if code != 0 {
		t.Fatalf("kernels: exit %d: %s", code, errs)
	}
	var ks struct {
		Kernels []struct {
			Category string `json:"category"`
			TotalNS  int64  `json:"total_ns"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(out), &ks); err != nil {
		t.Fatal(err)
	}
	got = map[string]int64{}
	for _, k := range ks.Kernels {
		got[k.Category] = k.TotalNS
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kernels %v, want %v", got, want)
	}

	code, out, errs = runCLI("collectives", "--format", "json", p)
	if code != 0 {
		t.Fatalf("collectives: exit %d: %s", code, errs)
	}
	var cs struct {
		Ops []struct {
			Op string `json:"op"`
		} `json:"collectives"`
	}
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, o := range cs.Ops {
		ops = append(ops, o.Op)
	}
	slices.Sort(ops)
	if strings.Join(ops, " ") != "allreduce broadcast other" {
		t.Errorf("collectives ops %v", ops)
	}

	ds := filepath.Join(dir, "ds")
	if code, errs := exportRun("-o", ds, p); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	matches, _ := filepath.Glob(filepath.Join(ds, "activities", "*", "*", "part-0.parquet"))
	if len(matches) != 1 {
		t.Fatalf("activities parts %v", matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pq.Read[parquet.Activity](bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]int64{}
	for _, r := range rows {
		got[r.Category] += r.DurNS
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("export activities %v, want %v", got, want)
	}
}

// collRank writes one rank file of a run: n all-reduce kernels (the
// i-th lasting dur(i) µs) with the collective args args(i) on the kernel
// ("" for none), in a step marker of tokens tokens (none when tokens < 0).
func collRank(t *testing.T, dir string, rank, world, n int, dur func(i int) int, args func(i int) string, tokens int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d}, "traceEvents": [`, rank, world)
	if tokens >= 0 {
		fmt.Fprintf(&b, `{"ph": "X", "cat": "user_annotation", "name": "decode[bs=1 tok=%d]", "pid": 1, "tid": 1, "ts": 0, "dur": %d},`, tokens, 100*n+100)
	}
	for i := range n {
		ts := 10 + 100*i
		a := ""
		if s := args(i); s != "" {
			a = ", " + s
		}
		fmt.Fprintf(&b, `{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": %d, "dur": 1, "args": {"correlation": %d}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 7, "ts": %d, "dur": %d, "args": {"device": 0, "stream": 7, "correlation": %d%s}},
`, ts, i+1, ts+5, dur(i), i+1, a)
	}
	fmt.Fprintf(&b, `{"ph": "X", "cat": "cpu_op", "name": "x", "pid": 1, "tid": 1, "ts": 0, "dur": 1}]}`)
	p := filepath.Join(dir, fmt.Sprintf("rank%d.json", rank))
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func collArgs(dtype string, nelems int64, groupSize int) string {
	return fmt.Sprintf(`"Collective name": "allreduce", "In msg nelems": %d, "Out msg nelems": %d, "Group size": %d, "dtype": %q`,
		nelems, nelems, groupSize, dtype)
}

// collectivesJSON runs collectives --format json and returns its first op
// and stderr.
func collectivesJSON(t *testing.T, args ...string) (op map[string]any, stderr string) {
	t.Helper()
	code, out, errs := runCLI(append([]string{"collectives", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Collectives []map[string]any `json:"collectives"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Collectives) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	return doc.Collectives[0], errs
}

// TestCollectiveArgsContradicted (issue 19 item 12): args the match
// contradicts are counted, warned about and outvoted; no bandwidth is 0.
func TestCollectiveArgsContradicted(t *testing.T) {
	const world, n = 4, 3
	dur := func(i int) int { return 10 }
	t.Run("group size 1 on every rank", func(t *testing.T) {
		dir := t.TempDir()
		for r := range world {
			collRank(t, dir, r, world, n, dur, func(int) string { return collArgs("BFloat16", 1<<20, 1) }, -1)
		}
		op, errs := collectivesJSON(t, dir)
		if op["group_size"] != float64(world) || op["args_group_size"] != float64(1) {
			t.Errorf("group_size %v args_group_size %v", op["group_size"], op["args_group_size"])
		}
		// 2 MiB in 10 µs: 209.7 GB/s algbw, × 2·3/4 busbw.
		if bus, ok := op["busbw_gbs"].(float64); !ok || math.Abs(bus-float64(2<<20)/10000*1.5) > 1e-9 {
			t.Errorf("busbw %v", op["busbw_gbs"])
		}
		if !strings.Contains(errs, "AllReduce: the collective args say group size 1, but 4 ranks ran it: bus bandwidth uses 4") {
			t.Errorf("stderr %q", errs)
		}
		_, out, _ := runCLI("collectives", dir)
		if strings.Contains(out, "0.000 GB/s") || strings.Contains(out, " 0.000  args") || !strings.Contains(out, "group size 4 (the args say 1)") {
			t.Errorf("text:\n%s", out)
		}
	})
	t.Run("rank 0 says Float, the others BFloat16", func(t *testing.T) {
		dir := t.TempDir()
		for r := range world {
			dt := "BFloat16"
			if r == 0 {
				dt = "Float"
			}
			collRank(t, dir, r, world, n, dur, func(int) string { return collArgs(dt, 1<<20, world) }, -1)
		}
		op, errs := collectivesJSON(t, dir)
		sizes := op["sizes"].([]any)
		if op["size_conflicts"] != float64(n) || len(sizes) != 1 || sizes[0].(map[string]any)["bytes"] != float64(2<<20) {
			t.Errorf("size_conflicts %v sizes %v", op["size_conflicts"], sizes)
		}
		if !strings.Contains(errs, "in 3 of 3 instances the ranks' collective args disagree on the message size") {
			t.Errorf("stderr %q", errs)
		}
	})
	t.Run("one rank in a group of 1", func(t *testing.T) {
		dir := t.TempDir()
		collRank(t, dir, 0, 1, n, dur, func(int) string { return collArgs("BFloat16", 1<<20, 1) }, -1)
		op, _ := collectivesJSON(t, dir)
		if op["busbw_gbs"] != nil || op["algbw_gbs"] == nil {
			t.Errorf("busbw %v algbw %v", op["busbw_gbs"], op["algbw_gbs"])
		}
		_, out, _ := runCLI("collectives", dir)
		if strings.Contains(out, "0.000") || !strings.Contains(out, "(no bus factor: a group of one rank)") {
			t.Errorf("text:\n%s", out)
		}
	})
}

// TestCollectiveSizeUnknownWhy (issue 19 item 17): the verdict says why
// there is no bandwidth.
func TestCollectiveSizeUnknownWhy(t *testing.T) {
	const world, n = 2, 2
	for _, tc := range []struct {
		name   string
		dur    int
		args   string
		tokens int
		flags  []string
		want   string
	}{
		{"no args", 10, "", -1, nil, "message size unknown (no collective args: give --bytes-per-token)"},
		{"absurd args", 10, collArgs("BFloat16", 1<<50, world), -1, nil, "message size unknown: the collective args give none"},
		{"unknown dtype", 10, collArgs("Quaternion", 1024, world), -1, nil, "message size unknown: the collective args give none"},
		{"zero durations", 0, collArgs("BFloat16", 1024, world), -1, nil, "transfer time 0 in every instance of known size: no bandwidth"},
		{"bytes per token, no tokens", 10, "", -1, []string{"--bytes-per-token", "8192"}, "--bytes-per-token needs a step's token count (these kernels are outside any step)"},
		{"bytes per token, a marker without", 10, "", 0, []string{"--bytes-per-token", "8192"}, "--bytes-per-token needs the token count of the step markers"},
		{"bytes per token", 10, "", 4, []string{"--bytes-per-token", "8192"}, "GB/s busbw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for r := range world {
				collRank(t, dir, r, world, n, func(int) int { return tc.dur }, func(int) string { return tc.args }, tc.tokens)
			}
			code, out, errs := runCLI(append(append([]string{"collectives"}, tc.flags...), dir)...)
			if code != 0 || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, stderr %q; want %q in\n%s", code, errs, tc.want, out)
			}
		})
	}
}

// TestLinkBounds (issue 19 item 17): --link is bounded to 0.01–100000
// GB/s.
func TestLinkBounds(t *testing.T) {
	dir := t.TempDir()
	collRank(t, dir, 0, 2, 1, func(int) int { return 10 }, func(int) string { return "" }, -1)
	collRank(t, dir, 1, 2, 1, func(int) int { return 10 }, func(int) string { return "" }, -1)
	for _, tc := range []struct {
		link string
		ok   bool
	}{{"1e-300", false}, {"0.009", false}, {"0.01", true}, {"100000", true}, {"100001", false}, {"1e300", false}, {"0", false}, {"nvlink4", true}} {
		code, _, errs := runCLI("collectives", "--link", tc.link, dir)
		if (code == 0) != tc.ok {
			t.Errorf("--link %s: exit %d, %s", tc.link, code, errs)
		}
		if !tc.ok && (code != 2 || !strings.Contains(errs, "0.01 to 100000 GB/s")) {
			t.Errorf("--link %s: exit %d, %q", tc.link, code, errs)
		}
	}
}
