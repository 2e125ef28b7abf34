package analyze_test

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// genRun writes and reads back every rank of a generated run.
func genRun(t *testing.T, cfg gen.Config) (*window.Table, []*gen.Expected) {
	t.Helper()
	var ins []window.Input
	var exps []*gen.Expected
	for r := range max(cfg.Ranks, 1) {
		var buf bytes.Buffer
		exp, err := gen.Write(&buf, cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := step.Find(tr, step.Options{})
		if err != nil || st == nil {
			t.Fatalf("step.Find: %v, %v", st, err)
		}
		ins = append(ins, window.Input{Path: fmt.Sprintf("rank%d.json", r), Run: fmt.Sprintf("seed%d", cfg.Seed), Trace: tr, Steps: st})
		exps = append(exps, exp)
	}
	tbl, err := window.Build(ins, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tbl, exps
}

// genSide is the generator's own figures for one step kind of a run: one
// StepExpect per window (each rank has one device), and its rank.
func genSide(exps []*gen.Expected, kind string) ([]gen.StepExpect, []int) {
	var out []gen.StepExpect
	var ranks []int
	for _, e := range exps {
		for _, s := range e.Steps {
			if s.Kind == kind {
				out = append(out, s)
				ranks = append(ranks, e.Rank)
			}
		}
	}
	return out, ranks
}

// rowWant is what the diff of one row must say, computed here from the
// generator's figures: the per-step means, the sample deviations, the
// noise threshold and the verdict, by docs/definitions.md#change.
type rowWant struct {
	b, a, delta int64
	bsd, asd    int64
	noise       int64
	change      string
}

// pooledSD is the step-to-step spread: deviations from each device's own
// mean (ranks[i] is window i's rank, one device each), over windows −
// devices degrees of freedom.
func pooledSD(xs []int64, ranks []int) float64 {
	sum, n := map[int]float64{}, map[int]float64{}
	for i, x := range xs {
		sum[ranks[i]] += float64(x)
		n[ranks[i]]++
	}
	var ss float64
	for i, x := range xs {
		d := float64(x) - sum[ranks[i]]/n[ranks[i]]
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(xs)-len(n)))
}

func roundDiv(a int64, n int) int64 { return (2*a + int64(n)) / (2 * int64(n)) }

func rowOracle(bx, ax []int64, br, ar []int, mc analyze.MinChange) rowWant {
	var bs, as int64
	for _, x := range bx {
		bs += x
	}
	for _, x := range ax {
		as += x
	}
	o := rowWant{b: roundDiv(bs, len(bx)), a: roundDiv(as, len(ax))}
	o.delta = o.a - o.b
	bsd, asd := pooledSD(bx, br), pooledSD(ax, ar)
	o.bsd, o.asd = int64(math.Round(bsd)), int64(math.Round(asd))
	o.noise = int64(math.Round(3 * math.Sqrt(bsd*bsd/float64(len(bx))+asd*asd/float64(len(ax)))))
	d := o.delta
	if d < 0 {
		d = -d
	}
	switch {
	case bs == 0 && as != 0:
		o.change = "appeared"
	case as == 0 && bs != 0:
		o.change = "vanished"
	case d == 0 || d < mc.NS || float64(d)*100 < mc.Pct*float64(o.b):
		o.change = "unchanged"
	case d < o.noise:
		o.change = "noise"
	case o.delta > 0:
		o.change = "grew"
	default:
		o.change = "shrank"
	}
	return o
}

func checkRow(t *testing.T, what string, c analyze.CategoryDiff, o rowWant) {
	t.Helper()
	if c.BeforePerStepNS != o.b || c.AfterPerStepNS != o.a || c.DeltaNS != o.delta || c.BeforeStdDevNS != o.bsd ||
		c.AfterStdDevNS != o.asd || c.NoiseNS != o.noise || c.Change != o.change {
		t.Errorf("%s: per step %d → %d (%+d), sd %d/%d, noise %d, %s; want %d → %d (%+d), sd %d/%d, noise %d, %s", what,
			c.BeforePerStepNS, c.AfterPerStepNS, c.DeltaNS, c.BeforeStdDevNS, c.AfterStdDevNS, c.NoiseNS, c.Change,
			o.b, o.a, o.delta, o.bsd, o.asd, o.noise, o.change)
	}
}

// checkGenDiff checks every category row, the total, the step time and
// the tokens of d against the generator's figures.
func checkGenDiff(t *testing.T, d *analyze.Diff, bexp, aexp []*gen.Expected, mc analyze.MinChange) {
	t.Helper()
	if len(d.Kinds) != 2 {
		t.Fatalf("%d kinds, want decode and prefill", len(d.Kinds))
	}
	for _, k := range d.Kinds {
		kind := k.Class.String()
		bw, br := genSide(bexp, kind)
		aw, ar := genSide(aexp, kind)
		if k.BeforeWindows != len(bw) || k.AfterWindows != len(aw) {
			t.Fatalf("%s: windows %d, %d; want %d, %d", kind, k.BeforeWindows, k.AfterWindows, len(bw), len(aw))
		}
		values := func(ws []gen.StepExpect, f func(s gen.StepExpect) int64) []int64 {
			xs := make([]int64, len(ws))
			for i, s := range ws {
				xs[i] = f(s)
			}
			return xs
		}
		kernel := func(s gen.StepExpect) int64 { return s.KernelNS }
		checkRow(t, kind+" total", k.Total, rowOracle(values(bw, kernel), values(aw, kernel), br, ar, mc))
		n := 0
		for _, c := range k.Categories {
			cat := func(s gen.StepExpect) int64 { return s.ByCat[c.Category.String()] }
			checkRow(t, kind+" "+c.Category.String(), c, rowOracle(values(bw, cat), values(aw, cat), br, ar, mc))
			n++
		}
		if n < 8 {
			t.Errorf("%s: %d categories", kind, n)
		}
		// Step time: percentiles of the spans; tokens from the markers.
		st := k.StepTime
		if st == nil || k.Tokens == nil {
			t.Fatalf("%s: no step time or tokens", kind)
		}
		span := func(s gen.StepExpect) int64 { return s.SpanNS }
		bs, as := values(bw, span), values(aw, span)
		slices.Sort(bs)
		slices.Sort(as)
		if st.Before.P50 != stats.Percentile(bs, 50) || st.After.P90 != stats.Percentile(as, 90) ||
			st.DeltaP50 != stats.Percentile(as, 50)-stats.Percentile(bs, 50) {
			t.Errorf("%s step time %+v", kind, st)
		}
		// Its noise: a median's standard error, √(π/2) times a mean's.
		bsd, asd := pooledSD(values(bw, span), br), pooledSD(values(aw, span), ar)
		se := math.Sqrt(bsd*bsd/float64(len(bw)) + asd*asd/float64(len(aw)))
		if want := int64(math.Round(3 * math.Sqrt(math.Pi/2) * se)); st.NoiseNS != want || st.BeforeStdDevNS != int64(math.Round(bsd)) {
			t.Errorf("%s step time: noise %d, sd %d; want %d, %.0f", kind, st.NoiseNS, st.BeforeStdDevNS, want, bsd)
		}
		tokens := func(s gen.StepExpect) int64 {
			var c, ct, g, gt int64
			if _, err := fmt.Sscanf(s.Marker, "execute_context_%d(%d)_generation_%d(%d)", &c, &ct, &g, &gt); err != nil {
				t.Fatalf("marker %q: %v", s.Marker, err)
			}
			return ct + gt
		}
		perToken := func(ws []gen.StepExpect) int64 {
			var sp, tok int64
			for _, s := range ws {
				sp += s.SpanNS
				tok += tokens(s)
			}
			return (2*sp + tok) / (2 * tok)
		}
		bt, at := values(bw, tokens), values(aw, tokens)
		slices.Sort(bt)
		slices.Sort(at)
		if k.Tokens.BeforeP50 != stats.Percentile(bt, 50) || k.Tokens.AfterP50 != stats.Percentile(at, 50) ||
			k.Tokens.BeforeNSPerToken == nil || *k.Tokens.BeforeNSPerToken != perToken(bw) ||
			k.Tokens.AfterNSPerToken == nil || *k.Tokens.AfterNSPerToken != perToken(aw) {
			t.Errorf("%s tokens %+v; want p50 %v → %v, %d → %d ns/token", kind, *k.Tokens, stats.Percentile(bt, 50),
				stats.Percentile(at, 50), perToken(bw), perToken(aw))
		}
	}
}

var genCfg = gen.Config{Ranks: 2, Steps: 60, DecodeEvery: 10, Layers: 2, Seed: 1}

// Two runs of one workload with different seeds differ by noise only:
// every figure is the generator's, and no row is a change, with the
// default threshold or none.
func TestCompareGeneratedNoise(t *testing.T) {
	other := genCfg
	other.Seed = 2
	b, bexp := genRun(t, genCfg)
	a, aexp := genRun(t, other)
	for _, mc := range []analyze.MinChange{analyze.DefaultMinChange, {}} {
		d := analyze.Compare(b, a, analyze.Options{MinChange: &mc, Top: 100})
		if d.BeforeRun != "seed1" || d.AfterRun != "seed2" || d.MinChange != mc {
			t.Errorf("runs %q, %q; threshold %+v", d.BeforeRun, d.AfterRun, d.MinChange)
		}
		checkGenDiff(t, d, bexp, aexp, mc)
		noise := 0
		for _, k := range d.Kinds {
			rows := append([]analyze.CategoryDiff{k.Total, k.Idle.Total}, k.Categories...)
			for _, c := range rows {
				if c.Change != "noise" && c.Change != "unchanged" {
					t.Errorf("threshold %s: %s %s: %s by %d ns (noise below %d)", mc, k.Class, c.Category, c.Change, c.DeltaNS, c.NoiseNS)
				}
				if c.Change == "noise" {
					noise++
				}
			}
			for _, kd := range k.Kernels {
				if kd.Change != "noise" && kd.Change != "unchanged" {
					t.Errorf("threshold %s: %s kernel %s: %s by %d ns (noise below %d)", mc, k.Class, kd.Name, kd.Change, kd.DeltaNS, kd.NoiseNS)
				}
			}
			if c := k.StepTime.Change; c != "noise" && c != "unchanged" {
				t.Errorf("threshold %s: %s step time p50: %s by %.0f ns (noise below %d)", mc, k.Class, c, k.StepTime.DeltaP50, k.StepTime.NoiseNS)
			}
			if len(k.Kernels) < 15 {
				t.Errorf("%s: %d kernel rows", k.Class, len(k.Kernels))
			}
		}
		if mc == (analyze.MinChange{}) && noise == 0 {
			t.Error("no threshold, and no row is noise: every delta is 0 and the test checks nothing")
		}
	}
}

// A run with attention slowed by 3 µs per kernel (2 layers: 6 µs per
// step): with the same seed, exactly that and nothing else changed, a real
// change in the decode steps; with another seed, the decode steps'
// attention still grew, by 6 µs give or take the noise.
func TestCompareGeneratedChange(t *testing.T) {
	const cat, slowNS = "attention/fa2", 3_000
	perStep := int64(genCfg.Layers) * slowNS
	b, bexp := genRun(t, genCfg)
	for _, seed := range []int64{1, 2} {
		cfg := genCfg
		cfg.Seed, cfg.SlowCategory, cfg.SlowNS = seed, cat, slowNS
		a, aexp := genRun(t, cfg)
		d := analyze.Compare(b, a, analyze.Options{Top: 100})
		checkGenDiff(t, d, bexp, aexp, analyze.DefaultMinChange)
		for _, k := range d.Kinds {
			var attn *analyze.CategoryDiff
			for i := range k.Categories {
				if c := &k.Categories[i]; c.Category.String() == cat {
					attn = c
				} else if seed == 1 && (c.DeltaNS != 0 || c.Change != "unchanged") {
					t.Errorf("seed 1: %s %s changed: %+d ns, %s", k.Class, c.Category, c.DeltaNS, c.Change)
				}
			}
			if attn == nil {
				t.Fatalf("%s: no %s row", k.Class, cat)
			}
			switch {
			case seed == 1 && (attn.DeltaNS != perStep || k.Categories[0].Category.String() != cat):
				t.Errorf("seed 1: %s %s: %+d ns; want +%d ns, first", k.Class, cat, attn.DeltaNS, perStep)
			case seed == 1 && k.Class == step.ClassOf(step.Decode) && attn.Change != "grew":
				// (The 6 prefill steps' attention varies with their
				// token counts by far more than 6 µs: there the same
				// change is noise, as checkGenDiff's own figures say.)
				t.Errorf("seed 1: decode %s: %s, want grew", cat, attn.Change)
			case seed == 2 && k.Class == step.ClassOf(step.Decode) && (attn.Change != "grew" || abs(attn.DeltaNS-perStep) >= attn.NoiseNS):
				t.Errorf("seed 2: decode %s: %+d ns, %s (noise %d); want grew by %d ± noise", cat, attn.DeltaNS, attn.Change, attn.NoiseNS, perStep)
			}
			if seed == 1 && k.Class == step.ClassOf(step.Decode) {
				// Each decode step is one graph replay on one stream: its
				// span grows by exactly the slowed kernels.
				if k.StepTime.DeltaP50 != float64(perStep) || k.StepTime.Change != "grew" {
					t.Errorf("seed 1: decode step time p50 %+.0f ns, %s; want +%d, grew", k.StepTime.DeltaP50, k.StepTime.Change, perStep)
				}
				for _, kd := range k.Kernels {
					if want := kd.Category.String() == cat; want != (kd.DeltaNS != 0) || want != (kd.Change == "grew") {
						t.Errorf("seed 1: kernel %s: %+d ns, %s", kd.Name, kd.DeltaNS, kd.Change)
					}
				}
			}
		}
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
