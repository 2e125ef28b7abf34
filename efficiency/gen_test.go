package efficiency

import (
	"bytes"
	"testing"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// genInput writes rank of cfg and reads it back with its steps.
func genInput(t *testing.T, cfg gen.Config, rank int) (window.Input, *gen.Expected) {
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
	st, err := step.Find(tr, step.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return window.Input{Path: "gen", Run: "gen", Trace: tr, Steps: st}, exp
}

// The eager all-reduces carry their collective args: at NVLink 4 (the
// H100 row's default link) their bus bytes take exactly the time gen
// worked out, and that time replaces theirs in the speed of light.
func TestGenLinkTime(t *testing.T) {
	cfg := gen.Config{Ranks: 2, Steps: 8, DecodeEvery: 4, MixedEvery: 3, Layers: 2, Seed: 4, Shapes: true}
	in, exp := genInput(t, cfg, 0)
	tbl := tableOf(t, in)
	res := analyzeWithLink(tbl, Options{})
	want := map[string][2]int64{}
	for _, s := range exp.Steps {
		w := want[s.Kind]
		w[0] += s.Eff.LinkedNS
		w[1] += s.Eff.LinkNS
		want[s.Kind] = w
	}
	for _, r := range res.Steps {
		w := want[r.Class.String()]
		if r.Link == nil || r.Link.Name != "nvlink4" || r.LinkedNS != w[0] || r.LinkNS != w[1] {
			t.Errorf("%s: link %v, linked %d at the link %d; want nvlink4, %d, %d", r.Class, r.Link, r.LinkedNS, r.LinkNS, w[0], w[1])
		}
		if r.Class != step.ClassOf(step.Decode) && w[0] == 0 {
			t.Errorf("%s: no sized collectives: the test checks nothing", r.Class)
		}
	}
	// A match made without a link (the findings') gives the same link
	// time at the link: what breakdown shares.
	nvlink, err := collectives.ParseLink("nvlink4")
	if err != nil {
		t.Fatal(err)
	}
	ct := collectives.Match(tbl, collectives.Options{})
	for _, r := range res.Steps {
		w := want[r.Class.String()]
		if linked, link := ct.LinkTimeAt(&nvlink, "gen", r.Class); linked != w[0] || link != w[1] {
			t.Errorf("%s: LinkTimeAt of a match without a link: %d, %d; want %d, %d", r.Class, linked, link, w[0], w[1])
		}
	}
}

// kindSums adds up gen's per-step expectations by step kind.
type kindSums struct {
	kernel, modelled, flops, bytes, roofline, linked, link, sol int64
	smW                                                         float64
	smNS                                                        int64
	cats                                                        map[string]*gen.CatEff
	ops                                                         map[string]*gen.OpEff
}

func sumByKind(exp *gen.Expected) map[string]*kindSums {
	out := map[string]*kindSums{}
	for _, s := range exp.Steps {
		k := out[s.Kind]
		if k == nil {
			k = &kindSums{cats: map[string]*gen.CatEff{}, ops: map[string]*gen.OpEff{}}
			out[s.Kind] = k
		}
		e := s.Eff
		k.kernel += s.KernelNS
		k.modelled += e.ModelledNS
		k.flops += e.FLOPs
		k.bytes += e.Bytes
		k.roofline += e.RooflineNS
		k.linked += e.LinkedNS
		k.link += e.LinkNS
		k.sol += e.SpeedOfLightNS
		k.smW += e.SMWeighted
		k.smNS += e.GridNS
		for name, c := range e.ByCat {
			if k.cats[name] == nil {
				k.cats[name] = &gen.CatEff{}
			}
			k.cats[name].Add(c)
		}
		for name, o := range e.Ops {
			if k.ops[name] == nil {
				k.ops[name] = &gen.OpEff{}
			}
			k.ops[name].Add(o)
		}
	}
	return out
}

func close(a, b float64) bool { return a == b || (a-b)/max(a, b) < 1e-12 && (b-a)/max(a, b) < 1e-12 }

// TestGenExact checks every figure of the analysis against what internal/gen
// wrote, to the nanosecond: a run of prefill, decode and mixed steps whose
// eager ops carry their shapes, whose decode steps are graph replays priced
// through the capture trace, and whose eager all-reduces are sized.
func TestGenExact(t *testing.T) {
	cfg := gen.Config{Ranks: 2, Steps: 12, DecodeEvery: 5, MixedEvery: 3, Layers: 3, DropCorrEvery: 11, Seed: 21, Shapes: true}
	in, exp := genInput(t, cfg, 1)
	if len(in.Trace.OpSigs) == 0 {
		t.Fatal("the Kineto parser filled no op attributes")
	}
	var cbuf bytes.Buffer
	cexp, err := gen.WriteCapture(&cbuf, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctr, err := chrometrace.Parse(bytes.NewReader(cbuf.Bytes()), chrometrace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := analyzeWithLink(tableOf(t, in), Options{Captures: []Capture{{Path: "capture", Trace: ctr}}})
	want := sumByKind(exp)
	if len(res.Steps) != len(want) {
		t.Fatalf("%d step kinds, want %d", len(res.Steps), len(want))
	}
	for _, s := range res.Steps {
		w := want[s.Class.String()]
		if s.KernelNS != w.kernel || s.ModelledNS != w.modelled || s.RooflineNS != w.roofline || s.LinkedNS != w.linked ||
			s.LinkNS != w.link || s.SpeedOfLightNS != w.sol {
			t.Errorf("%s: kernel %d modelled %d roofline %d linked %d link %d speed of light %d; want %d %d %d %d %d %d", s.Class,
				s.KernelNS, s.ModelledNS, s.RooflineNS, s.LinkedNS, s.LinkNS, s.SpeedOfLightNS,
				w.kernel, w.modelled, w.roofline, w.linked, w.link, w.sol)
		}
		if s.ModelledNS == 0 {
			t.Errorf("%s: nothing modelled: the test checks nothing", s.Class)
		}
		if s.Class == step.ClassOf(step.Decode) && (s.MatchedNS != s.ReplayNS || s.ReplayNS == 0) {
			t.Errorf("decode: %d of %d ns of replays matched", s.MatchedNS, s.ReplayNS)
		}
	}
	var flops, bytes int64
	n := 0
	for _, c := range res.Categories {
		w := want[c.Class.String()].cats[c.Category.String()]
		if w == nil {
			t.Errorf("%s %s: not written by gen", c.Class, c.Category)
			continue
		}
		n++
		flops += c.FLOPs
		bytes += c.Bytes
		if c.KernelNS != w.KernelNS || c.ModelledNS != w.ModelledNS || c.FLOPs != w.FLOPs || c.Bytes != w.Bytes || c.RooflineNS != w.RooflineNS ||
			c.SM.KnownNS != w.GridNS || !close(c.SM.Weighted, w.SMWeighted) {
			t.Errorf("%s %s: %+v, want %+v", c.Class, c.Category, c, *w)
		}
	}
	var wantCats int
	var wantFLOPs, wantBytes int64
	for _, k := range want {
		wantCats += len(k.cats)
		wantFLOPs += k.flops
		wantBytes += k.bytes
	}
	if n != wantCats || flops != wantFLOPs || bytes != wantBytes {
		t.Errorf("%d categories, %d FLOPs, %d bytes; want %d, %d, %d", n, flops, bytes, wantCats, wantFLOPs, wantBytes)
	}
	// Op shapes: one row per (op, dims, types) over every step kind.
	wantOps := map[string]*gen.OpEff{}
	for _, k := range want {
		for name, o := range k.ops {
			if wantOps[name] == nil {
				wantOps[name] = &gen.OpEff{}
			}
			wantOps[name].Add(o)
		}
	}
	modelled := 0
	for _, o := range res.Ops {
		if !o.Modelled {
			continue
		}
		modelled++
		w := wantOps[gen.OpKey(o.Name, o.Dims, o.Types)]
		if w == nil || o.Instances != w.Instances || o.KernelNS != w.KernelNS || o.FLOPs != w.FLOPs || o.Bytes != w.Bytes || o.RooflineNS != w.RooflineNS {
			t.Errorf("op %s %v: %d calls %d ns %d FLOPs %d bytes %d roofline; want %+v", o.Name, o.Dims, o.Instances, o.KernelNS, o.FLOPs, o.Bytes, o.RooflineNS, w)
		}
	}
	if modelled != len(wantOps) {
		t.Errorf("%d modelled op shapes, want %d", modelled, len(wantOps))
	}
	if len(res.Graphs) != 1 || res.Graphs[0].Matched != res.Graphs[0].Kernels || int(res.Graphs[0].Kernels) != cexp.Launches*res.Graphs[0].Replays {
		t.Errorf("graphs %+v (capture %d launches)", res.Graphs, cexp.Launches)
	}
}

// analyzeWithLink analyses tbl with its collectives at the link of its
// devices' GPU row, as the command joins the two analyses.
func analyzeWithLink(tbl *window.Table, opt Options) *Result {
	var link *collectives.Link
	if name := DefaultLink(Devices(tbl, opt.Table, opt.GPU)); name != "" {
		if l, err := collectives.ParseLink(name); err == nil {
			link = &l
		}
	}
	ct := collectives.Match(tbl, collectives.Options{Filter: opt.Filter, Link: link})
	if link != nil {
		opt.LinkTime, opt.Link = ct.LinkTime, &Link{Name: link.Name, GBps: link.GBps, About: link.About}
	}
	return Analyze(tbl, opt)
}
