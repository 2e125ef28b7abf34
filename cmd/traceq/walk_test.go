package main

import (
	"github.com/traceq/traceq/internal/testenv"

	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// walkExpect lists the files of the reference set that traceq refuses, with
// the documented error each must give. Every other file must be read.
var walkExpect = map[string]string{
	// CPU-side only: no kernels, memcpys or memsets.
	"torch/hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz":          "no GPU activity (kernels, memcpys, memsets) in the trace",
	"torch/hta/distributed_info_unavailable/distributed_info_not_found.json.gz": "no GPU activity (kernels, memcpys, memsets) in the trace",
	// Only cuda_profiler_range events on the GPU side (CUPTI profiler API).
	"torch/hta/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz": "no GPU activity (kernels, memcpys, memsets) in the trace",
	// An MTIA accelerator trace: mtia_ccp_events, no CUDA/HIP activity.
	"torch/hta/mtia_inference_trace/mtia_inference_rank_0.json.gz": "no GPU activity (kernels, memcpys, memsets) in the trace",
	// A JSON list of capture settings, not a trace.
	"torch/tracelens/inference/vllm_decode_full/capture_traces/execution_details.json": "not a Chrome trace: its only element is not an event (an object with a ph)",
	// The provenance notes.
	"torch/SOURCES.md": "not a trace: neither JSON, gzip nor SQLite",
	"nsys/SOURCES.md":  "not a trace: neither JSON, gzip nor SQLite",
	// An export without CUPTI_ACTIVITY_KIND_KERNEL.
	"nsys/nsys2025.5.1_no-kernel-table.sqlite": "no CUDA kernel activity",
}

// TestSharedTraces reads every file of the reference set through the CLI:
// each is read (exit 0) or refused with its documented one-line error
// (exit 1); none panics.
func TestSharedTraces(t *testing.T) {
	sharedTraces := testenv.Shared(t, "traces")
	if testing.Short() {
		t.Skip("reads 40 MB of traces")
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(sharedTraces, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(sharedTraces, path)
		rel = filepath.ToSlash(rel)
		t.Run(rel, func(t *testing.T) {
			code, _, errs := runCLI("kernels", "--top", "1", path)
			want, refused := walkExpect[rel]
			seen[rel] = true
			switch {
			case !refused && code != 0:
				t.Errorf("exit %d: %s", code, errs)
			case refused && (code != 1 || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "traceq: "+path+": "+want)):
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, errs, "traceq: "+path+": "+want+"…")
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range walkExpect {
		if !seen[rel] {
			t.Errorf("%s: listed as refused but not in the reference set", rel)
		}
	}
	if len(seen) < 40 {
		t.Errorf("walked only %d files", len(seen))
	}
}
