package collectives_test

import (
	"bytes"
	"testing"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// BenchmarkCollectives matches the collectives of a generated 8-rank run
// (~290k activities, 1 in 6 an all-reduce); it reports ns per activity.
func BenchmarkCollectives(b *testing.B) {
	cfg := gen.RunConfig{Ranks: 8, Steps: 120, DecodeEvery: 30, Layers: 32, Straggler: 3, SlowdownPct: 20, Seed: 1}
	var inputs []window.Input
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
		st, err := step.Find(tr, step.Options{})
		if err != nil {
			b.Fatal(err)
		}
		inputs = append(inputs, window.Input{Path: "r", Run: "run", Trace: tr, Steps: st})
		n += len(tr.Activities)
	}
	tbl, err := window.Build(inputs, window.Options{})
	if err != nil {
		b.Fatal(err)
	}
	opt := collectives.Options{BytesPerToken: cfg.BytesPerToken()}
	b.ReportAllocs()
	for b.Loop() {
		collectives.Match(tbl, opt)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/activity")
}
