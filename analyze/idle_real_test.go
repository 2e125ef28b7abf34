package analyze_test

import (
	"path/filepath"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/testenv"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// TestIdleRealTraces checks the idle split, launch statistics, time
// between steps and exposed communication of real traces against the
// oracle, with their steps and as whole traces, and the figures other
// tools or the traces' own structure fix.
func TestIdleRealTraces(t *testing.T) {
	td := func(elem ...string) string { return testenv.Testdata(t, append([]string{"traces"}, elem...)...) }
	files := []string{
		td("torch", "vllm_b200_eager_prefill.json.gz"),
		td("torch", "vllm_decode_full_graph.json.gz"),
		td("torch", "vllm_mixed_piecewise.json.gz"),
		td("torch", "sglang_decode.json.gz"),
		td("torch", "hta_amd_mi250.json.gz"),
		td("torch", "dlrm_rank0_plain.json"),
		td("nsys", "nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite"),
		td("nsys", "nsys2022.2.1_saxpy-mpi-a100-nonlazy.sqlite"),
	}
	if root := testenv.SharedIfPresent(t, "traces"); root != "" {
		for _, f := range []string{
			"torch/tracelens/b200/eager_trace.json.gz",
			"torch/tracelens/inference/vllm_decode_full/graph_execution.json.gz",
			"torch/hta/trace_diff/test/test.json.gz",
			"torch/hta/trace_filter/sampled_rank-0.json.gz",
			"nsys/nsys2026.2.1_fastvideo-2gpu-sp2.sqlite",
		} {
			files = append(files, filepath.Join(root, f))
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tr, err := parse.File(f, parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st, err := step.Find(tr, step.Options{})
			if err != nil {
				t.Fatal(err)
			}
			whole := checkIdle(t, window.Input{Path: f, Trace: tr})
			if st != nil {
				checkIdle(t, window.Input{Path: f, Trace: tr, Steps: st})
			}
			for _, g := range whole.Groups {
				t.Logf("device %d: idle %d of span %d: launch-bound %d, device-side %d, unknown %d; launch CPU %d, kernel %d; communication %+v",
					g.Device, g.IdleNS, g.SpanNS, g.Idle.LaunchBoundNS, g.Idle.DeviceSideNS, g.Idle.UnknownNS, g.LaunchCPUNS, g.KernelNS, g.Comm)
			}
		})
	}
}

// TestIdleAnchors checks what other tools and the traces' structure say.
func TestIdleAnchors(t *testing.T) {
	torch := testenv.Testdata(t, "traces", "torch")
	group := func(file string) analyze.Group {
		tr, err := parse.File(filepath.Join(torch, file), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := window.Build([]window.Input{{Path: file, Trace: tr}}, window.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := analyze.Breakdown(tbl, analyze.Options{})
		if len(r.Groups) != 1 {
			t.Fatalf("%s: %d groups", file, len(r.Groups))
		}
		return r.Groups[0]
	}
	// vLLM's eager prefill on a B200 (the tracelens/b200 step): HTA puts 99 %
	// of stream 7's idle time on host wait; the device-wide split is as
	// launch-bound, and every all-reduce is exposed.
	g := group("vllm_b200_eager_prefill.json.gz")
	if share := stats.Ratio(g.Idle.LaunchBoundNS, g.IdleNS); share < 0.99 || g.Idle.UnknownNS != 0 {
		t.Errorf("b200 eager prefill: launch-bound %.4f of idle %+v", share, g.Idle)
	}
	if g.Comm.BusyNS == 0 || g.Comm.ExposedNS != g.Comm.BusyNS {
		t.Errorf("b200 eager prefill: communication %+v, want all exposed", g.Comm)
	}
	apis := map[string]bool{}
	for _, l := range g.Launches {
		apis[l.API] = true
	}
	for _, api := range []string{"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx", "cudaMemcpyAsync"} {
		if !apis[api] {
			t.Errorf("b200 eager prefill: no %s in %+v", api, g.Launches)
		}
	}
	// vLLM's full-graph decode step on ROCm: one hipGraphLaunch replays 421
	// kernels; every gap of the replay is device-side, and the idle time
	// is HTA's without its microsecond rounding (25 µs).
	g = group("vllm_decode_full_graph.json.gz")
	if g.Idle.LaunchBoundNS != 0 || g.Idle.UnknownNS != 0 || g.IdleNS < 25_000 || g.IdleNS >= 26_000 {
		t.Errorf("decode full graph: idle %d split %+v", g.IdleNS, g.Idle)
	}
	if g.Launches[0].API != "hipGraphLaunch" || g.Launches[0].Calls != 1 {
		t.Errorf("decode full graph: launches %+v", g.Launches)
	}
}
