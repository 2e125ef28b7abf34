package trace

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"
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
	a := in.ID("gemm")
	if got := in.Names()[a]; got != "gemm" || a != 1 {
		t.Fatalf("interned name %d = %q, want 1 = %q", a, got, "gemm")
	}
	if b := in.ID("gemm"); b != a {
		t.Errorf("ID(gemm) = %d, want %d", b, a)
	}
	if id := in.ID(""); id != 0 {
		t.Errorf("ID(\"\") = %d, want 0", id)
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

// withAttrs is valid() with attribute tables: activity 0 and launch 0
// carry a configuration and an op.
func withAttrs() *Trace {
	tr := valid()
	in := NewAttrInterner()
	bf := NameID(len(tr.Names))
	tr.Names = append(tr.Names, "c10::BFloat16")
	sig := in.Sig("addmm|[[2],[3,4]]", func() OpSig {
		return OpSig{Name: 1, Args: []OpArg{{Type: bf, Dims: []int64{2}}, {Type: bf, Dims: []int64{3, 4}}}}
	})
	cfg := in.Config(Config{Grid: [3]int32{132, 1, 1}, Block: [3]int32{256, 1, 1}, Registers: 128, SharedMem: 49152, DynamicSharedMem: -1})
	tr.Ops = []Op{{}, {Start: 0, Dur: 9, Sig: sig}}
	tr.Activities[0].Attr = in.Attr(Attr{Config: cfg, Op: 1})
	tr.Activities[1].Attr = in.Attr(Attr{Config: cfg})
	tr.Launches[0].Attr = in.Attr(Attr{Op: 1, Kernel: 1})
	tr.Attrs, tr.Configs, tr.OpSigs = in.Tables()
	return tr
}

func TestCheckValidAttrs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(*Trace)
		want   string
	}{
		{"valid", func(*Trace) {}, ""},
		{"no tables, no ids", func(t *Trace) {
			t.Attrs, t.Configs, t.Ops, t.OpSigs = nil, nil, nil, nil
			t.Activities[0].Attr, t.Activities[1].Attr, t.Launches[0].Attr = 0, 0, 0
		}, ""},
		{"activity attr out of range", func(t *Trace) { t.Activities[2].Attr = 9 }, "activity 2: attr 9 out of range"},
		{"launch attr out of range", func(t *Trace) { t.Launches[1].Attr = 9 }, "launch 1: attr 9 out of range"},
		{"attr without its table", func(t *Trace) { t.Attrs = nil }, "activity 0: attr 1 out of range"},
		{"attr 0 not empty", func(t *Trace) { t.Attrs[0].Config = 1 }, "attr 0 is not empty"},
		{"config out of range", func(t *Trace) { t.Attrs[2].Config = 7 }, "attr 2: config 7 out of range"},
		{"op out of range", func(t *Trace) { t.Attrs[1].Op = 5 }, "attr 1: op 5 out of range"},
		{"kernel name out of range", func(t *Trace) { t.Attrs[3].Kernel = 99 }, "attr 3: kernel name id 99 out of range"},
		{"config 0 not unknown", func(t *Trace) { t.Configs[0].Registers = 4 }, "config 0 is not NoConfig"},
		{"negative grid", func(t *Trace) { t.Configs[1].Grid[1] = -1 }, "config 1: negative grid or block"},
		{"shared memory below -1", func(t *Trace) { t.Configs[1].SharedMem = -2 }, "config 1: negative size"},
		{"op 0 not empty", func(t *Trace) { t.Ops[0].Dur = 1 }, "op 0 is not empty"},
		{"op proc out of range", func(t *Trace) { t.Ops[1].Proc = 3 }, "op 1: proc 3 out of range"},
		{"op negative duration", func(t *Trace) { t.Ops[1].Dur = -1 }, "op 1: negative duration"},
		{"op signature out of range", func(t *Trace) { t.Ops[1].Sig = 4 }, "op 1: signature 4 out of range"},
		{"ops out of order", func(t *Trace) {
			t.Ops = append(t.Ops, Op{Start: -5, Sig: 1})
		}, "op 2: out of order"},
		{"signature name out of range", func(t *Trace) { t.OpSigs[1].Name = 99 }, "op signature 1: name id out of range"},
		{"argument type out of range", func(t *Trace) { t.OpSigs[1].Args[1].Type = 99 }, "op signature 1, argument 1: name id out of range"},
		{"argument value out of range", func(t *Trace) { t.OpSigs[1].Args[0].Value = 99 }, "op signature 1, argument 0: name id out of range"},
		{"signature 0 not empty", func(t *Trace) { t.OpSigs[0].Name = 1 }, "op signature 0 is not empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := withAttrs()
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

func TestAttrInterner(t *testing.T) {
	in := NewAttrInterner()
	c1 := in.Config(Config{Grid: [3]int32{1, 1, 1}, Block: [3]int32{128, 1, 1}, SharedMem: 0, DynamicSharedMem: -1})
	c2 := in.Config(Config{Grid: [3]int32{2, 1, 1}, Block: [3]int32{128, 1, 1}, SharedMem: 0, DynamicSharedMem: -1})
	if c1 != 1 || c2 != 2 || in.Config(Config{Grid: [3]int32{1, 1, 1}, Block: [3]int32{128, 1, 1}, DynamicSharedMem: -1}) != c1 {
		t.Errorf("configs: %d %d", c1, c2)
	}
	if in.Config(NoConfig) != 0 {
		t.Errorf("NoConfig is not config 0")
	}
	// Attributes without an op are shared; with one, each call gets its own.
	if a, b := in.Attr(Attr{Config: c1}), in.Attr(Attr{Config: c1}); a != b || a == 0 {
		t.Errorf("op-less attrs %d, %d: want one shared id", a, b)
	}
	if a, b := in.Attr(Attr{Config: c1, Op: 3}), in.Attr(Attr{Config: c1, Op: 3}); a == b {
		t.Errorf("attrs with an op share id %d", a)
	}
	if in.Attr(Attr{}) != 0 {
		t.Errorf("the empty attribute set is not 0")
	}
	builds := 0
	key := []byte("aten::mm|[[2, 3], [3, 4]]")
	build := func() OpSig { builds++; return OpSig{Name: 1} }
	s1 := in.Sig(string(key), build)
	key[0] = 'X' // the interner must keep its own copy of the key
	if s2 := in.Sig("aten::mm|[[2, 3], [3, 4]]", build); s2 != s1 || builds != 1 {
		t.Errorf("Sig: %d then %d after %d builds; want one signature built once", s1, s2, builds)
	}
	attrs, configs, sigs := in.Tables()
	if len(attrs) != 4 || len(configs) != 3 || len(sigs) != 2 || configs[0] != NoConfig {
		t.Errorf("tables: %d attrs, %d configs, %d sigs; configs[0] = %+v", len(attrs), len(configs), len(sigs), configs[0])
	}
	if a, c, s := NewAttrInterner().Tables(); a != nil || c != nil || s != nil {
		t.Errorf("an unused interner's tables are not nil")
	}
}

// The records stay small: Attr lives in Activity's padding; Launch grows
// by one word.
func TestRecordSizes(t *testing.T) {
	if n := unsafe.Sizeof(Activity{}); n != 48 {
		t.Errorf("Activity is %d bytes, want 48", n)
	}
	if n := unsafe.Sizeof(Launch{}); n != 48 {
		t.Errorf("Launch is %d bytes, want 48", n)
	}
	if n := unsafe.Sizeof(Attr{}); n != 12 {
		t.Errorf("Attr is %d bytes, want 12", n)
	}
	if n := unsafe.Sizeof(Op{}); n != 24 {
		t.Errorf("Op is %d bytes, want 24", n)
	}
}

func TestSortKeepsAttrs(t *testing.T) {
	tr := withAttrs()
	want := map[Time]AttrID{}
	for _, a := range tr.Activities {
		want[a.Start+Time(a.Device)] = a.Attr
	}
	tr.Activities[0], tr.Activities[2] = tr.Activities[2], tr.Activities[0]
	tr.Launches[0], tr.Launches[1] = tr.Launches[1], tr.Launches[0]
	tr.Sort()
	if err := tr.CheckValid(); err != nil {
		t.Fatal(err)
	}
	for _, a := range tr.Activities {
		if got := a.Attr; got != want[a.Start+Time(a.Device)] {
			t.Errorf("activity at %d on device %d: attr %d after Sort, want %d", a.Start, a.Device, got, want[a.Start+Time(a.Device)])
		}
	}
	a0 := tr.AttrOf(tr.Activities[0].Attr)
	if c := tr.ConfigOf(a0.Config); c.Blocks() != 132 || c.Threads() != 256 {
		t.Errorf("config of activity 0: %+v", c)
	}
	if op := tr.OpOf(a0.Op); op == nil || tr.Names[tr.SigOf(op.Sig).Name] != "k" || op.End() != 9 {
		t.Errorf("op of activity 0: %+v", op)
	}
	if l := tr.FindLaunch(0, 2); l == nil || tr.AttrOf(l.Attr).Kernel != 1 {
		t.Errorf("launch of corr 2 lost its attribute: %+v", l)
	}
	if tr.OpOf(0) != nil || tr.ConfigOf(0) != NoConfig || tr.SigOf(0).Name != 0 || tr.AttrOf(0) != (Attr{}) {
		t.Errorf("id 0 of a table is not its zero value")
	}
}

// Records equal but for their attributes are ordered by them: the orders
// stay total.
func TestCompareByAttr(t *testing.T) {
	a, b := Activity{Start: 1, Attr: 1}, Activity{Start: 1, Attr: 2}
	if CompareActivities(&a, &b) >= 0 || CompareActivities(&b, &a) <= 0 {
		t.Errorf("activities differing only in Attr compare equal")
	}
	l, m := Launch{Corr: 1, Attr: 2}, Launch{Corr: 1, Attr: 1}
	if CompareLaunches(&l, &m) <= 0 {
		t.Errorf("launches differing only in Attr compare equal")
	}
}

func TestInternerAdopt(t *testing.T) {
	in := NewInterner()
	s := strings.Repeat("x", 100)
	id := in.Adopt(s)
	if got := in.Names()[id]; unsafe.StringData(got) != unsafe.StringData(s) {
		t.Errorf("Adopt copied the string")
	}
	if in.ID(strings.Repeat("x", 100)) != id || in.Adopt(s) != id {
		t.Errorf("Adopt and ID disagree on the id of one string")
	}
}

// TestConfigTableCollision: two configurations whose hashes collide get
// ids of their own (the table keys its map by hash).
func TestConfigTableCollision(t *testing.T) {
	ct := NewConfigTable()
	a := Config{Grid: [3]int32{1, 1, 1}, SharedMem: -1, DynamicSharedMem: -1}
	b := Config{Grid: [3]int32{2, 1, 1}, SharedMem: -1, DynamicSharedMem: -1}
	ia := ct.ID(a)
	ct.byHash[b.hash()] = ia // pretend b's hash is a's
	ib := ct.ID(b)
	if ia == ib || ct.ID(b) != ib || ct.ID(a) != ia || ct.Configs()[ib] != b || ct.ID(NoConfig) != 0 {
		t.Errorf("ids %d, %d; configs %v", ia, ib, ct.Configs())
	}
}

func TestAddSat(t *testing.T) {
	for _, c := range []struct{ a, b, want int64 }{
		{1, 2, 3}, {-5, 2, -3},
		{math.MaxInt64 - 1, 1, math.MaxInt64}, {math.MaxInt64 - 1, 2, math.MaxInt64}, {math.MaxInt64, math.MaxInt64, math.MaxInt64},
		{math.MinInt64 + 1, -1, math.MinInt64}, {math.MinInt64 + 1, -2, math.MinInt64}, {math.MinInt64, math.MinInt64, math.MinInt64},
		{math.MinInt64, math.MaxInt64, -1}, {math.MaxInt64, math.MinInt64, -1},
	} {
		if got := AddSat(c.a, c.b); got != c.want {
			t.Errorf("AddSat(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestDeviceIDs: runs of one device, devices coming back after others,
// device 0 first or not: each device once, ascending.
func TestDeviceIDs(t *testing.T) {
	for _, tc := range []struct {
		devs []int32
		want []int32
	}{
		{nil, nil},
		{[]int32{0, 0, 0}, []int32{0}},
		{[]int32{3, 3, 1, 1, 3, 0, 0, 1}, []int32{0, 1, 3}},
		{[]int32{5, 0, 5, 0}, []int32{0, 5}},
	} {
		tr := &Trace{}
		for _, d := range tc.devs {
			tr.Activities = append(tr.Activities, Activity{Device: d})
		}
		if got := tr.DeviceIDs(); !slices.Equal(got, tc.want) {
			t.Errorf("devices %v: DeviceIDs() = %v, want %v", tc.devs, got, tc.want)
		}
	}
}

// TestActivitiesSorted: the check Sort makes agrees with CompareActivities
// on activities that share starts (ties broken by the other fields).
func TestActivitiesSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := range 2000 {
		s := make([]Activity, 1+rng.IntN(6))
		for i := range s {
			s[i] = Activity{Start: Time(rng.IntN(3)), Dur: int64(rng.IntN(2)), Device: int32(rng.IntN(2)), Name: NameID(rng.IntN(2)), Attr: AttrID(rng.IntN(2))}
		}
		if iter%2 == 0 {
			slices.SortFunc(s, func(a, b Activity) int { return CompareActivities(&a, &b) })
		}
		want := slices.IsSortedFunc(s, func(a, b Activity) int { return CompareActivities(&a, &b) })
		if got := activitiesSorted(s); got != want {
			t.Fatalf("activitiesSorted(%+v) = %v, want %v", s, got, want)
		}
	}
}
