package gen

import (
	"bytes"
	"slices"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
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
