package merge

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/internal/gen"
	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/slice"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

const dlrm8 = "../testdata/traces/torch/dlrm8"

// mergeAll is what traceq merge does: Prepare, then Write.
func mergeAll(args []string, w io.Writer, opt Options) (*Result, error) {
	m, err := Prepare(args, opt)
	if err != nil {
		return nil, err
	}
	return m.Write(w)
}

// mergeTo merges args into a file under t's temporary directory and
// returns its path and the result.
func mergeTo(t *testing.T, args []string, opt Options) (string, *Result) {
	t.Helper()
	var buf bytes.Buffer
	res, err := mergeAll(args, &buf, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Fatal("the merged trace is not valid JSON")
	}
	checkTraceEventFormat(t, buf.Bytes())
	out := filepath.Join(t.TempDir(), "merged.json")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same bytes again: the output does not depend on the order the
	// ranks' copies end in.
	var again bytes.Buffer
	if _, err := mergeAll(args, &again, opt); err != nil || !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatalf("a second merge differs (%v)", err)
	}
	return out, res
}

// windowKey identifies a window of one rank by its content.
type windowKey struct {
	rank, step int
	device     int32
}

// windowsByRank reads tbl's step windows, by distributed rank and the
// step's index among the rank's steps.
func windowsByRank(t *testing.T, tbl *window.Table) map[windowKey]window.Window {
	t.Helper()
	out := map[windowKey]window.Window{}
	for _, w := range tbl.Windows {
		r := &tbl.Ranks[w.Rank]
		if r.Number == nil || w.Step < 0 {
			continue
		}
		in := &tbl.Inputs[r.Input]
		idx := in.Steps.List[w.Step].Index
		// A merged trace's steps are numbered across its processes:
		// count the rank's own.
		n := 0
		for i, s := range in.Steps.List {
			if i < int(w.Step) && s.Proc == in.Steps.List[w.Step].Proc {
				n++
			}
		}
		_ = idx
		out[windowKey{*r.Number, n, w.Device}] = w
	}
	return out
}

// TestMergeDLRM is the proof the issue asks for, on a real 8-rank run:
// the merged trace, read back by traceq, gives each rank's figures as
// the rank's own trace does — kernel, busy, span, idle by cause and
// every category's sums of the chosen step — its ranks named, its clocks
// as recorded (the DLRM traces have no baseTimeNanoseconds), and every
// idle gap annotated once.
func TestMergeDLRM(t *testing.T) {
	out, res := mergeTo(t, []string{dlrm8}, Options{Steps: &slice.StepOptions{From: 0, To: 1}})
	if len(res.Ranks) != 8 || res.Align != AlignNone {
		t.Fatalf("%d ranks, align %v", len(res.Ranks), res.Align)
	}
	merged, err := load.Load([]string{out}, load.Options{Steps: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Ranks) != 8 {
		t.Fatalf("the merged trace has %d ranks", len(merged.Ranks))
	}
	for i, r := range merged.Ranks {
		if r.Number == nil || *r.Number != i || r.Source != trace.RankFromMerge || r.PID != int64(i+1) {
			t.Errorf("merged rank %d: %+v", i, r)
		}
	}
	orig, err := load.Load([]string{dlrm8}, load.Options{Steps: true})
	if err != nil {
		t.Fatal(err)
	}
	want, got := windowsByRank(t, orig), windowsByRank(t, merged)
	if len(want) != 8 || len(got) != 8 {
		t.Fatalf("%d windows, merged %d", len(want), len(got))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("rank %d step %d device %d: not in the merged trace", k.rank, k.step, k.device)
			continue
		}
		// Idle time is left out: a step's idle time counts the gaps no
		// activity of its device covers, and the merge keeps the step's
		// activities, not those of other windows running in its span
		// (the annotations below carry the original's gaps).
		if g.KernelNS != w.KernelNS || g.BusyNS != w.BusyNS || g.First != w.First || g.Last != w.Last || len(g.Cats) != len(w.Cats) {
			t.Errorf("rank %d: merged window %+v\nwant %+v", k.rank, g, w)
			continue
		}
		sum := func(tbl *window.Table, cs []window.CatSum) map[classify.Category]int64 {
			m := map[classify.Category]int64{}
			for _, c := range cs {
				m[tbl.Category(c.Cat)] += c.KernelNS
			}
			return m
		}
		if a, b := sum(merged, g.Cats), sum(orig, w.Cats); !mapsEqual(a, b) {
			t.Errorf("rank %d: categories %v, want %v", k.rank, a, b)
		}
	}
	// Every idle gap of a rank's step is annotated: their sum by cause is
	// the step's idle time, inside its span.
	annot := annotations(t, out)
	for k, w := range want {
		var split window.IdleSplit
		for _, a := range annot[int64(k.rank+1)] {
			if a.start >= int64(w.First) && a.start+a.dur <= int64(w.Last) {
				switch a.name {
				case "idle: launch-bound":
					split.LaunchBoundNS += a.dur
				case "idle: device-side":
					split.DeviceSideNS += a.dur
				case "idle: unknown":
					split.UnknownNS += a.dur
				}
			}
		}
		if split != w.Idle {
			t.Errorf("rank %d: annotated gaps %+v, idle %+v", k.rank, split, w.Idle)
		}
	}
}

func mapsEqual[K comparable](a, b map[K]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// annot is one annotation slice of a merged trace.
type annot struct {
	name       string
	start, dur int64
	tid        int64
}

// annotations reads the merged trace's own slices (category traceq), per
// process, with encoding/json: independently of traceq's reader.
func annotations(t *testing.T, path string) map[int64][]annot {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Cat, Name string
			PID, TID      int64
			TS, Dur       json.Number
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[int64][]annot{}
	for _, e := range doc.TraceEvents {
		if e.Cat != "traceq" {
			continue
		}
		out[e.PID] = append(out[e.PID], annot{e.Name, micros(t, e.TS), micros(t, e.Dur), e.TID})
	}
	return out
}

// micros reads a Chrome-trace time (µs with up to three decimals) as
// integer ns.
func micros(t *testing.T, n json.Number) int64 {
	t.Helper()
	s := string(n)
	whole, frac, _ := bytesCut(s, '.')
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		t.Fatalf("time %q", s)
	}
	for len(frac) < 3 {
		frac += "0"
	}
	f, err := strconv.ParseInt(frac[:3], 10, 64)
	if err != nil {
		t.Fatalf("time %q", s)
	}
	if w < 0 || s[0] == '-' {
		return w*1000 - f
	}
	return w*1000 + f
}

func bytesCut(s string, c byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// nodeRun writes the generated run: 2 hosts × 8 ranks, host 1's
// clock 7.5 µs late.
func nodeRun(t *testing.T, inBase bool) (string, gen.NodeConfig, *gen.NodeExpected) {
	t.Helper()
	slow := make([]int, 16)
	slow[5], slow[11] = 30, 15
	cfg := gen.NodeConfig{Steps: 6, DecodeEvery: 3, SlowPct: slow, JitterNS: 400, SkewNS: 7_500, SkewInBase: inBase, Seed: 3}
	dir := filepath.Join(t.TempDir(), "run")
	exp, err := gen.WriteNodeRun(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dir, cfg, exp
}

// collectiveEnds reads the merged trace's collective kernels: per rank,
// per op, their ends in order.
func collectiveEnds(t *testing.T, path string) map[int]map[string][]trace.Time {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := chrometrace.Parse(f, chrometrace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cl := classify.Default()
	out := map[int]map[string][]trace.Time{}
	for _, a := range tr.Activities {
		c := cl.Classify(tr.Names[a.Name])
		if c.Top != classify.Communication {
			continue
		}
		r := tr.Procs[a.Proc].Rank
		if out[r] == nil {
			out[r] = map[string][]trace.Time{}
		}
		out[r][c.Sub] = append(out[r][c.Sub], a.End())
	}
	return out
}

// TestMergeAlignBase: on the generated run over two hosts whose clocks
// differ by 7.5 µs, folded into baseTimeNanoseconds, aligning by the base
// makes every all-to-all end at one time on all 16 ranks (they end
// together by construction); without alignment they are 7.5 µs apart.
func TestMergeAlignBase(t *testing.T) {
	dir, cfg, _ := nodeRun(t, true)
	for _, align := range []Align{AlignAuto, AlignNone} {
		out, res := mergeTo(t, []string{dir}, Options{Steps: &slice.StepOptions{From: 1, To: 3}, Align: align})
		if len(res.Ranks) != 16 {
			t.Fatalf("%d ranks", len(res.Ranks))
		}
		for i, r := range res.Ranks {
			want := int64(0)
			if align == AlignAuto {
				want = -cfg.SkewOf(i)
			}
			if r.Number == nil || *r.Number != i || r.ShiftNS != want || r.Label != cfg.Host(i)+" · rank "+strconv.Itoa(i) {
				t.Errorf("%v: rank %d: %+v, want shift %d", align, i, r, want)
			}
		}
		ends := collectiveEnds(t, out)
		ref := ends[0]["all_to_all"]
		if len(ref) != 2*2*cfg.Layers+2*2*2 && len(ref) == 0 {
			t.Fatalf("rank 0: %d all-to-alls", len(ref))
		}
		for r := 1; r < 16; r++ {
			got := ends[r]["all_to_all"]
			want := slices.Clone(ref)
			if align == AlignNone {
				for i := range want {
					want[i] += trace.Time(cfg.SkewOf(r))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%v: rank %d: all-to-all ends %v, want %v", align, r, got[:min(3, len(got))], want[:min(3, len(want))])
			}
		}
		if align == AlignAuto && res.BaseTime != cfg.BaseTime(0) {
			t.Errorf("base time %d, want rank 0's %d", res.BaseTime, cfg.BaseTime(0))
		}
	}
}

// TestMergeTime: a time window keeps on every rank the events inside
// [origin + from, origin + to] on the common clock, the origin being the
// first GPU activity of any rank.
func TestMergeTime(t *testing.T) {
	dir, cfg, _ := nodeRun(t, true)
	const from, to = 3_900_000, 4_700_000
	out, res := mergeTo(t, []string{dir}, Options{From: from, To: to})
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := chrometrace.Parse(f, chrometrace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Activities) == 0 || len(tr.Procs) != 16 {
		t.Fatalf("%d activities, %d processes", len(tr.Activities), len(tr.Procs))
	}
	lo, hi := trace.Time(res.Origin+from), trace.Time(res.Origin+to)
	for _, a := range tr.Activities {
		if a.Start < lo || a.End() > hi {
			t.Fatalf("activity [%d, %d) outside the window [%d, %d]", a.Start, a.End(), lo, hi)
		}
	}
	// The same activities as the window of each rank's own trace, its
	// clock moved by its skew.
	for r := range cfg.Ranks() {
		p := filepath.Join(dir, cfg.Host(r), "rank"+strconv.Itoa(r)+".json")
		own, err := load.OneOn(p, "", load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var want, got int
		for _, a := range own.Inputs[0].Trace.Activities {
			s := a.Start - trace.Time(cfg.SkewOf(r))
			if s >= lo && s+trace.Time(a.Dur) <= hi {
				want++
			}
		}
		for _, a := range tr.Activities {
			if tr.Procs[a.Proc].Rank == r {
				got++
			}
		}
		if got != want || want == 0 {
			t.Errorf("rank %d: %d activities in the window, want %d", r, got, want)
		}
	}
	if res.Ranks[0].Steps != nil {
		t.Error("a time window selected steps")
	}
}

// TestMergeRefuses: a rank without step markers is an error naming it
// when steps are selected, and so is an nsys export (ErrNsys, gzipped or
// not, beside a Chrome trace too), in one line, whatever the window.
func TestMergeRefuses(t *testing.T) {
	for _, in := range []string{"../testdata/traces/torch/hta_legacy_minimal.json.gz", "../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite"} {
		_, err := mergeAll([]string{in}, &bytes.Buffer{}, Options{Steps: &slice.StepOptions{From: 0, To: 1, Options: step.Options{}}})
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(filepath.Base(in))) {
			t.Errorf("%s: %v", in, err)
		}
	}
	for _, in := range []string{"../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite", "../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-before.sqlite.gz"} {
		for _, opt := range []Options{{Steps: &slice.StepOptions{From: 0, To: 1}}, {To: math.MaxInt64}} {
			var out bytes.Buffer
			_, err := mergeAll([]string{dlrm8 + "/rank0.json.gz", in}, &out, opt)
			var fe *parse.FileError
			if !errors.Is(err, ErrNsys) || !errors.As(err, &fe) || fe.Path != in || strings.Contains(err.Error(), "\n") || out.Len() != 0 {
				t.Errorf("%s: %v (%d bytes written)", in, err, out.Len())
			}
		}
	}
}

// TestRewrite: the edit of one raw event.
func TestRewrite(t *testing.T) {
	e := &edit{pid: 3, shift: -1500, idBase: 1 << 40, idTag: "r2", devices: map[int64]bool{0: true}}
	for _, c := range []struct {
		in, want string
		ts       int64
		meta     bool
	}{
		{`{"ph": "X", "pid": 0, "tid": 7, "ts": 100.250, "dur": 1, "args": {"pid": 9, "s": "\"}"}}`,
			`{"ph": "X", "pid": 3, "tid": 1099511627783, "ts": 98.750, "dur": 1, "args": {"pid": 9, "s": "\"}"}}`, 100250, false},
		{`{"ph":"s","id":12,"pid":4242,"tid":4242,"ts":5}`, `{"ph":"s","id":1099511627788,"pid":3,"tid":4242,"ts":3.500}`, 5000, false},
		{`{"ph":"b","id":"0x1f","pid":4242,"tid":"t","ts":5}`, `{"ph":"b","id":"r2:0x1f","pid":3,"tid":"t","ts":3.500}`, 5000, false},
		{`{"ph": "M", "name": "thread_name", "pid": 4242, "tid": 1, "ts": 0, "args": {"name": "x"}}`,
			`{"ph": "M", "name": "thread_name", "pid": 3, "tid": 1, "ts": 0, "args": {"name": "x"}}`, 0, true},
		{`{"ph":"X","ts":1}`, `{"ph":"X","ts":0.000}`, 1500, false},
	} {
		got, _, _, _, _ := e.rewrite(nil, []byte(c.in), c.ts, true, c.meta, nil)
		if string(got) != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	if got := string(appendMicros(nil, -1)); got != "-0.001" {
		t.Errorf("appendMicros(-1) = %s", got)
	}
	if got := string(appendMicros(nil, math.MaxInt64)); got != "9223372036854775.807" {
		t.Errorf("appendMicros(max) = %s", got)
	}
}

// TestGapLog: the compact log gives back every gap inside a window.
func TestGapLog(t *testing.T) {
	var l gapLog
	gaps := []window.Gap{
		{Device: 0, Start: 1_000_000_000_000, End: 1_000_000_000_500, Cause: window.LaunchBound},
		{Device: 3, Start: 999_999_999_000, End: 1_000_000_000_000, Cause: window.DeviceSide},
		{Device: 0, Start: 1_000_000_002_000, End: 1_000_000_012_000, Cause: window.Unknown},
	}
	for _, g := range gaps {
		l.add(g)
	}
	if got := l.within(math.MinInt64/2, math.MaxInt64); !slices.Equal(got, gaps) {
		t.Errorf("all: %+v", got)
	}
	got := l.within(1_000_000_000_000, 1_000_000_011_999)
	slices.SortFunc(got, func(a, b window.Gap) int { return cmp.Compare(a.Start, b.Start) })
	if !slices.Equal(got, gaps[:1]) {
		t.Errorf("window: %+v", got)
	}
	if len(l.buf) > 8*len(gaps)+8 {
		t.Errorf("%d bytes for %d gaps", len(l.buf), len(gaps))
	}
}

// TestMergeAlignCollectives: host 1's clock 7.5 µs late and the same
// base on every rank: aligning by the base leaves the all-to-alls 7.5 µs
// apart; aligning by the collectives recovers the skew exactly (every
// collective of the generated run ends together on the true clock), and
// then every one ends at one time on all its ranks.
func TestMergeAlignCollectives(t *testing.T) {
	dir, cfg, _ := nodeRun(t, false)
	out, res := mergeTo(t, []string{dir}, Options{Steps: &slice.StepOptions{From: 1, To: 3}, Align: AlignCollectives})
	if res.Align != AlignCollectives || res.Instances != 2*2*(2+2) /* 2 steps × 2 layers × (an all-reduce per host, a dispatch, a combine) */ || res.SpreadMax != 0 {
		t.Errorf("align %v, %d instances, spread %d", res.Align, res.Instances, res.SpreadMax)
	}
	for i, r := range res.Ranks {
		if r.ShiftNS != -cfg.SkewOf(i) || !r.Joined || r.AlignedBy != "collectives" {
			t.Errorf("rank %d: shift %d (%s), want %d", i, r.ShiftNS, r.AlignedBy, -cfg.SkewOf(i))
		}
	}
	ends := collectiveEnds(t, out)
	for _, op := range []string{"all_to_all", "allreduce"} {
		for r := 1; r < 16; r++ {
			ref := ends[0][op]
			if op == "allreduce" {
				ref = ends[cfg.Node(r)*8][op] // each host's group ends together
			}
			if !slices.Equal(ends[r][op], ref) || len(ref) == 0 {
				t.Errorf("%s: rank %d ends %v, want %v", op, r, ends[r][op], ref)
			}
		}
	}
	_, base := mergeTo(t, []string{dir}, Options{Steps: &slice.StepOptions{From: 1, To: 3}, Align: AlignBase})
	if base.SpreadMax != cfg.SkewNS || base.Ranks[8].ShiftNS != 0 {
		t.Errorf("by the base: spread %d, rank 8 shift %d", base.SpreadMax, base.Ranks[8].ShiftNS)
	}
}

// TestMergeWaits: the waits annotated over the whole run are each rank's
// waits in every communicator, as the generator recorded them: summed per
// rank, to the nanosecond; each names the rank that arrived last.
func TestMergeWaits(t *testing.T) {
	dir, cfg, exp := nodeRun(t, true)
	out, res := mergeTo(t, []string{dir}, Options{Steps: &slice.StepOptions{From: 0, To: -1}})
	want := make([]int64, cfg.Ranks())
	for _, c := range exp.Comms {
		for j, r := range c.Ranks {
			want[r] += c.WaitNS[j]
		}
	}
	annot := annotations(t, out)
	labels := map[string]bool{}
	for _, r := range res.Ranks {
		labels["waiting for "+r.Label] = true
	}
	for i := range cfg.Ranks() {
		var got, n int64
		for _, a := range annot[int64(i+1)] {
			if a.tid != gpuTid(int64(i%8), 1<<20-2) {
				continue
			}
			if !labels[a.name] {
				t.Fatalf("rank %d: annotation %q", i, a.name)
			}
			got += a.dur
			n++
		}
		if got != want[i] || n != res.Ranks[i].Waits {
			t.Errorf("rank %d: waits %d ns in %d slices (%d written), want %d ns", i, got, n, res.Ranks[i].Waits, want[i])
		}
	}
}

// TestMergeNodesReadBack: the run over two hosts, whose ranks 0 and 8 both
// ran on their host's GPU 0: in the merged trace each rank's GPU has a
// number of its own (its rank), so that traceq reads every rank's step
// windows back with the kernel, busy and span figures of its own trace,
// its clock moved by its host's skew, and idle time by cause too (the
// merge keeps every activity of the chosen steps' span here).
func TestMergeNodesReadBack(t *testing.T) {
	dir, cfg, _ := nodeRun(t, false)
	out, _ := mergeTo(t, []string{dir}, Options{Steps: &slice.StepOptions{From: 1, To: 3}, Align: AlignCollectives})
	merged, err := load.Load([]string{out}, load.Options{Steps: true})
	if err != nil {
		t.Fatal(err)
	}
	orig, err := load.Load([]string{dir}, load.Options{Steps: true})
	if err != nil {
		t.Fatal(err)
	}
	got := windowsByRank(t, merged)
	n := 0
	for k, w := range windowsByRank(t, orig) {
		if k.step < 1 || k.step >= 3 {
			continue
		}
		n++
		g, ok := got[windowKey{k.rank, k.step - 1, int32(k.rank)}]
		shift := trace.Time(cfg.SkewOf(k.rank))
		if !ok || g.KernelNS != w.KernelNS || g.BusyNS != w.BusyNS || g.First != w.First-shift || g.Last != w.Last-shift ||
			g.Idle != w.Idle {
			t.Errorf("rank %d step %d: merged %+v (found %v)\nwant %+v", k.rank, k.step, g, ok, w)
		}
	}
	if n != 32 || len(got) != 32 {
		t.Errorf("%d windows, merged %d; want 32", n, len(got))
	}
}

// checkTraceEventFormat checks a merged trace against the Trace Event
// Format as Perfetto's JSON importer reads it, with encoding/json alone
// (no Perfetto or Chrome-trace validator is available to the tests):
// traceEvents an array of objects, each with a string ph and an integer
// pid; a complete event ("X") with numeric ts and dur >= 0 and a tid;
// metadata ("M") with a name and args; flow events ("s", "t", "f") with
// an id, every flow started and finished; and on each thread the complete
// events nested, never overlapping in part (Perfetto misnests those).
func checkTraceEventFormat(t *testing.T, data []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.TraceEvents) == 0 {
		t.Fatal("no traceEvents")
	}
	type track struct{ pid, tid string }
	type span struct{ ts, end float64 }
	tracks := map[track][]span{}
	flows := map[string]int{} // "cat id": bit 1 started, bit 2 finished
	for i, ev := range doc.TraceEvents {
		ph, _ := ev["ph"].(string)
		pid, ok := ev["pid"].(json.Number)
		if _, err := pid.Int64(); ph == "" || !ok || err != nil {
			t.Fatalf("event %d: no ph or integer pid: %v", i, ev)
		}
		num := func(k string) (float64, bool) {
			n, ok := ev[k].(json.Number)
			if !ok {
				return 0, false
			}
			f, err := n.Float64()
			return f, err == nil
		}
		switch ph {
		case "X":
			ts, ok1 := num("ts")
			dur, ok2 := num("dur")
			if !ok1 || !ok2 || dur < 0 || ev["tid"] == nil {
				t.Fatalf("event %d: a complete event without ts, dur >= 0 or tid: %v", i, ev)
			}
			k := track{pid.String(), fmt.Sprint(ev["tid"])}
			tracks[k] = append(tracks[k], span{ts, ts + dur})
		case "M":
			if _, ok := ev["name"].(string); !ok || ev["args"] == nil {
				t.Fatalf("event %d: metadata without name or args: %v", i, ev)
			}
		case "s", "t", "f":
			if ev["id"] == nil {
				t.Fatalf("event %d: a flow event without id: %v", i, ev)
			}
			k := fmt.Sprint(ev["cat"], " ", ev["id"])
			switch ph {
			case "s":
				flows[k] |= 1
			case "f":
				flows[k] |= 2
			}
		default:
			if _, ok := num("ts"); !ok {
				t.Fatalf("event %d: no ts: %v", i, ev)
			}
		}
	}
	for k, v := range flows {
		if v != 3 {
			t.Errorf("flow %s: not both started and finished (%d)", k, v)
		}
	}
	// Times are µs with three decimals: compare in whole ns.
	ns := func(us float64) int64 { return int64(math.Round(us * 1000)) }
	for k, sp := range tracks {
		slices.SortFunc(sp, func(a, b span) int { return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(b.end, a.end)) })
		var open []int64 // ends of the enclosing slices
		for _, x := range sp {
			s, e := ns(x.ts), ns(x.end)
			for len(open) > 0 && open[len(open)-1] <= s {
				open = open[:len(open)-1]
			}
			if len(open) > 0 && e > open[len(open)-1] {
				t.Fatalf("pid %s tid %s: the slice [%d, %d] ns overlaps the end of the one around it (%d)", k.pid, k.tid, s, e, open[len(open)-1])
			}
			open = append(open, e)
		}
	}
}
