package chrometrace

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// synth writes a deterministic vLLM-like Kineto trace of about kernels GPU
// kernels: per step a user_annotation, CPU-side noise that the parser must
// skip (python_function, cpu_op), a cudaGraphLaunch replaying most kernels
// and some eagerly launched ones. It returns the document and the number of
// kernel events written, so benchmarks and equivalence tests do not need
// files on disk. noise adds that many more python_function events per
// kernel, CPU-side events the parser must skip. Event text follows Kineto's layout (indented, µs.ns
// timestamps) so that byte throughput is comparable to real traces.
func synth(kernels, noise int) ([]byte, int) {
	var b bytes.Buffer
	b.WriteString(`{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912, "numSms": 132}],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
  "traceEvents": [
`)
	names := []string{
		"void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, at::native::templates::cuda::uniform_and_transform<float, float, at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*)::{lambda(curandStatePhilox4_32_10*)#1}>",
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
		"void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false, false, false, false, true, true, false, false>(Flash_fwd_params)",
		"void vllm::rms_norm_kernel<c10::BFloat16, 8, 4>(c10::BFloat16*, c10::BFloat16 const*, long, c10::BFloat16 const*, float, int, int)",
		"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)",
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, at::detail::Array<char*, 2>)",
		"Memcpy HtoD (Pinned -> Device)",
	}
	const perStep = 400
	var ns int64 = 1_000_000_000 // 1 s, in ns
	corr := int64(1000)
	n, first := 0, true
	sep := func() {
		if !first {
			b.WriteString(",\n")
		}
		first = false
	}
	ts := func(t int64) string { return fmt.Sprintf("%d.%03d", t/1000, t%1000) }
	for step := 0; n < kernels; step++ {
		k := min(perStep, kernels-n)
		stepStart := ns
		eager := step%8 == 0 // a prefill step every 8, launched kernel by kernel
		graphCorr := corr
		corr++
		if !eager {
			sep()
			fmt.Fprintf(&b, `  {
    "ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 4242, "tid": 4242,
    "ts": %s, "dur": 9.250,
    "args": {
      "External id": %d,
      "cbid": 311, "correlation": %d
    }
  }`, ts(ns+3000), graphCorr, graphCorr)
		}
		for i := range k {
			name := names[(i*7+step)%len(names)]
			cat := "kernel"
			if name[0] == 'M' {
				cat = "gpu_memcpy"
			}
			c := graphCorr
			if eager {
				c = corr
				corr++
				sep()
				fmt.Fprintf(&b, `  {
    "ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1747): _call_impl", "pid": 4242, "tid": 4242,
    "ts": %s, "dur": 40.125,
    "args": {
      "Python parent id": %d, "Python id": %d, "Ev Idx": %d
    }
  },
  {
    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4242, "tid": 4242,
    "ts": %s, "dur": 20.500,
    "args": {
      "External id": %d, "Record function id": 0, "Concrete Inputs": ["", ""], "Input type": ["c10::BFloat16", "c10::BFloat16"], "Input Strides": [[4096, 1], [1, 4096]], "Input Dims": [[32, 4096], [4096, 12288]], "Ev Idx": %d
    }
  },
  {
    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242,
    "ts": %s, "dur": 5.125,
    "args": {
      "External id": %d,
      "cbid": 211, "correlation": %d
    }
  },
`, ts(ns), i, i+1, i, ts(ns+100), c, i, ts(ns+200), c, c)
				first = true
			}
			for j := range noise {
				sep()
				fmt.Fprintf(&b, `  {
    "ph": "X", "cat": "python_function", "name": "vllm/model_executor/layers/linear.py(%d): forward", "pid": 4242, "tid": 4242,
    "ts": %s, "dur": 3.000,
    "args": {
      "Python parent id": %d, "Python id": %d, "Ev Idx": %d
    }
  }`, j, ts(ns+int64(j)), j, j+1, j)
			}
			sep()
			dur := int64(1000 + (i*7919+step*104729)%50000)
			fmt.Fprintf(&b, `  {
    "ph": "X", "cat": "%s", "name": %s, "pid": 0, "tid": %d,
    "ts": %s, "dur": %s,
    "args": {
      "External id": %d,
      "queued": 0, "device": 0, "context": 1,
      "stream": %d, "correlation": %d,
      "registers per thread": 128,
      "shared memory": 49152,
      "blocks per SM": 0.969697,
      "warps per SM": 3.878788,
      "grid": [128, 1, 1],
      "block": [128, 1, 1],
      "est. achieved occupancy %%": 6
    }
  }`, cat, strconv.Quote(name), 7+i%2, ts(ns+5000), ts(dur), c, 7+i%2, c)
			ns += dur + 500
			n++
		}
		sep()
		fmt.Fprintf(&b, `  {
    "ph": "X", "cat": "user_annotation", "name": "execute_context_0(0)_generation_32(32)", "pid": 4242, "tid": 4242,
    "ts": %s, "dur": %s,
    "args": {
      "External id": %d, "Ev Idx": %d
    }
  }`, ts(stepStart), ts(ns-stepStart), corr, step)
		ns += 20_000
	}
	b.WriteString("\n  ],\n  \"traceName\": \"synth.pt.trace.json\"\n}\n")
	return b.Bytes(), n
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w, _ := gzip.NewWriterLevel(&out, gzip.DefaultCompression)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// benchInput is generated once for all benchmarks.
var benchInput = sync.OnceValues(func() ([]byte, int) { return synth(100_000, 0) })
var benchGzip = sync.OnceValue(func() []byte { d, _ := benchInput(); return gz(d) })

func BenchmarkParse(b *testing.B) {
	data, kernels := benchInput()
	zdata := benchGzip()
	for _, bc := range []struct {
		name     string
		in       []byte
		workers  int
		noChunks bool
	}{
		{"json/workers=1", data, 1, false},
		{"json/workers=max", data, 0, false},
		{"gzip/workers=max", zdata, 0, false},
		{"json/splitter/workers=1", data, 1, true},
		{"json/splitter/workers=max", data, 0, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data))) // decompressed bytes: the work done
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				t, err := Parse(bytes.NewReader(bc.in), Options{Workers: bc.workers, NoChunks: bc.noChunks})
				if err != nil {
					b.Fatal(err)
				}
				if len(t.Activities) != kernels {
					b.Fatalf("got %d activities, want %d", len(t.Activities), kernels)
				}
			}
			reportCPU(b, c0)
		})
	}
}

// cpuTime is the user+system CPU time of the process. The benchmarks
// report it per MB besides wall time, because wall time on a shared 2-core
// machine says more about the neighbours than about the parser.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, c0 time.Duration) {
	mb := float64(b.N) * float64(benchBytes()) / 1e6
	b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/mb, "cpu-ms/MB")
}

func benchBytes() int { d, _ := benchInput(); return len(d) }

// BenchmarkGunzip is the floor of the gzip case: decompression alone.
func BenchmarkGunzip(b *testing.B) {
	data, _ := benchInput()
	zdata := benchGzip()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		zr, err := gzip.NewReader(bytes.NewReader(zdata))
		if err != nil {
			b.Fatal(err)
		}
		var buf [256 << 10]byte
		for {
			_, err := zr.Read(buf[:])
			if err != nil {
				break
			}
		}
	}
	reportCPU(b, c0)
}

// BenchmarkSplit is the splitter alone (finding event boundaries): the
// one part of a parse that runs on a single goroutine.
func BenchmarkSplit(b *testing.B) {
	data, _ := benchInput()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		s := &splitter{r: bytes.NewReader(data), blockSize: defaultBlockSize, pool: newBlocks(defaultBlockSize, 4)}
		if err := s.each(func(bt *batch) { bt.release() }); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, c0)
}
