package nsyssqlite

import (
	"database/sql/driver"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/trace"
)

// fuzzInput reads the fuzzers' inputs: little-endian numbers and typed
// column values; missing bytes read as 0.
type fuzzInput struct{ data []byte }

func (in *fuzzInput) byte() byte {
	if len(in.data) == 0 {
		return 0
	}
	b := in.data[0]
	in.data = in.data[1:]
	return b
}

func (in *fuzzInput) int64() int64 {
	var w [8]byte
	n := copy(w[:], in.data)
	in.data = in.data[n:]
	return int64(binary.LittleEndian.Uint64(w[:]))
}

// value reads one column value as the driver returns them: mostly
// integers, and NULL, REAL (any bits: NaN, Inf, 1e300), TEXT and BLOB.
func (in *fuzzInput) value() driver.Value {
	switch in.byte() % 10 {
	case 6:
		return nil
	case 7:
		return math.Float64frombits(uint64(in.int64()))
	case 8:
		return strings.Repeat("x", int(in.byte()%4))
	case 9:
		return []byte{in.byte()}
	}
	return in.int64()
}

// Fuzz record encodings, shared by the seeds.
func fuzzInt(v int64) []byte { return binary.LittleEndian.AppendUint64([]byte{0}, uint64(v)) }

func fuzzRec(kind byte, vals ...int64) []byte {
	b := []byte{kind}
	for i := range 8 {
		var v int64
		if i < len(vals) {
			v = vals[i]
		}
		b = append(b, fuzzInt(v)...)
	}
	return b
}

// FuzzRows drives the row → trace conversion (decoding the driver's values
// and the builder) with arbitrary rows: whatever the values and their
// types, finish must not panic and must return a trace that passes
// CheckValid, and memory must follow the number of rows, not the values.
// SQLite itself is not fuzzed.
//
// The input is a sequence of records: one byte picks the table, then eight
// typed values (a type byte, then the value).
func FuzzRows(f *testing.F) {
	var seed []byte
	seed = append(seed, fuzzRec(0, 100, 200, 0, 7, 11, 1<<48|7<<24, 1)...)  // kernel
	seed = append(seed, fuzzRec(1, 150, 140, 0, 7, 12, 1<<48|7<<24, 42)...) // memcpy, backwards, odd kind
	seed = append(seed, fuzzRec(3, 90, 95, 1<<48|7<<24|9, 11, 3)...)        // launch
	seed = append(seed, fuzzRec(4, 50, 700, 59, 1<<48|7<<24|9, 5, 3, 1)...) // nvtx range in domain 3
	seed = append(seed, fuzzRec(4, 1, 0, 75, 1<<48|7<<24|9, 6, 3, 0)...)    // domain create
	f.Add(seed)
	f.Add(fuzzRec(0, -1<<63, 1<<63-1, 1<<40, -5, -1, -1, -1))
	// Correlation ids and name ids far apart: memory must not follow them.
	f.Add(append(fuzzRec(0, 1, 2, 0, 7, 1, 1<<24, 1), fuzzRec(0, 3, 4, 0, 7, 1<<40, 1<<24, 1<<30)...))
	f.Add(append(fuzzRec(0, 1, 2, 0, 7, 1<<40, 1<<24, 5), fuzzRec(0, 3, 4, 0, 7, -1<<62, 1<<24, 1)...))
	// A process that first shows up after the launch buckets were sized.
	late := append(fuzzRec(0, 1, 2, 0, 7, 1, 1<<24, 1), fuzzRec(3, 0, 1, 1<<24|3, 1, 2, 0, 0, 0)...)
	late = append(late, fuzzRec(0, 3, 4, 0, 7, 5, 2<<24, 1)...)
	f.Add(append(late, fuzzRec(3, 2, 3, 2<<24|4, 5, 2, 0, 0, 0)...))
	// Odd types: a NULL start, a REAL end, a TEXT name.
	odd := []byte{0, 6}
	odd = append(odd, 7)
	odd = binary.LittleEndian.AppendUint64(odd, math.Float64bits(1e300))
	f.Add(append(odd, 8, 2))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{data}
		type rec struct {
			kind byte
			v    [8]driver.Value
		}
		var recs []rec
		for len(in.data) > 0 {
			r := rec{kind: in.byte() % 7}
			for i := range r.v {
				r.v[i] = in.value()
			}
			recs = append(recs, r)
		}
		var gpu, nvtx int
		for _, r := range recs {
			switch r.kind {
			case 0, 1, 2:
				gpu++
			case 4, 5:
				nvtx++
			}
		}
		var tr *trace.Trace
		n := allocated(func() {
			b := newBuilder(gpu, nvtx) // sized as read sizes it: from the row counts
			prepared := false
			for i, r := range recs {
				row := int64(i + 1)
				switch r.kind {
				case 0:
					b.kernelRow(r.v[:7], row)
				case 1:
					b.memcpyRow(r.v[:7], row)
				case 2:
					b.memsetRow(r.v[:6], row)
				case 3, 6:
					if !prepared && r.v[7] == nil {
						b.prepareLaunches()
						prepared = true
					}
					table := tableRuntime
					if r.kind == 6 {
						table = tableDriver
					}
					b.apiRow(table, r.v[:5], row)
				case 4:
					b.nvtxRow(r.v[:7], row)
				case 5:
					v := r.v
					v[2], v[4] = int64(nvtxDomainCreate), "d"
					b.nvtxRow(v[:7], row)
				}
			}
			lookup := func(ids []int64) (map[int64]string, error) {
				m := map[int64]string{}
				for _, id := range ids {
					if id%3 != 0 { // some ids are missing from StringIds
						m[id] = "name" + strconv.FormatInt(id%5, 10) + "_v" + strconv.FormatInt(id%3, 10)
					}
				}
				return m, nil
			}
			var err error
			if tr, err = b.finish(lookup, map[int64]string{}); err != nil {
				t.Fatal(err)
			}
		})
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
		// About 1 KiB per row; the kernel-name window and the bitmaps
		// have a floor of a few pages each.
		if limit := uint64(1<<20 + 64<<10*len(recs)); n > limit {
			t.Fatalf("%d rows: %d bytes allocated, over %d", len(recs), n, limit)
		}
	})
}
