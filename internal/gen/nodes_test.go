package gen

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// nodeRun is the run: 2 hosts × 8 ranks, a straggler on each host
// (rank 5 at 30 %, rank 11 at 15 %), host 1's clock 7.5 µs late.
func nodeRun() NodeConfig {
	slow := make([]int, 16)
	slow[5], slow[11] = 30, 15
	return NodeConfig{Steps: 6, DecodeEvery: 3, SlowPct: slow, JitterNS: 400, SkewNS: 7_500, Seed: 3}
}

// readNodeRank writes and parses one rank.
func readNodeRank(t *testing.T, cfg NodeConfig, rank int) (*trace.Trace, *NodeExpected, []byte) {
	t.Helper()
	var buf bytes.Buffer
	e, err := WriteNodeRank(&buf, cfg, rank)
	if err != nil {
		t.Fatal(err)
	}
	if e.Bytes != int64(buf.Len()) {
		t.Fatalf("Bytes = %d, wrote %d", e.Bytes, buf.Len())
	}
	tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{BlockSize: 4096, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return tr, e, buf.Bytes()
}

// TestNodeRunTraces checks what each rank's trace says of itself against
// the configuration: rank, world, base time, the process groups it is in,
// its markers' tokens (its host's), and that every collective's kernels
// end at one true time on all its members (each host's clock corrected by
// its skew): the premise the analysis rests on, read back from the JSON.
func TestNodeRunTraces(t *testing.T) {
	cfg := nodeRun()
	cl := classify.Default()
	// ends[op][k] is the true end of the k-th kernel of op on rank 0's
	// host's members, then checked on every rank.
	type key struct {
		op   string
		node int
	}
	ends := map[key][]trace.Time{}
	var exp *NodeExpected
	for r := range cfg.Ranks() {
		tr, e, raw := readNodeRank(t, cfg, r)
		if exp == nil {
			exp = e
		}
		if int64(len(tr.Activities)) != e.Activities || tr.Meta.Rank != r || tr.Meta.WorldSize != 16 ||
			tr.Meta.BaseTime != cfg.BaseTime(r) || tr.Meta.ProcessGroupCount != 22 {
			t.Fatalf("rank %d: %d activities (%d), meta %+v", r, len(tr.Activities), e.Activities, tr.Meta)
		}
		_, tp := cfg.TPGroup(r)
		var nccl [][]int
		for _, g := range tr.Meta.ProcessGroups {
			if g.Backend == "cuda:nccl" {
				nccl = append(nccl, g.Ranks)
			}
		}
		all := make([]int, 16)
		for i := range all {
			all[i] = i
		}
		dp := []int{r % 8, r%8 + 8}
		if want := [][]int{all, tp, dp, all}; !slices.EqualFunc(nccl, want, slices.Equal) {
			t.Errorf("rank %d: NCCL groups %v, want %v", r, nccl, want)
		}
		st, err := step.Find(tr, step.Options{})
		if err != nil || st == nil || len(st.List) != cfg.Steps {
			t.Fatalf("rank %d: steps %v %v", r, st, err)
		}
		for i, s := range st.List {
			if s.Tokens != e.Tokens[i][cfg.Node(r)] || s.Kind.String() != cfg.Kind(i) {
				t.Errorf("rank %d step %d: %s %d tokens, want %s %d", r, i, s.Kind, s.Tokens, cfg.Kind(i), e.Tokens[i][cfg.Node(r)])
			}
		}
		// The collectives' true ends.
		seen := map[string]int{}
		for _, a := range tr.Activities {
			c := cl.Classify(tr.Names[a.Name])
			if c.Top != classify.Communication {
				continue
			}
			k := key{c.Sub, cfg.Node(r)}
			if c.Sub == "all_to_all" {
				k.node = 0 // one communicator over every host
			}
			end := a.End() - trace.Time(cfg.SkewOf(r))
			i := seen[c.Sub]
			seen[c.Sub]++
			if r == k.node*8 || (c.Sub == "all_to_all" && r == 0) {
				ends[k] = append(ends[k], end)
				continue
			}
			if i >= len(ends[k]) || ends[k][i] != end {
				t.Fatalf("rank %d: %s kernel %d ends at %d (true time), its communicator's first rank at %v", r, c.Sub, i, end, ends[k][min(i, len(ends[k])-1)])
			}
		}
		if want := int64(cfg.Steps * cfg.layers()); int64(seen["allreduce"]) != want || int64(seen["all_to_all"]) != 2*want {
			t.Errorf("rank %d: %v collective kernels, want %d all-reduces and %d all-to-alls", r, seen, want, 2*want)
		}
		// Deterministic: the same bytes again.
		if _, _, again := readNodeRank(t, cfg, r); !bytes.Equal(raw, again) {
			t.Fatalf("rank %d: two writes differ", r)
		}
	}
	// The expectations: two TP communicators and one all-to-all per step
	// kind, each with the straggler its host's slow rank makes.
	if len(exp.Comms) != 6 {
		t.Fatalf("%d communicators, want 6", len(exp.Comms))
	}
	for _, c := range exp.Comms {
		want := 5
		if c.Op == "allreduce" && c.Ranks[0] == 8 {
			want = 11
		}
		if c.Straggler() != want || c.Instances == 0 || c.TransferNS*c.BusGBps != c.BusBytes {
			t.Errorf("%s %s %v: straggler %d (want %d), %d instances, transfer %d, bus bytes %d at %d GB/s",
				c.Kind, c.Op, c.Ranks, c.Straggler(), want, c.Instances, c.TransferNS, c.BusBytes, c.BusGBps)
		}
		if (c.Op == "all_to_all") != (c.Link == "inter") || (c.Op == "all_to_all") != (len(c.Ranks) == 16) {
			t.Errorf("%s %s: link %s over %d ranks", c.Kind, c.Op, c.Link, len(c.Ranks))
		}
	}
}

// TestNodeRunBase: with the skew in the base, base + ts is the true time
// on every host.
func TestNodeRunBase(t *testing.T) {
	cfg := nodeRun()
	cfg.Steps, cfg.SkewInBase = 2, true
	t0, _, _ := readNodeRank(t, cfg, 0)
	t8, _, _ := readNodeRank(t, cfg, 8)
	first := func(tr *trace.Trace) int64 { return tr.Meta.BaseTime + int64(tr.Launches[0].Start) }
	if t0.Meta.BaseTime-t8.Meta.BaseTime != cfg.SkewNS || first(t0) != first(t8) {
		t.Errorf("bases %d, %d; first launch at %d, %d in true time", t0.Meta.BaseTime, t8.Meta.BaseTime, first(t0), first(t8))
	}
}

func TestWriteNodeRankErrors(t *testing.T) {
	for _, cfg := range []NodeConfig{
		{Steps: -1},
		{SlowPct: []int{1, 2}},
		{Hidden: 100},                   // all-reduce transfers not whole ns
		{Hidden: 64, IntraGBps: 1 << 4}, // all-to-all not whole ns: 64×2×15 / (16×16)
	} {
		if _, err := WriteNodeRank(&bytes.Buffer{}, cfg, 0); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	if _, err := WriteNodeRank(&bytes.Buffer{}, NodeConfig{}, 16); err == nil {
		t.Error("rank 16 of 16: no error")
	}
}

// TestNodeRunCollectivesExact checks every figure of the collectives
// analysis of the run over two hosts against the generator's record, per
// communicator: the two tensor-parallel all-reduce groups are two
// matches (by pg_config for the graph-replayed decode kernels, by their
// args in prefill), each with its own straggler; the all-to-all over all
// 16 ranks one; instances, kernel time, wait and transfer to the
// nanosecond; message sizes, the bus bandwidth against the link of the
// communicator's scope (NVLink inside a host, InfiniBand across), the
// token imbalance of the all-to-all.
//
// With AllToAllArgs, the prefill all-to-alls are NCCL's with uneven split
// sizes: their token imbalance is the split sizes', each rank's count
// exact.
func TestNodeRunCollectivesExact(t *testing.T) {
	for _, args := range []bool{false, true} {
		t.Run(fmt.Sprintf("AllToAllArgs=%v", args), func(t *testing.T) {
			cfg := nodeRun()
			cfg.AllToAllArgs = args
			checkNodeCollectives(t, cfg)
		})
	}
}

func checkNodeCollectives(t *testing.T, cfg NodeConfig) {
	var inputs []window.Input
	var exp *NodeExpected
	for r := range cfg.Ranks() {
		tr, e, _ := readNodeRank(t, cfg, r)
		if exp == nil {
			exp = e
		}
		st, err := step.Find(tr, step.Options{})
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, window.Input{Path: cfg.Host(r) + "/rank" + strconv.Itoa(r) + ".json", Run: "run", Host: cfg.Host(r), Trace: tr, Steps: st})
	}
	tbl, err := window.Build(inputs, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	links, err := collectives.ParseLinks("intra=nvlink4,inter=ib-ndr400", collectives.ParseLink)
	if err != nil {
		t.Fatal(err)
	}
	ct := collectives.Match(tbl, collectives.Options{BytesPerToken: cfg.BytesPerToken(), Links: links})
	// Decode and prefill, each: two all-reduce groups, an all-to-all in
	// two phases (dispatch, combine) when DeepEP's, one when NCCL's.
	nops := 0
	for _, c := range exp.Comms {
		nops += c.Phases
	}
	if len(ct.Ops) != nops || nops != 8-btoi(cfg.AllToAllArgs) {
		for _, o := range ct.Ops {
			t.Logf("%s %s %s %s %v", o.Class, o.Op, o.Phase, o.Group, o.Rules)
		}
		t.Fatalf("%d ops, want %d", len(ct.Ops), nops)
	}
	for _, want := range exp.Comms {
		var got []*collectives.Op
		for i := range ct.Ops {
			o := &ct.Ops[i]
			if o.Class.String() == want.Kind && o.Op == want.Op && o.Group == want.Group {
				got = append(got, o)
			}
		}
		what := want.Kind + " " + want.Op + " " + want.GroupRanks
		// An all-to-all's instances are its dispatches and its combines,
		// matched apart: their figures add up to the generator's.
		if want.Op == "all_to_all" && (len(got) != want.Phases || len(got) == 2 && got[0].Phase == got[1].Phase) {
			t.Fatalf("%s: %d ops", what, len(got))
		}
		if want.Op == "allreduce" && len(got) != 1 {
			t.Fatalf("%s: %d ops", what, len(got))
		}
		var inst, transfer, tokInst, tokMax, tokSum, sized, splitInst, splitMax, splitSum int64
		splitCount := make([]int64, len(want.Ranks))
		kernel := make([]int64, len(want.Ranks))
		wait := make([]int64, len(want.Ranks))
		last := make([]int64, len(want.Ranks))
		sizes := map[SizeKey][2]int64{}
		for _, o := range got {
			var rules []string
			for _, r := range o.Rules {
				rules = append(rules, r.String())
			}
			wantLink := map[string]string{"intra": "nvlink4", "inter": "ib-ndr400"}[want.Link]
			if o.GroupRanks != want.GroupRanks || !slices.Equal(rules, want.Rules) || o.Scope.String() != want.Link ||
				o.Link == nil || o.Link.Name != wantLink || o.GroupSize != len(want.Ranks) || len(o.Ranks) != len(want.Ranks) ||
				o.UnmatchedInstances != 0 || o.UpperBound {
				t.Fatalf("%s %s: %+v\nrules %v link %v", what, o.Phase, o, rules, o.Link)
			}
			inst += o.Instances
			transfer += o.TransferNS
			tokInst, tokMax, tokSum = tokInst+o.TokenInstances, tokMax+o.TokenMaxSum, tokSum+o.TokenSum
			splitInst, splitMax, splitSum = splitInst+o.SplitInstances, splitMax+o.SplitMaxSum, splitSum+o.SplitSum
			sized += o.SizedInstances
			for i, st := range o.Ranks {
				if st.Number == nil || *st.Number != want.Ranks[i] || st.Host != cfg.Host(want.Ranks[i]) {
					t.Fatalf("%s: rank %d is %+v", what, i, st.Rank)
				}
				kernel[i] += st.KernelNS
				wait[i] += st.WaitNS
				last[i] += st.LastArrivals
				splitCount[i] += st.SplitCount
			}
			for _, row := range o.Sizes {
				k := SizeKey{row.Bytes, row.Source.String()}
				v := sizes[k]
				sizes[k] = [2]int64{v[0] + row.Instances, v[1] + row.TransferNS}
				// Every size's bus bandwidth is the generator's, and its
				// share that of the communicator's link.
				if row.BusGBps == nil || !relEq(*row.BusGBps, float64(want.BusGBps)) || row.LinkShare == nil ||
					!relEq(*row.LinkShare, float64(want.BusGBps)/o.Link.GBps) {
					t.Errorf("%s %s: size %d: busbw %v share %v, want %d GB/s of %v", what, o.Phase, row.Bytes, row.BusGBps, row.LinkShare, want.BusGBps, o.Link.GBps)
				}
			}
			// Each all-reduce group's straggler is its host's slow rank;
			// the all-to-all's last arrivals are checked summed over its
			// phases below (in prefill, host 1's larger batches make rank
			// 11 last in some).
			if s := o.Straggler; want.Op == "allreduce" && (s == nil || *s.Number != want.Straggler() || !s.Distinct) {
				t.Errorf("%s %s: straggler %+v, want rank %d", what, o.Phase, s, want.Straggler())
			}
		}
		if inst != want.Instances || transfer != want.TransferNS || sized != want.Instances || !slices.Equal(kernel, want.KernelNS) ||
			!slices.Equal(wait, want.WaitNS) || !slices.Equal(last, want.LastArrivals) {
			t.Errorf("%s: instances %d transfer %d kernel %v wait %v last %v\nwant %d %d %v %v %v", what, inst, transfer, kernel, wait, last,
				want.Instances, want.TransferNS, want.KernelNS, want.WaitNS, want.LastArrivals)
		}
		if len(sizes) != len(want.Sizes) {
			t.Errorf("%s: %d sizes, want %d", what, len(sizes), len(want.Sizes))
		}
		for k, w := range want.Sizes {
			if g := sizes[k]; g[0] != w.Instances || g[1] != w.TransferNS {
				t.Errorf("%s: size %+v: %v, want %d instances, %d ns", what, k, g, w.Instances, w.TransferNS)
			}
		}
		if splitInst != want.SplitInstances || splitMax != want.SplitMaxSum || splitSum != want.SplitSum || !slices.Equal(splitCount, want.SplitCount) {
			t.Errorf("%s: split sizes over %d instances, max %d sum %d, per rank %v; want %d %d %d %v", what, splitInst, splitMax, splitSum, splitCount,
				want.SplitInstances, want.SplitMaxSum, want.SplitSum, want.SplitCount)
		}
		if want.SplitInstances > 0 {
			// Every instance counted from its split sizes, none from the
			// markers; the hot expert rank makes it uneven.
			o := got[0]
			imb := float64(len(want.Ranks)) * float64(want.SplitMaxSum) / float64(want.SplitSum)
			if want.SplitInstances != want.Instances || o.TokenInstances != 0 || !relEq(o.SplitImbalance(), imb) || imb <= 1.5 || o.SizeConflicts != 0 {
				t.Errorf("%s: split imbalance %v over %d instances (%d from markers, %d size conflicts), want %v over %d", what, o.SplitImbalance(), o.SplitInstances,
					o.TokenInstances, o.SizeConflicts, imb, want.Instances)
			}
		}
		if want.Op == "all_to_all" && want.SplitInstances == 0 {
			if tokInst != want.Instances || tokMax != want.TokenMaxSum || tokSum != want.TokenSum {
				t.Errorf("%s: tokens over %d instances, max %d sum %d; want %d %d", what, tokInst, tokMax, tokSum, want.TokenMaxSum, want.TokenSum)
			}
			imb := float64(len(want.Ranks)) * float64(want.TokenMaxSum) / float64(want.TokenSum)
			if o := got[0]; !relEq(o.TokenImbalance(), float64(len(want.Ranks))*float64(o.TokenMaxSum)/float64(o.TokenSum)) || imb <= 1 {
				t.Errorf("%s: token imbalance %v (run %v)", what, o.TokenImbalance(), imb)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
