package analyze_test

import (
	"bytes"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
)

// BenchmarkFindSteps attributes a generated trace of ~200k activities
// (decode graph replays and eager prefills); it reports ns per activity.
func BenchmarkFindSteps(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Config{Steps: 500, DecodeEvery: 10, MixedEvery: 7, Layers: 32, DropCorrEvery: 100, Seed: 1}, 0); err != nil {
		b.Fatal(err)
	}
	tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := analyze.FindSteps(tr, analyze.StepOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tr.Activities)), "ns/activity")
}

// BenchmarkCollectives matches the collectives of a generated 8-rank run
// (~290k activities, 1 in 6 an all-reduce); it reports ns per activity.
func BenchmarkCollectives(b *testing.B) {
	cfg := gen.RunConfig{Ranks: 8, Steps: 120, DecodeEvery: 30, Layers: 32, Straggler: 3, SlowdownPct: 20, Seed: 1}
	var inputs []analyze.Input
	n := 0
	for r := range cfg.Ranks {
		var buf bytes.Buffer
		if _, err := gen.WriteRank(&buf, cfg, r); err != nil {
			b.Fatal(err)
		}
		tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		st, err := analyze.FindSteps(tr, analyze.StepOptions{})
		if err != nil {
			b.Fatal(err)
		}
		inputs = append(inputs, analyze.Input{Path: "r", Trace: tr, Steps: st})
		n += len(tr.Activities)
	}
	opt := analyze.CollectiveOptions{BytesPerToken: cfg.BytesPerToken()}
	b.ReportAllocs()
	for b.Loop() {
		analyze.Collectives(inputs, opt)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/activity")
}
