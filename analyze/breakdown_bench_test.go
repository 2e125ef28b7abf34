package analyze_test

import (
	"bytes"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
)

// BenchmarkBreakdown runs Breakdown on a generated trace of ~200k
// activities (decode graph replays, eager prefills on two streams), with
// steps and without; it reports ns per activity. The parse is outside the
// loop: this is the analysis's own cost.
func BenchmarkBreakdown(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Config{Steps: 500, DecodeEvery: 10, MixedEvery: 7, Layers: 32, Seed: 1}, 0); err != nil {
		b.Fatal(err)
	}
	tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	st, err := analyze.FindSteps(tr, analyze.StepOptions{})
	if err != nil || st == nil {
		b.Fatalf("FindSteps: %v %v", st, err)
	}
	for _, c := range []struct {
		name  string
		steps *analyze.Steps
	}{{"steps", st}, {"nosteps", nil}} {
		b.Run(c.name, func(b *testing.B) {
			in := []analyze.Input{{Path: "gen", Trace: tr, Steps: c.steps}}
			b.ReportAllocs()
			for b.Loop() {
				analyze.Breakdown(in, analyze.Options{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tr.Activities)), "ns/activity")
		})
	}
}
