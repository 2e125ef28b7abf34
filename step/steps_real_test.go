package step_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/testenv"

	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// oracle is a second, deliberately naive reading of a Kineto trace for the
// step tests: encoding/json, exact decimals, and O(N·M) scans.
type oracle struct {
	cpu      []oRange // annotation ranges, CPU side
	launches map[int64]oLaunch
	acts     []oAct
}

type oRange struct {
	name       string
	tid        string
	start, end int64
}

type oLaunch struct {
	name string
	tid  string
	ts   int64
}

type oAct struct {
	corr int64 // 0: none
	ts   int64
}

func ns(t *testing.T, v any) int64 {
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("not a number: %v", v)
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		t.Fatalf("bad number %q", n)
	}
	r.Mul(r, big.NewRat(1000, 1))
	f, _ := r.Float64()
	if f >= 0 {
		f += 0.5
	} else {
		f -= 0.5
	}
	return int64(f)
}

func readOracle(t *testing.T, path string) *oracle {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	o := &oracle{launches: map[int64]oLaunch{}}
	for _, ev := range doc.TraceEvents {
		if ev["ph"] != "X" {
			continue
		}
		cat, _ := ev["cat"].(string)
		name, _ := ev["name"].(string)
		args, _ := ev["args"].(map[string]any)
		corr := int64(0)
		if c, ok := args["correlation"].(json.Number); ok {
			corr, _ = strconv.ParseInt(string(c), 10, 64)
		}
		tid := ""
		if ev["tid"] != nil {
			tid = strings.TrimSpace(strings.Trim(jsonText(ev["tid"]), `"`))
		}
		switch cat {
		case "user_annotation", "cpu_op", "Operator":
			if d, ok := ev["dur"]; ok {
				s := ns(t, ev["ts"])
				o.cpu = append(o.cpu, oRange{name, tid, s, s + ns(t, d)})
			}
		case "cuda_runtime", "cuda_driver", "Runtime", "Driver":
			if corr != 0 {
				if _, dup := o.launches[corr]; !dup {
					o.launches[corr] = oLaunch{name, tid, ns(t, ev["ts"])}
				}
			}
		case "kernel", "Kernel", "gpu_memcpy", "gpu_memset", "Memcpy", "Memset":
			o.acts = append(o.acts, oAct{corr, ns(t, ev["ts"])})
		}
	}
	return o
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// markers returns the CPU ranges whose name matches re, by start, longer
// first.
func (o *oracle) markers(re *regexp.Regexp) []oRange {
	var out []oRange
	for _, r := range o.cpu {
		if re.MatchString(r.name) {
			out = append(out, r)
		}
	}
	for i := 1; i < len(out); i++ { // insertion sort: small
		for j := i; j > 0 && (out[j].start < out[j-1].start || out[j].start == out[j-1].start && out[j].end > out[j-1].end); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// stepCounts applies the attribution rule naively: for each activity, its
// launch, then the marker containing the launch start with the latest
// start on the launch's thread, else on any thread; -1 for none.
func (o *oracle) stepCounts(ms []oRange) map[int]int {
	out := map[int]int{}
	for _, a := range o.acts {
		l, ok := o.launches[a.corr]
		step := -1
		if ok && a.corr != 0 {
			for pass := 0; pass < 2 && step < 0; pass++ {
				for i, m := range ms {
					if (pass == 1 || m.tid == l.tid) && m.start <= l.ts && l.ts < m.end {
						step = i // later i: later start, or shorter at a tie
					}
				}
			}
		}
		out[step]++
	}
	return out
}

const torch = "../testdata/traces/torch/"

func TestStepsRealTraces(t *testing.T) {
	vllm := regexp.MustCompile(`^execute_(?:\d+_)?context_(\d+)\(.*\)_generation_(\d+)\(`)
	profiler := regexp.MustCompile(`^ProfilerStep#\d+$`)
	for _, tc := range []struct {
		file   string
		re     *regexp.Regexp
		kinds  []string // want, in step order
		also   string   // another marker text that must be present but not chosen
		option string   // --step
	}{
		{"vllm_decode_full_graph.json.gz", vllm, []string{"decode"}, "", ""},
		{"vllm_mixed_piecewise.json.gz", vllm, []string{"mixed"}, "", ""},
		{"sglang_decode.json.gz", vllm, []string{"decode"}, "step[DECODE bs=32]", ""},
		{"sglang_prefill.json.gz", vllm, []string{"prefill"}, "step[EXTEND bs=15 toks=15360]", ""},
		{"vllm_b200_eager_prefill.json.gz", vllm, []string{"prefill"}, "", ""},
		{"hta_ns_resolution.json.gz", profiler, []string{"step", "step", "step", "step", "step"}, "", ""},
		{"kineto2021_resnet50.json.gz", profiler, []string{"step", "step", "step", "step", "step", "step"}, "", ""},
		{"hta_amd_mi250.json.gz", profiler, []string{"step", "step"}, "", ""},
		{"dlrm_rank0_plain.json", profiler, []string{"step"}, "", ""},
		{"hta_gpu_user_annotation.json.gz", regexp.MustCompile(`^Optimizer\.step#`), []string{"step", "step", "step", "step", "step"}, "", `^Optimizer\.step#`},
		// SGLang's own marker, chosen with --step: the forward's kernels
		// launched before step[EXTEND] opened belong to no step.
		{"sglang_prefill.json.gz", regexp.MustCompile(`^step\[`), []string{"prefill"}, "", `^step\[`},
	} {
		t.Run(tc.file+tc.option, func(t *testing.T) {
			o := readOracle(t, torch+tc.file)
			ms := o.markers(tc.re)
			if len(ms) != len(tc.kinds) {
				t.Fatalf("oracle finds %d markers, the test expects %d", len(ms), len(tc.kinds))
			}
			if tc.also != "" && len(o.markers(regexp.MustCompile("^"+regexp.QuoteMeta(tc.also)+"$"))) != 1 {
				t.Fatalf("trace lacks %q", tc.also)
			}
			tr, err := parse.File(torch+tc.file, parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st, err := step.Find(tr, step.Options{Pattern: tc.option})
			if err != nil || st == nil {
				t.Fatalf("FindSteps = %v, %v", st, err)
			}
			if len(st.List) != len(ms) {
				t.Fatalf("%d steps, want %d", len(st.List), len(ms))
			}
			for i, s := range st.List {
				if s.Marker != ms[i].name || s.Kind.String() != tc.kinds[i] || s.Index != i {
					t.Errorf("step %d = %q %s (index %d), want %q %s", i, s.Marker, s.Kind, s.Index, ms[i].name, tc.kinds[i])
				}
				// The vLLM rule, from the regexp's captures.
				if sub := vllm.FindStringSubmatch(s.Marker); sub != nil && tc.option == "" {
					c, _ := strconv.Atoi(sub[1])
					g, _ := strconv.Atoi(sub[2])
					want := "mixed"
					if c == 0 && g > 0 {
						want = "decode"
					} else if g == 0 {
						want = "prefill"
					}
					if s.Kind.String() != want {
						t.Errorf("step %d kind %s, want %s by C=%d G=%d", i, s.Kind, want, c, g)
					}
				}
			}
			if len(o.acts) != len(tr.Activities) {
				t.Fatalf("oracle reads %d activities, parser %d", len(o.acts), len(tr.Activities))
			}
			want := o.stepCounts(ms)
			got := map[int]int{}
			for _, s := range st.Of {
				got[int(s)]++
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("step %d: %d activities, oracle %d (all: got %v, oracle %v)", k, got[k], v, got, want)
				}
			}
			if len(got) != len(want) {
				t.Errorf("steps with activities: got %v, oracle %v", got, want)
			}
			t.Logf("%d steps; activities per step %v", len(st.List), got)
		})
	}
}

// TestGraphReplayAttribution: in the full-graph decode trace all 421
// kernels of the one hipGraphLaunch belong to the decode step.
func TestGraphReplayAttribution(t *testing.T) {
	o := readOracle(t, torch+"vllm_decode_full_graph.json.gz")
	var graphCorr int64
	for c, l := range o.launches {
		if strings.Contains(l.name, "GraphLaunch") {
			if graphCorr != 0 {
				t.Fatal("two graph launches")
			}
			graphCorr = c
		}
	}
	n := 0
	for _, a := range o.acts {
		if a.corr == graphCorr {
			n++
		}
	}
	if n != 421 {
		t.Fatalf("oracle: %d kernels share the graph launch's correlation id, want 421", n)
	}
	tr, err := parse.File(torch+"vllm_decode_full_graph.json.gz", parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := step.Find(tr, step.Options{})
	if err != nil || st == nil {
		t.Fatal(st, err)
	}
	got := 0
	for i := range tr.Activities {
		if tr.Activities[i].Corr == graphCorr {
			if st.Of[i] != 0 {
				t.Errorf("graph kernel %d in step %d, want 0", i, st.Of[i])
			}
			got++
		}
	}
	if got != 421 {
		t.Errorf("%d graph kernels, want 421", got)
	}
	// All of them run after the marker range has closed: a time window
	// on the marker would hold none of them.
	after := 0
	for i := range tr.Activities {
		if tr.Activities[i].Corr == graphCorr && tr.Activities[i].Start >= st.List[0].End {
			after++
		}
	}
	if after != 421 {
		t.Errorf("%d of 421 graph kernels start after the marker closed, want all", after)
	}
}

func TestNoMarkers(t *testing.T) {
	for _, f := range []string{"hta_gpu_user_annotation.json.gz", "hta_legacy_minimal.json.gz"} {
		tr, err := parse.File(torch+f, parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := step.Find(tr, step.Options{}); st != nil || err != nil {
			t.Errorf("%s: FindSteps = %+v, %v; want nil, nil", f, st, err)
		}
	}
}

// TestStepsNsysNVTX: NVTX ranges of an nsys export are step markers too.
// The saxpy MPI export has five "saxpy" push/pop ranges, each launching one
// kernel (checked with sqlite3: every kernel's runtime row starts inside
// one of them); its 15 memcpys are launched outside.
func TestStepsNsysNVTX(t *testing.T) {
	tr, err := parse.File("../testdata/traces/nsys/nsys2022.2.1_saxpy-mpi-a100-nonlazy.sqlite", parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := step.Find(tr, step.Options{}); st != nil || err != nil {
		t.Fatalf("default markers: %+v, %v; want none", st, err)
	}
	st, err := step.Find(tr, step.Options{Pattern: `^saxpy$`})
	if err != nil || st == nil || len(st.List) != 5 {
		t.Fatalf("--step ^saxpy$: %+v, %v", st, err)
	}
	perStep := map[int32]int{}
	for i, s := range st.Of {
		if tr.Activities[i].Kind == trace.KindKernel {
			perStep[s]++
		} else if s != -1 {
			t.Errorf("memcpy %d in step %d", i, s)
		}
	}
	for s := int32(0); s < 5; s++ {
		if perStep[s] != 1 {
			t.Errorf("step %d: %d kernels, want 1", s, perStep[s])
		}
	}
}

// TestStepsSharedTraces walks the reference traces in ../shared (skipped
// when absent): the markers of the family the rule prefers, found here by
// regular expressions, must be FindSteps' steps, and the naive oracle must
// give every step the same activities.
func TestStepsSharedTraces(t *testing.T) {
	root := testenv.Shared(t, "traces", "torch")
	if testing.Short() {
		t.Skip("reads ~25 traces twice, one of them with a naive O(N·M) oracle: about a minute")
	}
	families := []*regexp.Regexp{ // in the rule's order of preference
		regexp.MustCompile(`(?i)^execute_(?:\d+_)?context_\d+`),
		regexp.MustCompile(`(?i)^step\[\w+[ \]]`),
		regexp.MustCompile(`(?i)^execute_new_\d+_cached_\d+`),
		regexp.MustCompile(`(?i)^ProfilerStep#\d+$`),
	}
	var files []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".json.gz") || strings.HasSuffix(p, ".json")) {
			files = append(files, p)
		}
		return nil
	})
	checked := 0
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, root+"/"), func(t *testing.T) {
			tr, err := parse.File(f, parse.Options{})
			if err != nil {
				t.Skipf("not a GPU trace: %v", err)
			}
			o := readOracle(t, f)
			var ms []oRange
			for _, re := range families {
				if ms = o.markers(re); len(ms) > 0 {
					break
				}
			}
			st, err := step.Find(tr, step.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) == 0 {
				if st != nil {
					t.Fatalf("oracle finds no marker, FindSteps %d steps", len(st.List))
				}
				return
			}
			// A range recorded twice is one step.
			ms = slices.CompactFunc(ms, func(a, b oRange) bool { return a == b })
			if st == nil || len(st.List) != len(ms) {
				t.Fatalf("FindSteps: %+v; oracle %d markers", st, len(ms))
			}
			for i := range ms {
				if st.List[i].Marker != ms[i].name {
					t.Errorf("step %d: %q, oracle %q", i, st.List[i].Marker, ms[i].name)
				}
			}
			want := o.stepCounts(ms)
			got := map[int]int{}
			for _, s := range st.Of {
				got[int(s)]++
			}
			if !maps.Equal(got, want) {
				t.Errorf("activities per step %v, oracle %v", got, want)
			}
			checked++
			t.Logf("%d steps (%s …), activities per step %v", len(ms), st.List[0].Kind, got)
		})
	}
	t.Logf("%d traces with steps checked", checked)
}
