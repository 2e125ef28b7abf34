package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// memFS collects the part files in memory.
type memFS map[string]*bytes.Buffer

type memFile struct{ *bytes.Buffer }

func (memFile) Close() error { return nil }

func (m memFS) create(rel string) (io.WriteCloser, error) {
	if m[rel] != nil {
		return nil, errors.New("created twice: " + rel)
	}
	m[rel] = &bytes.Buffer{}
	return memFile{m[rel]}, nil
}

func readRows[T any](t *testing.T, m memFS, rel string) []T {
	t.Helper()
	b := m[rel]
	if b == nil {
		t.Fatalf("no file %s (have %v)", rel, slices.Sorted(maps.Keys(m)))
	}
	rows, err := pq.Read[T](bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return rows
}

// smallTrace: three processes (ranks 0 and 1, and one the trace does not
// rank) and two steps; activities 0 and 1 overlap on device 0.
func smallTrace() (*trace.Trace, *step.Steps) {
	t := &trace.Trace{
		Meta:  trace.Meta{Format: trace.FormatNsys, Rank: -1, WorldSize: 2},
		Names: []string{"", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "vllm::rms_norm_kernel", "Memcpy HtoD", "cudaLaunchKernel", "m0", "m1"},
		Procs: []trace.Proc{{PID: 100, Rank: 0}, {PID: 200, Rank: 1}, {PID: 300, Rank: -1}},
		Activities: []trace.Activity{
			{Start: 100, Dur: 50, Corr: 1, Name: 1, Device: 0, Stream: 7, Proc: 0},
			{Start: 120, Dur: 50, Corr: 2, Name: 2, Device: 0, Stream: 8, Proc: 0},
			{Start: 130, Dur: 10, Corr: 0, Name: 3, Device: 1, Stream: 9, Proc: 1, Kind: trace.KindMemcpy},
			{Start: 200, Dur: 10, Corr: 3, Name: 2, Device: 0, Stream: 7, Proc: 0},
			{Start: 300, Dur: 20, Corr: 4, Name: 2, Device: 2, Stream: 7, Proc: 2},
			{Start: 330, Dur: 5, Corr: 5, Name: 1, Device: 0, Stream: 7, Proc: 0},
		},
		Launches: []trace.Launch{
			{Start: 90, Dur: 4, Corr: 1, Thread: 11, Name: 4, Proc: 0},
			{Start: 95, Dur: 3, Corr: 2, Thread: 11, Name: 4, Proc: 0},
			{Start: 290, Dur: 6, Corr: 4, Thread: 31, Name: 4, Proc: 2},
		},
		Anomalies: []trace.Anomaly{{What: "a", Count: 2}, {What: "b", Count: 1}},
	}
	st := &step.Steps{
		List: []step.Step{
			{Index: 0, Kind: step.Decode, Marker: "m0", Start: 80, End: 180, Tokens: -1},
			{Index: 1, Kind: step.Prefill, Marker: "m1", Start: 280, End: 340, Tokens: 24},
		},
		Of: []int32{0, 0, 0, -1, 1, 1},
	}
	return t, st
}

func ptr[T any](v T) *T { return &v }

func TestAddWritesEveryTable(t *testing.T) {
	tr, st := smallTrace()
	m := memFS{}
	x := New(m.create, Options{Version: "v9"})
	if err := add(x, "r1", "in.sqlite", tr, st); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, table := range tables {
		for _, r := range []string{"0", "1", NullRank} {
			want = append(want, table+"/run=r1/rank="+r+"/part-0.parquet")
		}
	}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, want) {
		t.Fatalf("files\n%v\nwant\n%v", got, want)
	}

	ar, nm, cp := "communication/allreduce", "norm/norm", "memcpy/memcpy"
	for _, tc := range []struct {
		rank string
		acts []Activity
	}{
		{"0", []Activity{
			{Input: "in.sqlite", PID: 100, Device: 0, Stream: 7, Kind: "kernel", Name: tr.Names[1], Category: ar, Top: "communication", StartNS: 100, DurNS: 50, Correlation: 1, Step: ptr[int32](0), StepKind: "decode", StepMarker: ptr("m0")},
			{Input: "in.sqlite", PID: 100, Device: 0, Stream: 8, Kind: "kernel", Name: tr.Names[2], Category: nm, Top: "norm", StartNS: 120, DurNS: 50, Correlation: 2, Step: ptr[int32](0), StepKind: "decode", StepMarker: ptr("m0")},
			{Input: "in.sqlite", PID: 100, Device: 0, Stream: 7, Kind: "kernel", Name: tr.Names[2], Category: nm, Top: "norm", StartNS: 200, DurNS: 10, Correlation: 3, StepKind: "unattributed"},
			{Input: "in.sqlite", PID: 100, Device: 0, Stream: 7, Kind: "kernel", Name: tr.Names[1], Category: ar, Top: "communication", StartNS: 330, DurNS: 5, Correlation: 5, Step: ptr[int32](1), StepKind: "prefill", StepMarker: ptr("m1")},
		}},
		{"1", []Activity{
			{Input: "in.sqlite", PID: 200, Device: 1, Stream: 9, Kind: "memcpy", Name: "Memcpy HtoD", Category: cp, Top: "memcpy", StartNS: 130, DurNS: 10, Step: ptr[int32](0), StepKind: "decode", StepMarker: ptr("m0")},
		}},
		{NullRank, []Activity{
			{Input: "in.sqlite", PID: 300, Device: 2, Stream: 7, Kind: "kernel", Name: tr.Names[2], Category: nm, Top: "norm", StartNS: 300, DurNS: 20, Correlation: 4, Step: ptr[int32](1), StepKind: "prefill", StepMarker: ptr("m1")},
		}},
	} {
		got := readRows[Activity](t, m, "activities/run=r1/rank="+tc.rank+"/part-0.parquet")
		if !reflect.DeepEqual(got, tc.acts) {
			t.Errorf("rank %s activities:\n%+v\nwant\n%+v", tc.rank, got, tc.acts)
		}
	}

	// Steps: span from first start to last end, busy counts the overlap
	// of activities 0 and 1 once (100..170), kernel sums durations;
	// tokens from the marker, null when it does not say.
	for _, tc := range []struct {
		rank  string
		steps []Step
	}{
		{"0", []Step{
			{Device: 0, Step: 0, Kind: "decode", Marker: "m0", StartNS: 100, EndNS: 170, SpanNS: 70, BusyNS: 70, KernelNS: 100, Input: "in.sqlite", PID: 100, MarkerStartNS: 80, MarkerEndNS: 180},
			{Device: 0, Step: 1, Kind: "prefill", Marker: "m1", StartNS: 330, EndNS: 335, SpanNS: 5, BusyNS: 5, KernelNS: 5, Tokens: ptr[int64](24), Input: "in.sqlite", PID: 100, MarkerStartNS: 280, MarkerEndNS: 340},
		}},
		{"1", []Step{
			{Device: 1, Step: 0, Kind: "decode", Marker: "m0", StartNS: 130, EndNS: 140, SpanNS: 10, BusyNS: 10, KernelNS: 10, Input: "in.sqlite", PID: 200, MarkerStartNS: 80, MarkerEndNS: 180},
		}},
		{NullRank, []Step{
			{Device: 2, Step: 1, Kind: "prefill", Marker: "m1", StartNS: 300, EndNS: 320, SpanNS: 20, BusyNS: 20, KernelNS: 20, Tokens: ptr[int64](24), Input: "in.sqlite", PID: 300, MarkerStartNS: 280, MarkerEndNS: 340},
		}},
	} {
		got := readRows[Step](t, m, "steps/run=r1/rank="+tc.rank+"/part-0.parquet")
		if !reflect.DeepEqual(got, tc.steps) {
			t.Errorf("rank %s steps:\n%+v\nwant\n%+v", tc.rank, got, tc.steps)
		}
	}

	launches := readRows[Launch](t, m, "launches/run=r1/rank=0/part-0.parquet")
	wantL := []Launch{
		{PID: 100, Thread: 11, API: "cudaLaunchKernel", StartNS: 90, DurNS: 4, Correlation: 1, Input: "in.sqlite"},
		{PID: 100, Thread: 11, API: "cudaLaunchKernel", StartNS: 95, DurNS: 3, Correlation: 2, Input: "in.sqlite"},
	}
	if !reflect.DeepEqual(launches, wantL) {
		t.Errorf("rank 0 launches:\n%+v\nwant\n%+v", launches, wantL)
	}
	if got := readRows[Launch](t, m, "launches/run=r1/rank=1/part-0.parquet"); len(got) != 0 {
		t.Errorf("rank 1 launches: %+v, want none", got)
	}

	inputs := readRows[Input](t, m, "inputs/run=r1/rank="+NullRank+"/part-0.parquet")
	wantI := []Input{{Path: "in.sqlite", Format: "nsys-sqlite", WorldSize: ptr[int32](2), Devices: []int32{2}, TraceqVersion: "v9", Anomalies: 3, Activities: 1}}
	if !reflect.DeepEqual(inputs, wantI) {
		t.Errorf("inputs:\n%+v\nwant\n%+v", inputs, wantI)
	}
}

// TestHostColumn: inputs.host is the input's host, null when unknown.
func TestHostColumn(t *testing.T) {
	tr, st := smallTrace()
	m := memFS{}
	x := New(m.create, Options{Version: "v9"})
	tbl, err := window.Build([]window.Input{{Path: "a.sqlite", Host: "node7", Trace: tr, Steps: st}}, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Add("r", tbl); err != nil {
		t.Fatal(err)
	}
	for _, rank := range []string{"0", "1", NullRank} {
		rows := readRows[Input](t, m, "inputs/run=r/rank="+rank+"/part-0.parquet")
		if len(rows) != 1 || rows[0].Host == nil || *rows[0].Host != "node7" {
			t.Errorf("rank %s: inputs %+v, want host node7", rank, rows)
		}
	}
	if rows := readRows[Input](t, memFSOf(t, "r2", "b.sqlite"), "inputs/run=r2/rank=0/part-0.parquet"); len(rows) != 1 || rows[0].Host != nil {
		t.Errorf("no host: inputs %+v, want host null", rows)
	}
}

// memFSOf exports smallTrace as input path of run, with no host.
func memFSOf(t *testing.T, run, path string) memFS {
	t.Helper()
	tr, st := smallTrace()
	m := memFS{}
	if err := add(New(m.create, Options{}), run, path, tr, st); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestNoSteps: without step markers every activity is step kind "all",
// with a null step, and the steps table is empty.
func TestNoSteps(t *testing.T) {
	tr, _ := smallTrace()
	m := memFS{}
	x := New(m.create, Options{Version: "v"})
	if err := add(x, "r", "in", tr, nil); err != nil {
		t.Fatal(err)
	}
	for _, a := range readRows[Activity](t, m, "activities/run=r/rank=0/part-0.parquet") {
		if a.StepKind != "all" || a.Step != nil || a.StepMarker != nil {
			t.Errorf("activity at %d: step %v kind %q marker %v, want null, all, null", a.StartNS, a.Step, a.StepKind, a.StepMarker)
		}
	}
	if got := readRows[Step](t, m, "steps/run=r/rank=0/part-0.parquet"); len(got) != 0 {
		t.Errorf("%d step rows, want none", len(got))
	}
}

// TestPartsNumbered: a second input of the same rank in one run is part-1;
// the same rank in another run starts at part-0.
func TestPartsNumbered(t *testing.T) {
	tr, st := smallTrace()
	m := memFS{}
	x := New(m.create, Options{Version: "v"})
	for _, in := range []string{"a", "b"} {
		if err := add(x, "r", in, tr, st); err != nil {
			t.Fatal(err)
		}
	}
	rows := readRows[Input](t, m, "inputs/run=r/rank=1/part-1.parquet")
	if len(rows) != 1 || rows[0].Path != "b" {
		t.Errorf("part-1 of rank 1: %+v, want the second input", rows)
	}
	if err := add(x, "r2", "c", tr, st); err != nil {
		t.Fatal(err)
	}
	rows = readRows[Input](t, m, "inputs/run=r2/rank=1/part-0.parquet")
	if len(rows) != 1 || rows[0].Path != "c" {
		t.Errorf("part-0 of rank 1 of run r2: %+v, want the third input", rows)
	}
}

// TestDeterministic: the same input gives the same bytes.
func TestDeterministic(t *testing.T) {
	var runs [2]memFS
	for i := range runs {
		tr, st := smallTrace()
		runs[i] = memFS{}
		x := New(runs[i].create, Options{Version: "v"})
		if err := add(x, "r", "in", tr, st); err != nil {
			t.Fatal(err)
		}
	}
	for rel, b := range runs[0] {
		if !bytes.Equal(b.Bytes(), runs[1][rel].Bytes()) {
			t.Errorf("%s differs between two runs", rel)
		}
	}
}

func TestCheckRun(t *testing.T) {
	for _, tc := range []struct {
		run string
		ok  bool
	}{
		{"run-2026.05.01", true}, {"A", true}, {"tp8+ep2_b", true},
		{"", false}, {".hidden", false}, {"_tmp", false}, {"a/b", false}, {"a=b", false},
		{"with space", false}, {NullRank, false}, {string(make([]byte, 201)), false},
		{"null", false}, {"NULL", false}, {"Null", false}, {"nulls", true}, {"null2", true},
	} {
		if err := CheckRun(tc.run); (err == nil) != tc.ok {
			t.Errorf("CheckRun(%q) = %v, want ok %v", tc.run, err, tc.ok)
		}
	}
}

// TestRowGroups: a part is split into row groups of RowGroupRows rows,
// not one per event nor one for the whole file.
func TestRowGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a million rows")
	}
	n := RowGroupRows + RowGroupRows/4
	tr := &trace.Trace{Meta: trace.Meta{Format: trace.FormatChrome, Rank: 3, WorldSize: 4},
		Names: []string{"", "k"}, Procs: []trace.Proc{{PID: 1, Rank: -1}}, Activities: make([]trace.Activity, n)}
	for i := range tr.Activities {
		tr.Activities[i] = trace.Activity{Start: trace.Time(i * 1000), Dur: int64(500 + i%97), Corr: int64(i + 1), Name: 1, Stream: 7}
	}
	m := memFS{}
	x := New(m.create, Options{Version: "v"})
	if err := add(x, "r", "in", tr, nil); err != nil {
		t.Fatal(err)
	}
	b := m["activities/run=r/rank=3/part-0.parquet"]
	f, err := pq.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, rg := range f.RowGroups() {
		sizes = append(sizes, rg.NumRows())
	}
	if want := []int64{RowGroupRows, int64(n - RowGroupRows)}; !slices.Equal(sizes, want) {
		t.Errorf("row groups of %v rows, want %v", sizes, want)
	}
	// Regular starts and correlations delta-encode to almost nothing.
	if perRow := float64(b.Len()) / float64(n); perRow > 4 {
		t.Errorf("%.1f bytes per activity row, want at most 4", perRow)
	}
}

// add writes one input into run as the command does: through its window
// table.
func add(x *Exporter, run, path string, t *trace.Trace, st *step.Steps) error {
	tbl, err := window.Build([]window.Input{{Path: path, Trace: t, Steps: st}}, window.Options{})
	if err != nil {
		return err
	}
	return x.Add(run, tbl)
}

// TestDictionaryBounded: a row group's distinct names stay within
// MaxDictBytes (issue 19: 100k distinct 2 KB names made one 205 MB
// dictionary); past it, the row group ends and the rows read back the
// same, in order. A trace whose names fit is one row group, as before.
func TestDictionaryBounded(t *testing.T) {
	defer func(b int) { maxDictBytes = b }(maxDictBytes)
	maxDictBytes = 64 << 10
	const n, size = 3000, 300
	tr := &trace.Trace{Meta: trace.Meta{Format: trace.FormatChrome, Rank: 0, WorldSize: 1},
		Names: []string{""}, Procs: []trace.Proc{{PID: 1, Rank: -1}}, Activities: make([]trace.Activity, 2*n)}
	for i := range n {
		tr.Names = append(tr.Names, fmt.Sprintf("%0*d", size, i))
	}
	for i := range tr.Activities {
		// Each name twice, the second time 100 names later.
		id := i/2 + 1
		if i%2 == 1 {
			id = min(i/2+100, n)
		}
		tr.Activities[i] = trace.Activity{Start: trace.Time(i * 1000), Dur: 500, Corr: int64(i + 1), Name: trace.NameID(id), Stream: 7}
	}
	m := memFS{}
	if err := add(New(m.create, Options{Version: "v"}), "r", "in", tr, nil); err != nil {
		t.Fatal(err)
	}
	b := m["activities/run=r/rank=0/part-0.parquet"]
	f, err := pq.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	groups := f.RowGroups()
	if len(groups) < 2*n*size/maxDictBytes/2 {
		t.Fatalf("%d row groups for %d bytes of names: not bounded by %d bytes", len(groups), n*size, maxDictBytes)
	}
	var names []string
	for gi, rg := range groups {
		rows := make([]Activity, rg.NumRows())
		r := pq.NewGenericRowGroupReader[Activity](rg)
		if k, err := r.Read(rows); int64(k) != rg.NumRows() || (err != nil && err != io.EOF) {
			t.Fatalf("row group %d: read %d of %d rows: %v", gi, k, rg.NumRows(), err)
		}
		distinct := map[string]bool{}
		bytes := 0
		for _, row := range rows {
			if !distinct[row.Name] {
				distinct[row.Name] = true
				bytes += len(row.Name)
			}
			names = append(names, row.Name)
		}
		if bytes > maxDictBytes {
			t.Errorf("row group %d holds %d bytes of distinct names, more than %d", gi, bytes, maxDictBytes)
		}
	}
	for i, a := range tr.Activities {
		if i >= len(names) || names[i] != tr.Names[a.Name] {
			t.Fatalf("row %d: name read back differs (%d rows)", i, len(names))
		}
	}
	if len(names) != len(tr.Activities) {
		t.Fatalf("%d rows, want %d", len(names), len(tr.Activities))
	}
}
