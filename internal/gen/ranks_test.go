package gen

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// readRun writes every rank of cfg and reads them back as the CLI would.
func readRun(t *testing.T, cfg RunConfig) ([]window.Input, *RunExpected) {
	t.Helper()
	var inputs []window.Input
	var exp *RunExpected
	for rank := range cfg.ranks() {
		var buf bytes.Buffer
		e, err := WriteRank(&buf, cfg, rank)
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
		if int64(len(tr.Activities)) != e.Activities {
			t.Fatalf("rank %d: %d activities, %d written", rank, len(tr.Activities), e.Activities)
		}
		st, err := step.Find(tr, step.Options{})
		if err != nil || st == nil || len(st.List) != cfg.Steps {
			t.Fatalf("rank %d: steps %v, %v", rank, st, err)
		}
		inputs = append(inputs, window.Input{Path: fmt.Sprintf("rank%d.json", rank), Trace: tr, Steps: st})
		if exp == nil {
			exp = e
		}
	}
	return inputs, exp
}

func relEq(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestRunCollectivesExact checks every figure of the collectives analysis
// of generated runs against the generator's record, to the nanosecond and
// bandwidths to 1e-9 relative.
func TestRunCollectivesExact(t *testing.T) {
	for _, cfg := range []RunConfig{
		{Ranks: 8, Steps: 12, DecodeEvery: 5, Layers: 3, Straggler: 5, SlowdownPct: 30, BusGBps: 16, Seed: 1},
		{Ranks: 4, Steps: 9, DecodeEvery: 3, Layers: 2, Straggler: 2, SlowdownPct: 2, JitterNS: 3000, BusGBps: 8, Hidden: 2048, Seed: 2},
		{Ranks: 2, Steps: 4, Layers: 1, Straggler: 0, SlowdownPct: 0, BusGBps: 32, Seed: 3}, // no straggler: ties to rank 0
		{Ranks: 3, Steps: 5, DecodeEvery: 1, Layers: 2, Straggler: 1, SlowdownPct: 50, BusGBps: 1, Hidden: 3, Seed: 4},
		{Ranks: 8, Steps: 10, DecodeEvery: 4, Layers: 2, Straggler: 6, SlowdownPct: 40, JitterNS: 800, BusGBps: 8, LatencyNS: 2500, Seed: 5},
		{Ranks: 4, Steps: 6, Layers: 2, Straggler: 1, SlowdownPct: 30, BusGBps: 16, LaunchNS: 9000, Seed: 6}, // eager decode
	} {
		t.Run(fmt.Sprintf("ranks%d-seed%d", cfg.Ranks, cfg.Seed), func(t *testing.T) {
			inputs, exp := readRun(t, cfg)
			ct := collectives.Match(tableOf(t, inputs...), collectives.Options{BytesPerToken: cfg.BytesPerToken()})
			if len(ct.Ops) != len(exp.Ops) {
				t.Fatalf("%d ops, want %d: %+v", len(ct.Ops), len(exp.Ops), ct.Ops)
			}
			for i, want := range exp.Ops {
				checkOp(t, cfg, &ct.Ops[i], &want, exp.KindNS[want.Kind])
			}
		})
	}
}

func checkOp(t *testing.T, cfg RunConfig, got *collectives.Op, want *OpExpect, kindNS []int64) {
	t.Helper()
	n := cfg.ranks()
	if got.Class.String() != want.Kind || got.Op != want.Op || got.Group != want.Group || got.GroupSize != n ||
		got.Instances != want.Instances || got.UnmatchedInstances != 0 || got.UnmatchedNS != 0 ||
		got.TransferNS != want.TransferNS || got.UpperBound || len(got.Ranks) != n {
		t.Fatalf("%s: got %+v\nwant %+v", want.Kind, got, want)
	}
	var kernel, wait, all int64
	for r := range n {
		st := got.Ranks[r]
		if st.Number == nil || *st.Number != r || st.KernelNS != want.KernelNS[r] || st.WaitNS != want.WaitNS[r] ||
			st.TransferNS != want.TransferNS || st.LastArrivals != want.LastArrivals[r] || st.LeadNS != want.LeadNS[r] {
			t.Errorf("%s rank %d: kernel %d wait %d transfer %d last %d lead %d; want %d %d %d %d %d", want.Kind, r, st.KernelNS, st.WaitNS,
				st.TransferNS, st.LastArrivals, st.LeadNS, want.KernelNS[r], want.WaitNS[r], want.TransferNS, want.LastArrivals[r], want.LeadNS[r])
		}
		kernel += want.KernelNS[r]
		wait += want.WaitNS[r]
		all += kindNS[r]
	}
	if got.KernelNS != kernel || got.WaitNS != wait || got.ClassNS != all || !relEq(got.Share, float64(kernel)/float64(all)) {
		t.Errorf("%s: kernel %d wait %d kind %d share %v; want %d %d %d", want.Kind, got.KernelNS, got.WaitNS, got.ClassNS,
			got.Share, kernel, wait, all)
	}
	s := want.Straggler()
	if got.Straggler == nil || *got.Straggler.Number != s || got.Straggler.LastArrivals != want.LastArrivals[s] ||
		got.Straggler.Instances != want.Instances {
		t.Errorf("%s: straggler %+v, want rank %d with %d", want.Kind, got.Straggler, s, want.LastArrivals[s])
	}
	if cfg.SlowdownPct >= 30 && (s != cfg.Straggler || !got.Straggler.Distinct) {
		t.Errorf("%s: the generator's straggler is rank %d (distinct %v), configured %d", want.Kind, s, got.Straggler.Distinct, cfg.Straggler)
	}
	if len(got.Sizes) != len(want.Sizes) {
		t.Fatalf("%s: %d sizes, want %d", want.Kind, len(got.Sizes), len(want.Sizes))
	}
	bus := float64(cfg.bus())
	for _, row := range got.Sizes {
		w := want.Sizes[SizeKey{row.Bytes, row.Source.String()}]
		if w == nil || row.Instances != w.Instances || row.TransferNS != w.TransferNS {
			t.Errorf("%s: size row %+v, want %+v", want.Kind, row, w)
			continue
		}
		alg := float64(row.Bytes) * float64(row.Instances) / float64(row.TransferNS)
		if row.AlgGBps == nil || !relEq(*row.AlgGBps, alg) || row.BusGBps == nil || (cfg.LatencyNS == 0 && !relEq(*row.BusGBps, bus)) {
			t.Errorf("%s: size %d: algbw %v busbw %v; want %v %v", want.Kind, row.Bytes, row.AlgGBps, row.BusGBps, alg, bus)
		}
	}
	// Aggregate: summed bus bytes over summed transfer, the configured
	// bus bandwidth.
	if got.BusGBps == nil || !relEq(*got.BusGBps, float64(want.BusBytes)/float64(want.TransferNS)) || (cfg.LatencyNS == 0 && !relEq(*got.BusGBps, bus)) {
		t.Errorf("%s: busbw %v, want %v", want.Kind, got.BusGBps, bus)
	}
	// The latency–bandwidth fit finds the generator's α and β: every
	// transfer is α + bus bytes / β exactly.
	if f := got.Fit(); len(want.Sizes) > 1 && (!f.OK || math.Abs(f.AlphaNS-float64(cfg.LatencyNS)) > 1e-3 || !relEqTol(f.BetaGBps, bus, 1e-9)) {
		t.Errorf("%s: fit %+v, want α %d β %v", want.Kind, f, cfg.LatencyNS, bus)
	}
}

func relEqTol(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b)) }

func TestWriteRankErrors(t *testing.T) {
	for _, cfg := range []RunConfig{
		{Ranks: 2, Straggler: 2},
		{Ranks: 3, BusGBps: 7, Hidden: 5},
		{Ranks: 2, Steps: -1},
	} {
		if _, err := WriteRank(&bytes.Buffer{}, cfg, 0); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	if _, err := WriteRank(&bytes.Buffer{}, RunConfig{Ranks: 2}, 2); err == nil {
		t.Error("rank out of range: no error")
	}
}
