package render

import (
	"strconv"

	"github.com/traceq/traceq/gpuspec"
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
