package gen

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/parse/chrometrace"
)

// With Shapes, the timeline is the one written without: the same
// activities at the same times, the same step figures.
func TestShapesKeepTheTimeline(t *testing.T) {
	cfg := Config{Ranks: 2, Steps: 9, DecodeEvery: 4, MixedEvery: 3, Layers: 2, DropCorrEvery: 7, Seed: 3}
	plain, err := Write(io.Discard, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Shapes = true
	var buf bytes.Buffer
	shaped, err := Write(&buf, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Activities != shaped.Activities || len(plain.Steps) != len(shaped.Steps) {
		t.Fatalf("activities %d vs %d", plain.Activities, shaped.Activities)
	}
	for i, p := range plain.Steps {
		s := shaped.Steps[i]
		if p.First != s.First || p.SpanNS != s.SpanNS || p.BusyNS != s.BusyNS || p.KernelNS != s.KernelNS || !maps.Equal(p.ByCat, s.ByCat) || s.Eff == nil {
			t.Errorf("step %d differs with shapes", i)
		}
	}
	tr, err := chrometrace.Parse(bytes.NewReader(buf.Bytes()), chrometrace.Options{BlockSize: 2000, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.CheckValid(); err != nil || int64(len(tr.Activities)) != shaped.Activities {
		t.Fatalf("%v, %d activities", err, len(tr.Activities))
	}
}

// The Expected figures against the trace itself, read with encoding/json:
// every eager kernel's External id names a cpu_op whose dims give the
// GEMM FLOPs gen claims.
func TestShapesExpectedFromDims(t *testing.T) {
	cfg := Config{Ranks: 2, Steps: 6, DecodeEvery: 3, Layers: 2, Seed: 8, Shapes: true}
	var buf bytes.Buffer
	exp, err := Write(&buf, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Cat  string `json:"cat"`
			Name string `json:"name"`
			Args struct {
				Ext  int64     `json:"External id"`
				Dims [][]int64 `json:"Input Dims"`
			} `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	ops := map[int64]int{}
	for i, e := range doc.TraceEvents {
		if e.Cat == "cpu_op" {
			ops[e.Args.Ext] = i
		}
	}
	var gemmFLOPs, kernels, linked int64
	for _, e := range doc.TraceEvents {
		if e.Cat != "kernel" {
			continue
		}
		kernels++
		i, ok := ops[e.Args.Ext]
		if !ok {
			continue
		}
		linked++
		op := doc.TraceEvents[i]
		d := op.Args.Dims
		switch op.Name {
		case "aten::mm":
			gemmFLOPs += 2 * d[0][0] * d[0][1] * d[1][1]
		case "_C::gptq_marlin_gemm": // N = the scales' last dim
			gemmFLOPs += 2 * d[0][0] * d[0][1] * d[3][1]
		}
	}
	var want, eagerKernels int64
	for _, s := range exp.Steps {
		if s.Kind == "decode" {
			continue
		}
		for k, o := range s.Eff.Ops {
			if strings.HasPrefix(k, "aten::mm ") || strings.HasPrefix(k, "_C::gptq_marlin_gemm ") {
				want += o.FLOPs
			}
		}
		eagerKernels += int64(s.Activities - 1) // all but the memcpy
	}
	if gemmFLOPs == 0 || gemmFLOPs != want {
		t.Errorf("GEMM FLOPs from the dims %d, Expected %d", gemmFLOPs, want)
	}
	if linked != eagerKernels || kernels <= linked {
		t.Errorf("%d kernels linked to an op, want the %d eager ones (of %d)", linked, eagerKernels, kernels)
	}
}

// The capture trace holds the decode graph's launches in replay order,
// each naming its kernel and carrying its op's External id, and no kernel
// events but the eager fills'.
func TestWriteCapture(t *testing.T) {
	cfg := Config{Ranks: 2, Steps: 4, Layers: 3, Seed: 1, Shapes: true}
	var buf bytes.Buffer
	exp, err := WriteCapture(&buf, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Bytes != int64(buf.Len()) || exp.Launches != 12*3+5 || exp.Outside != 2 {
		t.Fatalf("%+v", exp)
	}
	var doc struct {
		TraceEvents []struct {
			Cat, Name string
			Args      map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	opExt := map[float64]bool{}
	var names []string
	kernels := 0
	capturing := false
	for _, e := range doc.TraceEvents {
		switch {
		case e.Cat == "cpu_op":
			opExt[e.Args["External id"].(float64)] = true
		case e.Name == "cudaStreamBeginCapture":
			capturing = true
		case e.Name == "cudaStreamEndCapture":
			capturing = false
		case e.Name == "cudaLaunchKernel" && capturing:
			if !opExt[e.Args["External id"].(float64)] || e.Args["grid"] == nil {
				t.Errorf("launch %s: no op or grid", e.Args["kernel"])
			}
			names = append(names, e.Args["kernel"].(string))
		case e.Cat == "kernel":
			kernels++
		}
	}
	var replay []string
	for _, f := range stepKernels(3, false) {
		replay = append(replay, f.name)
	}
	if !slices.Equal(names, replay) || !slices.Equal(exp.Names, replay) || kernels != 2 {
		t.Errorf("captured %d launches, %d kernels; want the %d of the decode graph and 2", len(names), kernels, len(replay))
	}
}
