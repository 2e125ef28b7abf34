package collectives

import (
	"testing"

	"github.com/traceq/traceq/interconnect"
	"github.com/traceq/traceq/step"
)

func TestLinkTime(t *testing.T) {
	decode := step.ClassOf(step.Decode)
	nvlink := &Link{Link: interconnect.Link{Name: "nvlink4", GBps: 450}}
	tbl := &Table{Link: nvlink, Ops: []Op{
		// 2 ranks, all-reduce (bus factor 2·1/2 = 1): 450,000 bytes at
		// 450 GB/s is 1000 ns, per rank's kernel of 3 instances: 6000;
		// 1,000 bytes: 2.2 → 3 ns, twice for 1 instance: 6.
		{Run: "r", Class: decode, Op: "allreduce", GroupSize: 2, Ranks: make([]RankStat, 2), Instances: 4, SizedInstances: 4, KernelNS: 9000,
			Sizes: []Size{{Bytes: 1000, Instances: 1}, {Bytes: 450_000, Instances: 3}}},
		// 8 ranks' all-gather ((n−1)/n = 7/8), one rank traced: 800,000
		// bytes → 700,000 bus bytes → 1556 ns (1555.6 rounded up).
		{Run: "r", Class: decode, Op: "allgather", GroupSize: 8, Ranks: make([]RankStat, 1), Instances: 1, SizedInstances: 1, KernelNS: 2000,
			Sizes: []Size{{Bytes: 800_000, Instances: 1}}},
		// Left out: an instance without a size, one rank in the group, an
		// op without a bus factor, another class, another run.
		{Run: "r", Class: decode, Op: "allreduce", GroupSize: 2, Ranks: make([]RankStat, 2), Instances: 2, SizedInstances: 1, KernelNS: 500,
			Sizes: []Size{{Bytes: 100, Instances: 1}, {Bytes: -1, Instances: 1}}},
		{Run: "r", Class: decode, Op: "allreduce", GroupSize: 1, Ranks: make([]RankStat, 1), Instances: 1, SizedInstances: 1, KernelNS: 700,
			Sizes: []Size{{Bytes: 100, Instances: 1}}},
		{Run: "r", Class: decode, Op: "other", GroupSize: 2, Ranks: make([]RankStat, 2), Instances: 1, SizedInstances: 1, KernelNS: 800,
			Sizes: []Size{{Bytes: 100, Instances: 1}}},
		{Run: "r", Class: step.ClassOf(step.Prefill), Op: "allreduce", GroupSize: 2, Ranks: make([]RankStat, 2), Instances: 1, SizedInstances: 1, KernelNS: 900,
			Sizes: []Size{{Bytes: 100, Instances: 1}}},
		{Run: "s", Class: decode, Op: "allreduce", GroupSize: 2, Ranks: make([]RankStat, 2), Instances: 1, SizedInstances: 1, KernelNS: 900,
			Sizes: []Size{{Bytes: 100, Instances: 1}}},
	}}
	// Each op is timed at its own link (its scope's): one left without
	// is left out too.
	for i := range tbl.Ops {
		tbl.Ops[i].Link = nvlink
	}
	tbl.Ops = append(tbl.Ops, Op{Run: "r", Class: decode, Op: "allreduce", GroupSize: 2, Ranks: make([]RankStat, 2), Instances: 1, SizedInstances: 1,
		KernelNS: 950, Sizes: []Size{{Bytes: 100, Instances: 1}}, Scope: ScopeInter})
	linked, link, at := tbl.LinkTime("r", decode)
	if linked != 11_000 || link != 6000+6+1556 || at == nil || at.Name != "nvlink4" {
		t.Errorf("LinkTime = %d, %d at %+v; want 11000, %d at nvlink4", linked, link, at, 6000+6+1556)
	}
	// Ops at two scopes' links: both named.
	tbl.Ops[1].Link = &Link{Link: interconnect.Link{Name: "ib-ndr400", GBps: 50}}
	if _, link, at := tbl.LinkTime("r", decode); link != 6000+6+14000 || at == nil || at.Label() != "ib-ndr400 and nvlink4" {
		t.Errorf("two links: %d at %+v; want %d at ib-ndr400 and nvlink4", link, at, 6000+6+14000)
	}
	for i := range tbl.Ops {
		tbl.Ops[i].Link = nil
	}
	tbl.Link = nil
	if linked, link, at := tbl.LinkTime("r", decode); linked != 0 || link != 0 || at != nil {
		t.Errorf("without a link: %d, %d at %+v", linked, link, at)
	}
}
