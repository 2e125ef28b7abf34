package collectives_test

import (
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/interconnect"
	"github.com/traceq/traceq/internal/testenv"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

func loadInput(t *testing.T, path string) window.Input {
	t.Helper()
	tr, err := parse.File(path, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := step.Find(tr, step.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return window.Input{Path: path, Trace: tr, Steps: st}
}

// match builds the table of inputs and matches its collectives.
func match(t *testing.T, opt collectives.Options, inputs ...window.Input) *collectives.Table {
	t.Helper()
	tbl, err := window.Build(inputs, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return collectives.Match(tbl, opt)
}

func relEqual(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// argsOracle joins each NCCL kernel of t to the args on it by a linear
// scan, and sums kernel time per (op, bytes) with Kineto's element sizes.
func argsOracle(t *trace.Trace) map[string]map[int64][2]int64 {
	elem := map[string]int64{"Float": 4, "Long": 8, "BFloat16": 2}
	out := map[string]map[int64][2]int64{}
	for _, a := range t.Activities {
		name := t.Names[a.Name]
		if !strings.HasPrefix(name, "nccl") {
			continue
		}
		for _, c := range t.Collectives {
			if c.Source == trace.CollectiveOnKernel && c.Proc == a.Proc && c.Corr == a.Corr {
				op := t.Names[c.Op]
				if out[op] == nil {
					out[op] = map[int64][2]int64{}
				}
				b := max(c.InElems, c.OutElems) * elem[t.Names[c.DType]]
				v := out[op][b]
				out[op][b] = [2]int64{v[0] + 1, v[1] + a.Dur}
			}
		}
	}
	return out
}

// TestCollectivesHTAArgs: HTA's nccl_parser_config rank 0 of 2: 15
// all-reduces and 6 broadcasts with args on the kernels and on their
// record_param_comms ops. One rank: upper bounds; sizes from the args,
// and the same sizes from the CPU ops alone.
func TestCollectivesHTAArgs(t *testing.T) {
	in := loadInput(t, testenv.Shared(t, "traces", "torch", "hta", "nccl_parser_config", "nccl_data.json.gz"))
	want := argsOracle(in.Trace)
	if len(want["allreduce"]) != 5 || len(want["broadcast"]) != 2 {
		t.Fatalf("oracle: %v", want)
	}
	check := func(ct *collectives.Table, src string) {
		t.Helper()
		if len(ct.Ops) != 2 {
			t.Fatalf("%d ops: %+v", len(ct.Ops), ct.Ops)
		}
		for _, o := range ct.Ops {
			w := want[o.Op]
			var n, ns int64
			for _, v := range w {
				n += v[0]
				ns += v[1]
			}
			if o.Group != "0" || o.GroupRanks != "[0, 1]" || o.GroupSize != 2 || !o.UpperBound || o.Straggler != nil ||
				o.Instances != n || o.TransferNS != ns || o.KernelNS != ns || o.WaitNS != 0 || len(o.Sizes) != len(w) {
				t.Fatalf("%s (%s): %+v", o.Op, src, o)
			}
			for _, s := range o.Sizes {
				v := w[s.Bytes]
				alg := float64(s.Bytes) * float64(v[0]) / float64(v[1])
				if s.Source.String() != src || s.Instances != v[0] || s.TransferNS != v[1] || !relEqual(*s.AlgGBps, alg) ||
					!relEqual(*s.BusGBps, alg) { // 2(n−1)/n and broadcast's 1 are both 1 for n = 2
					t.Errorf("%s size %d (%s): %+v, want %v", o.Op, s.Bytes, src, s, v)
				}
			}
		}
		if ct.Ops[0].Op != "allreduce" || ct.Ops[0].Instances != 15 || ct.Ops[1].Op != "broadcast" || ct.Ops[1].Instances != 6 {
			t.Errorf("ops %s×%d, %s×%d", ct.Ops[0].Op, ct.Ops[0].Instances, ct.Ops[1].Op, ct.Ops[1].Instances)
		}
	}
	check(match(t, collectives.Options{}, in), "args")

	// Without the kernels' args, each kernel is sized by the
	// record_param_comms op its launch call started in.
	var ops []trace.Collective
	for _, c := range in.Trace.Collectives {
		if c.Source == trace.CollectiveOnCPUOp {
			ops = append(ops, c)
		}
	}
	in.Trace.Collectives = ops
	check(match(t, collectives.Options{}, in), "cpu_op")
}

// TestCollectivesTraceLensB200: rank 0 of an 8-rank vLLM run: one NCCL
// AllGather of 25,136 → 201,088 bf16 elements over 8 ranks with args,
// and 73 symmetric-memory all-reduces without, sized by --bytes-per-token
// from the step's 888 tokens.
func TestCollectivesTraceLensB200(t *testing.T) {
	in := loadInput(t, testenv.Shared(t, "traces", "torch", "tracelens", "b200", "eager_trace.json.gz"))
	if len(in.Steps.List) != 1 || in.Steps.List[0].Tokens != 888 {
		t.Fatalf("steps %+v", in.Steps.List)
	}
	var agNS, arNS int64
	var ar int
	for _, a := range in.Trace.Activities {
		switch name := in.Trace.Names[a.Name]; {
		case strings.HasPrefix(name, "ncclDevKernel_AllGather"):
			agNS += a.Dur
		case strings.Contains(name, "multimem_all_reduce_kernel"):
			arNS += a.Dur
			ar++
		}
	}
	link := collectives.Link{Link: interconnect.Link{Name: "nvlink5", GBps: 900}}
	ct := match(t, collectives.Options{BytesPerToken: 14336, Link: &link}, in)
	if len(ct.Ops) != 2 {
		t.Fatalf("ops %+v", ct.Ops)
	}
	arOp, agOp := ct.Ops[0], ct.Ops[1]
	// The symmetric-memory kernels carry no args: pg_config names their
	// group, the first NCCL group of the rank's consecutive ranks 0-7
	// (default_pg; pg_config lists three more with the same ranks).
	if arOp.Op != "allreduce" || arOp.Instances != int64(ar) || ar != 73 || arOp.TransferNS != arNS || arOp.GroupSize != 8 ||
		arOp.Group != "0" || arOp.GroupRanks != "[0, 1, 2, 3, 4, 5, 6, 7]" || !slices.Equal(arOp.Rules, []collectives.CommRule{collectives.RulePGConfig}) ||
		len(arOp.Sizes) != 1 || arOp.Sizes[0].Bytes != 888*14336 || arOp.Sizes[0].Source.String() != "bytes_per_token" {
		t.Fatalf("allreduce %+v", arOp)
	}
	if bus := float64(888*14336*73) / float64(arNS) * 2 * 7 / 8; !relEqual(*arOp.BusGBps, bus) || !relEqual(*arOp.LinkShare, bus/900) {
		t.Errorf("allreduce busbw %v, want %v", *arOp.BusGBps, bus)
	}
	if agOp.Op != "allgather" || agOp.Instances != 1 || agOp.TransferNS != agNS || agOp.GroupSize != 8 || agOp.Group != "3" ||
		!slices.Equal(agOp.Rules, []collectives.CommRule{collectives.RuleArgs}) ||
		agOp.Sizes[0].Bytes != 201088*2 || agOp.Sizes[0].Source.String() != "args" || !agOp.UpperBound {
		t.Fatalf("allgather %+v", agOp)
	}
	if bus := float64(201088*2) / float64(agNS) * 7 / 8; !relEqual(*agOp.BusGBps, bus) {
		t.Errorf("allgather busbw %v, want %v", *agOp.BusGBps, bus)
	}
}

// TestCollectivesNsysProcesses: the two processes of an nsys export are
// the ranks. Oracle: each process's SendRecv kernels in start order,
// paired k-th with k-th; transfer the shorter, last arrival the shorter
// one's process (the lower on a tie).
func TestCollectivesNsysProcesses(t *testing.T) {
	for _, name := range []string{"nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite", "nsys2026.2.1_torchrun-2gpu-nccl-before.sqlite"} {
		t.Run(name, func(t *testing.T) {
			in := loadInput(t, testenv.Shared(t, "traces", "nsys", name))
			durs := map[int32][]int64{}
			for _, a := range in.Trace.Activities {
				if strings.HasPrefix(in.Trace.Names[a.Name], "ncclDevKernel_SendRecv") {
					durs[a.Proc] = append(durs[a.Proc], a.Dur)
				}
			}
			procs := slices.Sorted(func(yield func(int32) bool) {
				for p := range durs {
					if !yield(p) {
						return
					}
				}
			})
			if len(procs) != 2 || len(durs[procs[0]]) != len(durs[procs[1]]) {
				t.Fatalf("oracle: %d procs", len(procs))
			}
			a, b := durs[procs[0]], durs[procs[1]]
			var transfer, kernelA, kernelB int64
			last := [2]int64{}
			for k := range a {
				transfer += min(a[k], b[k])
				kernelA += a[k]
				kernelB += b[k]
				if b[k] < a[k] {
					last[1]++
				} else {
					last[0]++
				}
			}
			ct := match(t, collectives.Options{}, in)
			if len(ct.Ops) != 1 || len(ct.Runs[0].Ranks) != 2 {
				t.Fatalf("ops %+v runs %+v", ct.Ops, ct.Runs)
			}
			o := ct.Ops[0]
			if o.Op != "send_recv" || o.Class != step.WholeTrace || o.Instances != int64(len(a)) || o.UnmatchedInstances != 0 ||
				o.TransferNS != transfer || o.UpperBound || o.GroupSize != 2 ||
				o.Ranks[0].Proc != procs[0] || o.Ranks[0].KernelNS != kernelA || o.Ranks[1].KernelNS != kernelB ||
				o.Ranks[0].LastArrivals != last[0] || o.Ranks[1].LastArrivals != last[1] {
				t.Fatalf("%+v; want transfer %d kernels %d %d last %v", o, transfer, kernelA, kernelB, last)
			}
			s := 0
			if last[1] > last[0] {
				s = 1
			}
			if o.Straggler == nil || o.Straggler.Proc != procs[s] || o.Sizes[0].Bytes != -1 || o.BusGBps != nil {
				t.Errorf("straggler %+v, sizes %+v", o.Straggler, o.Sizes)
			}
		})
	}
}

// TestCollectivesDLRM8: the 8 rank files of a training step: every
// collective of every rank matched, one step (ProfilerStep#10) on each;
// per instance the transfer is the shortest of the 8 kernels. The
// SendRecv kernels are the embeddings' all-to-all (launched inside
// nccl:all_to_all ranges); their sizes come from the tensor of the
// record_param_comms op that launched them (this PyTorch writes no
// collective args), read here from the JSON.
func TestCollectivesDLRM8(t *testing.T) {
	var inputs []window.Input
	per := map[string][][]int64{} // op → rank → durations in order
	for r := range 8 {
		in := loadInput(t, testenv.Testdata(t, "traces", "torch", "dlrm8", "rank"+string(rune('0'+r))+".json.gz"))
		inputs = append(inputs, in)
		for _, op := range []string{"AllReduce", "SendRecv"} {
			var ds []int64
			for _, a := range in.Trace.Activities {
				if strings.HasPrefix(in.Trace.Names[a.Name], "ncclKernel_"+op) {
					ds = append(ds, a.Dur)
				}
			}
			per[op] = append(per[op], ds)
		}
	}
	ct := match(t, collectives.Options{}, inputs...)
	if len(ct.Ops) != 2 {
		t.Fatalf("ops %+v", ct.Ops)
	}
	for _, o := range ct.Ops {
		ds := per[map[string]string{"allreduce": "AllReduce", "all_to_all": "SendRecv"}[o.Op]]
		var transfer int64
		for k := range ds[0] {
			m := ds[0][k]
			for r := range ds {
				m = min(m, ds[r][k])
			}
			transfer += m
		}
		if len(ds) != 8 || o.Class != step.ClassOf(step.Generic) || o.Instances != int64(len(ds[0])) || o.UnmatchedInstances != 0 ||
			o.TransferNS != transfer || !slices.Equal(o.Rules, []collectives.CommRule{collectives.RuleOne}) {
			t.Errorf("%s: %+v, want transfer %d", o.Op, o, transfer)
		}
	}
	a2a := ct.Ops[0]
	s := a2a.Straggler
	if a2a.Op != "all_to_all" || s == nil || *s.Number != 7 || s.LastArrivals != 4 {
		t.Fatalf("all_to_all straggler %+v", s)
	}
	// Sizes: the oracle's bytes of each instance, the transfer summed per
	// size.
	want := map[int64][2]int64{}
	sizes := dlrmSendSizes(t, testenv.Testdata(t, "traces", "torch", "dlrm8", "rank0.json.gz"))
	if len(sizes) != len(per["SendRecv"][0]) {
		t.Fatalf("oracle: %d sizes for %d kernels", len(sizes), len(per["SendRecv"][0]))
	}
	for k, b := range sizes {
		m := per["SendRecv"][0][k]
		for r := range per["SendRecv"] {
			m = min(m, per["SendRecv"][r][k])
		}
		v := want[b]
		want[b] = [2]int64{v[0] + 1, v[1] + m}
	}
	if len(a2a.Sizes) != len(want) {
		t.Fatalf("sizes %+v, want %v", a2a.Sizes, want)
	}
	for _, row := range a2a.Sizes {
		w := want[row.Bytes]
		if row.Source.String() != "cpu_op_shape" || row.Instances != w[0] || row.TransferNS != w[1] {
			t.Errorf("size %d: %+v, want %v", row.Bytes, row, w)
		}
	}
}

// dlrmSendSizes reads, with encoding/json, the bytes of each SendRecv
// kernel of a DLRM rank file: the first tensor of the innermost
// record_param_comms op on the thread of its launch call that holds the
// call's start, elements × the type's size.
func dlrmSendSizes(t *testing.T, path string) []int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Cat, Name string
			TID       any
			TS, Dur   float64
			Args      map[string]any
		} `json:"traceEvents"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	elem := map[string]int64{"float": 4, "long int": 8, "int": 4}
	var out []int64
	for _, k := range doc.TraceEvents {
		if k.Cat != "kernel" || !strings.HasPrefix(k.Name, "ncclKernel_SendRecv") {
			continue
		}
		corr := k.Args["correlation"]
		var lts float64
		var ltid any
		for _, l := range doc.TraceEvents {
			if l.Cat == "cuda_runtime" && l.Args["correlation"] == corr {
				lts, ltid = l.TS, l.TID
			}
		}
		best := -1
		for i, o := range doc.TraceEvents {
			if o.Cat == "cpu_op" && o.Name == "record_param_comms" && o.TID == ltid && o.TS <= lts && lts < o.TS+o.Dur &&
				(best < 0 || o.TS > doc.TraceEvents[best].TS) {
				best = i
			}
		}
		if best < 0 {
			t.Fatalf("kernel %v: no record_param_comms", corr)
		}
		a := doc.TraceEvents[best].Args
		dims := a["Input Dims"].([]any)[0].([]any)
		n := int64(1)
		for _, d := range dims {
			n *= int64(d.(float64))
		}
		out = append(out, n*elem[a["Input type"].([]any)[0].(string)])
	}
	return out
}
