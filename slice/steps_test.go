package slice

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/step"
)

// stepCase is one step selection to compare.
type stepCase struct{ from, to int }

// checkStepsStream compares Steps with the selection made from the parsed
// model for many step selections of one trace, and the slices they write
// byte for byte.
func checkStepsStream(t *testing.T, name string, data []byte, pattern string) {
	t.Helper()
	tr, err := chrometrace.Parse(bytes.NewReader(data), chrometrace.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	st, err := step.Find(tr, step.Options{Pattern: pattern})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	open := opener(data)
	if len(tr.Activities) == 0 { // parse.File refuses it
		if _, _, err := Steps(open, StepOptions{Options: step.Options{Pattern: pattern}, To: -1}); !errors.Is(err, parse.ErrNoGPU) {
			t.Errorf("%s: no GPU activity: Steps says %v", name, err)
		}
		return
	}
	if st == nil {
		if _, _, err := Steps(open, StepOptions{Options: step.Options{Pattern: pattern}, To: -1}); !errors.Is(err, ErrNoSteps) {
			t.Errorf("%s: no markers: Steps says %v", name, err)
		}
		return
	}
	n := len(st.List)
	var cases []stepCase
	add := func(c stepCase) {
		if !slices.Contains(cases, c) {
			cases = append(cases, c)
		}
	}
	add(stepCase{0, -1})
	add(stepCase{n - 1, -1})
	add(stepCase{n / 3, min(n/3+3, n)})
	if len(data) < 400<<10 {
		add(stepCase{n, -1}) // out of range: an error
		for i := 0; i < n && i < 8; i++ {
			add(stepCase{i, i + 1})
		}
	}
	kinds := []string{""}
	seen := map[string]bool{}
	for _, s := range st.List {
		if !seen[s.Kind.String()] {
			seen[s.Kind.String()] = true
			kinds = append(kinds, s.Kind.String())
		}
	}
	copied := 0
	for _, kind := range kinds {
		for ci, c := range cases {
			if kind != "" && ci > 1 {
				break
			}
			what := fmt.Sprintf("%s --steps %d:%d --kind %q", name, c.from, c.to, kind)
			want, wantSteps, werr := modelSteps(tr, st, c.from, c.to, kind)
			f, _ := step.ParseFilter(kind)
			got, gotSteps, gerr := Steps(open, StepOptions{Options: step.Options{Pattern: pattern}, From: c.from, To: c.to, Filter: f})
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Errorf("%s: error %v, want %v", what, gerr, werr)
				continue
			}
			if werr != nil {
				continue
			}
			if !reflect.DeepEqual(gotSteps, wantSteps) {
				t.Errorf("%s: steps differ", what)
			}
			if !reflect.DeepEqual(got.CPU, want.CPU) || got.GPU != want.GPU || !reflect.DeepEqual(got.Corr, want.Corr) {
				t.Errorf("%s: selection differs: CPU %v GPU %v %d corr ids, want CPU %v GPU %v %d corr ids",
					what, got.CPU, got.GPU, len(got.Corr), want.CPU, want.GPU, len(want.Corr))
				continue
			}
			// FromModel, the selection a merge makes from each rank's
			// model, is the same.
			fm, fmSteps, ferr := FromModel(tr, st, StepOptions{From: c.from, To: c.to, Filter: f})
			if ferr != nil || !reflect.DeepEqual(fmSteps, wantSteps) || !reflect.DeepEqual(fm.CPU, want.CPU) || fm.GPU != want.GPU ||
				!reflect.DeepEqual(fm.Corr, want.Corr) {
				t.Errorf("%s: FromModel differs (%v)", what, ferr)
			}
			if copied < 2 {
				copied++
				var a, b bytes.Buffer
				if _, err := Copy(open, want, &a); err != nil {
					t.Fatal(err)
				}
				if _, err := Copy(open, got, &b); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Errorf("%s: slices differ", what)
				}
			}
		}
	}
}

// Steps selects exactly what the parsed model and step.Find
// select, on every bundled trace, on generated traces (with kernels placed
// by the GPU-side mirrors) and on hand-made corner cases.
func TestStepsEqualModel(t *testing.T) {
	files, _ := filepath.Glob("../testdata/traces/torch/*.json*")
	more, _ := filepath.Glob("../testdata/traces/torch/dlrm8/rank[01].json.gz")
	files = append(files, more...)
	if len(files) < 10 {
		t.Fatalf("found %d traces", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkStepsStream(t, filepath.Base(f), data, "")
		if strings.Contains(f, "vllm_decode") {
			checkStepsStream(t, filepath.Base(f)+" (custom)", data, `^execute_`)
		}
	}
	for _, cfg := range []gen.Config{
		{Steps: 12, DecodeEvery: 4, MixedEvery: 3, Layers: 2, Seed: 3},
		{Steps: 9, DecodeEvery: 3, Layers: 2, Streams: 2, DropCorrEvery: 3, Seed: 4},
	} {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, cfg, 0); err != nil {
			t.Fatal(err)
		}
		checkStepsStream(t, fmt.Sprintf("gen %+v", cfg), buf.Bytes(), "")
	}
	for name, in := range cornerTraces {
		checkStepsStream(t, name, []byte(in), "")
	}
}

// cornerTraces exercise the attribution rules' odd cases.
var cornerTraces = map[string]string{
	// Kernels without a launch, placed by the mirrors; a mirror whose
	// first kernels were launched by another step; a launch id shared by
	// two calls in different steps (the earlier decides); a kernel of an
	// unknown launch inside no mirror.
	"mirrors": `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":100,"dur":100},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":200,"dur":100},
{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#1","pid":0,"tid":7,"ts":10,"dur":150},
{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#2","pid":0,"tid":7,"ts":160,"dur":90},
{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#3","pid":0,"tid":7,"ts":250,"dur":90},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":5,"dur":1,"args":{"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":95,"dur":1,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":105,"dur":1,"args":{"correlation":3}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":150,"dur":1,"args":{"correlation":4}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":250,"dur":1,"args":{"correlation":4}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":210,"dur":1,"args":{"correlation":5}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":120,"dur":1,"args":{"correlation":5}},
{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":12,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":161,"dur":5,"args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"b2","pid":0,"tid":7,"ts":161,"dur":6,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"c","pid":0,"tid":7,"ts":170,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"d","pid":0,"tid":7,"ts":180,"dur":5,"args":{"correlation":99}},
{"ph":"X","cat":"kernel","name":"e","pid":0,"tid":7,"ts":190,"dur":5},
{"ph":"X","cat":"kernel","name":"f","pid":0,"tid":8,"ts":260,"dur":5,"args":{"correlation":98}},
{"ph":"X","cat":"kernel","name":"g","pid":0,"tid":7,"ts":262,"dur":5,"args":{"correlation":4}},
{"ph":"X","cat":"kernel","name":"h","pid":0,"tid":7,"ts":270,"dur":5,"args":{"correlation":5}},
{"ph":"X","cat":"kernel","name":"i","pid":0,"tid":7,"ts":500,"dur":5,"args":{"correlation":97}},
{"ph":"s","cat":"ac2g","id":4,"pid":1,"tid":1,"ts":150},
{"ph":"f","cat":"ac2g","id":4,"pid":0,"tid":7,"ts":262,"bp":"e"}
]}`,
	// Mirrors only (the CPU side cut off).
	"mirrors only": `{"traceEvents":[
{"ph":"X","cat":"gpu_user_annotation","name":"execute_context_0(1)_generation_4(4)","pid":0,"tid":7,"ts":10,"dur":50},
{"ph":"X","cat":"gpu_user_annotation","name":"execute_context_2(1)_generation_0(0)","pid":0,"tid":7,"ts":60,"dur":50},
{"ph":"X","cat":"gpu_user_annotation","name":"execute_context_0(1)_generation_4(4)","pid":0,"tid":7,"ts":110,"dur":50},
{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":12,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":70,"dur":5},
{"ph":"X","cat":"kernel","name":"c","pid":0,"tid":7,"ts":120,"dur":5,"args":{"correlation":3}}
]}`,
	"mirrors only, no kernels": `{"traceEvents":[
{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#1","pid":0,"tid":7,"ts":10,"dur":50},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":50}
]}`,
	"no markers": `{"traceEvents":[
{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":12,"dur":5,"args":{"correlation":1}}
]}`,
}
