package collectives

import (
	"math"
	"strconv"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

const (
	agName = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	arName = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	gemm   = "nvjet_tst_128x64_64x8_1x2_h_bz_coopA_TNT"
)

// match builds the table of inputs and matches its collectives.
func match(t *testing.T, inputs []window.Input, opt Options) *Table {
	t.Helper()
	tbl, err := window.Build(inputs, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Match(tbl, opt)
}

var (
	decode  = step.ClassOf(step.Decode)
	prefill = step.ClassOf(step.Prefill)
)

// rankTrace builds one rank's trace: named kernels, launches, markers and
// collective args, by hand.
type rankTrace struct {
	in *trace.Interner
	t  *trace.Trace
}

func newRank(rank, world int) *rankTrace {
	return &rankTrace{in: trace.NewInterner(), t: &trace.Trace{Meta: trace.Meta{Rank: rank, WorldSize: world},
		Procs: []trace.Proc{{PID: int64(100 + rank), Rank: -1}}}}
}

// k adds a kernel on stream 20 of proc 0, launched at start-5 on thread 1
// with correlation id corr.
func (r *rankTrace) k(name string, corr int64, start trace.Time, dur int64) {
	r.kOn(0, name, corr, 20, start, dur)
}

func (r *rankTrace) kOn(proc int32, name string, corr int64, stream int32, start trace.Time, dur int64) {
	r.t.Activities = append(r.t.Activities, trace.Activity{Start: start, Dur: dur, Corr: corr, Name: r.in.ID(name),
		Stream: stream, Proc: proc})
	r.t.Launches = append(r.t.Launches, trace.Launch{Start: start - 5, Dur: 1, Corr: corr, Thread: 1,
		Name: r.in.ID("cudaLaunchKernel"), Proc: proc})
}

func (r *rankTrace) marker(proc int32, name string, start, end trace.Time) {
	r.t.Ranges = append(r.t.Ranges, trace.Range{Start: start, Dur: int64(end - start), Thread: 1, Proc: proc,
		Name: r.in.ID(name), Device: -1, Stream: -1})
}

func (r *rankTrace) args(c trace.Collective, op, dtype, group, ranks string) {
	c.Op, c.DType, c.Group, c.GroupRanks = r.in.ID(op), r.in.ID(dtype), r.in.ID(group), r.in.ID(ranks)
	r.t.Collectives = append(r.t.Collectives, c)
}

func (r *rankTrace) input(t *testing.T, path string) window.Input {
	t.Helper()
	r.t.Names = r.in.Names()
	r.t.Sort()
	sortCollectives(r.t)
	if err := r.t.CheckValid(); err != nil {
		t.Fatal(err)
	}
	st, err := step.Find(r.t, step.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return window.Input{Path: path, Trace: r.t, Steps: st}
}

func sortCollectives(t *trace.Trace) {
	cs := t.Collectives
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && trace.CompareCollectives(&cs[j-1], &cs[j]) > 0; j-- {
			cs[j-1], cs[j] = cs[j], cs[j-1]
		}
	}
}

// relNear compares to 1e-9 relative.
func relNear(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func checkF(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil || !relNear(*got, want) {
		g := "nil"
		if got != nil {
			g = fmtF(*got)
		}
		t.Errorf("%s = %s, want %s", what, g, fmtF(want))
	}
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// TestCollectivesNoSteps: three ranks, no steps; three all-reduces each
// with durations chosen so that each rank arrives last once, rank 2 once
// more (a tie with rank 1 goes to rank 1), and an extra all-reduce on rank
// 1 that no other rank has.
func TestCollectivesNoSteps(t *testing.T) {
	durs := [][]int64{ // durs[rank][instance]
		{100, 300, 50},
		{100, 200, 80},
		{150, 250, 40},
	}
	var inputs []window.Input
	for rank, ds := range durs {
		r := newRank(rank, 3)
		r.k(gemm, 1, 1000, 700)
		for i, d := range ds {
			r.k(arName, int64(10+i), trace.Time(2000+1000*i), d)
		}
		if rank == 1 {
			r.k(arName, 99, 9000, 33)
		}
		inputs = append(inputs, r.input(t, "rank"+string(rune('0'+rank))))
	}
	ct := match(t, inputs, Options{})
	if len(ct.Ops) != 1 {
		t.Fatalf("%d ops, want 1: %+v", len(ct.Ops), ct.Ops)
	}
	op := ct.Ops[0]
	// Transfers: min of each column: 100, 200, 40.
	if op.Op != "allreduce" || op.Class != step.WholeTrace || op.Instances != 3 || op.UnmatchedInstances != 1 || op.UnmatchedNS != 33 ||
		op.TransferNS != 340 || op.GroupSize != 3 || op.UpperBound || op.Group != "" {
		t.Fatalf("op = %+v", op)
	}
	var kernel int64
	for _, ds := range durs {
		for _, d := range ds {
			kernel += d
		}
	}
	if op.KernelNS != kernel || op.WaitNS != kernel-3*340 {
		t.Errorf("kernel %d wait %d, want %d %d", op.KernelNS, op.WaitNS, kernel, kernel-3*340)
	}
	// Last arrivals: instance 0 ties ranks 0 and 1 at 100: rank 0;
	// instance 1: rank 1 (200); instance 2: rank 2 (40).
	wantLast := []int64{1, 1, 1}
	wantWait := []int64{0 + 100 + 10, 0 + 0 + 40, 50 + 50 + 0}
	for i, st := range op.Ranks {
		if st.Number == nil || *st.Number != i || st.Index != i || st.LastArrivals != wantLast[i] || st.WaitNS != wantWait[i] ||
			st.TransferNS != 340 || st.KernelNS != st.WaitNS+st.TransferNS {
			t.Errorf("rank %d: %+v, want last %d wait %d", i, st, wantLast[i], wantWait[i])
		}
	}
	// Three-way tie on last arrivals: the lowest rank.
	if op.Straggler == nil || *op.Straggler.Number != 0 || op.Straggler.LastArrivals != 1 || op.Straggler.Instances != 3 {
		t.Errorf("straggler = %+v", op.Straggler)
	}
	// Share of all kernel time (3 GEMMs of 700 and every all-reduce).
	if want := float64(kernel+33) / float64(kernel+33+3*700); !relNear(op.Share, want) || op.ClassNS != kernel+33+3*700 {
		t.Errorf("share = %v of %d, want %v", op.Share, op.ClassNS, want)
	}
	if len(op.Sizes) != 1 || op.Sizes[0].Bytes != -1 || op.Sizes[0].Source != sizeUnknown || op.Sizes[0].Instances != 3 ||
		op.Sizes[0].TransferNS != 340 || op.Sizes[0].AlgGBps != nil || op.AlgGBps != nil || op.SizedInstances != 0 {
		t.Errorf("sizes = %+v", op.Sizes)
	}
}

// TestCollectivesStepsAndSizes: two ranks with vLLM markers, a prefill
// step of 1000 tokens with args on its eager all-reduces (one on the
// kernel, one from a record_param_comms op), then two decode steps
// without args, sized by --bytes-per-token; rank 1 is slow, so rank 0
// waits for it.
func TestCollectivesStepsAndSizes(t *testing.T) {
	var inputs []window.Input
	for rank := range 2 {
		r := newRank(rank, 2)
		r.marker(0, "execute_context_1(1000)_generation_0(0)", 0, 1000)
		r.marker(0, "execute_context_0(0)_generation_8(8)", 1000, 2000)
		r.marker(0, "execute_context_0(0)_generation_8(8)", 2000, 3000)
		slow := int64(rank * 20) // rank 1 arrives 20 ns later, waits 0
		// Prefill: two all-reduces, 400 and 600 ns of transfer.
		r.k(arName, 1, 100, 400+20-slow)
		r.args(trace.Collective{Corr: 1, InElems: 4096, OutElems: 4096, GroupSize: 2, Proc: 0, Source: trace.CollectiveOnKernel},
			"allreduce", "BFloat16", "0", "[0, 1]")
		r.k(arName, 2, 600, 600+20-slow)
		r.args(trace.Collective{Start: 590, Dur: 10, Thread: 1, InElems: 8192, OutElems: 8192, GroupSize: 2, Proc: 0,
			Source: trace.CollectiveOnCPUOp}, "allreduce", "Float", "0", "[0, 1]")
		// Decode: one all-reduce each, 100 ns transfer, no args.
		r.k(arName, 3, 1100, 100+20-slow)
		r.k(arName, 4, 2100, 100+20-slow)
		r.k(gemm, 5, 1300, 500)
		inputs = append(inputs, r.input(t, "r"+string(rune('0'+rank))))
	}
	link, err := ParseLink("PCIe5")
	if err != nil {
		t.Fatal(err)
	}
	ct := match(t, inputs, Options{BytesPerToken: 16, Link: &link})
	if len(ct.Ops) != 2 {
		t.Fatalf("%d ops: %+v", len(ct.Ops), ct.Ops)
	}
	dec, pre := ct.Ops[0], ct.Ops[1]
	if dec.Class != decode || pre.Class != prefill {
		t.Fatalf("kinds %s %s", dec.Class, pre.Class)
	}
	// Prefill: group "0"; sizes 4096×2 (args) and 8192×4 (cpu_op).
	if pre.Group != "0" || pre.GroupRanks != "[0, 1]" || pre.GroupSize != 2 || pre.Instances != 2 || pre.TransferNS != 1000 ||
		pre.WaitNS != 40 || pre.KernelNS != 2040 {
		t.Fatalf("prefill = %+v", pre)
	}
	if len(pre.Sizes) != 2 || pre.Sizes[0].Bytes != 8192 || pre.Sizes[0].Source != sizeArgs || pre.Sizes[0].TransferNS != 400 ||
		pre.Sizes[1].Bytes != 32768 || pre.Sizes[1].Source != sizeCPUOp || pre.Sizes[1].TransferNS != 600 {
		t.Fatalf("prefill sizes = %+v", pre.Sizes)
	}
	checkF(t, "prefill row 0 algbw", pre.Sizes[0].AlgGBps, 8192.0/400)
	checkF(t, "prefill row 0 busbw", pre.Sizes[0].BusGBps, 8192.0/400) // 2(n-1)/n = 1 for n = 2
	checkF(t, "prefill row 1 link share", pre.Sizes[1].LinkShare, 32768.0/600/63)
	checkF(t, "prefill busbw", pre.BusGBps, (8192.0+32768)/1000)
	if pre.Straggler == nil || *pre.Straggler.Number != 1 || pre.Straggler.LastArrivals != 2 {
		t.Errorf("prefill straggler = %+v", pre.Straggler)
	}
	// Decode: no args; 8 tokens × 16 bytes; n = 2 ranks.
	if dec.Group != "" || dec.GroupSize != 2 || dec.Instances != 2 || dec.TransferNS != 200 || dec.WaitNS != 40 ||
		len(dec.Sizes) != 1 || dec.Sizes[0].Bytes != 128 || dec.Sizes[0].Source != sizeBytesPerToken {
		t.Fatalf("decode = %+v", dec)
	}
	checkF(t, "decode busbw", dec.BusGBps, 256.0/200)
	// Decode kernel time: 2 × (120 + 100) all-reduce, 2 × 500 GEMM.
	if dec.ClassNS != 440+1000 || !relNear(dec.Share, 440.0/1440) {
		t.Errorf("decode share %v of %d", dec.Share, dec.ClassNS)
	}
	if s := ct.Straggler("", decode, "allreduce"); s == nil || *s.Number != 1 || s.LastArrivals != 2 || s.Instances != 2 {
		t.Errorf("Straggler(decode) = %+v", s)
	}
	if s := ct.Straggler("", decode, "allgather"); s != nil {
		t.Errorf("Straggler(allgather) = %+v, want nil", s)
	}

	// --kind keeps one kind; without --bytes-per-token decode sizes are
	// unknown.
	ct = match(t, inputs, Options{Filter: step.Only(decode)})
	if len(ct.Ops) != 1 || ct.Ops[0].Class != decode || ct.Ops[0].Sizes[0].Bytes != -1 || ct.Ops[0].BusGBps != nil {
		t.Fatalf("--kind decode: %+v", ct.Ops)
	}
}

// TestCollectivesProcesses: one nsys-like trace whose two processes are
// the ranks, with different stream ids, a second op and a communicator
// told apart by its process group.
func TestCollectivesProcesses(t *testing.T) {
	r := newRank(-1, -1)
	r.t.Procs = []trace.Proc{{PID: 7, Rank: -1}, {PID: 8, Rank: -1}}
	// Proc 0 uses stream 20, proc 1 stream 30 (order of first use decides).
	r.kOn(0, arName, 1, 20, 100, 50)
	r.kOn(1, arName, 1, 30, 100, 80)
	r.kOn(0, agName, 2, 20, 300, 90)
	r.kOn(1, agName, 2, 30, 300, 60)
	// A second all-reduce on each, of another process group: separate.
	r.kOn(0, arName, 3, 20, 500, 10)
	r.kOn(1, arName, 3, 30, 500, 12)
	for p := range int32(2) {
		r.args(trace.Collective{Corr: 3, Proc: p, InElems: 10, OutElems: 10, GroupSize: 2, Source: trace.CollectiveOnKernel},
			"allreduce", "Float", "5", "[0, 1]")
	}
	ct := match(t, []window.Input{r.input(t, "x.sqlite")}, Options{})
	if len(ct.Runs) != 1 || len(ct.Runs[0].Ranks) != 2 || ct.Runs[0].Ranks[1].PID != 8 {
		t.Fatalf("runs = %+v", ct.Runs)
	}
	if len(ct.Ops) != 3 {
		t.Fatalf("%d ops: %+v", len(ct.Ops), ct.Ops)
	}
	ag, ar, ar5 := ct.Ops[0], ct.Ops[1], ct.Ops[2]
	if ag.Op != "allgather" || ag.TransferNS != 60 || ag.Straggler == nil || ag.Straggler.PID != 8 ||
		ar.Op != "allreduce" || ar.Group != "" || ar.TransferNS != 50 || ar.Straggler.PID != 7 ||
		ar5.Group != "5" || ar5.Instances != 1 || ar5.TransferNS != 10 || ar5.Sizes[0].Bytes != 40 {
		t.Fatalf("ops = %+v", ct.Ops)
	}
	if ar.UnmatchedInstances != 0 || ag.Ranks[0].Number != nil {
		t.Errorf("ar %+v ag ranks %+v", ar, ag.Ranks)
	}
}

// TestCollectivesOneRank: a single rank gives upper bounds, the args'
// group size and no straggler; an instance missing on one rank of two is
// unmatched on both sides' counts.
func TestCollectivesOneRank(t *testing.T) {
	r := newRank(0, 8)
	r.k(agName, 1, 100, 1000)
	r.args(trace.Collective{Corr: 1, InElems: 25136, OutElems: 201088, GroupSize: 8, Source: trace.CollectiveOnKernel},
		"_allgather_base", "BFloat16", "3", "[0, 1, 2, 3, 4, 5, 6, 7]")
	r.k(arName, 2, 2000, 500) // no args: n from the world size
	ct := match(t, []window.Input{r.input(t, "one")}, Options{})
	if len(ct.Ops) != 2 {
		t.Fatalf("ops = %+v", ct.Ops)
	}
	ag, ar := ct.Ops[0], ct.Ops[1]
	if !ag.UpperBound || ag.Straggler != nil || ag.GroupSize != 8 || ag.WaitNS != 0 || ag.Sizes[0].Bytes != 402176 ||
		ag.Sizes[0].Source != sizeArgs {
		t.Fatalf("allgather = %+v", ag)
	}
	checkF(t, "allgather busbw", ag.BusGBps, 402176.0/1000*7/8)
	if ar.GroupSize != 8 || ar.Group != "" || ar.Sizes[0].Bytes != -1 {
		t.Errorf("allreduce = %+v", ar)
	}
}

func TestBusFactor(t *testing.T) {
	for _, tc := range []struct {
		op   string
		n    int
		want float64
		ok   bool
	}{
		{"allreduce", 8, 1.75, true}, {"allreduce", 2, 1, true}, {"allreduce", 1, 0, false}, {"allgather", 1, 0, false},
		{"allgather", 8, 0.875, true}, {"reduce_scatter", 4, 0.75, true}, {"all_to_all", 2, 0.5, true},
		{"broadcast", 0, 1, true}, {"send_recv", 8, 1, true}, {"reduce", 3, 1, true},
		{"allreduce", 0, 0, false}, {"other", 8, 0, false},
	} {
		f, ok := busFactor(tc.op, tc.n)
		if f != tc.want || ok != tc.ok {
			t.Errorf("busFactor(%s, %d) = %v, %v; want %v, %v", tc.op, tc.n, f, ok, tc.want, tc.ok)
		}
	}
}

func TestParseLink(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name string
		gbps float64
		ok   bool
	}{
		{"pcie4", "pcie4", 31.5, true}, {"PCIe5", "pcie5", 63, true}, {"pcie6", "pcie6", 128, true},
		{"nvlink3", "nvlink3", 300, true}, {"nvlink4", "nvlink4", 450, true}, {"NVLink5", "nvlink5", 900, true},
		{"40", "", 40, true}, {"12.5GB/s", "", 12.5, true}, {"0", "", 0, false}, {"-3", "", 0, false},
		{"inf", "", 0, false}, {"NaN", "", 0, false}, {"pcie7", "", 0, false}, {"", "", 0, false},
	} {
		l, err := ParseLink(tc.in)
		if (err == nil) != tc.ok || l.Name != tc.name || l.GBps != tc.gbps {
			t.Errorf("ParseLink(%q) = %+v, %v", tc.in, l, err)
		}
	}
}

// TestCrossRankStraggler: the breakdown's cross-rank rows of a collective
// name the straggler from Collectives (the rank with the shortest
// all-reduce, not the one with the most time); other rows have none.
func TestCrossRankStraggler(t *testing.T) {
	var inputs []window.Input
	for rank := range 3 {
		r := newRank(rank, 3)
		r.k(gemm, 1, 100, int64(100+rank*50))
		d := int64(300)
		if rank == 2 {
			d = 100 // arrives last: its all-reduce is the shortest
		}
		r.k(arName, 2, 1000, d)
		inputs = append(inputs, r.input(t, "r"+string(rune('0'+rank))))
	}
	tbl, err := window.Build(inputs, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := analyze.Breakdown(tbl, analyze.Options{})
	ct := Match(tbl, Options{NoSizes: true})
	if !g.HasCommunication() {
		t.Fatal("no communication row")
	}
	seen := 0
	for _, row := range g.CrossRank {
		s := ct.Straggler(row.Run, row.Class, row.Category.Sub)
		switch {
		case !row.Total && row.Category.String() == "communication/allreduce":
			seen++
			if s == nil || *s.Number != 2 || s.LastArrivals != 1 || *row.MaxRank.Number != 0 {
				t.Errorf("allreduce row: straggler %+v, max rank %v", s, *row.MaxRank.Number)
			}
		case s != nil:
			t.Errorf("row %s has a straggler", row.Category)
		}
	}
	if seen != 1 {
		t.Fatalf("%d allreduce rows", seen)
	}
}

func TestPickStraggler(t *testing.T) {
	stats := func(last ...int64) []RankStat {
		out := make([]RankStat, len(last))
		for i, n := range last {
			out[i].Index, out[i].LastArrivals = i, n
		}
		return out
	}
	for _, tc := range []struct {
		last      []int64
		instances int64
		index     int
		distinct  bool
	}{
		{[]int64{0, 0, 0, 0, 0, 126, 0, 0}, 126, 5, true},
		{[]int64{1, 1, 1, 1, 1, 1, 2, 0}, 8, 6, true},  // 2 of 8 ≥ 1.5/8, and more than any other
		{[]int64{1, 1, 1, 1, 1, 1, 1, 1}, 8, 0, false}, // a tie: the lowest rank, not distinct
		{[]int64{3, 5, 0, 0, 0, 0, 0, 0}, 8, 1, true},  // 5 of 8 ≥ 1.5/8
		{[]int64{40, 36, 24}, 100, 0, false},           // 40 % < 1.5/3
		{[]int64{51, 49}, 100, 0, false},               // 51 % < 75 %
		{[]int64{80, 20}, 100, 0, true},
		{[]int64{0, 3, 3}, 6, 1, false},
	} {
		s := pickStraggler(stats(tc.last...), tc.instances)
		if s.Index != tc.index || s.LastArrivals != tc.last[tc.index] || s.Distinct != tc.distinct || s.Instances != tc.instances {
			t.Errorf("%v: %+v, want index %d distinct %v", tc.last, s, tc.index, tc.distinct)
		}
	}
	if pickStraggler(stats(5), 5) != nil || pickStraggler(stats(0, 0), 0) != nil {
		t.Error("one rank or no instance: a straggler")
	}
}

// TestInstanceSize: the majority of the ranks' args sizes, the lowest
// rank's on a tie, the kernel's own args before the launching op's; the
// tokens only without args sizes; args without a size are unusable.
func TestInstanceSize(t *testing.T) {
	a := &runAnalysis{}
	none := func(int) int64 { return -1 }
	rs := func(b int64, src SizeSource) rankSize {
		return rankSize{bytes: b, source: src, groupSize: -1, args: true}
	}
	for _, tc := range []struct {
		name     string
		ranks    []rankSize
		tokens   func(int) int64
		want     sizeKey
		conflict bool
		unusable bool
	}{
		{"agree", []rankSize{rs(8, sizeCPUOp), rs(8, sizeArgs)}, none, sizeKey{8, sizeArgs}, false, false},
		{"majority", []rankSize{rs(16, sizeArgs), rs(8, sizeArgs), rs(8, sizeArgs)}, none, sizeKey{8, sizeArgs}, true, false},
		{"tie: lowest rank", []rankSize{rs(16, sizeArgs), rs(8, sizeArgs)}, none, sizeKey{16, sizeArgs}, true, false},
		{"unusable args, one usable", []rankSize{rs(-1, sizeArgs), rs(8, sizeArgs)}, none, sizeKey{8, sizeArgs}, false, false},
		{"tokens", []rankSize{{bytes: -1, groupSize: -1}, {bytes: -1, groupSize: -1}}, func(i int) int64 { return 64 }, sizeKey{64, sizeBytesPerToken}, false, false},
		{"unusable", []rankSize{rs(-1, sizeArgs), rs(-1, sizeCPUOp)}, none, sizeKey{-1, sizeUnknown}, false, true},
		{"nothing", []rankSize{{bytes: -1, groupSize: -1}}, none, sizeKey{-1, sizeUnknown}, false, false},
	} {
		got, conflict, unusable := a.instanceSize(tc.ranks, tc.tokens)
		if got != tc.want || conflict != tc.conflict || unusable != tc.unusable {
			t.Errorf("%s: %+v %v %v, want %+v %v %v", tc.name, got, conflict, unusable, tc.want, tc.conflict, tc.unusable)
		}
	}
}
