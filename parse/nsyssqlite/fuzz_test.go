package nsyssqlite

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// FuzzRows drives the row → trace conversion (builder) with arbitrary rows:
// whatever the values, finish must not panic and must return a trace that
// passes CheckValid. SQLite itself is not fuzzed.
//
// The input is a sequence of records: one byte picks the table, then up to
// eight little-endian int64 fields (missing bytes read as 0).
func FuzzRows(f *testing.F) {
	rec := func(kind byte, vals ...int64) []byte {
		b := []byte{kind}
		for i := range 8 { // every record has 8 fields
			var v int64
			if i < len(vals) {
				v = vals[i]
			}
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	var seed []byte
	seed = append(seed, rec(0, 100, 200, 0, 7, 11, 1<<48|7<<24, 1)...)  // kernel
	seed = append(seed, rec(1, 150, 140, 0, 7, 12, 1<<48|7<<24, 42)...) // memcpy, backwards, odd kind
	seed = append(seed, rec(3, 90, 95, 1<<48|7<<24|9, 11, 3)...)        // launch
	seed = append(seed, rec(4, 50, 700, 59, 1<<48|7<<24|9, 5, 3, 1)...) // nvtx range in domain 3
	seed = append(seed, rec(4, 1, 0, 75, 1<<48|7<<24|9, 6, 3, 0)...)    // domain create
	f.Add(seed)
	f.Add(rec(0, -1<<63, 1<<63-1, 1<<40, -5, -1, -1, -1))
	// A process that first shows up after the launch buckets were sized.
	late := append(rec(0, 1, 2, 0, 7, 1, 1<<24, 1), rec(3, 0, 1, 1<<24|3, 1, 2, 0, 0, 0)...)
	late = append(late, rec(0, 3, 4, 0, 7, 5, 2<<24, 1)...)
	f.Add(append(late, rec(3, 2, 3, 2<<24|4, 5, 2, 0, 0, 0)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := newBuilder(0, 0)
		prepared := false
		for len(data) > 0 {
			kind := data[0] % 6
			data = data[1:]
			var v [8]int64
			for i := range v {
				var w [8]byte
				n := copy(w[:], data)
				data = data[n:]
				v[i] = int64(binary.LittleEndian.Uint64(w[:]))
			}
			a := activityRow{start: v[0], end: v[1], device: v[2], stream: v[3], corr: v[4], globalPid: v[5], name: v[6]}
			switch kind {
			case 0:
				b.kernel(&a)
			case 1:
				b.memcpy(&a, v[6])
			case 2:
				b.memset(&a)
			case 3:
				if !prepared && v[7]&1 == 0 {
					b.prepareLaunches()
					prepared = true
				}
				b.launch(&launchRow{start: v[0], end: v[1], globalTid: v[2], corr: v[3], name: v[4]})
			case 4:
				b.nvtx(&nvtxRow{start: v[0], end: v[1], hasEnd: v[7]&1 == 0, eventType: v[2], globalTid: v[3],
					textID: v[4], hasTextID: v[7]&2 == 0, domainID: v[5], text: fmt.Sprint(v[6] % 7), hasText: v[7]&4 == 0})
			case 5:
				b.nvtx(&nvtxRow{start: v[0], end: v[1], hasEnd: true, eventType: nvtxDomainCreate, globalTid: v[3], domainID: v[5],
					text: "d", hasText: true})
			}
		}
		lookup := func(ids []int64) (map[int64]string, error) {
			m := map[int64]string{}
			for _, id := range ids {
				if id%3 != 0 { // some ids are missing from StringIds
					m[id] = fmt.Sprintf("name%d_v%d", id%5, id%3)
				}
			}
			return m, nil
		}
		tr, err := b.finish(lookup, map[int64]string{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.CheckValid(); err != nil {
			t.Fatalf("finish returned an invalid trace: %v", err)
		}
		for i := range tr.Launches {
			l := &tr.Launches[i]
			if l.Proc < 0 || int(l.Proc) >= len(tr.Procs) {
				t.Fatalf("launch %d: proc %d of %d", i, l.Proc, len(tr.Procs))
			}
		}
		for i := range tr.Ranges {
			if r := &tr.Ranges[i]; r.Proc < 0 || int(r.Proc) >= len(tr.Procs) {
				t.Fatalf("range %d: proc %d of %d", i, r.Proc, len(tr.Procs))
			}
		}
	})
}
