package step

import (
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/trace"
)

func TestParseMarker(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ok       bool
		family   string
		kind     Kind
		ctx, gen int64
		tokens   int64
	}{
		{"ProfilerStep#5", true, familyProfiler, Generic, -1, -1, -1},
		{"ProfilerStep#", false, "", Kind(0), -1, -1, -1},
		{"ProfilerStepX", false, "", Kind(0), -1, -1, -1},
		{"execute_context_1(888_788544)_generation_0(0)", true, familyVLLM, Prefill, 1, 0, 888},
		{"execute_context_0(0)_generation_32(32)", true, familyVLLM, Decode, 0, 32, 32},
		{"execute_context_2(10)_generation_3(3)", true, familyVLLM, Mixed, 2, 3, 13},
		{"execute_context_2(1500)_generation_30(30)", true, familyVLLM, Mixed, 2, 30, 1530},
		{"execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)", true, familyVLLM, Decode, 0, 32, 32},
		{"execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489)", true, familyVLLM, Mixed, 9, 37, 8192},
		{"execute_15360_context_15(sq15360sk15360)_generation_0(sq0sk0", true, familyVLLM, Prefill, 15, 0, 15360}, // cut short
		{"execute_context_0_generation_0", true, familyVLLM, Prefill, 0, 0, -1},
		{"execute_context_1(sq5)_generation_2(2)", true, familyVLLM, Mixed, 1, 2, -1}, // no count in one part
		{"execute_context_1(7)_generation_2", true, familyVLLM, Mixed, 1, 2, -1},
		{"execute_model", false, "", Kind(0), -1, -1, -1},
		{"execute_abc_context_1_generation_2", false, "", Kind(0), -1, -1, -1},
		{"execute_generation_2_context_1", false, "", Kind(0), -1, -1, -1},
		{"execute_new_4_cached_0", true, familyVLLMOld, Prefill, 4, 0, -1},
		{"execute_new_0_cached_12", true, familyVLLMOld, Decode, 0, 12, -1},
		{"execute_new_2_cached_12", true, familyVLLMOld, Mixed, 2, 12, -1},
		{"execute_new_x_cached_1", false, "", Kind(0), -1, -1, -1},
		{"step[DECODE bs=32]", true, familySGLang, Decode, -1, -1, 32},
		{"step[EXTEND bs=15 toks=15360]", true, familySGLang, Prefill, -1, -1, 15360},
		{"step[EXTEND bs=2 toks=14721 c_sq=3 c_sk=9]", true, familySGLang, Prefill, -1, -1, 14721},
		{"step[extend bs=1]", true, familySGLang, Prefill, -1, -1, -1},
		{"STEP[Prefill]", true, familySGLang, Prefill, -1, -1, -1},
		{"step[MIXED bs=8 toks=900]", true, familySGLang, Mixed, -1, -1, 900},
		{"step[mixed bs=8 ext=700 dec=7]", true, familySGLang, Mixed, -1, -1, 707},
		{"step[mixed bs=8 xext=700 dec=7]", true, familySGLang, Mixed, -1, -1, -1},
		{"step[IDLE]", true, familySGLang, Generic, -1, -1, -1},
		{"step[TARGET_VERIFY bs=4]", true, familySGLang, Generic, -1, -1, -1},
		{"step[DECODE", false, "", Kind(0), -1, -1, -1},
		{"prefill[bs=2 tok=14721 ctx=[7803, 6918]]", true, familyATOM, Prefill, -1, -1, 14721},
		{"decode[bs=117/128 tok=117 d=117]", true, familyATOM, Decode, -1, -1, 117},
		{"DECODE[bs=4/8]", true, familyATOM, Decode, -1, -1, -1},
		{"decode[bs=x tok=1]", false, "", Kind(0), -1, -1, -1},
		{"decode[bs=1 tok=1", false, "", Kind(0), -1, -1, -1},
		{"decode[tok=1]", false, "", Kind(0), -1, -1, -1},
		{"capture_128_decode", false, "", Kind(0), -1, -1, -1},
		{"capture_1_prefill", false, "", Kind(0), -1, -1, -1},
		{"Optimizer.step#SGD.step", false, "", Kind(0), -1, -1, -1},
		{"", false, "", Kind(0), -1, -1, -1},
	} {
		m, ok := parseMarker(tc.name)
		if ok != tc.ok {
			t.Errorf("parseMarker(%q) ok = %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if m.Family != tc.family || m.Kind != tc.kind || m.Context != tc.ctx || m.Generation != tc.gen || m.Tokens != tc.tokens {
			t.Errorf("parseMarker(%q) = %+v, want family %s kind %s ctx %d gen %d tokens %d", tc.name, m, tc.family, tc.kind, tc.ctx, tc.gen, tc.tokens)
		}
	}
}

// FuzzMarker checks that parseMarker never panics, that a recognised
// marker has a kind of its family and a token count of -1 or more, that
// a capture marker is never a step, and that case does not matter.
func FuzzMarker(f *testing.F) {
	for _, s := range []string{"ProfilerStep#1", "execute_context_1(888_788544)_generation_0(0)",
		"execute_32_context_0(sq0)_generation_32(sq32)", "execute_new_1_cached_2", "step[DECODE bs=32]",
		"step[EXTEND bs=15 toks=15360]", "execute_", "step[", "execute_context_99999999999999999999_generation_1",
		"step[mixed bs=8 ext=700 dec=7]", "prefill[bs=2 tok=14721 ctx=[7803, 6918]]", "decode[bs=117/128 tok=117 d=117]",
		"capture_128_decode", "execute_context_999999999999999999(999999999999999999)_generation_1(999999999999999999)"} {
		f.Add(s)
	}
	kinds := map[string][]Kind{
		familyProfiler: {Generic},
		familyVLLM:     {Decode, Prefill, Mixed},
		familyVLLMOld:  {Decode, Prefill, Mixed},
		familySGLang:   {Decode, Prefill, Mixed, Generic},
		familyATOM:     {Decode, Prefill},
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.HasPrefix(strings.ToLower(s), "capture_") {
			if _, ok := parseMarker(s); ok {
				t.Fatalf("%q is both a capture and a step marker", s)
			}
		}
		m, ok := parseMarker(s)
		if !ok {
			return
		}
		if !slices.Contains(kinds[m.Family], m.Kind) {
			t.Fatalf("parseMarker(%q) = %+v: kind not of its family", s, m)
		}
		if m.Family == familyVLLM && (m.Context < 0 || m.Generation < 0) {
			t.Fatalf("parseMarker(%q) = %+v: vLLM marker without counts", s, m)
		}
		if m.Tokens < -1 {
			t.Fatalf("parseMarker(%q) = %+v: negative token count", s, m)
		}
		if m2, ok2 := parseMarker(upperASCII(s)); !ok2 || m2 != m {
			t.Fatalf("parseMarker(upper %q) = %+v, %v; want %+v", s, m2, ok2, m)
		}
	})
}

func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// builder makes small traces by hand.
type builder struct {
	in *trace.Interner
	t  *trace.Trace
}

func newBuilder() *builder {
	return &builder{in: trace.NewInterner(), t: &trace.Trace{Procs: []trace.Proc{{PID: 1, Rank: -1}, {PID: 2, Rank: -1}}}}
}

func (b *builder) cpu(name string, thread int64, start, end trace.Time) {
	b.cpuProc(0, name, thread, start, end)
}

func (b *builder) cpuProc(proc int32, name string, thread int64, start, end trace.Time) {
	b.t.Ranges = append(b.t.Ranges, trace.Range{Start: start, Dur: int64(end - start), Thread: thread, Proc: proc,
		Name: b.in.ID(name), Device: -1, Stream: -1, Kind: trace.RangeCPU})
}

func (b *builder) gpu(name string, device, stream int32, start, end trace.Time) {
	b.t.Ranges = append(b.t.Ranges, trace.Range{Start: start, Dur: int64(end - start), Name: b.in.ID(name),
		Device: device, Stream: stream, Kind: trace.RangeGPU})
}

func (b *builder) launch(proc int32, corr, thread int64, at trace.Time) {
	b.t.Launches = append(b.t.Launches, trace.Launch{Start: at, Dur: 1, Corr: corr, Thread: thread,
		Name: b.in.ID("cudaLaunchKernel"), Proc: proc})
}

// kernel adds an activity; its Corr identifies it in the test (Stream
// carries a test id when Corr is 0).
func (b *builder) kernel(proc int32, corr int64, device, stream int32, start, end trace.Time) {
	b.t.Activities = append(b.t.Activities, trace.Activity{Start: start, Dur: int64(end - start), Corr: corr,
		Name: b.in.ID("k"), Device: device, Stream: stream, Proc: proc})
}

func (b *builder) done(t *testing.T) *trace.Trace {
	b.t.Names = b.in.Names()
	b.t.Sort()
	if err := b.t.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return b.t
}

// stepOf returns the step marker text each activity was given, keyed by
// (corr, start): "-" for none.
func stepOf(t *testing.T, tr *trace.Trace, st *Steps) map[[2]int64]string {
	out := map[[2]int64]string{}
	for i := range tr.Activities {
		a := &tr.Activities[i]
		s := "-"
		if st.Of[i] >= 0 {
			s = st.List[st.Of[i]].Marker
		}
		out[[2]int64{a.Corr, int64(a.Start)}] = s
	}
	return out
}

func TestFindStepsAttribution(t *testing.T) {
	b := newBuilder()
	// Main thread 10: two decode steps back to back, a custom annotation
	// nested in the first.
	b.cpu("execute_context_0(0)_generation_4(4)", 10, 100, 200)
	b.cpu("my_region", 10, 120, 150)
	b.cpu("execute_context_2(9)_generation_0(0)", 10, 200, 300)
	// One graph launch in step A: three kernels share corr 1, the last
	// runs after A closed while B is open.
	b.launch(0, 1, 10, 110)
	b.kernel(0, 1, 0, 7, 150, 170)
	b.kernel(0, 1, 0, 7, 170, 190)
	b.kernel(0, 1, 0, 7, 195, 260)
	// A launch in B from another thread of the process (no marker there).
	b.launch(0, 2, 11, 210)
	b.kernel(0, 2, 0, 8, 262, 270)
	// A launch on thread 10 exactly at B's start: B (half-open ranges).
	b.launch(0, 3, 10, 200)
	b.kernel(0, 3, 0, 7, 271, 280)
	// A launch between and after the steps: no step, even though a GPU
	// mirror of B contains the kernel.
	b.launch(0, 4, 10, 300)
	b.kernel(0, 4, 0, 7, 285, 290)
	b.gpu("execute_context_2(9)_generation_0(0)", 0, 7, 260, 295)
	// No correlation: the mirror decides (device 0 stream 7 -> B).
	b.kernel(0, 0, 0, 7, 291, 292)
	// Correlation whose launch is lost: mirror on another stream of the
	// device.
	b.kernel(0, 99, 0, 9, 293, 294)
	// Another process: its launch at 150 on thread 10 sees no marker of
	// its own process.
	b.launch(1, 1, 10, 150)
	b.kernel(1, 1, 1, 7, 160, 165)
	// Nothing contains this one.
	b.kernel(0, 0, 1, 3, 5, 6)
	tr := b.done(t)

	st, err := Find(tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.List) != 2 || st.List[0].Kind != Decode || st.List[1].Kind != Prefill ||
		st.List[0].Index != 0 || st.List[1].Index != 1 || st.List[1].Start != 200 || st.List[1].End != 300 {
		t.Fatalf("steps = %+v", st.List)
	}
	A, B := "execute_context_0(0)_generation_4(4)", "execute_context_2(9)_generation_0(0)"
	want := map[[2]int64]string{
		{1, 150}: A, {1, 170}: A, {1, 195}: A,
		{2, 262}: B, {3, 271}: B, {4, 285}: "-",
		{0, 291}: B, {99, 293}: B,
		{1, 160}: "-",
		{0, 5}:   "-",
	}
	got := stepOf(t, tr, st)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("activity corr %d at %d: step %q, want %q", k[0], k[1], got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d activities, want %d", len(got), len(want))
	}
}

func TestFindStepsInnermostAndThreads(t *testing.T) {
	b := newBuilder()
	// Nested custom markers on thread 1, an overlapping (not nested) one.
	b.cpu("iter outer", 1, 0, 1000)
	b.cpu("iter inner", 1, 100, 200)
	b.cpu("iter late", 1, 150, 400) // overlaps inner, not nested
	b.cpu("iter other thread", 2, 500, 600)
	for i, at := range []trace.Time{50, 120, 170, 250, 450, 550, 999, 1000} {
		b.launch(0, int64(i+1), 1, at)
		b.kernel(0, int64(i+1), 0, 7, 2000+trace.Time(i), 2000+trace.Time(i)+1)
	}
	tr := b.done(t)
	st, err := Find(tr, Options{Pattern: `^iter `})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.List) != 4 || st.List[0].Kind != Generic {
		t.Fatalf("steps = %+v", st.List)
	}
	want := []string{"iter outer", "iter inner", "iter late", "iter late", "iter outer", "iter outer", "iter outer", "-"}
	got := stepOf(t, tr, st)
	for i, w := range want {
		k := [2]int64{int64(i + 1), int64(2000 + i)}
		if got[k] != w {
			t.Errorf("launch %d: step %q, want %q", i+1, got[k], w)
		}
	}
	// The launch at 550 is on thread 1 inside "iter outer": the launching
	// thread wins over thread 2's marker. Without thread 1's markers it
	// would go to thread 2's.
	b2 := newBuilder()
	b2.cpu("ProfilerStep#7", 2, 500, 600)
	b2.launch(0, 1, 1, 550)
	b2.kernel(0, 1, 0, 7, 700, 710)
	tr2 := b2.done(t)
	st2, err := Find(tr2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st2.Of[0] != 0 {
		t.Errorf("autograd-thread launch: step %d, want 0", st2.Of[0])
	}
}

func TestFindStepsFamiliesAndMirrors(t *testing.T) {
	// SGLang: execute_… wraps step[…]; one family is chosen (vLLM's).
	b := newBuilder()
	b.cpu("ProfilerStep#1", 1, 0, 1000)
	b.cpu("execute_32_context_0(x)_generation_32(y)", 1, 10, 900)
	b.cpu("step[DECODE bs=32]", 1, 20, 800)
	b.launch(0, 1, 1, 30)
	b.kernel(0, 1, 0, 7, 40, 50)
	tr := b.done(t)
	st, err := Find(tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.List) != 1 || st.List[0].Kind != Decode || st.List[0].Marker != "execute_32_context_0(x)_generation_32(y)" || st.Of[0] != 0 {
		t.Fatalf("steps = %+v, of %v", st.List, st.Of)
	}
	// --step wins, and a recognised marker it matches keeps its kind.
	st, err = Find(tr, Options{Pattern: `^step\[`})
	if err != nil || len(st.List) != 1 || st.List[0].Kind != Decode || st.List[0].Marker != "step[DECODE bs=32]" {
		t.Fatalf("--step: %v, %+v", err, st)
	}
	if _, err := Find(tr, Options{Pattern: `(`}); err == nil {
		t.Error("bad --step pattern: no error")
	}
	if st, err := Find(tr, Options{Pattern: `nothing`}); err != nil || st != nil {
		t.Errorf("--step matching nothing = %+v, %v; want nil, nil", st, err)
	}

	// GPU mirrors only (the CPU side was cut off): steps come from them,
	// mirrors of one annotation on two streams make one step.
	b = newBuilder()
	b.gpu("ProfilerStep#2", 0, 8, 300, 400)
	b.gpu("ProfilerStep#1", 0, 7, 100, 200)
	b.gpu("ProfilerStep#1", 0, 8, 120, 210)
	b.kernel(0, 0, 0, 7, 150, 160)
	b.kernel(0, 0, 0, 8, 205, 206)
	b.kernel(0, 0, 0, 8, 350, 360)
	b.kernel(0, 0, 0, 7, 350, 360) // stream 7 has no mirror at 350: device's
	tr = b.done(t)
	st, err = Find(tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.List) != 2 || st.List[0].Marker != "ProfilerStep#1" || st.List[0].Start != 100 || st.List[0].End != 210 ||
		st.List[1].Marker != "ProfilerStep#2" || st.List[1].Index != 1 {
		t.Fatalf("mirror steps = %+v", st.List)
	}
	if want := []int32{0, 0, 1, 1}; !slices.Equal(st.Of, want) {
		t.Errorf("Of = %v, want %v", st.Of, want)
	}

	// vLLM markers repeat their text. The GPU lags: step A's mirror starts
	// after step B's marker opened, so "the latest step of that text
	// started before the mirror" would be B; the launched kernels inside
	// the mirror say A.
	dec := "execute_context_0(0)_generation_8(8)"
	b = newBuilder()
	b.cpu(dec, 1, 100, 200)
	b.cpu(dec, 1, 200, 300)
	b.launch(0, 1, 1, 150)
	b.kernel(0, 1, 0, 7, 400, 410)
	b.launch(0, 2, 1, 250)
	b.kernel(0, 2, 0, 7, 500, 510)
	b.gpu(dec, 0, 7, 400, 430)
	b.gpu(dec, 0, 7, 500, 530)
	b.kernel(0, 0, 0, 7, 420, 425)
	b.kernel(0, 0, 0, 7, 520, 525)
	tr = b.done(t)
	st, err = Find(tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{0, 0, 1, 1}; !slices.Equal(st.Of, want) {
		t.Errorf("repeated marker text: Of = %v, want %v", st.Of, want)
	}

	// One range recorded under two categories is one step.
	b = newBuilder()
	b.cpu("ProfilerStep#3", 1, 0, 100)
	b.cpu("ProfilerStep#3", 1, 0, 100)
	b.t.Ranges[1].Domain = b.in.ID("cpu_op")
	b.cpu("ProfilerStep#4", 1, 100, 200)
	b.launch(0, 1, 1, 150)
	b.kernel(0, 1, 0, 7, 300, 310)
	tr = b.done(t)
	st, err = Find(tr, Options{})
	if err != nil || len(st.List) != 2 || st.List[1].Marker != "ProfilerStep#4" || st.List[1].Index != 1 || st.Of[0] != 1 {
		t.Errorf("duplicate ranges: %+v, %v", st, err)
	}

	// No markers at all.
	b = newBuilder()
	b.cpu("nccl:all_reduce", 1, 0, 10)
	b.kernel(0, 0, 0, 7, 1, 2)
	if st, err := Find(b.done(t), Options{}); st != nil || err != nil {
		t.Errorf("no markers: %+v, %v", st, err)
	}
}

// TestFindStepsTokensAndATOM checks that steps carry their markers' token
// counts, that ATOM's markers are steps ranked after SGLang's, and that
// graph-capture markers are not steps.
func TestFindStepsTokensAndATOM(t *testing.T) {
	b := newBuilder()
	b.cpu("capture_128_decode", 1, 0, 50)
	b.cpu("prefill[bs=2 tok=14721 ctx=[7803, 6918]]", 1, 100, 200)
	b.cpu("decode[bs=117/128 tok=117 d=117]", 1, 200, 300)
	b.launch(0, 1, 1, 10)
	b.kernel(0, 1, 0, 7, 20, 30)
	b.launch(0, 2, 1, 150)
	b.kernel(0, 2, 0, 7, 160, 170)
	b.launch(0, 3, 1, 250)
	b.kernel(0, 3, 0, 7, 260, 270)
	st, err := Find(b.done(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.List) != 2 || st.List[0].Kind != Prefill || st.List[0].Tokens != 14721 ||
		st.List[1].Kind != Decode || st.List[1].Tokens != 117 {
		t.Fatalf("ATOM steps = %+v", st.List)
	}
	if want := []int32{-1, 0, 1}; !slices.Equal(st.Of, want) {
		t.Errorf("Of = %v, want %v (the capture's kernel in no step)", st.Of, want)
	}

	// SGLang wins over ATOM; a step without a count has Tokens -1.
	b = newBuilder()
	b.cpu("step[EXTEND bs=2 toks=300]", 1, 0, 100)
	b.cpu("prefill[bs=2 tok=300]", 1, 10, 90)
	b.cpu("step[IDLE]", 1, 100, 200)
	st, err = Find(b.done(t), Options{})
	if err != nil || len(st.List) != 2 || st.List[0].Marker != "step[EXTEND bs=2 toks=300]" || st.List[0].Tokens != 300 ||
		st.List[1].Tokens != -1 {
		t.Fatalf("SGLang over ATOM: %+v, %v", st, err)
	}

	// Steps from GPU mirrors alone carry tokens too.
	b = newBuilder()
	b.gpu("execute_context_1(500)_generation_3(3)", 0, 7, 100, 200)
	b.kernel(0, 0, 0, 7, 150, 160)
	st, err = Find(b.done(t), Options{})
	if err != nil || len(st.List) != 1 || st.List[0].Tokens != 503 || st.List[0].Kind != Mixed {
		t.Fatalf("mirror step: %+v, %v", st, err)
	}
}

// TestTokensBeyondBelief (issue 19 item 11): a marker claiming more than
// 10⁹ tokens has its count ignored and counted as odd; 0 tokens stay 0.
func TestTokensBeyondBelief(t *testing.T) {
	b := newBuilder()
	b.cpu("decode[bs=1 tok=999999999999999999]", 1, 0, 100)
	b.cpu("decode[bs=1 tok=0]", 1, 100, 200)
	b.cpu("decode[bs=1 tok=1000000000]", 1, 200, 300)
	b.cpu("decode[bs=1 tok=1000000001]", 1, 300, 400)
	st, err := Find(b.done(t), Options{})
	if err != nil || len(st.List) != 4 {
		t.Fatalf("%+v, %v", st, err)
	}
	var got []int64
	for _, s := range st.List {
		got = append(got, s.Tokens)
	}
	if want := []int64{-1, 0, 1_000_000_000, -1}; !slices.Equal(got, want) {
		t.Errorf("tokens %v, want %v", got, want)
	}
	if len(st.Anomalies) != 1 || st.Anomalies[0].Count != 2 || st.Anomalies[0].Example != "decode[bs=1 tok=999999999999999999]" {
		t.Errorf("anomalies %+v", st.Anomalies)
	}
	// vLLM's sum of two counts, and a GPU mirror's marker.
	b = newBuilder()
	b.gpu("execute_context_0(999999999999999999)_generation_1(999999999999999999)", 0, 7, 100, 200)
	b.kernel(0, 0, 0, 7, 150, 160)
	st, err = Find(b.done(t), Options{})
	if err != nil || len(st.List) != 1 || st.List[0].Tokens != -1 || len(st.Anomalies) != 1 {
		t.Fatalf("mirror step: %+v, %v", st, err)
	}
}

// TestIvsetBrute compares Innermost.Find with a brute-force scan on random
// interval sets, nested and overlapping.
func TestIvsetBrute(t *testing.T) {
	seed := uint64(1)
	rnd := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int((seed >> 33) % uint64(n))
	}
	for iter := 0; iter < 300; iter++ {
		n := 1 + rnd(12)
		type iv struct{ s, e trace.Time }
		ivs := make([]iv, n)
		for i := range ivs {
			s := trace.Time(rnd(100))
			ivs[i] = iv{s, s + trace.Time(rnd(40))}
		}
		slices.SortStableFunc(ivs, func(a, b iv) int {
			if a.s != b.s {
				return int(a.s - b.s)
			}
			return int(b.e - a.e)
		})
		v := &Innermost{}
		for i, x := range ivs {
			v.Add(x.s, x.e, int32(i))
		}
		v.Build()
		for x := trace.Time(-1); x < 145; x++ {
			want := int32(-1)
			for i, y := range ivs {
				if y.s <= x && x < y.e {
					want = int32(i) // the last in order: latest start, shortest at a tie
				}
			}
			if got := v.Find(x); got != want {
				t.Fatalf("iter %d: find(%d) = %d, want %d; intervals %v", iter, x, got, want, ivs)
			}
		}
	}
}

func TestFilterCheck(t *testing.T) {
	stepped := func(of []int32, kinds ...Kind) *Steps {
		st := &Steps{Of: of}
		for i, k := range kinds {
			st.List = append(st.List, Step{Index: i, Kind: k})
		}
		return st
	}
	prefill := stepped([]int32{0}, Prefill)
	mixed := stepped([]int32{0, -1, 1, 2}, Decode, Decode, Prefill)
	var whole *Steps
	for _, tc := range []struct {
		inputs []*Steps
		filter Filter
		want   string // "" for no error
	}{
		{[]*Steps{prefill}, Only(ClassOf(Decode)), "no decode steps; found prefill ×1"},
		{[]*Steps{prefill}, Only(ClassOf(Prefill)), ""},
		{[]*Steps{prefill}, Filter{}, ""},
		{[]*Steps{whole}, Only(ClassOf(Decode)), "no decode steps; found 1 input without step markers"},
		{[]*Steps{whole, whole}, Only(WholeTrace), ""},
		{[]*Steps{prefill}, Only(WholeTrace), "every input has step markers (kind all is a trace without them); found prefill ×1"},
		{[]*Steps{prefill}, Only(Unattributed), "no GPU activity outside the steps; found prefill ×1"},
		{[]*Steps{mixed}, Only(Unattributed), ""},
		{[]*Steps{mixed, whole}, Only(ClassOf(Mixed)), "no mixed steps; found decode ×2, prefill ×1, 1 input without step markers"},
		{[]*Steps{mixed}, Only(ClassOf(Generic)), "no steps of kind step (ProfilerStep#N or a custom marker); found decode ×2, prefill ×1"},
	} {
		err := tc.filter.Check(tc.inputs)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%v.Check = %q, want %q", tc.filter, got, tc.want)
		}
	}
}

// TestClasses checks the names and order of the classes and that the
// filter reads every name.
func TestClasses(t *testing.T) {
	var names []string
	for i, c := range classes() {
		names = append(names, c.String())
		f, ok := ParseFilter(c.String())
		if got, on := f.Class(); !ok || !on || got != c {
			t.Errorf("ParseFilter(%q) = %v, %v", c, f, ok)
		}
		if i > 0 && classes()[i-1].Compare(c) >= 0 {
			t.Errorf("%v sorts before %v", c, classes()[i-1])
		}
	}
	if got := strings.Join(names, " "); got != "all decode prefill mixed step unattributed" {
		t.Errorf("classes %s", got)
	}
	if f, ok := ParseFilter(""); !ok || !f.Keeps(Unattributed) || !f.Keeps(ClassOf(Decode)) {
		t.Errorf("the empty filter keeps: %v %v", f, ok)
	}
	if _, ok := ParseFilter("any"); ok {
		t.Errorf("ParseFilter(any) ok")
	}
	if got := FilterNames(); got != "decode, prefill, mixed, step, unattributed, all" {
		t.Errorf("FilterNames = %s", got)
	}
}
