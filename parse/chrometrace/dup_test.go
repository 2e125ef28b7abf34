package chrometrace

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// repeated is a trace of units distinct groups of events (a kernel, its
// launch, an annotation, a collective op, a Python function) written
// copies times over: a gzip bomb of duplicate events, uncompressed.
func repeated(units, copies int) []byte {
	var b strings.Builder
	b.WriteString(`{"traceEvents": [`)
	for c := range copies {
		for u := range units {
			if c+u > 0 {
				b.WriteString(",\n")
			}
			ts := 10 * u
			fmt.Fprintf(&b, `{"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": %d}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": %d, "dur": 1, "args": {"correlation": %d}},
{"ph": "X", "cat": "user_annotation", "name": "step%d", "pid": 1, "tid": 1, "ts": %d, "dur": 9},
{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": %d, "dur": 3, "args": {"Collective name": "allreduce", "In msg nelems": %d}},
{"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 1, "ts": %d, "dur": 9}`,
				u, ts+5, u+1, ts, u+1, u, ts, ts+1, u, ts)
		}
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// TestDuplicatesNotStored: duplicate events are dropped before they pile
// up (issue 11: a 25 MB .gz of one trace repeated, 6 GiB of JSON, took
// 4.2 GB): the bytes Parse allocates do not grow with the number of
// copies, and the model is the one copy's, with the duplicates counted.
func TestDuplicatesNotStored(t *testing.T) {
	const units = 500
	alloc := func(copies int) uint64 {
		data := repeated(units, copies)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Parse(bytes.NewReader(data), Options{Workers: 1, BlockSize: 64 << 10}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	alloc(2) // warm up
	few, many := alloc(4), alloc(40)
	perCopy := (float64(many) - float64(few)) / 36 / units
	t.Logf("%d bytes for 4 copies, %d for 40: %.1f bytes per extra copy of a group", few, many, perCopy)
	// Storing a copy would cost at least its records: 48 + 48 + 56 + 80 bytes.
	if perCopy > 8 {
		t.Errorf("Parse allocated %.1f bytes per extra copy of a group of events: duplicates are stored", perCopy)
	}

	one, err := Parse(bytes.NewReader(repeated(units, 1)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ten, err := parseBoth(t, repeated(units, 10))
	if err != nil {
		t.Fatal(err)
	}
	if len(ten.Activities) != units || len(ten.Launches) != units || len(ten.Ranges) != units || len(ten.Collectives) != units {
		t.Errorf("%d activities, %d launches, %d ranges, %d collectives; want %d of each",
			len(ten.Activities), len(ten.Launches), len(ten.Ranges), len(ten.Collectives), units)
	}
	got := map[string]string{}
	for _, a := range ten.Anomalies {
		got[a.What] = fmt.Sprintf("%d: %s", a.Count, a.Example)
	}
	want := map[string]string{
		"duplicate GPU activity dropped": "4500: k0 at ts 5000 ns",
		"duplicate launch call dropped":  "4500: cudaLaunchKernel at ts 0 ns",
		"duplicate range dropped":        "4500: step0 at ts 0 ns",
		"duplicate collective dropped":   "4500: allreduce at ts 1000 ns",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("anomalies %v\n     want %v", got, want)
	}
	ten.Anomalies, one.Anomalies = nil, nil
	if fmt.Sprint(ten) != fmt.Sprint(one) {
		t.Errorf("ten copies do not give the model of one")
	}
}

func TestInsertionFix(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name    string
		n, swap int // length, and how far records are displaced
		ok      bool
	}{
		{"sorted", 1000, 0, true},
		{"nearly sorted", 5000, 3, true},
		{"one far off", 5000, 4000, true},
		{"reversed", 5000, -1, false},
	} {
		s := make([]int, tc.n)
		for i := range s {
			s[i] = i
		}
		if tc.swap < 0 {
			slices.Reverse(s)
		}
		for i := 0; tc.swap > 0 && i+tc.swap < len(s); i += tc.swap + 1 {
			j := i + rng.IntN(tc.swap) + 1
			s[i], s[j] = s[j], s[i]
		}
		want := slices.Clone(s)
		slices.Sort(want)
		ok := insertionFix(s, 1, cmp.Compare[int], nil)
		if ok != tc.ok {
			t.Errorf("%s: insertionFix = %v, want %v", tc.name, ok, tc.ok)
		}
		got := slices.Clone(s)
		if ok && !slices.Equal(got, want) {
			t.Errorf("%s: not sorted", tc.name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: not a permutation", tc.name)
		}
	}
}

func TestIDSet(t *testing.T) {
	var s idSet
	ids := []int64{1, 2, 5000, 0, -7, 1 << 40, 63, 64}
	for _, id := range ids {
		s.add(id)
	}
	for _, id := range ids {
		if !s.has(id) {
			t.Errorf("%d missing", id)
		}
	}
	for _, id := range []int64{3, 4999, 1<<40 + 1, -8, 65} {
		if s.has(id) {
			t.Errorf("%d present", id)
		}
	}
	if len(s.bits) > 64+4*len(ids) {
		t.Errorf("%d words for %d ids", len(s.bits), len(ids))
	}
}
