package efficiency

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/testenv"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// This file checks the analysis of real traces against an independent
// reading of the same files: encoding/json, the definitions of
// docs/definitions.md written out again for the GEMMs, and nothing of the
// code under test.

type rawEvent struct {
	Ph   string          `json:"ph"`
	Cat  string          `json:"cat"`
	Name string          `json:"name"`
	PID  json.RawMessage `json:"pid"`
	TID  json.RawMessage `json:"tid"`
	TS   json.Number     `json:"ts"`
	Dur  json.Number     `json:"dur"`
	Args struct {
		Ext    *int64          `json:"External id"`
		Corr   *int64          `json:"correlation"`
		Dims   [][]int64       `json:"Input Dims"`
		Types  []string        `json:"Input type"`
		Kernel string          `json:"kernel"`
		Conc   json.RawMessage `json:"Concrete Inputs"`
	} `json:"args"`
}

func readRaw(t *testing.T, path string) []rawEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		TraceEvents []json.RawMessage `json:"traceEvents"`
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var out []rawEvent
	for _, raw := range doc.TraceEvents {
		var e rawEvent
		d := json.NewDecoder(strings.NewReader(string(raw)))
		d.UseNumber()
		if d.Decode(&e) == nil && e.Ph == "X" {
			out = append(out, e)
		}
	}
	return out
}

// ns reads a Kineto microsecond number as integer nanoseconds, digit by
// digit (a fourth decimal rounds half up).
func ns(n json.Number) int64 {
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	frac += "0000"
	v, _ := strconv.ParseInt(whole+frac[:3], 10, 64)
	if frac[3] >= '5' {
		v++
	}
	if neg {
		v = -v
	}
	return v
}

// gemmWork is FLOPs and bytes of a GEMM op as docs/definitions.md defines
// them, computed here from the recorded dims and types alone.
func gemmWork(name string, dims [][]int64, types []string) (flops, bytes int64, ok bool) {
	size := map[string]int64{"float": 4, "c10::BFloat16": 2, "c10::Half": 2, "double": 8}
	el := func(i int) int64 { return size[types[i]] }
	n := func(i int) int64 {
		p := int64(1)
		for _, d := range dims[i] {
			p *= d
		}
		return p
	}
	switch name {
	case "aten::mm":
		m, k, nn := dims[0][0], dims[0][1], dims[1][1]
		return 2 * m * nn * k, (m*k + k*nn + m*nn) * el(0), el(0) > 0
	case "aten::addmm":
		m, k, nn := dims[1][0], dims[1][1], dims[2][1]
		return 2 * m * nn * k, (m*k+k*nn+m*nn)*el(1) + n(0)*el(0), el(1) > 0
	case "aten::bmm":
		b, m, k, nn := dims[0][0], dims[0][1], dims[0][2], dims[1][2]
		return 2 * b * m * nn * k, b * (m*k + k*nn + m*nn) * el(0), el(0) > 0
	}
	return 0, 0, false
}

// gemmSums is the independent reading: per GEMM op name, the calls that
// launched kernels, their kernels' time, their FLOPs and bytes. A kernel
// belongs to the op whose External id it carries when that op contains
// its launch call on the call's thread, else to the innermost op there
// containing the call (definitions: an op's kernels).
type gemmSum struct{ calls, kernelNS, flops, bytes int64 }

func gemmSums(t *testing.T, evs []rawEvent) map[string]*gemmSum {
	type op struct {
		i          int
		start, end int64
		tid        string
	}
	var ops []op
	byExt := map[int64]int{}
	launchOf := map[int64]int{}
	for i, e := range evs {
		switch {
		case e.Cat == "cpu_op" || e.Cat == "Operator":
			o := op{i: i, start: ns(e.TS), end: ns(e.TS) + ns(e.Dur), tid: string(e.TID)}
			if e.Args.Ext != nil {
				byExt[*e.Args.Ext] = len(ops)
			}
			ops = append(ops, o)
		case (e.Cat == "cuda_runtime" || e.Cat == "cuda_driver" || e.Cat == "Runtime") && e.Args.Corr != nil:
			if _, ok := launchOf[*e.Args.Corr]; !ok {
				launchOf[*e.Args.Corr] = i
			}
		}
	}
	// Ops per thread by start, the longer first on a tie.
	byTID := map[string][]int{}
	for oi, o := range ops {
		byTID[o.tid] = append(byTID[o.tid], oi)
	}
	for _, idx := range byTID {
		sort.SliceStable(idx, func(a, b int) bool {
			oa, ob := ops[idx[a]], ops[idx[b]]
			return oa.start < ob.start || oa.start == ob.start && oa.end > ob.end
		})
	}
	contains := func(o op, tid string, ts int64) bool { return o.tid == tid && o.start <= ts && ts <= o.end }
	// innermost is the op on tid containing ts that starts last (the
	// shorter on a tie): walking back from the last op starting by ts.
	innermost := func(tid string, ts int64) int {
		idx := byTID[tid]
		j := sort.Search(len(idx), func(k int) bool { return ops[idx[k]].start > ts }) - 1
		for ; j >= 0; j-- {
			if o := ops[idx[j]]; o.end >= ts {
				// Later ops with the same start are shorter: take the last.
				for j+1 < len(idx) && ops[idx[j+1]].start == o.start && ops[idx[j+1]].end >= ts {
					j++
				}
				return idx[j]
			}
		}
		return -1
	}
	owner := func(k rawEvent) int {
		var l *rawEvent
		if k.Args.Corr != nil {
			if li, ok := launchOf[*k.Args.Corr]; ok {
				l = &evs[li]
			}
		}
		var tid string
		var ts int64
		if l != nil {
			tid, ts = string(l.TID), ns(l.TS)
		}
		if k.Args.Ext != nil {
			if oi, ok := byExt[*k.Args.Ext]; ok && (l == nil || contains(ops[oi], tid, ts)) {
				return oi
			}
		}
		if l == nil {
			return -1
		}
		if l.Args.Ext != nil {
			if oi, ok := byExt[*l.Args.Ext]; ok && contains(ops[oi], tid, ts) {
				return oi
			}
		}
		return innermost(tid, ts)
	}
	kernelNS := map[int]int64{}
	for _, e := range evs {
		if e.Cat == "kernel" || e.Cat == "Kernel" {
			if oi := owner(e); oi >= 0 {
				kernelNS[oi] += ns(e.Dur)
			}
		}
	}
	out := map[string]*gemmSum{}
	for oi, d := range kernelNS {
		e := evs[ops[oi].i]
		f, b, ok := gemmWork(e.Name, e.Args.Dims, e.Args.Types)
		if !ok {
			continue
		}
		s := out[e.Name]
		if s == nil {
			s = &gemmSum{}
			out[e.Name] = s
		}
		s.calls++
		s.kernelNS += d
		s.flops += f
		s.bytes += b
	}
	return out
}

func analyzeFile(t *testing.T, path string, opt Options) *Result {
	t.Helper()
	tr, err := parse.File(path, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.OpSigs) == 0 {
		t.Fatal("the Kineto parser filled no op attributes")
	}
	st, err := step.Find(tr, step.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Analyze(tableOf(t, window.Input{Path: path, Run: "r", Trace: tr, Steps: st}), opt)
}

// The GEMMs of real traces with shapes: the calls, kernel time, FLOPs and
// bytes per op name agree with the independent reading.
func TestRealGEMMs(t *testing.T) {
	for _, c := range []struct {
		path  []string
		gpu   string
		calls map[string]int64 // a figure the trace's own story fixes
	}{
		// vLLM on a B200: one eager prefill step, 108 aten::addmm with shapes.
		{[]string{"tracelens", "b200", "eager_trace.json.gz"}, "B200", map[string]int64{"aten::addmm": 108}},
		// SGLang Qwen3-8B prefill on an MI300X: 145 aten::mm.
		{[]string{"tracelens", "inference", "sglang_prefilldecode", "sglang_Qwen3-8B_prefilldecode.json.gz"}, "MI300X", map[string]int64{"aten::mm": 145}},
		// HTA's training traces: float GEMMs on an A100 and a V100, whose
		// kernels carry the correlation id as External id.
		{[]string{"hta", "trace_diff", "control", "control.json.gz"}, "A100 SXM 40GB", nil},
		{[]string{"hta", "trace_diff", "test", "test.json.gz"}, "V100 SXM2", nil},
		{[]string{"hta", "negative_queue_length_values_check", "rank0.json.gz"}, "A100 SXM 80GB", nil},
	} {
		path := testenv.Shared(t, append([]string{"traces", "torch"}, c.path...)...)
		t.Run(c.path[len(c.path)-1], func(t *testing.T) {
			res := analyzeFile(t, path, Options{}) // skips before the slow reading below
			want := gemmSums(t, readRaw(t, path))
			if len(res.Devices) == 0 || res.Devices[0].Spec == nil || res.Devices[0].Spec.Name != c.gpu {
				t.Fatalf("device %+v, want row %s", res.Devices, c.gpu)
			}
			got := map[string]*gemmSum{}
			for _, o := range res.Ops {
				if _, _, ok := gemmWork(o.Name, o.Dims, o.Types); !ok {
					continue
				}
				s := got[o.Name]
				if s == nil {
					s = &gemmSum{}
					got[o.Name] = s
				}
				if !o.Modelled {
					t.Errorf("%s %v not modelled: %s", o.Name, o.Dims, o.Note)
				}
				s.calls += o.Instances
				s.kernelNS += o.KernelNS
				s.flops += o.FLOPs
				s.bytes += o.Bytes
			}
			if len(want) == 0 {
				t.Fatal("no GEMM with kernels in the trace: the test checks nothing")
			}
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range want {
					if !yield(k) {
						return
					}
				}
			})
			for _, name := range names {
				w, g := want[name], got[name]
				if g == nil || *g != *w {
					t.Errorf("%s: %+v, want %+v", name, g, w)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d GEMM op names, want %d", len(got), len(want))
			}
			for name, n := range c.calls {
				if want[name] == nil || want[name].calls != n {
					t.Errorf("%s: %+v calls, the trace has %d", name, want[name], n)
				}
			}
		})
	}
}

// The vLLM ROCm decode step replayed from one HIP graph, priced through
// its capture trace. Read independently: the capture's launches between
// hipStreamBeginCapture and hipStreamEndCapture, each naming its kernel
// and its op, in order, are the replay's kernels in start order (the two
// sequences are equal here); the captured aten::addmm calls' FLOPs and
// bytes, and the time of the replayed kernels at their places.
func TestRealVLLMCapture(t *testing.T) {
	dir := testenv.Shared(t, "traces", "torch", "tracelens", "inference", "vllm_decode_full")
	execPath := dir + "/graph_execution.json.gz"
	capPath := dir + "/capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"

	cevs := readRaw(t, capPath)
	slices.SortStableFunc(cevs, func(a, b rawEvent) int { return int(ns(a.TS) - ns(b.TS)) })
	ops := map[int64]rawEvent{}
	for _, e := range cevs {
		if e.Cat == "cpu_op" && e.Args.Ext != nil {
			ops[*e.Args.Ext] = e
		}
	}
	var captured []rawEvent // the graph's launches, in order
	inside := false
	for _, e := range cevs {
		switch {
		case e.Name == "hipStreamBeginCapture":
			inside = true
		case e.Name == "hipStreamEndCapture":
			inside = false
		case inside && e.Args.Kernel != "":
			captured = append(captured, e)
		}
	}
	evs := readRaw(t, execPath)
	var graphCorr int64
	for _, e := range evs {
		if e.Name == "hipGraphLaunch" {
			graphCorr = *e.Args.Corr
		}
	}
	var replay []rawEvent
	for _, e := range evs {
		if e.Cat == "kernel" && e.Args.Corr != nil && *e.Args.Corr == graphCorr {
			replay = append(replay, e)
		}
	}
	slices.SortStableFunc(replay, func(a, b rawEvent) int { return int(ns(a.TS) - ns(b.TS)) })
	if len(captured) != 421 || len(replay) != 421 {
		t.Fatalf("%d captured launches, %d replayed kernels; the trace has 421 of each", len(captured), len(replay))
	}
	var want gemmSum
	for i, l := range captured {
		if replay[i].Name != l.Args.Kernel {
			t.Fatalf("kernel %d: replayed %.40s, captured %.40s: the sequences differ, the test's premise is wrong", i, replay[i].Name, l.Args.Kernel)
		}
		op, ok := ops[*l.Args.Ext]
		if !ok || op.Name != "aten::addmm" {
			continue
		}
		f, b, _ := gemmWork(op.Name, op.Args.Dims, op.Args.Types)
		want.calls++
		want.flops += f
		want.bytes += b
		want.kernelNS += ns(replay[i].Dur)
	}
	if want.calls != 72 {
		t.Fatalf("%d captured addmm calls, the trace has 72", want.calls)
	}

	tr, err := parse.File(execPath, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctr, err := parse.File(capPath, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ctr.OpSigs) == 0 {
		t.Fatal("the Kineto parser filled no op attributes")
	}
	st, err := step.Find(tr, step.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := Analyze(tableOf(t, window.Input{Path: execPath, Run: "r", Trace: tr, Steps: st}), Options{Captures: []Capture{{Path: capPath, Trace: ctr}}})
	if len(res.Graphs) != 1 || res.Graphs[0].Replays != 1 || res.Graphs[0].Kernels != 421 || res.Graphs[0].Matched != 421 {
		t.Errorf("graphs %+v: want 1 replay of 421 kernels, all matched", res.Graphs)
	}
	var got gemmSum
	for _, o := range res.Ops {
		if o.Name == "aten::addmm" {
			got.calls += o.Instances
			got.flops += o.FLOPs
			got.bytes += o.Bytes
			got.kernelNS += o.KernelNS
		}
	}
	if got != want {
		t.Errorf("addmm %+v, want %+v", got, want)
	}
	if res.Devices[0].Spec == nil || res.Devices[0].Spec.Name != "MI300X" {
		t.Errorf("device %+v: the nameless 304-CU, 192 GiB device is an MI300X", res.Devices[0])
	}
}
