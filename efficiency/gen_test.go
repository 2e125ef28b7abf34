package efficiency

import (
	"bytes"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
)

// genInput writes rank of cfg and reads it back with its steps.
func genInput(t *testing.T, cfg gen.Config, rank int) (analyze.Input, *gen.Expected) {
	t.Helper()
	var buf bytes.Buffer
	exp, err := gen.Write(&buf, cfg, rank)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := analyze.FindSteps(tr, analyze.StepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return analyze.Input{Path: "gen", Trace: tr, Steps: st}, exp
}

// The eager all-reduces carry their collective args: at NVLink 4 (the
// H100 row's default link) their bus bytes take exactly the time gen
// worked out, and that time replaces theirs in the speed of light.
func TestGenLinkTime(t *testing.T) {
	cfg := gen.Config{Ranks: 2, Steps: 8, DecodeEvery: 4, MixedEvery: 3, Layers: 2, Seed: 4, Shapes: true}
	in, exp := genInput(t, cfg, 0)
	inputs := []analyze.Input{in}
	ct := analyze.Collectives(inputs, analyze.CollectiveOptions{})
	res := Analyze(inputs, Options{Collectives: ct})
	want := map[string][2]int64{}
	for _, s := range exp.Steps {
		w := want[s.Kind]
		w[0] += s.Eff.LinkedNS
		w[1] += s.Eff.LinkNS
		want[s.Kind] = w
	}
	for _, r := range res.Steps {
		w := want[r.StepKind.String()]
		if r.Link == nil || r.Link.Name != "nvlink4" || r.LinkedNS != w[0] || r.LinkNS != w[1] {
			t.Errorf("%s: link %v, linked %d at the link %d; want nvlink4, %d, %d", r.StepKind, r.Link, r.LinkedNS, r.LinkNS, w[0], w[1])
		}
		if r.StepKind != analyze.KindDecode && w[0] == 0 {
			t.Errorf("%s: no sized collectives: the test checks nothing", r.StepKind)
		}
	}
}
