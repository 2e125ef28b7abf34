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

// TestDistinctBatches: records added in batches, sorted into place as they
// come (distinct.order), compact to what one compaction of all of them
// gives — the same records, duplicates counted and the same example —
// whether the batches come in order, nearly so, far out of order (order
// gives up) or with compactions between them (a full slice).
func TestDistinctBatches(t *testing.T) {
	type rec struct{ k, v int }
	cmpRec := func(a, b rec) int { return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.v, b.v)) }
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name    string
		n, swap int  // records, and how far they are displaced (-1: reversed)
		dups    int  // one record in dups is a copy of an earlier one
		recent  bool // of one of the 60 before it
		batch   int
		capHint int // the slice's first capacity (0: append grows it)
	}{
		{"in order", 3000, 0, 0, false, 100, 0},
		{"nearly sorted", 3000, 5, 0, false, 64, 0},
		{"far back across batches", 3000, 700, 0, false, 50, 0},
		{"reversed", 3000, -1, 0, false, 100, 0},
		{"duplicates", 3000, 3, 4, false, 77, 0},
		{"recent duplicates", 3000, 3, 4, true, 77, 0},
		{"duplicates, compacted when full", 3000, 8, 3, false, 40, 500},
		{"recent duplicates, compacted when full", 3000, 8, 3, true, 40, 500},
		{"reversed duplicates, compacted when full", 3000, -1, 3, false, 40, 500},
	} {
		for _, keyed := range []bool{false, true} {
			all := make([]rec, tc.n)
			for i := range all {
				all[i] = rec{i / 3, i % 3}
				if tc.dups > 0 && i > 10 && rng.IntN(tc.dups) == 0 {
					// A copy of any record, or of a recent one: that
					// is sorted into place behind records already
					// compacted.
					back := i
					if tc.recent {
						back = min(i, 60)
					}
					all[i] = all[i-1-rng.IntN(back)]
				}
			}
			if tc.swap < 0 {
				slices.Reverse(all)
			}
			for i := 0; tc.swap > 0 && i+tc.swap < len(all); i += tc.swap + 1 {
				j := i + rng.IntN(tc.swap) + 1
				all[i], all[j] = all[j], all[i]
			}
			mk := func() *distinct[rec] {
				d := &distinct[rec]{cmp: cmpRec}
				if keyed {
					d.key = func(r *rec) int64 { return int64(r.k) }
				}
				return d
			}
			ref := mk()
			want := ref.compact(slices.Clone(all))
			d := mk()
			s := make([]rec, 0, tc.capHint)
			for lo := 0; lo < len(all); lo += tc.batch {
				s = d.add(s, all[lo:min(lo+tc.batch, len(all))], 0, 0)
			}
			got := d.compact(s)
			if !slices.Equal(got, want) || d.n != ref.n || d.min != ref.min {
				t.Errorf("%s (key %v): %d records, %d dropped, first %v; one compaction: %d, %d, %v",
					tc.name, keyed, len(got), d.n, d.min, len(want), ref.n, ref.min)
			}
			if !slices.IsSortedFunc(got, cmpRec) {
				t.Errorf("%s (key %v): not sorted", tc.name, keyed)
			}
		}
	}
}
