package step

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/trace"
)

// TestFindRuns: Find attributes the activities in runs on several
// goroutines (eachRun); its steps are those of one run, whatever the
// number of runs: launches whose kernels fall in several runs, graph
// replays, kernels without a launch call left to the GPU-side mirrors.
func TestFindRuns(t *testing.T) {
	defer func(n, m int) { runMin, runMax = n, m }(runMin, runMax)
	traces := map[string]*trace.Trace{}
	for _, name := range []string{"vllm_mixed_piecewise.json.gz", "dlrm8/rank1.json.gz", "hta_ns_resolution.json.gz", "vllm_b200_eager_prefill.json.gz", "sglang_decode.json.gz"} {
		f, err := os.Open(filepath.Join("..", "testdata", "traces", "torch", name))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := chrometrace.Parse(f, chrometrace.Options{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		traces[name] = tr
	}
	for i, cfg := range []gen.Config{
		{Steps: 30, DecodeEvery: 5, MixedEvery: 4, Layers: 3, DropCorrEvery: 3, Seed: 2},
		{Steps: 20, DecodeEvery: 1, Layers: 2, DropCorrEvery: 1, Seed: 4},
	} {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, cfg, 0); err != nil {
			t.Fatal(err)
		}
		tr, err := chrometrace.Parse(&buf, chrometrace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		traces[string(rune('a'+i))+"-generated"] = tr
	}
	for name, tr := range traces {
		runMin, runMax = 1<<30, 0
		want, err := Find(tr, Options{})
		if err != nil || want == nil {
			t.Fatalf("%s: %v, %v", name, want, err)
		}
		for _, m := range []int{1, 7, len(tr.Activities) / 3} {
			runMin, runMax = max(m, 1), 2+m%3
			got, err := Find(tr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: runs of %d activities or more: steps differ from one run's", name, m)
			}
		}
	}
}
