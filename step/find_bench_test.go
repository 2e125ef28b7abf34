package step_test

import (
	"bytes"
	"testing"

	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
)

// BenchmarkFind attributes a generated trace of ~200k activities
// (decode graph replays and eager prefills); it reports ns per activity.
func BenchmarkFind(b *testing.B) {
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
		if _, err := step.Find(tr, step.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tr.Activities)), "ns/activity")
}
