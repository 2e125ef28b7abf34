package gen

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// CaptureExpected is what WriteCapture wrote.
type CaptureExpected struct {
	// Launches is the number of kernel launches inside the capture (the
	// decode graph's kernels, in order); Outside the launches before it,
	// whose kernels ran (and are in the capture trace).
	Launches, Outside int
	// Names are the captured kernels' names, in launch order.
	Names []string
	Bytes int64
}

const fillName = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long>, std::array<char*, 1ul> >(int, at::native::FillFunctor<long>, std::array<char*, 1ul>)"

// WriteCapture writes the trace of the decode graph's capture for rank, as
// vLLM writes it beside the execution trace: a few eager kernels first
// (filling the input buffers, which run), then between
// cudaStreamBeginCapture and cudaStreamEndCapture each kernel of the decode
// graph as a CPU op with its shapes (at cfg's capture batch) and a launch
// call naming the kernel, with its grid and block and the op's External
// id. Captured work does not run: there are no kernel events for it.
func WriteCapture(out io.Writer, cfg Config, rank int) (*CaptureExpected, error) {
	ranks := max(cfg.Ranks, 1)
	if rank < 0 || rank >= ranks {
		return nil, fmt.Errorf("rank %d out of range (%d ranks)", rank, ranks)
	}
	w := &writer{w: bufio.NewWriterSize(out, 64<<10), first: true, pid: 851 + int64(rank), device: int32(rank % 8)}
	exp := &CaptureExpected{}
	w.open(rank, ranks)
	tid, dev := w.pid, int64(w.device)
	t := base - 10_000_000_000 // ten seconds before serving
	corr := int64(1)
	b := cfg.captureBatch()
	w.event("user_annotation", "capture_"+strconv.FormatInt(b, 10)+"_FULL", w.pid, tid, t, 5_000_000, nil)
	launch := func(op *opShape, kernel string, g [3]int64) int64 {
		w.ext++
		w.opExt = w.ext
		w.event("cpu_op", op.name, w.pid, tid, t, 20_000, op.appendOpArgs)
		corr++
		c := corr
		w.event("cuda_runtime", "cudaLaunchKernel", w.pid, tid, t+5_000, 8_000, func(bb []byte) []byte {
			bb = append(bb, `, "cbid": 211, "correlation": `...)
			bb = strconv.AppendInt(bb, c, 10)
			bb = append(bb, `, "kernel": `...)
			bb = strconv.AppendQuote(bb, kernel)
			bb = append(bb, `, "grid": `...)
			bb = appendGrid(bb, g)
			return append(bb, `, "block": [256, 1, 1], "shared memory": 49152`...)
		})
		w.opExt = 0
		t += 25_000
		return c
	}
	// Filling the graph's input buffers: eager kernels that run.
	for range 2 {
		op := mkOp("aten::fill_", tensor(long, b), scalar("0"))
		g := [3]int64{1, 1, 1}
		c := launch(&op, fillName, g)
		w.event("kernel", fillName, dev, computeStream, t, 1_500, func(bb []byte) []byte {
			bb = append(bb, `, "device": `...)
			bb = strconv.AppendInt(bb, dev, 10)
			bb = append(bb, `, "stream": 7, "correlation": `...)
			bb = strconv.AppendInt(bb, c, 10)
			return append(bb, `, "grid": [1, 1, 1], "block": [256, 1, 1]`...)
		})
		exp.Outside++
	}
	w.event("cuda_runtime", "cudaStreamBeginCapture", w.pid, tid, t, 3_000, nil)
	t += 5_000
	for _, f := range stepKernels(cfg.layers(), false) {
		op := shapeOf(f, b, b, ranks)
		launch(&op, f.name, grid(f, b, b))
		exp.Launches++
		exp.Names = append(exp.Names, f.name)
	}
	w.event("cuda_runtime", "cudaStreamEndCapture", w.pid, tid, t, 3_000, nil)
	w.event("cuda_runtime", "cudaGraphInstantiateWithFlags", w.pid, tid, t+5_000, 900_000, nil)
	if err := w.close("gen-capture"); err != nil {
		return nil, err
	}
	exp.Bytes = w.n
	return exp, nil
}
