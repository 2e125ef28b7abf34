package analyze_test

import (
	"bytes"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// BenchmarkBreakdown reduces a generated trace of ~200k activities
// (decode graph replays, eager prefills on two streams) to its window
// table and runs Breakdown on it, with steps and without; it reports ns
// per activity. The parse is outside the loop: this is the analysis's own
// cost.
func BenchmarkBreakdown(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Config{Steps: 500, DecodeEvery: 10, MixedEvery: 7, Layers: 32, Seed: 1}, 0); err != nil {
		b.Fatal(err)
	}
	tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	st, err := step.Find(tr, step.Options{})
	if err != nil || st == nil {
		b.Fatalf("step.Find: %v %v", st, err)
	}
	for _, c := range []struct {
		name  string
		steps *step.Steps
	}{{"steps", st}, {"nosteps", nil}} {
		b.Run(c.name, func(b *testing.B) {
			in := []window.Input{{Path: "gen", Trace: tr, Steps: c.steps}}
			b.ReportAllocs()
			for b.Loop() {
				tbl, err := window.Build(in, window.Options{})
				if err != nil {
					b.Fatal(err)
				}
				analyze.Breakdown(tbl, analyze.Options{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tr.Activities)), "ns/activity")
		})
	}
}
