package gen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/traceq/traceq/trace"
)

// IdleConfig describes a trace of WriteIdle: steps whose idle gaps have a
// known cause, for the idle-by-cause analysis (issue 15). Steps cycle
// through three kinds, each a cause:
//
//   - prefill steps are host-bound: eager launches, each issued only after
//     the previous kernel ended (the device ran dry first), so every gap
//     inside the step is launch-bound;
//   - decode steps replay a CUDA graph: one cudaGraphLaunch, its kernels
//     sharing its correlation id, with short gaps between them: all
//     device-side;
//   - mixed steps are queued: every call issued well ahead of the device,
//     the kernels waiting on the device between them (device-side gaps);
//     an all-reduce on a second stream, partly hidden under the next
//     kernel; the last kernel written without a correlation id (its gap
//     is unknown, its call launched nothing recorded).
//
// Between steps the host schedules the next one after the device has
// finished: that gap is between steps, and launch-bound in a whole-trace
// reading.
type IdleConfig struct {
	Steps int
	// Kernels is the number of compute kernels per step (0 means 8; at
	// least 4).
	Kernels int
	Seed    int64
}

// IdleExpected is what the analysis of a WriteIdle trace must find.
type IdleExpected struct {
	Device int32
	PID    int64
	Steps  []IdleStep
	// Launches holds, per step kind and launch API, the calls that
	// launched recorded work.
	Launches map[string]map[string]*LaunchExpect
	// EmptyCalls and EmptyCPUNS count the calls whose kernel was written
	// without a correlation id (all cudaLaunchKernel).
	EmptyCalls int64
	EmptyCPUNS int64
}

// IdleStep is one step's exact idle figures on the one device.
type IdleStep struct {
	Index int
	Kind  string
	// LaunchBoundNS, DeviceSideNS and UnknownNS split the step's idle time.
	LaunchBoundNS, DeviceSideNS, UnknownNS int64
	// GapBeforeNS is the time from the previous step's last end to this
	// step's first start; -1 for the first step.
	GapBeforeNS int64
	// CommBusyNS is the step's all-reduce time and CommExposedNS the part
	// of it no compute kernel overlaps.
	CommBusyNS, CommExposedNS int64
}

// LaunchExpect is the calls of one API in one step kind.
type LaunchExpect struct {
	Calls int64
	CPUNS int64
	// Latencies are, per call, its first kernel's start minus its start.
	Latencies []int64
}

// WriteIdle writes the trace IdleConfig describes and returns its figures.
func WriteIdle(out io.Writer, cfg IdleConfig) (*IdleExpected, error) {
	k := cfg.Kernels
	if k == 0 {
		k = 8
	}
	if k < 4 || cfg.Steps < 0 {
		return nil, fmt.Errorf("idle trace: %d steps of %d kernels", cfg.Steps, k)
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 15))
	w := &writer{w: bufio.NewWriterSize(out, 64<<10), first: true, pid: 4242, device: 0}
	exp := &IdleExpected{Device: 0, PID: w.pid, Launches: map[string]map[string]*LaunchExpect{}}
	w.buf = fmt.Appendf(w.buf, `{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045706752, "numSms": 132}],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
  "traceEvents": [
  `)
	const dev = 0
	tid := w.pid
	corr := int64(100)
	r := func(lo, n int64) int64 { return lo + rng.Int64N(n) }
	launch := func(api string, at trace.Time, dur, c int64) {
		w.event("cuda_runtime", api, w.pid, tid, at, dur, func(b []byte) []byte {
			b = append(b, `, "cbid": 211, "correlation": `...)
			return strconv.AppendInt(b, c, 10)
		})
	}
	var acts []interval
	kernel := func(name string, s trace.Time, d, c int64, stream int32) {
		w.event("kernel", name, dev, int64(stream), s, d, func(b []byte) []byte {
			b = append(b, `, "device": 0, "stream": `...)
			b = strconv.AppendInt(b, int64(stream), 10)
			if c != 0 {
				b = append(b, `, "correlation": `...)
				b = strconv.AppendInt(b, c, 10)
			}
			return b
		})
		acts = append(acts, interval{s, s + trace.Time(d), stream})
	}
	record := func(kind, api string, cpu, latency int64) {
		m := exp.Launches[kind]
		if m == nil {
			m = map[string]*LaunchExpect{}
			exp.Launches[kind] = m
		}
		l := m[api]
		if l == nil {
			l = &LaunchExpect{}
			m[api] = l
		}
		l.Calls++
		l.CPUNS += cpu
		l.Latencies = append(l.Latencies, latency)
	}
	var fams []*family // compute kernels only: the all-reduce is placed apart
	for _, f := range stepKernels(k/10+2, true) {
		if !f.comm && len(fams) < k {
			fams = append(fams, f)
		}
	}
	cpu := base
	prevEnd := trace.Time(-1)
	for i := range cfg.Steps {
		acts = acts[:0]
		kind := [...]string{"prefill", "decode", "mixed"}[i%3]
		marker := map[string]string{"prefill": "execute_context_1(512)_generation_0(0)",
			"decode": "execute_context_0(0)_generation_8(8)", "mixed": "execute_context_1(64)_generation_8(8)"}[kind]
		se := IdleStep{Index: i, Kind: kind, GapBeforeNS: -1}
		t := cpu + trace.Time(r(5_000, 5_000))
		var markerEnd trace.Time
		switch kind {
		case "prefill":
			var prev trace.Time
			for j, f := range fams {
				if j > 0 {
					// The call starts when the previous kernel has ended,
					// or later: the first time exactly then.
					t = prev
					if j > 1 {
						t += trace.Time(r(0, 4_000))
					}
				}
				corr++
				ld, lat, d := r(3_000, 3_000), r(4_000, 3_000), r(2_000, 8_000)
				launch("cudaLaunchKernel", t, ld, corr)
				s := t + trace.Time(lat)
				kernel(f.name, s, d, corr, computeStream)
				record(kind, "cudaLaunchKernel", ld, lat)
				if j > 0 {
					se.LaunchBoundNS += int64(s - prev)
				}
				prev = s + trace.Time(d)
				markerEnd = t + trace.Time(ld+r(1_000, 5_000))
			}
		case "decode":
			corr++
			gl := r(10_000, 5_000)
			launch("cudaGraphLaunch", t, gl, corr)
			s := t + trace.Time(gl+r(2_000, 3_000))
			record(kind, "cudaGraphLaunch", gl, int64(s-t))
			for j, f := range fams {
				d := r(2_000, 10_000)
				kernel(f.name, s, d, corr, computeStream)
				s += trace.Time(d)
				if j+1 < len(fams) {
					g := r(300, 1_200)
					se.DeviceSideNS += g
					s += trace.Time(g)
				}
			}
			markerEnd = t + trace.Time(gl+r(1_000, 3_000))
		case "mixed":
			// Every call first, well ahead of the device: kernels last at
			// least 20 µs, calls come every 3.5 to 5.5 µs.
			m, u := k/2-1, k-1 // the all-reduce follows kernel m; kernel u has no id
			calls := make([]trace.Time, k)
			lds, ids := make([]int64, k), make([]int64, k)
			var arCall trace.Time
			var arID, arLD int64
			for j := range k {
				corr++
				calls[j], lds[j], ids[j] = t, r(3_000, 2_000), corr
				launch("cudaLaunchKernel", t, lds[j], corr)
				t += trace.Time(lds[j] + 500)
				if j == m {
					corr++
					arID, arCall, arLD = corr, t, r(3_000, 2_000)
					launch("cudaLaunchKernel", t, arLD, corr)
					t += trace.Time(arLD + 500)
				}
			}
			markerEnd = t + trace.Time(r(1_000, 3_000))
			s := calls[0] + trace.Time(r(20_000, 5_000))
			var e trace.Time
			for j, f := range fams {
				switch {
				case j == m+1:
					// The all-reduce starts as kernel m ends; kernel m+1
					// starts x later and runs past the all-reduce's end:
					// x is exposed, the rest hidden, and no gap.
					ard := r(8_000, 8_000)
					x := r(300, ard-600)
					kernel(fNCCLAR.name, e, ard, arID, commStream)
					record(kind, "cudaLaunchKernel", arLD, int64(e-arCall))
					se.CommBusyNS += ard
					se.CommExposedNS += x
					s = e + trace.Time(x)
				case j > 0:
					wait := r(500, 2_500)
					if j == u {
						se.UnknownNS += wait
					} else {
						se.DeviceSideNS += wait
					}
					s = e + trace.Time(wait)
				}
				d := r(20_000, 30_000)
				c := ids[j]
				if j == u {
					c = 0
					exp.EmptyCalls++
					exp.EmptyCPUNS += lds[j]
				} else {
					record(kind, "cudaLaunchKernel", lds[j], int64(s-calls[j]))
				}
				kernel(f.name, s, d, c, computeStream)
				e = s + trace.Time(d)
			}
		}
		w.event("user_annotation", marker, w.pid, tid, cpu, int64(markerEnd-cpu), nil)
		first, last := acts[0].start, acts[0].end
		for _, a := range acts {
			first, last = min(first, a.start), max(last, a.end)
		}
		for _, stream := range []int32{computeStream, commStream} {
			lo, hi, ok := trace.Time(0), trace.Time(0), false
			for _, a := range acts {
				if a.stream == stream {
					if !ok || a.start < lo {
						lo = a.start
					}
					hi, ok = max(hi, a.end), true
				}
			}
			if ok {
				w.event("gpu_user_annotation", marker, dev, int64(stream), lo, int64(hi-lo), nil)
			}
		}
		if prevEnd >= 0 {
			se.GapBeforeNS = int64(first - prevEnd)
		}
		prevEnd = last
		exp.Steps = append(exp.Steps, se)
		cpu = max(markerEnd, last) + trace.Time(r(20_000, 30_000))
		if w.err != nil {
			return nil, w.err
		}
	}
	if err := w.close("gen idle"); err != nil {
		return nil, err
	}
	return exp, nil
}
