package trace

import (
	"strings"
	"testing"
)

func valid() *Trace {
	in := NewInterner()
	k := in.ID("k")
	l := in.ID("cudaLaunchKernel")
	return &Trace{
		Names: in.Names(),
		Procs: []Proc{{PID: 1, Rank: -1}},
		Activities: []Activity{
			{Start: 10, Dur: 5, Name: k, Corr: 2},
			{Start: 10, Dur: 5, Name: k, Device: 1, Corr: 3},
			{Start: 20, Dur: 0, Name: k, Corr: 4},
		},
		Launches: []Launch{{Start: 1, Corr: 2, Name: l}, {Start: 2, Corr: 3, Name: l}},
		Ranges:   []Range{{Start: 0, Dur: 100, Name: k}, {Start: 0, Dur: 50, Name: k}},
		Collectives: []Collective{
			{Start: 10, Corr: 2, Op: k, InElems: 4, OutElems: 4, GroupSize: 2, Source: CollectiveOnKernel},
			{Start: 5, Dur: 3, Thread: 7, Op: k, InElems: -1, OutElems: -1, GroupSize: -1, Source: CollectiveOnCPUOp},
		},
	}
}

func TestCheckValid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(*Trace)
		want   string // substring of the error; "" means valid
	}{
		{"valid", func(*Trace) {}, ""},
		{"negative activity", func(t *Trace) { t.Activities[2].Dur = -1 }, "activity 2: negative duration"},
		{"name out of range", func(t *Trace) { t.Activities[0].Name = 99 }, "activity 0: name id 99 out of range"},
		{"activities unsorted", func(t *Trace) { t.Activities[0].Start = 30 }, "activity 1: out of order"},
		{"proc out of range", func(t *Trace) { t.Activities[1].Proc = 5 }, "activity 1: proc 5 out of range"},
		{"launches unsorted", func(t *Trace) { t.Launches[0].Corr = 9 }, "launch 1: out of order"},
		{"range order: enclosing first", func(t *Trace) { t.Ranges[0].Dur = 10 }, "range 1: out of order"},
		{"negative range", func(t *Trace) { t.Ranges[1].Dur = -3; t.Ranges[0].Dur = 100 }, "range 1: negative duration"},
		{"collective op out of range", func(t *Trace) { t.Collectives[1].Op = 99 }, "collective 1: name id out of range"},
		{"collective group out of range", func(t *Trace) { t.Collectives[0].GroupRanks = 99 }, "collective 0: name id out of range"},
		{"collectives unsorted: by source first", func(t *Trace) { t.Collectives[0].Source = CollectiveOnCPUOp }, "collective 1: out of order"},
		{"collectives unsorted: by corr", func(t *Trace) {
			t.Collectives[1].Source = CollectiveOnKernel
			t.Collectives[1].Corr = 1
		}, "collective 1: out of order"},
		{"collective proc out of range", func(t *Trace) { t.Collectives[0].Proc = 2 }, "collective 0: proc 2 out of range"},
		{"negative collective", func(t *Trace) { t.Collectives[1].Dur = -1 }, "collective 1: negative duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := valid()
			tc.break_(tr)
			err := tr.CheckValid()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckValid() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckValid() = %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func TestSortAndFindLaunch(t *testing.T) {
	tr := valid()
	tr.Activities[0], tr.Activities[2] = tr.Activities[2], tr.Activities[0]
	tr.Launches[0], tr.Launches[1] = tr.Launches[1], tr.Launches[0]
	tr.Ranges[0], tr.Ranges[1] = tr.Ranges[1], tr.Ranges[0]
	tr.Collectives[0], tr.Collectives[1] = tr.Collectives[1], tr.Collectives[0]
	tr.Sort()
	if err := tr.CheckValid(); err != nil {
		t.Fatalf("after Sort: %v", err)
	}
	if l := tr.FindLaunch(0, 3); l == nil || l.Start != 2 {
		t.Errorf("FindLaunch(0, 3) = %+v, want the launch at 2", l)
	}
	if l := tr.FindLaunch(0, 7); l != nil {
		t.Errorf("FindLaunch(0, 7) = %+v, want nil", l)
	}
	if l := tr.FindLaunch(1, 3); l != nil {
		t.Errorf("FindLaunch(1, 3) = %+v, want nil (other process)", l)
	}
	if got := tr.DeviceIDs(); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Errorf("DeviceIDs() = %v, want [0 1]", got)
	}
}

func TestInterner(t *testing.T) {
	in := NewInterner()
	buf := []byte("gemm")
	a := in.IDBytes(buf)
	buf[0] = 'X' // the interner must have copied the bytes
	if got := in.Names()[a]; got != "gemm" {
		t.Fatalf("interned name = %q, want %q", got, "gemm")
	}
	if b := in.ID("gemm"); b != a {
		t.Errorf("ID(gemm) = %d, want %d", b, a)
	}
	if id, ok := in.Lookup(""); !ok || id != 0 {
		t.Errorf("Lookup(\"\") = %d, %v; want 0, true", id, ok)
	}
	if in.Len() != 2 {
		t.Errorf("Len() = %d, want 2", in.Len())
	}
}

func TestAnomalies(t *testing.T) {
	var tr Trace
	tr.AddAnomaly("b", 2, "e1")
	tr.AddAnomaly("a", 1, "e2")
	tr.AddAnomaly("b", 3, "e3")
	tr.SortAnomalies()
	if len(tr.Anomalies) != 2 || tr.Anomalies[0].What != "a" || tr.Anomalies[1].Count != 5 || tr.Anomalies[1].Example != "e1" {
		t.Fatalf("anomalies = %+v", tr.Anomalies)
	}
}
