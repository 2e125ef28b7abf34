package gen

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// NamesConfig describes a trace of many distinct long kernel names
// (issue 19, item 15: 100k names of 2 KB, 215 MB of JSON): each kernel
// launched once, in steps.
type NamesConfig struct {
	Names int // distinct kernel names, one kernel each
	Size  int // bytes per name (at least 128)
	// Groups is the number of short names the names share
	// ("void bench::kernel_7<…>(Params)"): the kernel labels must tell
	// the members of each group apart by a number deep in their template
	// arguments.
	Groups  int
	PerStep int // kernels per step (ProfilerStep#N)
}

// WriteNames writes the trace of cfg as Kineto JSON.
func WriteNames(w io.Writer, cfg NamesConfig) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cfg.Groups, cfg.PerStep = max(cfg.Groups, 1), max(cfg.PerStep, 1)
	fmt.Fprint(bw, `{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}], "traceEvents": [`+"\n")
	const launchNS, kernelNS, gapNS = 4_000, 6_000, 1_000
	t := int64(1_000_000)
	for i := range cfg.Names {
		if i%cfg.PerStep == 0 {
			// The step's range on the CPU spans its launches.
			fmt.Fprintf(bw, `{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 1, "tid": 1, "ts": %s, "dur": %s},`+"\n",
				i/cfg.PerStep, micros(t), micros(int64(min(cfg.PerStep, cfg.Names-i))*(launchNS+gapNS)))
		}
		corr := i + 1
		fmt.Fprintf(bw, `{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": %s, "dur": %s, "args": {"correlation": %d}},`+"\n",
			micros(t), micros(launchNS), corr)
		fmt.Fprintf(bw, `{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %s, "dur": %s, "args": {"device": 0, "stream": 7, "correlation": %d, "grid": [132, 1, 1], "block": [256, 1, 1]}}`,
			LongName(i, cfg.Size, cfg.Groups), micros(t+launchNS+gapNS/2), micros(kernelNS+int64(i%7)*100), corr)
		if i < cfg.Names-1 {
			bw.WriteString(",\n")
		}
		t += launchNS + gapNS
	}
	fmt.Fprint(bw, "\n]}\n")
	return bw.Flush()
}

// LongName is kernel i's name in WriteNames, size bytes long: its
// group's short name, then template arguments, its number among them.
func LongName(i, size, groups int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "void bench::kernel_%d<cutlass::gemm::GemmShape<128, 256, 64>, %d, ", i%max(groups, 1), i)
	for b.Len() < size-100 {
		b.WriteString("cutlass::epilogue::thread::LinearCombination<cutlass::bfloat16_t, 8, float, float>, ")
	}
	b.WriteString("true>(Params)")
	s := b.String()
	if len(s) < size {
		s = strings.Replace(s, "(Params)", "(Params"+strings.Repeat("_", size-len(s))+")", 1)
	}
	return s
}

// micros writes ns as Kineto's microseconds with three decimals.
func micros(ns int64) string { return fmt.Sprintf("%d.%03d", ns/1000, ns%1000) }
