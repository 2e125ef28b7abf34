package gen

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/trace"
)

// RunConfig describes an N-rank tensor-parallel run on one clock, for the
// collectives analysis: every rank's trace shares the time base, the
// steps and the all-reduces; one rank (the straggler) computes slower, the
// others wait for it in each all-reduce, and every rank's all-reduce
// kernel ends at (last arrival + transfer), the transfer time being the
// bus bytes over a known bus bandwidth.
//
// Decode steps replay one CUDA graph whose all-reduces are vLLM's custom
// all-reduce kernels without collective args; prefill steps launch kernel
// by kernel, with NCCL all-reduces on a second stream that carry Kineto's
// collective args, on the kernel in even prefill steps and on a
// record_param_comms op around the launch in odd ones.
type RunConfig struct {
	Ranks int // world size (0 means 2)
	Steps int
	// DecodeEvery: steps 0, N, 2N, … are prefill steps, the others
	// decode (0: all decode; 1: all prefill).
	DecodeEvery int
	Layers      int // two all-reduces per layer (0 means 4)
	// Straggler is the rank whose compute kernels take SlowdownPct %
	// longer; with SlowdownPct 0 no rank is slower.
	Straggler   int
	SlowdownPct int
	// JitterNS adds a per-rank random 0..JitterNS-1 ns to each compute
	// kernel, so that other ranks arrive last now and then.
	JitterNS int64
	// BusGBps is the bus bandwidth in GB/s (bytes per ns) the all-reduces
	// run at (0 means 16).
	BusGBps int64
	// Hidden is the hidden size: an all-reduce moves tokens × Hidden
	// bf16 values (0 means 4096). Hidden × 4 × (Ranks−1) must be a
	// multiple of Ranks × BusGBps, so that transfer times are whole ns.
	Hidden int64
	Seed   int64
	// LatencyNS is each all-reduce's fixed cost, α of the latency–bandwidth
	// model: its transfer time is LatencyNS + bus bytes / BusGBps (0: none).
	LatencyNS int64
	// LaunchNS, when > 0, launches the decode steps eagerly instead of
	// replaying a CUDA graph: one cudaLaunchKernel per kernel, issued by a
	// host that spends LaunchNS (plus 0..LaunchNS/4−1 ns drawn from a
	// stream of its own) per call, so that the device runs dry whenever
	// the host falls behind: launch-bound idle time. The kernels and
	// their durations are those of the graph replay (0), which is the run
	// with the launch-bound gaps removed.
	LaunchNS int64
}

func (c RunConfig) ranks() int {
	if c.Ranks <= 0 {
		return 2
	}
	return c.Ranks
}

func (c RunConfig) layers() int {
	if c.Layers <= 0 {
		return 4
	}
	return c.Layers
}

func (c RunConfig) bus() int64 {
	if c.BusGBps <= 0 {
		return 16
	}
	return c.BusGBps
}

func (c RunConfig) hidden() int64 {
	if c.Hidden <= 0 {
		return 4096
	}
	return c.Hidden
}

// BytesPerToken is what one token adds to an all-reduce's message: the
// --bytes-per-token that sizes the decode all-reduces.
func (c RunConfig) BytesPerToken() int64 { return 2 * c.hidden() }

// Kind is step i's kind: "prefill" or "decode".
func (c RunConfig) Kind(i int) string {
	if c.DecodeEvery > 0 && i%c.DecodeEvery == 0 {
		return "prefill"
	}
	return "decode"
}

// RunExpected is what the collectives analysis of the whole run must find.
type RunExpected struct {
	// Ops per step kind: the decode all-reduces (no process group) and
	// the prefill ones (process group "0").
	Ops []OpExpect
	// KindNS is all GPU time per step kind and rank.
	KindNS map[string][]int64
	// Bytes is the size of the rank's trace written (WriteRank).
	Bytes int64
	// Activities is the number of GPU activities of the rank written.
	Activities int64
	// SpanNS holds, per step and rank, the span of the rank's activities
	// in the step: from its first start to its last end (the step time).
	SpanNS [][]int64
}

// OpExpect is one step kind's all-reduces.
type OpExpect struct {
	Kind  string // "decode" or "prefill"
	Op    string // "allreduce"
	Group string // "" (no args) or "0"
	// Instances and TransferNS (summed once per instance).
	Instances  int64
	TransferNS int64
	// Per rank: kernel time, wait and last arrivals (ties to the lowest
	// rank).
	KernelNS, WaitNS, LastArrivals []int64
	// LeadNS sums, per rank, its arrival after the next-to-last rank's
	// over the instances where it arrived last.
	LeadNS []int64
	// Sizes: instances and transfer per message size in bytes, and where
	// the size comes from ("args", "cpu_op", "bytes_per_token").
	Sizes map[SizeKey]*SizeExpect
	// BusBytes sums the instances' bus bytes: over TransferNS it is the
	// configured bus bandwidth.
	BusBytes int64
}

// SizeKey names a per-size row.
type SizeKey struct {
	Bytes  int64
	Source string
}

// SizeExpect is one per-size row.
type SizeExpect struct {
	Instances  int64
	TransferNS int64
}

// Straggler is the rank with the most last arrivals (the lowest on a tie).
func (o *OpExpect) Straggler() int {
	best := 0
	for r, n := range o.LastArrivals {
		if n > o.LastArrivals[best] {
			best = r
		}
	}
	return best
}

// runKernel is one kernel of a step, in launch order.
type runKernel struct {
	f  *family
	ar bool // an all-reduce
}

func runStepKernels(layers int, prefill bool) []runKernel {
	attn, ar := &fAttnDec, &fCustomAR
	if prefill {
		attn, ar = &fAttnPre, &fNCCLAR
	}
	ks := []runKernel{{f: &fEmbed}}
	for range layers {
		ks = append(ks, runKernel{f: &fRMS}, runKernel{f: &fQKV}, runKernel{f: attn}, runKernel{f: &fOProj},
			runKernel{f: ar, ar: true}, runKernel{f: &fRMS}, runKernel{f: &fGateUp}, runKernel{f: &fDown},
			runKernel{f: ar, ar: true})
	}
	return append(ks, runKernel{f: &fFinalNorm}, runKernel{f: &fLMHead}, runKernel{f: &fArgmax})
}

// WriteRank writes rank's trace of the run to out and returns the run's
// expected figures. Every rank's call simulates all ranks (cheaply) so
// that the traces agree; memory stays proportional to one step.
func WriteRank(out io.Writer, cfg RunConfig, rank int) (*RunExpected, error) {
	n := cfg.ranks()
	if rank < 0 || rank >= n {
		return nil, fmt.Errorf("rank %d out of range (%d ranks)", rank, n)
	}
	if cfg.Steps < 0 || cfg.SlowdownPct < 0 || cfg.JitterNS < 0 || cfg.LatencyNS < 0 || cfg.LaunchNS < 0 {
		return nil, fmt.Errorf("negative steps, slowdown, jitter, latency or launch time")
	}
	if cfg.Straggler < 0 || cfg.Straggler >= n {
		return nil, fmt.Errorf("straggler %d out of range (%d ranks)", cfg.Straggler, n)
	}
	bus, hidden := cfg.bus(), cfg.hidden()
	if hidden*4*int64(n-1)%(int64(n)*bus) != 0 {
		return nil, fmt.Errorf("hidden %d × 4 × %d is not a multiple of %d ranks × %d GB/s: transfer times would not be whole ns",
			hidden, n-1, n, bus)
	}
	exp := &RunExpected{KindNS: map[string][]int64{"decode": make([]int64, n), "prefill": make([]int64, n)}}
	ops := map[string]*OpExpect{}
	opOf := func(kind string) *OpExpect {
		o := ops[kind]
		if o == nil {
			o = &OpExpect{Kind: kind, Op: "allreduce", KernelNS: make([]int64, n), WaitNS: make([]int64, n),
				LastArrivals: make([]int64, n), LeadNS: make([]int64, n), Sizes: map[SizeKey]*SizeExpect{}}
			if kind == "prefill" {
				o.Group = "0"
			}
			ops[kind] = o
		}
		return o
	}

	shared := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x51ed))
	jitter := make([]*rand.Rand, n)
	for r := range jitter {
		jitter[r] = rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(r)+1))
	}
	// The eager host's own draws, so that the kernels' draws are those of
	// the graph-replayed twin.
	host := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xea9e))
	eager := cfg.LaunchNS > 0
	w := &writer{w: bufio.NewWriterSize(out, 256<<10), first: true, pid: 4000 + int64(rank), device: int32(rank % 8)}
	dev := int64(w.device)
	tid := w.pid
	w.buf = fmt.Appendf(w.buf, `{
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": %d, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045706752, "computeMajor": 9, "computeMinor": 0, "numSms": 132}
  ],
  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d, "pg_count": 1},
  "traceEvents": [
  `, w.device, rank, n)

	groupRanks := make([]string, n)
	for r := range groupRanks {
		groupRanks[r] = strconv.Itoa(r)
	}
	pgRanks := "[" + strings.Join(groupRanks, ", ") + "]"
	collArgs := func(elems int64) func([]byte) []byte {
		return func(b []byte) []byte {
			b = fmt.Appendf(b, `, "Collective name": "allreduce", "In msg nelems": %d, "Out msg nelems": %d, "Group size": %d, "dtype": "BFloat16", "Process Group Name": "0", "Process Group Ranks": %q`,
				elems, elems, n, pgRanks)
			return b
		}
	}
	kernelArgs := func(stream, corr int64, extra func([]byte) []byte) func([]byte) []byte {
		return func(b []byte) []byte {
			b = fmt.Appendf(b, `, "device": %d, "stream": %d, "correlation": %d, "grid": [132, 1, 1], "block": [256, 1, 1]`, dev, stream, corr)
			if extra != nil {
				b = extra(b)
			}
			return b
		}
	}
	launchArgs := func(corr int64) func([]byte) []byte {
		return func(b []byte) []byte { return fmt.Appendf(b, `, "correlation": %d`, corr) }
	}

	const gap = 500 // ns between kernels on a stream
	free := make([]trace.Time, n)
	for r := range free {
		free[r] = base
	}
	cpu := base + 10_000
	var corr int64 = 100
	prefills := 0
	slow := func(r int, d int64) int64 {
		if r == cfg.Straggler {
			d = d * int64(100+cfg.SlowdownPct) / 100
		}
		if cfg.JitterNS > 0 {
			d += jitter[r].Int64N(cfg.JitterNS)
		}
		return d
	}
	arr := make([]trace.Time, n)
	first, last := make([]trace.Time, n), make([]trace.Time, n)
	for i := 0; i < cfg.Steps; i++ {
		for r := range first {
			first[r], last[r] = -1, 0
		}
		// seen records one activity of rank r on [s, s+d).
		seen := func(r int, s trace.Time, d int64) {
			if first[r] < 0 {
				first[r] = s
			}
			last[r] = max(last[r], s+trace.Time(d))
		}
		kind := cfg.Kind(i)
		prefill := kind == "prefill"
		var tokens int64
		var marker string
		if prefill {
			tokens = 128 * (1 + shared.Int64N(16))
			marker = fmt.Sprintf("execute_context_1(%d)_generation_0(0)", tokens)
		} else {
			tokens = 8 + shared.Int64N(56)
			marker = fmt.Sprintf("execute_context_0(0)_generation_%d(%d)", tokens, tokens)
		}
		bytes := tokens * hidden * 2
		busBytes := bytes * 2 * int64(n-1) / int64(n)
		transfer := cfg.LatencyNS + busBytes/bus
		argsOnOp := prefill && prefills%2 == 1
		if prefill {
			prefills++
		}
		op := opOf(kind)
		start := cpu
		t := cpu + 10_000
		graphCorr := int64(0)
		if !prefill && !eager {
			corr++
			graphCorr = corr
			w.event("cuda_runtime", "cudaGraphLaunch", w.pid, tid, t, 8_000, launchArgs(graphCorr))
			for r := range free {
				free[r] = max(free[r], t+10_000)
			}
			t += 9_000
		}
		for _, k := range runStepKernels(cfg.layers(), prefill) {
			c := graphCorr
			launch := t
			if prefill {
				corr++
				c = corr
				if k.ar && argsOnOp {
					// record_param_comms wraps the launch, as c10d does.
					w.event("cpu_op", "record_param_comms", w.pid, tid, t-200, 3_000, collArgs(bytes/2))
				}
				w.event("cuda_runtime", "cudaLaunchKernel", w.pid, tid, t, 2_000, launchArgs(c))
				t += 2_500
			} else if eager {
				// A host slower than the device: the call takes LaunchNS
				// and more, the kernel starts 1 µs after the call began at
				// the earliest.
				corr++
				c = corr
				ld := cfg.LaunchNS + host.Int64N(max(cfg.LaunchNS/4, 1))
				w.event("cuda_runtime", "cudaLaunchKernel", w.pid, tid, t, ld, launchArgs(c))
				t += trace.Time(ld)
			}
			stream := int64(computeStream)
			if prefill && k.ar {
				stream = commStream
			}
			d0 := k.f.lo + shared.Int64N(k.f.hi-k.f.lo)
			if !k.ar {
				for r := range free {
					s := free[r]
					if prefill || eager {
						s = max(s, launch+1_000)
					}
					d := slow(r, d0*(1+tokens/1024))
					seen(r, s, d)
					free[r] = s + trace.Time(d+gap)
					exp.KindNS[kind][r] += d
					if r == rank {
						w.event("kernel", k.f.name, dev, stream, s, d, kernelArgs(stream, c, nil))
						exp.Activities++
					}
				}
				continue
			}
			// The all-reduce: each rank arrives when its compute is done;
			// all end together at the last arrival plus the transfer.
			last := 0
			for r := range free {
				arr[r] = free[r]
				if prefill || eager {
					arr[r] = max(arr[r], launch+1_000)
				}
				if arr[r] > arr[last] {
					last = r
				}
			}
			end := arr[last] + trace.Time(transfer)
			op.Instances++
			op.TransferNS += transfer
			op.BusBytes += busBytes
			op.LastArrivals[last]++
			if n > 1 {
				second := trace.Time(math.MinInt64)
				for r := range arr {
					if r != last {
						second = max(second, arr[r])
					}
				}
				op.LeadNS[last] += int64(arr[last] - second)
			}
			src := "bytes_per_token"
			if prefill {
				src = "args"
				if argsOnOp {
					src = "cpu_op"
				}
			}
			se := op.Sizes[SizeKey{bytes, src}]
			if se == nil {
				se = &SizeExpect{}
				op.Sizes[SizeKey{bytes, src}] = se
			}
			se.Instances++
			se.TransferNS += transfer
			for r := range free {
				d := int64(end - arr[r])
				seen(r, arr[r], d)
				op.KernelNS[r] += d
				op.WaitNS[r] += d - transfer
				exp.KindNS[kind][r] += d
				free[r] = end + gap
				if r == rank {
					var extra func([]byte) []byte
					if prefill && !argsOnOp {
						extra = collArgs(bytes / 2)
					}
					w.event("kernel", k.f.name, dev, stream, arr[r], d, kernelArgs(stream, c, extra))
					exp.Activities++
				}
			}
		}
		spans := make([]int64, n)
		for r := range spans {
			spans[r] = int64(last[r] - first[r])
		}
		exp.SpanNS = append(exp.SpanNS, spans)
		endCPU := t + 20_000
		w.event("user_annotation", marker, w.pid, tid, start, int64(endCPU-start), nil)
		cpu = max(endCPU+20_000, slices.Max(free)-100_000)
		if w.err != nil {
			return nil, w.err
		}
	}
	if err := w.close("gen-run"); err != nil {
		return nil, err
	}
	exp.Bytes = w.n
	for _, kind := range []string{"decode", "prefill"} {
		if o := ops[kind]; o != nil {
			exp.Ops = append(exp.Ops, *o)
		}
	}
	return exp, nil
}
