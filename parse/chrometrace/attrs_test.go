package chrometrace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/testenv"
	"github.com/traceq/traceq/trace"
)

// The attribute tests check the model against an independent reading of
// the same file: encoding/json, math/big for times, and the linking rule
// of trace.Op written out by brute force (every op tried for every
// launch call).

// jEvent is one event as encoding/json reads it.
type jEvent struct {
	Ph   string         `json:"ph"`
	Cat  string         `json:"cat"`
	Name string         `json:"name"`
	TID  any            `json:"tid"`
	TS   json.Number    `json:"ts"`
	Dur  json.Number    `json:"dur"`
	Args map[string]any `json:"args"`
}

func (e *jEvent) start(t testing.TB) trace.Time { return trace.Time(jNS(t, e.TS)) }
func (e *jEvent) end(t testing.TB) trace.Time   { return e.start(t) + trace.Time(jNS(t, e.Dur)) }

// jNS converts µs text to integer ns with math/big.
func jNS(t testing.TB, n json.Number) int64 {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		t.Fatalf("bad number %q", n)
	}
	r.Mul(r, big.NewRat(1000, 1))
	if !r.IsInt() {
		t.Fatalf("%q µs is not whole ns", n)
	}
	return r.Num().Int64()
}

// jInt reads an integer arg (a json.Number), ok false when absent.
func jInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

func jEvents(t testing.TB, data []byte) []jEvent {
	t.Helper()
	var doc struct {
		TraceEvents []jEvent `json:"traceEvents"`
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc.TraceEvents
}

// oracle links kernels to ops as trace.Op says, by brute force.
type oracle struct {
	t       testing.TB
	ops     []*jEvent
	byExt   map[int64]*jEvent
	launchs map[int64]*jEvent // by correlation
}

func newOracle(t testing.TB, evs []jEvent) *oracle {
	o := &oracle{t: t, byExt: map[int64]*jEvent{}, launchs: map[int64]*jEvent{}}
	for i := range evs {
		e := &evs[i]
		switch {
		case e.Ph == "X" && (e.Cat == "cpu_op" || e.Cat == "Operator") && !strings.HasPrefix(e.Name, "ProfilerStep#"):
			o.ops = append(o.ops, e)
			if x, ok := jInt(e.Args["External id"]); ok {
				if _, dup := o.byExt[x]; !dup {
					o.byExt[x] = e
				}
			}
		case e.Ph == "X" && (e.Cat == "cuda_runtime" || e.Cat == "cuda_driver" || e.Cat == "Runtime") && isLaunchCall(e.Name):
			if c, ok := jInt(e.Args["correlation"]); ok {
				if _, dup := o.launchs[c]; !dup {
					o.launchs[c] = e
				}
			}
		}
	}
	return o
}

func (o *oracle) contains(op, l *jEvent) bool {
	return fmt.Sprint(op.TID) == fmt.Sprint(l.TID) && op.start(o.t) <= l.start(o.t) && l.start(o.t) <= op.end(o.t)
}

func ext(args map[string]any) (int64, bool) {
	if x, ok := jInt(args["External id"]); ok {
		return x, true
	}
	return jInt(args["external id"])
}

// launchOp is the op of launch call l.
func (o *oracle) launchOp(l *jEvent) *jEvent {
	if x, ok := ext(l.Args); ok {
		if op := o.byExt[x]; op != nil && o.contains(op, l) {
			return op
		}
	}
	var best *jEvent
	for _, op := range o.ops {
		if o.contains(op, l) && (best == nil || op.start(o.t) > best.start(o.t) ||
			op.start(o.t) == best.start(o.t) && op.end(o.t) < best.end(o.t)) {
			best = op
		}
	}
	return best
}

// kernelOp is the op of GPU activity k.
func (o *oracle) kernelOp(k *jEvent) *jEvent {
	c, _ := jInt(k.Args["correlation"])
	l := o.launchs[c]
	if l != nil && strings.Contains(l.Name, "GraphLaunch") {
		return nil
	}
	if x, ok := ext(k.Args); ok {
		if op := o.byExt[x]; op != nil && (l == nil || o.contains(op, l)) {
			return op
		}
	}
	if l == nil {
		return nil
	}
	return o.launchOp(l)
}

// jConfig is a kernel's launch configuration from its args; call is
// the name of the launch call that launched it (or the call itself):
// hipExtModuleLaunchKernel's grid counts threads, and the model's counts
// workgroups, a partial one included.
func jConfig(t testing.TB, args map[string]any, call string) (c trace.Config) {
	c = trace.NoConfig
	defer func() {
		if call != "hipExtModuleLaunchKernel" && call != "hipHccModuleLaunchKernel" {
			return
		}
		for i := range c.Grid {
			if c.Block[i] == 0 {
				c.Grid = [3]int32{}
				return
			}
			c.Grid[i] = int32(math.Ceil(float64(c.Grid[i]) / float64(c.Block[i])))
		}
	}()
	dim := func(key string, dst *[3]int32) {
		if v, ok := args[key].([]any); ok {
			for i := range v {
				n, _ := jInt(v[i])
				dst[i] = int32(n)
			}
		}
	}
	dim("grid", &c.Grid)
	dim("block", &c.Block)
	if n, ok := jInt(args["registers per thread"]); ok {
		c.Registers = int32(n)
	}
	if n, ok := jInt(args["shared memory"]); ok {
		c.SharedMem = int32(n)
	}
	return c
}

// jDims reads "Input Dims" as the model keeps it: tensors' dims, nil for
// a tensor list's own entry.
func jDims(v any) [][]int64 {
	arr, _ := v.([]any)
	out := make([][]int64, len(arr))
	for i, d := range arr {
		ds, _ := d.([]any)
		out[i] = []int64{}
		for _, x := range ds {
			n, ok := jInt(x)
			if !ok {
				out[i] = nil // a list of tensors
				break
			}
			out[i] = append(out[i], n)
		}
	}
	return out
}

func sigDims(s *trace.OpSig) [][]int64 {
	out := make([][]int64, len(s.Args))
	for i := range s.Args {
		out[i] = s.Args[i].Dims
	}
	return out
}

// checkAttrs compares every GPU activity's configuration and op (name
// and dims) with the oracle's, and returns the number of kernels linked
// per op name and the op instances per name.
func checkAttrs(t *testing.T, name string, data []byte) (linked, instances map[string]int) {
	t.Helper()
	tr, err := Parse(bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.CheckValid(); err != nil {
		t.Fatal(err)
	}
	evs := jEvents(t, data)
	o := newOracle(t, evs)
	type key struct {
		start trace.Time
		corr  int64
		name  string
	}
	want := map[key]*jEvent{}
	for i := range evs {
		e := &evs[i]
		if e.Ph == "X" && (e.Cat == "kernel" || e.Cat == "Kernel" || e.Cat == "gpu_memcpy" || e.Cat == "gpu_memset" || e.Cat == "Memcpy" || e.Cat == "Memset") {
			c, _ := jInt(e.Args["correlation"])
			want[key{e.start(t), c, e.Name}] = e
		}
	}
	if len(want) != len(tr.Activities) {
		t.Fatalf("%s: %d GPU events, %d activities", name, len(want), len(tr.Activities))
	}
	linked, instances = map[string]int{}, map[string]int{}
	seen := map[trace.OpID]bool{}
	for i := range tr.Activities {
		a := &tr.Activities[i]
		k := want[key{a.Start, a.Corr, tr.Name(a.Name)}]
		if k == nil {
			t.Fatalf("%s: activity %s at %d not in the file", name, tr.Name(a.Name), a.Start)
		}
		at := tr.AttrOf(a.Attr)
		wc := trace.NoConfig
		if a.Kind == trace.KindKernel {
			call := ""
			if c, ok := jInt(k.Args["correlation"]); ok && o.launchs[c] != nil {
				call = o.launchs[c].Name
			}
			wc = jConfig(t, k.Args, call)
		}
		if got := tr.ConfigOf(at.Config); got != wc {
			t.Errorf("%s: %s at %d: config %+v, want %+v", name, tr.Name(a.Name), a.Start, got, wc)
		}
		wop := o.kernelOp(k)
		op := tr.OpOf(at.Op)
		switch {
		case wop == nil && op == nil:
			continue
		case wop == nil || op == nil:
			t.Fatalf("%s: %s at %d: op %+v, want %v", name, tr.Name(a.Name), a.Start, op, wop)
		}
		sig := tr.SigOf(op.Sig)
		if tr.Name(sig.Name) != wop.Name || op.Start != wop.start(t) || op.End() != wop.end(t) {
			t.Errorf("%s: %s at %d: op %s at %d-%d, want %s at %d-%d", name, tr.Name(a.Name), a.Start,
				tr.Name(sig.Name), op.Start, op.End(), wop.Name, wop.start(t), wop.end(t))
		}
		if wd := jDims(wop.Args["Input Dims"]); !reflect.DeepEqual(sigDims(sig), wd) && len(wd) > 0 {
			t.Errorf("%s: op %s: dims %v, want %v", name, wop.Name, sigDims(sig), wd)
		}
		linked[wop.Name]++
		if !seen[at.Op] {
			seen[at.Op] = true
			instances[wop.Name]++
		}
	}
	return linked, instances
}

// TestAttrsB200 reads a real vLLM trace on B200s: every kernel's grid,
// block, registers and shared memory, and its op through External id:
// the 108 aten::addmm kernels each belong to one of 108 addmm calls, whose
// Input Dims and types are the recorded ones.
func TestAttrsB200(t *testing.T) {
	data := readTrace(t, "vllm_b200_eager_prefill.json.gz")
	linked, instances := checkAttrs(t, "b200", data)
	if linked["aten::addmm"] != 108 || instances["aten::addmm"] != 108 {
		t.Errorf("aten::addmm: %d kernels of %d calls, want 108 of 108", linked["aten::addmm"], instances["aten::addmm"])
	}
	total := 0
	for _, n := range linked {
		total += n
	}
	if total != 927 || linked["vllm::moe_forward"] != 252 || instances["vllm::moe_forward"] != 36 {
		t.Errorf("%d kernels linked, moe_forward %d of %d calls; want 927, 252 of 36", total, linked["vllm::moe_forward"], instances["vllm::moe_forward"])
	}
	tr, err := Parse(bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The first addmm: [[640], [888, 2880], [2880, 640], [], []], bf16.
	for _, op := range tr.Ops[1:] {
		s := tr.SigOf(op.Sig)
		if tr.Name(s.Name) != "aten::addmm" {
			continue
		}
		var types, values []string
		for _, a := range s.Args {
			types, values = append(types, tr.Name(a.Type)), append(values, tr.Name(a.Value))
		}
		if fmt.Sprint(sigDims(s)) != "[[640] [888 2880] [2880 640] [] []]" ||
			fmt.Sprint(types) != "[c10::BFloat16 c10::BFloat16 c10::BFloat16 Scalar Scalar]" ||
			fmt.Sprint(values) != "[   1 1]" || fmt.Sprint(s.Args[1].Strides) != "[2880 1]" {
			t.Errorf("first addmm: dims %v types %v values %q strides %v", sigDims(s), types, values, s.Args[1].Strides)
		}
		break
	}
	d := tr.Meta.Devices
	if len(d) != 8 || d[0].Name != "NVIDIA B200" || d[0].SMs != 148 || d[0].MemoryBytes != 191503138816 ||
		d[0].ComputeMajor != 10 || d[0].WarpSize != 32 || d[0].MaxThreadsPerSM != 2048 || d[0].RegistersPerSM != 65536 || d[0].SharedMemPerSM != 233472 {
		t.Errorf("devices: %+v", d)
	}
}

// TestAttrsReal checks configurations and ops on the other real traces:
// lower-case "external id" (2021), kernels whose External id is their
// correlation id (dlrm: linked by containment), AMD graph replays (no
// op), SGLang eager prefill.
func TestAttrsReal(t *testing.T) {
	for _, f := range []struct {
		file   string
		linked int // kernels linked to an op
	}{
		{"kineto2021_resnet50.json.gz", 9096},
		{"dlrm8/rank0.json.gz", 261},
		{"sglang_prefill.json.gz", 532},
		{"vllm_decode_full_graph.json.gz", 13},
		{"vllm_mixed_piecewise.json.gz", 62},
		{"hta_amd_mi250.json.gz", 16},
	} {
		t.Run(f.file, func(t *testing.T) {
			linked, _ := checkAttrs(t, f.file, readTrace(t, f.file))
			n := 0
			for _, c := range linked {
				n += c
			}
			if n != f.linked {
				t.Errorf("%d activities linked to an op, want %d", n, f.linked)
			}
		})
	}
}

// TestCaptureLaunches reads the vLLM graph-capture trace: during capture
// no kernel runs; each of the 428 launch calls that name their kernel
// keeps the name, grid and block, and its op (72 of them aten::addmm,
// with shapes), in order.
func TestCaptureLaunches(t *testing.T) {
	dir := testenv.Shared(t, "traces", "torch", "tracelens", "inference", "vllm_decode_full", "capture_traces")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	if len(files) != 1 {
		t.Fatalf("capture traces: %v", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	data := gunzip(t, raw)
	tr, err := Parse(bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	evs := jEvents(t, data)
	o := newOracle(t, evs)
	type want struct {
		kernel string
		cfg    trace.Config
		op     string
	}
	var wants []want
	for i := range evs {
		e := &evs[i]
		k, ok := e.Args["kernel"].(string)
		if !ok || e.Ph != "X" || e.Cat != "cuda_runtime" {
			continue
		}
		w := want{kernel: k, cfg: jConfig(t, e.Args, e.Name)}
		if op := o.launchOp(e); op != nil {
			w.op = op.Name
		}
		wants = append(wants, w)
	}
	// The model's launches in time order.
	ls := slices.Clone(tr.Launches)
	slices.SortStableFunc(ls, func(a, b trace.Launch) int { return int(a.Start - b.Start) })
	var got []want
	addmm := 0
	for _, l := range ls {
		at := tr.AttrOf(l.Attr)
		if at.Kernel == 0 {
			continue
		}
		w := want{kernel: tr.Name(at.Kernel), cfg: tr.ConfigOf(at.Config)}
		if op := tr.OpOf(at.Op); op != nil {
			s := tr.SigOf(op.Sig)
			w.op = tr.Name(s.Name)
			if w.op == "aten::addmm" && len(s.Args) == 5 && len(s.Args[1].Dims) == 2 {
				addmm++
			}
		}
		got = append(got, w)
	}
	if len(wants) != 428 || !reflect.DeepEqual(got, wants) {
		t.Fatalf("%d launches with a kernel name (want %d, 428 in the file); first differences:\n%s", len(got), len(wants), firstDiff(got, wants))
	}
	if addmm != 72 {
		t.Errorf("%d captured aten::addmm launches with shapes, want 72", addmm)
	}
}

func firstDiff[T any](got, want []T) string {
	var b strings.Builder
	for i := range max(len(got), len(want)) {
		var g, w any
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !reflect.DeepEqual(g, w) {
			fmt.Fprintf(&b, "%d: got %+v\n   want %+v\n", i, g, w)
			if b.Len() > 2000 {
				break
			}
		}
	}
	return b.String()
}

// opName returns the name of the op of an activity or launch attribute,
// "" for none.
func opName(tr *trace.Trace, id trace.AttrID) string {
	op := tr.OpOf(tr.AttrOf(id).Op)
	if op == nil {
		return ""
	}
	return tr.Name(tr.SigOf(op.Sig).Name)
}

// TestLinkRules covers each rule of trace.Op on a hand-written trace.
func TestLinkRules(t *testing.T) {
	evs := []string{
		// Two nested ops on thread 1, an op on thread 2.
		`{"ph": "X", "cat": "cpu_op", "name": "outer", "pid": 9, "tid": 1, "ts": 100, "dur": 100, "args": {"External id": 1}}`,
		`{"ph": "X", "cat": "cpu_op", "name": "inner", "pid": 9, "tid": 1, "ts": 110, "dur": 20, "args": {"External id": 2, "Input Dims": [[2, 3], [[4, 5], [6]], []], "Input type": ["float", "TensorList", "Scalar"], "Concrete Inputs": ["", "", "7"]}}`,
		`{"ph": "X", "cat": "cpu_op", "name": "other thread", "pid": 9, "tid": 2, "ts": 100, "dur": 100, "args": {"External id": 3}}`,
		// A launch with its External id; its kernel carries the id too.
		`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 1, "ts": 115, "dur": 2, "args": {"External id": 2, "correlation": 10}}`,
		`{"ph": "X", "cat": "kernel", "name": "by id", "pid": 0, "tid": 7, "ts": 300, "dur": 1, "args": {"External id": 2, "device": 0, "stream": 7, "correlation": 10, "grid": [4, 2, 1], "block": [128, 1, 1], "registers per thread": 32, "shared memory": 1024}}`,
		// A launch without an id, inside outer only: containment.
		`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 1, "ts": 150, "dur": 2, "args": {"correlation": 11}}`,
		`{"ph": "X", "cat": "kernel", "name": "by containment", "pid": 0, "tid": 7, "ts": 301, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 11}}`,
		// An External id that is the correlation id, naming op 3 on
		// another thread: not the call's op; containment gives inner.
		`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 1, "ts": 120, "dur": 2, "args": {"External id": 3, "correlation": 3}}`,
		`{"ph": "X", "cat": "kernel", "name": "id is corr", "pid": 0, "tid": 7, "ts": 302, "dur": 1, "args": {"External id": 3, "device": 0, "stream": 7, "correlation": 3}}`,
		// A graph replay inside outer: its kernels have no op.
		`{"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 9, "tid": 1, "ts": 160, "dur": 2, "args": {"External id": 1, "correlation": 12}}`,
		`{"ph": "X", "cat": "kernel", "name": "replayed", "pid": 0, "tid": 7, "ts": 303, "dur": 1, "args": {"External id": 1, "device": 0, "stream": 7, "correlation": 12}}`,
		// A kernel whose launch is missing: its own External id.
		`{"ph": "X", "cat": "kernel", "name": "no launch", "pid": 0, "tid": 7, "ts": 304, "dur": 1, "args": {"External id": 3, "device": 0, "stream": 7, "correlation": 13}}`,
		// A launch outside every op, naming its kernel (HIP, capture).
		`{"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 9, "tid": 1, "ts": 500, "dur": 2, "args": {"kernel": "captured", "correlation": 14, "grid": [1, 1, 1], "block": [64, 1, 1], "shared memory": 0}}`,
		// Malformed configurations are ignored, with an anomaly.
		`{"ph": "X", "cat": "kernel", "name": "bad grid", "pid": 0, "tid": 7, "ts": 305, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 15, "grid": [1, -1, 1], "block": [1, 1]}}`,
		// Arrays the scanner cannot read element by element (a ':' where a
		// value should be) end the reading (they once looped forever).
		`{"ph": "X", "cat": "kernel", "name": "colon in grid", "pid": 0, "tid": 7, "ts": 307, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 17, "grid": [1 :2, 3], "block": [1, 1, 1]}}`,
		`{"ph": "X", "cat": "cpu_op", "name": "bad types", "pid": 9, "tid": 3, "ts": 100, "dur": 100, "args": {"External id": 8, "Input type": ["a" b: "c"], "Input Dims": [[1 : 2]]}}`,
		`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 3, "ts": 150, "dur": 2, "args": {"External id": 8, "correlation": 18}}`,
		`{"ph": "X", "cat": "kernel", "name": "under bad types", "pid": 0, "tid": 7, "ts": 308, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 18}}`,
		// A memcpy gets an op but no configuration.
		`{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 9, "tid": 1, "ts": 112, "dur": 2, "args": {"correlation": 16}}`,
		`{"ph": "X", "cat": "gpu_memcpy", "name": "copy", "pid": 0, "tid": 7, "ts": 306, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 16, "grid": [1, 1, 1]}}`,
	}
	tr, err := parseBoth(t, []byte(`{"traceEvents": [`+strings.Join(evs, ",\n")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range tr.Activities {
		at := tr.AttrOf(a.Attr)
		c := tr.ConfigOf(at.Config)
		s := opName(tr, a.Attr)
		if c != trace.NoConfig {
			s += fmt.Sprintf(" %v %v %d %d %d", c.Grid, c.Block, c.Registers, c.SharedMem, c.DynamicSharedMem)
		}
		got[tr.Name(a.Name)] = s
	}
	want := map[string]string{
		"by id":           "inner [4 2 1] [128 1 1] 32 1024 -1",
		"by containment":  "outer",
		"id is corr":      "inner",
		"replayed":        "",
		"no launch":       "other thread",
		"bad grid":        "",
		"copy":            "inner",
		"colon in grid":   "",
		"under bad types": "bad types",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("activities:\n got %v\nwant %v", got, want)
	}
	var captured trace.Attr
	for _, l := range tr.Launches {
		if l.Corr == 14 {
			captured = tr.AttrOf(l.Attr)
		}
		if l.Corr == 12 && opName(tr, l.Attr) != "outer" {
			t.Errorf("the graph launch's op is %q, want outer", opName(tr, l.Attr))
		}
	}
	if tr.Name(captured.Kernel) != "captured" || captured.Op != 0 || tr.ConfigOf(captured.Config).Threads() != 64 || tr.ConfigOf(captured.Config).SharedMem != 0 {
		t.Errorf("the HIP launch's attributes: %+v (%+v)", captured, tr.ConfigOf(captured.Config))
	}
	// Only the ops something names are kept, in CompareOps order.
	var ops []string
	for _, op := range tr.Ops[1:] {
		ops = append(ops, tr.Name(tr.SigOf(op.Sig).Name))
	}
	if fmt.Sprint(ops) != "[outer other thread bad types inner]" { // by process, start, the longer, signature
		t.Errorf("ops %v", ops)
	}
	for _, op := range tr.Ops[1:] {
		s := tr.SigOf(op.Sig)
		if tr.Name(s.Name) != "inner" {
			continue
		}
		a := s.Args
		if len(a) != 3 || fmt.Sprint(a[0].Dims) != "[2 3]" || a[1].Dims != nil || fmt.Sprint(a[1].List) != "[[4 5] [6]]" ||
			tr.Name(a[1].Type) != "TensorList" || tr.Name(a[2].Value) != "7" || a[2].Dims == nil || len(a[2].Dims) != 0 {
			t.Errorf("inner's arguments: %+v", a)
		}
	}
	anom := map[string]int64{}
	for _, a := range tr.Anomalies {
		anom[a.What] = a.Count
	}
	if anom[anomBadConfig] != 2 {
		t.Errorf("anomalies %v, want one %q", anom, anomBadConfig)
	}
}

// Events equal but for their attributes are duplicates, as the documented
// rule says (start, duration, device, stream, name, correlation); the
// first attributes in value order are kept, whatever the worker count.
func TestDuplicateAttrs(t *testing.T) {
	k := func(ext int, grid int) string {
		return fmt.Sprintf(`{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 1, "args": {"External id": %d, "device": 0, "stream": 7, "correlation": 4, "grid": [%d, 1, 1]}}`, ext, grid)
	}
	tr, err := parseBoth(t, []byte(`{"traceEvents": [`+k(9, 8)+`, `+k(9, 2)+`, `+k(3, 5)+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	// No op carries the ids: the configurations decide, the first read
	// first.
	if len(tr.Activities) != 1 || tr.ConfigOf(tr.AttrOf(tr.Activities[0].Attr).Config).Grid[0] != 8 {
		t.Fatalf("activities %+v, configs %+v", tr.Activities, tr.Configs)
	}
	if tr.Anomalies[0].What != "duplicate GPU activity dropped" || tr.Anomalies[0].Count != 2 {
		t.Errorf("anomalies %+v", tr.Anomalies)
	}
}

// TestMetaRunInfo: distributedInfo with its process groups (pg_config),
// the host where the trace names it (Meta's Kineto builds write
// host_name; the open-source Kineto writes none: the other real traces
// have no host).
func TestMetaRunInfo(t *testing.T) {
	for _, tc := range []struct {
		file, host, groups string
		rank, world        int
		source             trace.RankSource
	}{
		// pg_count says 71 groups; pg_config lists the 15 rank 0 is in.
		{"vllm_b200_eager_prefill.json.gz", "", "71: 15 groups; first {0 default_pg cuda:nccl 8 [0 1 2 3 4 5 6 7]}; last {70 undefined cpu:gloo,cuda:gloo 8 [0 1 2 3 4 5 6 7]}", 0, 8, trace.RankFromDistributedInfo},
		{"hta_ns_resolution.json.gz", "twshared39868.02.pnb3.facebook.com", "1: 1 groups; first {0  cuda:nccl 1 [0]}; last {0  cuda:nccl 1 [0]}", 0, 1, trace.RankFromDistributedInfo},
		{"hta_amd_mi250.json.gz", "", "-1: 0 groups", -1, -1, trace.RankUnknown},
	} {
		tr, err := Parse(bytes.NewReader(readTrace(t, tc.file)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := tr.Meta
		g := fmt.Sprintf("%d: %d groups", m.ProcessGroupCount, len(m.ProcessGroups))
		if n := len(m.ProcessGroups); n > 0 {
			g += fmt.Sprintf("; first %v; last %v", m.ProcessGroups[0], m.ProcessGroups[n-1])
		}
		if m.Host != tc.host || g != tc.groups || m.Rank != tc.rank || m.WorldSize != tc.world || m.RankSource != tc.source {
			t.Errorf("%s: host %q, %s, rank %d of %d (%v)", tc.file, m.Host, g, m.Rank, m.WorldSize, m.RankSource)
		}
	}
	// The CPU-only HTA trace: rank 34 of 300, gloo, 10 groups; each
	// group's ranks as listed.
	tr, err := Parse(bytes.NewReader(readTrace(t, "hta_cpu_only.json.gz")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		DI struct {
			PG []struct {
				Name  string `json:"pg_name"`
				Size  int    `json:"pg_size"`
				Ranks []int  `json:"ranks"`
			} `json:"pg_config"`
		} `json:"distributedInfo"`
	}
	if err := json.Unmarshal(readTrace(t, "hta_cpu_only.json.gz"), &doc); err != nil {
		t.Fatal(err)
	}
	m := tr.Meta
	if m.Rank != 34 || m.WorldSize != 300 || m.Backend != "gloo" || len(m.ProcessGroups) != len(doc.DI.PG) || len(doc.DI.PG) != 11 || m.ProcessGroupCount != 10 {
		t.Fatalf("rank %d of %d, %s, %d groups (file: %d)", m.Rank, m.WorldSize, m.Backend, len(m.ProcessGroups), len(doc.DI.PG))
	}
	for i, g := range doc.DI.PG {
		if p := m.ProcessGroups[i]; p.Name != g.Name || p.Size != g.Size || !slices.Equal(p.Ranks, g.Ranks) {
			t.Errorf("group %d: %+v, file says %+v", i, p, g)
		}
	}
}

// TestThreadGrids: hipExtModuleLaunchKernel (hipBLASLt's launches) records
// its grid in threads, for the call and for the kernel it launched; the
// model counts workgroups, a partial last one included, and leaves every
// other launch's grid as recorded.
func TestThreadGrids(t *testing.T) {
	evs := []string{
		// The kernel comes first in the file: the call that says how to
		// read its grid may come after.
		`{"ph": "X", "cat": "kernel", "name": "Cijk_gemm", "pid": 0, "tid": 7, "ts": 300, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 10, "grid": [40960, 1, 1], "block": [256, 1, 1]}}`,
		`{"ph": "X", "cat": "cuda_runtime", "name": "hipExtModuleLaunchKernel", "pid": 9, "tid": 1, "ts": 100, "dur": 2, "args": {"kernel": "Cijk_gemm", "correlation": 10, "grid": [40960, 1, 1], "block": [256, 1, 1], "shared memory": 0}}`,
		// Not a multiple of the block: the last workgroup is partial.
		`{"ph": "X", "cat": "cuda_runtime", "name": "hipExtModuleLaunchKernel", "pid": 9, "tid": 1, "ts": 110, "dur": 2, "args": {"correlation": 11}}`,
		`{"ph": "X", "cat": "kernel", "name": "partial", "pid": 0, "tid": 7, "ts": 301, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 11, "grid": [1000, 3, 2], "block": [256, 2, 1]}}`,
		// No block: the number of workgroups is unknown.
		`{"ph": "X", "cat": "cuda_runtime", "name": "hipHccModuleLaunchKernel", "pid": 9, "tid": 1, "ts": 120, "dur": 2, "args": {"correlation": 12}}`,
		`{"ph": "X", "cat": "kernel", "name": "no block", "pid": 0, "tid": 7, "ts": 302, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 12, "grid": [4096, 1, 1], "registers per thread": 32}}`,
		// Every other launch call's grid counts blocks already.
		`{"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 9, "tid": 1, "ts": 130, "dur": 2, "args": {"kernel": "rope", "correlation": 13, "grid": [40960, 1, 1], "block": [256, 1, 1], "shared memory": 0}}`,
		`{"ph": "X", "cat": "kernel", "name": "rope", "pid": 0, "tid": 7, "ts": 303, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 13, "grid": [40960, 1, 1], "block": [256, 1, 1]}}`,
		`{"ph": "X", "cat": "kernel", "name": "no launch", "pid": 0, "tid": 7, "ts": 304, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 14, "grid": [40960, 1, 1], "block": [256, 1, 1]}}`,
	}
	tr, err := parseBoth(t, []byte(`{"traceEvents": [`+strings.Join(evs, ",\n")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range tr.Activities {
		c := tr.ConfigOf(tr.AttrOf(a.Attr).Config)
		got[tr.Name(a.Name)] = fmt.Sprintf("%v %v %d blocks", c.Grid, c.Block, c.Blocks())
	}
	for _, l := range tr.Launches {
		at := tr.AttrOf(l.Attr)
		if at.Kernel != 0 {
			c := tr.ConfigOf(at.Config)
			got[tr.Name(l.Name)+" "+tr.Name(at.Kernel)] = fmt.Sprintf("%v %v %d blocks", c.Grid, c.Block, c.Blocks())
		}
	}
	want := map[string]string{
		"Cijk_gemm":                          "[160 1 1] [256 1 1] 160 blocks",
		"hipExtModuleLaunchKernel Cijk_gemm": "[160 1 1] [256 1 1] 160 blocks",
		"partial":                            "[4 2 2] [256 2 1] 16 blocks",
		"no block":                           "[0 0 0] [0 0 0] 0 blocks",
		"rope":                               "[40960 1 1] [256 1 1] 40960 blocks",
		"hipLaunchKernel rope":               "[40960 1 1] [256 1 1] 40960 blocks",
		"no launch":                          "[40960 1 1] [256 1 1] 40960 blocks",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("configurations:\n got %v\nwant %v", got, want)
	}

	// A real hipBLASLt GEMM of a vLLM decode on MI300X: 114944 threads
	// in workgroups of 256 are 449 workgroups.
	tr, err = Parse(bytes.NewReader(readTrace(t, "vllm_decode_full_graph.json.gz")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range tr.Activities {
		if strings.HasPrefix(tr.Name(a.Name), "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT448x32x64_") {
			if c := tr.ConfigOf(tr.AttrOf(a.Attr).Config); c.Grid != [3]int32{449, 1, 1} && c.Grid != [3]int32{} {
				t.Errorf("%s at %d: grid %v, want [449 1 1]", tr.Name(a.Name), a.Start, c.Grid)
			} else if c.Grid[0] == 449 {
				n++
			}
		}
	}
	if n != 1 {
		t.Errorf("%d MT448x32x64 kernels with a grid, want 1", n)
	}
}
