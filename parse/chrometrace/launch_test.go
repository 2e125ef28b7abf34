package chrometrace

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/testenv"
)

// TestIsLaunchCall lists the CUDA and HIP calls that enqueue GPU work,
// runtime and driver API: each must be kept as a launch (issue 15 needs
// every launch), and calls that enqueue nothing are not.
func TestIsLaunchCall(t *testing.T) {
	launches := []string{
		"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchKernelExC_v11060", "cudaLaunchCooperativeKernel",
		"cudaLaunchCooperativeKernelMultiDevice", "cudaGraphLaunch", "cudaGraphLaunch_v10000",
		"cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel", "cuLaunchGrid", "cuGraphLaunch",
		"hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel", "hipExtModuleLaunchKernel",
		"hipHccModuleLaunchKernel", "hipLaunchCooperativeKernel", "hipExtLaunchMultiKernelMultiDevice",
		"hipGraphLaunch",
		"cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2DAsync", "cudaMemcpyPeerAsync", "cudaMemcpyToSymbolAsync",
		"cudaMemset", "cudaMemsetAsync", "cudaMemset2DAsync",
		"cuMemcpyAsync", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoH_v2", "cuMemsetD8Async", "cuMemsetD32_v2",
		"hipMemcpy", "hipMemcpyAsync", "hipMemcpyWithStream", "hipMemcpyHtoDAsync", "hipMemset", "hipMemsetAsync",
		"hipMemsetD32Async",
	}
	others := []string{
		"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventRecord", "cudaEventQuery", "cudaStreamWaitEvent",
		"cudaMalloc", "cudaFree", "cudaGetDevice", "cudaFuncGetAttributes", "cudaPeekAtLastError",
		"cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cuModuleGetFunction", "cuCtxSynchronize",
		"hipDeviceSynchronize", "hipStreamSynchronize", "hipEventRecord", "hipMalloc", "hipGetDevice",
	}
	for _, n := range launches {
		if !isLaunchCall(n) {
			t.Errorf("isLaunchCall(%q) = false, want true", n)
		}
	}
	for _, n := range others {
		if isLaunchCall(n) {
			t.Errorf("isLaunchCall(%q) = true, want false", n)
		}
	}
}

// TestEveryLaunchKept: in the real traces, every runtime or driver call
// whose correlation id a GPU activity carries is kept as a launch.
func TestEveryLaunchKept(t *testing.T) {
	t.Run("testdata", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join(torchDir, "*.json*"))
		everyLaunchKept(t, append(files, filepath.Join(torchDir, "dlrm8", "rank0.json.gz")))
	})
	t.Run("shared", func(t *testing.T) {
		var files []string
		filepath.WalkDir(testenv.Shared(t, "traces", "torch"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (filepath.Ext(p) == ".json" || filepath.Ext(p) == ".gz") {
				files = append(files, p)
			}
			return nil
		})
		everyLaunchKept(t, files)
	})
}

func everyLaunchKept(t *testing.T, files []string) {
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		calls := map[int64][]string{} // correlation id -> runtime calls
		var gpu []int64
		for {
			ev, err := r.ReadEvent()
			if err != nil {
				if err != io.EOF {
					t.Logf("%s: %v", f, err)
				}
				break
			}
			switch kind, _ := classifyCat(ev.Cat); {
			case kind == catLaunch && ev.Corr != 0:
				calls[ev.Corr] = append(calls[ev.Corr], strings.Clone(ev.Name)) // ev.Name dies with the next event
			case ev.Kind == KindActivity:
				gpu = append(gpu, ev.Activity.Corr)
			}
		}
		var missed []string
		for _, c := range gpu {
			for _, n := range calls[c] {
				if !isLaunchCall(n) && !slices.Contains(missed, n) {
					missed = append(missed, n)
				}
			}
		}
		if len(missed) > 0 {
			t.Errorf("%s: GPU work launched by calls not kept as launches: %q", f, missed)
		}
	}
}
