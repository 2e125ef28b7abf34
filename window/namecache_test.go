package window

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// TestNameRows: the windows' sums and the kernels table's durations are
// the same whether the windows find their names in the name cache's rows
// (nameCache) or only in their index, whatever the rows: none, one for
// four windows interleaved (each takes it from the others), two, many.
func TestNameRows(t *testing.T) {
	const names, steps = 40, 30
	tr := &trace.Trace{Meta: trace.Meta{Format: trace.FormatChrome, Rank: -1, WorldSize: -1},
		Procs: []trace.Proc{{PID: 1, Rank: 0}, {PID: 2, Rank: 1}}}
	for i := range names {
		tr.Names = append(tr.Names, fmt.Sprintf("kernel_%d_gemm", i))
	}
	tr.Names = append(tr.Names, "Memcpy HtoD")
	st := &step.Steps{}
	var at trace.Time
	x := uint64(1) // xorshift: names in no pattern across windows
	next := func() int {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x >> 1)
	}
	for s := range steps {
		st.List = append(st.List, step.Step{Index: s, Kind: step.Kind(1 + s%2), Tokens: 1})
		for i := range 3 * names {
			a := trace.Activity{Start: at, Dur: int64(1 + (i*7+s)%13), Name: trace.NameID(next() % names),
				Device: int32(i % 2), Proc: int32(i / 2 % 2)}
			if i%17 == 0 {
				a.Name, a.Kind = names, trace.KindMemcpy
			}
			tr.Activities = append(tr.Activities, a)
			st.Of = append(st.Of, int32(s))
			at += 5
		}
	}
	if err := tr.CheckValid(); err != nil {
		t.Fatal(err)
	}
	build := func(rows int) *Table {
		old := nameRowsMax
		nameRowsMax = rows
		defer func() { nameRowsMax = old }()
		tbl, err := Build([]Input{{Path: "r.json", Trace: tr, Steps: st}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	want := build(0)
	if len(want.Windows) < steps || len(want.Inputs[0].Durations) == 0 {
		t.Fatalf("%d windows, %d duration records: the trace does not exercise the pass", len(want.Windows), len(want.Inputs[0].Durations))
	}
	for _, rows := range []int{1, 2, 16} {
		got := build(rows)
		if !reflect.DeepEqual(got.Windows, want.Windows) {
			t.Errorf("%d rows: windows differ from the index's", rows)
		}
		if !reflect.DeepEqual(got.Inputs[0].Durations, want.Inputs[0].Durations) {
			t.Errorf("%d rows: durations differ from the index's", rows)
		}
	}
}
