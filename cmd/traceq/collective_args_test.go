package main

import (
	"bytes"
	"encoding/json"
	"fmt"
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
