package render

import (
	"strconv"

	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/gpuspec"
	"github.com/traceq/traceq/stats"
)

// The JSON documents of `traceq gpus` and `traceq efficiency`
// (docs/json.md#traceq-gpus---format-json).

type jsonGPUsDoc struct {
	GPUs []jsonGPU `json:"gpus"`
}

// jsonGPUSpec is a GPU table row as the efficiency document names it.
type jsonGPUSpec struct {
	Name       string             `json:"name"`
	Source     string             `json:"source"`
	PeakTFLOPS map[string]float64 `json:"peak_tflops"`
	MemoryTBps float64            `json:"memory_tbps"`
	SMs        int                `json:"sms"`
	Link       string             `json:"link,omitempty"`
	// Marks names the figures that are not plain vendor figures:
	// "bf16": "halved", "memory": "unconfirmed".
	Marks map[string]string `json:"marks,omitempty"`
}

// jsonGPU is a row of `traceq gpus`: the spec and what it matches.
type jsonGPU struct {
	jsonGPUSpec
	Matches []jsonGPUMatch `json:"matches"`
}

type jsonGPUMatch struct {
	Name      string `json:"name"`
	SMs       int    `json:"sms,omitempty"`
	MemoryGiB int    `json:"memory_gib,omitempty"`
}

// tera turns a table figure into its decimal value exactly as written.
func tera(f gpuspec.Figure) float64 {
	v, err := strconv.ParseFloat(f.Text, 64)
	if err != nil {
		return f.Tera()
	}
	return v
}

func jsonSpec(g *gpuspec.GPU) jsonGPUSpec {
	s := jsonGPUSpec{Name: g.Name, Source: g.Source(), PeakTFLOPS: map[string]float64{}, MemoryTBps: tera(g.Memory), SMs: g.SMs, Link: g.Link}
	mark := func(key string, m gpuspec.Mark) {
		if m == 0 {
			return
		}
		if s.Marks == nil {
			s.Marks = map[string]string{}
		}
		s.Marks[key] = m.String()
	}
	for _, d := range gpuspec.DTypes() {
		if g.Peak[d].Known() {
			s.PeakTFLOPS[d.String()] = tera(g.Peak[d])
			mark(d.String(), g.Peak[d].Marks)
		}
	}
	mark("memory", g.Memory.Marks)
	mark("sms", g.SMsMark)
	mark("link", g.LinkMark)
	return s
}

func jsonGPURow(g *gpuspec.GPU) jsonGPU {
	r := jsonGPU{jsonGPUSpec: jsonSpec(g), Matches: []jsonGPUMatch{}}
	for _, m := range g.Matches {
		r.Matches = append(r.Matches, jsonGPUMatch{Name: m.Name, SMs: m.SMs, MemoryGiB: m.MemoryGiB})
	}
	return r
}

type jsonEfficiencyDoc struct {
	Inputs     []jsonInput       `json:"inputs"`
	Kind       string            `json:"kind"`
	Devices    []jsonEffDevice   `json:"devices"`
	Ops        []jsonEffOp       `json:"ops"`
	Categories []jsonEffCategory `json:"categories"`
	Steps      []jsonEffStep     `json:"steps"`
	Graphs     []jsonEffGraph    `json:"graphs"`
}

type jsonEffDevice struct {
	Run    string       `json:"run"`
	Input  string       `json:"input"`
	Device int32        `json:"device"`
	Name   string       `json:"name"`
	SMs    int          `json:"sms"`
	Spec   *jsonGPUSpec `json:"spec"`
	ByFlag bool         `json:"by_flag"`
}

type jsonEffOp struct {
	Run        string    `json:"run"`
	Device     int32     `json:"device"`
	Op         string    `json:"op"`
	Dims       [][]int64 `json:"dims"`
	Types      []string  `json:"types"`
	Category   string    `json:"category"`
	Kernels    []string  `json:"kernels"`
	Instances  int64     `json:"instances"`
	KernelNS   int64     `json:"kernel_ns"`
	FLOPs      int64     `json:"flops"`
	Bytes      int64     `json:"bytes"`
	TFLOPS     float64   `json:"tflops"`
	TBps       float64   `json:"tbps"`
	Intensity  float64   `json:"intensity"`
	RooflineNS int64     `json:"roofline_ns"`
	Efficiency float64   `json:"efficiency"`
	Bound      string    `json:"bound"`
	SMCoverage float64   `json:"sm_coverage"`
	SMKnownNS  int64     `json:"sm_known_ns"`
	Modelled   bool      `json:"modelled"`
	Model      string    `json:"model"`
	DType      string    `json:"dtype"`
	UpperBound bool      `json:"upper_bound"`
	Note       string    `json:"note"`
}

type jsonEffCategory struct {
	Run               string  `json:"run"`
	StepKind          string  `json:"step_kind"`
	Category          string  `json:"category"`
	Windows           int     `json:"windows"`
	KernelNS          int64   `json:"kernel_ns"`
	ModelledNS        int64   `json:"modelled_ns"`
	FLOPs             int64   `json:"flops"`
	Bytes             int64   `json:"bytes"`
	RooflineNS        int64   `json:"roofline_ns"`
	Efficiency        float64 `json:"efficiency"`
	SMCoverage        float64 `json:"sm_coverage"`
	SMKnownNS         int64   `json:"sm_known_ns"`
	KernelNSPerStep   int64   `json:"kernel_ns_per_step"`
	RooflineNSPerStep int64   `json:"roofline_ns_per_step"`
	TFLOPS            float64 `json:"tflops"`
	TBps              float64 `json:"tbps"`
}

type jsonEffStep struct {
	Run                   string    `json:"run"`
	StepKind              string    `json:"step_kind"`
	Steps                 int       `json:"steps"`
	Windows               int       `json:"windows"`
	SpanNSP50             float64   `json:"span_ns_p50"`
	KernelNS              int64     `json:"kernel_ns"`
	ModelledNS            int64     `json:"modelled_ns"`
	RooflineNS            int64     `json:"roofline_ns"`
	LinkedNS              int64     `json:"linked_ns"`
	LinkNS                int64     `json:"link_ns"`
	Link                  *jsonLink `json:"link"`
	SpeedOfLightNS        int64     `json:"speed_of_light_ns"`
	KernelNSPerStep       int64     `json:"kernel_ns_per_step"`
	SpeedOfLightNSPerStep int64     `json:"speed_of_light_ns_per_step"`
	ReplayNS              int64     `json:"replay_ns"`
	MatchedNS             int64     `json:"matched_ns"`
}

type jsonEffGraph struct {
	Run       string   `json:"run"`
	Input     string   `json:"input"`
	Captures  []string `json:"captures"`
	Replays   int      `json:"replays"`
	Kernels   int64    `json:"kernels"`
	KernelNS  int64    `json:"kernel_ns"`
	Matched   int64    `json:"matched"`
	MatchedNS int64    `json:"matched_ns"`
}

func efficiencyDoc(r *efficiency.Result) jsonEfficiencyDoc {
	kind := ""
	if c, on := r.Filter.Class(); on {
		kind = c.String()
	}
	doc := jsonEfficiencyDoc{Inputs: jsonInputs(r.Inputs), Kind: kind, Devices: []jsonEffDevice{}, Ops: []jsonEffOp{},
		Categories: []jsonEffCategory{}, Steps: []jsonEffStep{}, Graphs: []jsonEffGraph{}}
	for _, d := range r.Devices {
		jd := jsonEffDevice{Run: d.Run, Input: d.Path, Device: d.Device, Name: d.Name, SMs: d.SMs, ByFlag: d.ByFlag}
		if d.Spec != nil {
			s := jsonSpec(d.Spec)
			jd.Spec = &s
		}
		doc.Devices = append(doc.Devices, jd)
	}
	for _, o := range r.Ops {
		bound := ""
		if o.Modelled {
			bound = o.Bound.String()
		}
		dt := ""
		if o.FLOPs > 0 {
			dt = o.DType.String()
		}
		doc.Ops = append(doc.Ops, jsonEffOp{Run: o.Run, Device: o.Device, Op: o.Name, Dims: o.Dims, Types: o.Types, Category: o.Category.String(),
			Kernels: o.Kernels, Instances: o.Instances, KernelNS: o.KernelNS, FLOPs: o.FLOPs, Bytes: o.Bytes,
			TFLOPS: efficiency.Rate(o.FLOPs, o.KernelNS), TBps: efficiency.Rate(o.Bytes, o.KernelNS), Intensity: efficiency.Intensity(o.FLOPs, o.Bytes),
			RooflineNS: o.RooflineNS, Efficiency: o.Efficiency(), Bound: bound, SMCoverage: o.SM.Value(), SMKnownNS: o.SM.KnownNS,
			Modelled: o.Modelled, Model: o.Model.String(), DType: dt, UpperBound: o.UpperBound, Note: o.Note})
	}
	for _, c := range r.Categories {
		doc.Categories = append(doc.Categories, jsonEffCategory{Run: c.Run, StepKind: c.Class.String(), Category: c.Category.String(),
			Windows: c.Windows, KernelNS: c.KernelNS, ModelledNS: c.ModelledNS, FLOPs: c.FLOPs, Bytes: c.Bytes, RooflineNS: c.RooflineNS,
			Efficiency: c.Efficiency(), SMCoverage: c.SM.Value(), SMKnownNS: c.SM.KnownNS,
			KernelNSPerStep: stats.PerStep(c.KernelNS, c.Windows), RooflineNSPerStep: stats.PerStep(c.RooflineNS, c.Windows),
			TFLOPS: efficiency.Rate(c.FLOPs, c.ModelledNS), TBps: efficiency.Rate(c.Bytes, c.ModelledNS)})
	}
	for _, s := range r.Steps {
		js := jsonEffStep{Run: s.Run, StepKind: s.Class.String(), Steps: s.Steps, Windows: s.Windows, SpanNSP50: s.SpanP50,
			KernelNS: s.KernelNS, ModelledNS: s.ModelledNS, RooflineNS: s.RooflineNS, LinkedNS: s.LinkedNS, LinkNS: s.LinkNS,
			SpeedOfLightNS: s.SpeedOfLightNS, KernelNSPerStep: stats.PerStep(s.KernelNS, s.Windows),
			SpeedOfLightNSPerStep: stats.PerStep(s.SpeedOfLightNS, s.Windows), ReplayNS: s.ReplayNS, MatchedNS: s.MatchedNS}
		if s.Link != nil {
			js.Link = &jsonLink{Name: s.Link.Name, GBps: s.Link.GBps, About: s.Link.About, AssumedFrom: s.Link.Device}
		}
		doc.Steps = append(doc.Steps, js)
	}
	for _, g := range r.Graphs {
		caps := g.Captures
		if caps == nil {
			caps = []string{}
		}
		doc.Graphs = append(doc.Graphs, jsonEffGraph{Run: g.Run, Input: g.Path, Captures: caps, Replays: g.Replays, Kernels: g.Kernels,
			KernelNS: g.KernelNS, Matched: g.Matched, MatchedNS: g.MatchedNS})
	}
	return doc
}

// jsonKernelEff is a kernel name's row of the efficiency analysis, in the
// kernels lists of traceq kernels and breakdown.
type jsonKernelEff struct {
	SMCoverage float64 `json:"sm_coverage"`
	SMKnownNS  int64   `json:"sm_known_ns"`
	ModelledNS int64   `json:"modelled_ns"`
	FLOPs      int64   `json:"flops"`
	Bytes      int64   `json:"bytes"`
	RooflineNS int64   `json:"roofline_ns"`
	Efficiency float64 `json:"efficiency"`
}

func jsonKernelEfficiency(k *efficiency.KernelRow) *jsonKernelEff {
	return &jsonKernelEff{SMCoverage: k.SM.Value(), SMKnownNS: k.SM.KnownNS, ModelledNS: k.ModelledNS, FLOPs: k.FLOPs, Bytes: k.Bytes,
		RooflineNS: k.RooflineNS, Efficiency: k.Efficiency()}
}
