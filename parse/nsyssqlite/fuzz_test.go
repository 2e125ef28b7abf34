package nsyssqlite

import (
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
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

// rowOf is v as the raw scanner reads it (rowVals).
func rowOf(v []driver.Value) *rowVals {
	r := &rowVals{ints: make([]int64, len(v)), kinds: make([]uint8, len(v)), other: make([]driver.Value, len(v))}
	for i, x := range v {
		switch x := x.(type) {
		case int64:
			r.kinds[i], r.ints[i] = colInt, x
		case nil:
			r.kinds[i] = colNull
		case float64:
			r.kinds[i], r.other[i] = colFloat, x
		case string:
			r.kinds[i], r.other[i] = colText, x
		case []byte:
			r.kinds[i], r.other[i] = colBlob, x
		default:
			r.other[i] = x // kind 0: not a SQLite datatype
		}
	}
	return r
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
// SQLite itself is not in the loop (FuzzOpen has it).
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
			row  *rowVals // v as read, for the record's kind
		}
		var recs []rec
		for len(in.data) > 0 {
			r := rec{kind: in.byte() % 7}
			for i := range r.v {
				r.v[i] = in.value()
			}
			switch r.kind {
			case 0:
				if r.v[7] == nil {
					r.row = rowOf(r.v[:7])
					break
				}
				// With a launch configuration made of the row's values.
				r.row = rowOf(append(r.v[:7:7], r.v[7], r.v[0], r.v[1], r.v[2], r.v[3], r.v[4], r.v[5], r.v[6], r.v[7]))
			case 1, 4:
				r.row = rowOf(r.v[:7])
			case 2:
				r.row = rowOf(r.v[:6])
			case 3, 6:
				r.row = rowOf(r.v[:5])
			case 5:
				v := r.v
				v[2], v[4] = int64(nvtxDomainCreate), "d"
				r.row = rowOf(v[:7])
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
					b.kernelRow(r.row, row)
				case 1:
					b.memcpyRow(r.row, row)
				case 2:
					b.memsetRow(r.row, row)
				case 3, 6:
					if !prepared && r.v[7] == nil {
						b.prepareLaunches()
						prepared = true
					}
					table := tableRuntime
					if r.kind == 6 {
						table = tableDriver
					}
					b.apiRow(table, r.row, row)
				case 4, 5:
					b.nvtxRow(r.row, row)
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

// The fuzzed export's schema: nsys's column names, without NOT NULL so
// that NULLs can be stored.
var fuzzSchema = relaxed(ddlStrings + ddlKernel + ddlRuntime + ddlMemcpy + ddlNVTX +
	strings.Replace(ddlRuntime, "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER", 1))

var fuzzInserts = []string{
	`INSERT OR REPLACE INTO CUPTI_ACTIVITY_KIND_KERNEL (rowid, start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`,
	`INSERT OR REPLACE INTO CUPTI_ACTIVITY_KIND_MEMCPY (rowid, start, end, deviceId, contextId, streamId, correlationId, globalPid, copyKind, bytes) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`,
	`INSERT OR REPLACE INTO CUPTI_ACTIVITY_KIND_RUNTIME (rowid, start, end, globalTid, correlationId, nameId, eventClass, returnValue) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	`INSERT OR REPLACE INTO CUPTI_ACTIVITY_KIND_DRIVER (rowid, start, end, globalTid, correlationId, nameId, eventClass, returnValue) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	`INSERT OR REPLACE INTO NVTX_EVENTS (rowid, start, end, eventType, globalTid, text, textId, domainId, rangeId) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	`INSERT OR REPLACE INTO StringIds (id, value) VALUES (?, ?)`,
}

// FuzzOpen writes the input as rows of a real SQLite file, rowids
// included (huge, negative, sparse: whatever the input says), and reads it
// with Open: no panic, memory that follows the rows, and either a valid
// trace or one of Open's one-line errors.
//
// The input is a sequence of records: one byte picks the table, then the
// rowid (8 bytes) and eight typed values.
func FuzzOpen(f *testing.F) {
	rec := func(table byte, rowid int64, vals ...int64) []byte {
		b := append([]byte{table}, binary.LittleEndian.AppendUint64(nil, uint64(rowid))...)
		for i := range 8 {
			var v int64
			if i < len(vals) {
				v = vals[i]
			}
			b = append(b, fuzzInt(v)...)
		}
		return b
	}
	const pid, tid = 1<<48 | 7<<24, 1<<48 | 7<<24 | 9
	var seed []byte
	seed = append(seed, rec(5, 1, 1, 0)...)                           // StringIds (value: "")
	seed = append(seed, rec(0, 1, 100, 200, 0, 7, 11, pid, 1, 1)...)  // kernel
	seed = append(seed, rec(2, 1, 90, 95, tid, 11, 1, 0, 0, 0)...)    // runtime
	seed = append(seed, rec(4, 1, 50, 700, 59, tid, 0, 1, 0, 0)...)   // nvtx
	seed = append(seed, rec(1, 1, 150, 160, 0, 7, 12, pid, 1, 64)...) // memcpy
	seed = append(seed, rec(3, 2, 140, 145, tid, 12, 1, 1, 0, 0)...)  // driver
	f.Add(seed)
	f.Add(append(seed, rec(4, math.MaxInt64, 1, 0, 59)...))                // issue 11's NVTX rowid
	f.Add(append(seed, rec(0, 1e9, 300, 400, 0, 7, 13, pid, 1, 1)...))     // a kernel rowid of 10^9
	f.Add(append(seed, rec(0, -5, 300, 400, 0, 7, 13, pid, 1, 1)...))      // negative
	f.Add(append(seed, rec(0, math.MinInt64, 300, 400, 0, 7, 13, pid)...)) // the least
	f.Add([]byte{})
	schema := filepath.Join(f.TempDir(), "schema.sqlite")
	db, err := sql.Open("sqlite3", fileURI(schema))
	if err != nil {
		f.Fatal(err)
	}
	if _, err := db.Exec(fuzzSchema); err != nil {
		f.Fatal(err)
	}
	db.Close()
	empty, err := os.ReadFile(schema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.sqlite")
		if err := os.WriteFile(path, empty, 0o644); err != nil {
			t.Fatal(err)
		}
		// No journal, no fsync: the file is thrown away.
		db, err := sql.Open("sqlite3", fileURI(path)+"?_journal_mode=OFF&_synchronous=OFF")
		if err != nil {
			t.Fatal(err)
		}
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		in := &fuzzInput{data}
		rows := 0
		for len(in.data) > 0 {
			q := fuzzInserts[int(in.byte())%len(fuzzInserts)]
			args := []any{in.int64()}
			for range strings.Count(q, "?") - 1 {
				args = append(args, in.value())
			}
			if _, err := tx.Exec(q, args...); err != nil {
				t.Fatalf("%s %v: %v", q, args, err)
			}
			rows++
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		db.Close()

		var tr *trace.Trace
		n := allocated(func() { tr, err = Open(path, Options{}) })
		if limit := uint64(4<<20 + 64<<10*rows); n > limit {
			t.Fatalf("%d rows: Open allocated %d bytes, over %d", rows, n, limit)
		}
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "\n") || strings.Contains(msg, path) {
				t.Fatalf("error %q: want one line without the path", msg)
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNoKernels) && !errors.Is(err, ErrWholeGraphs) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		if err := tr.CheckValid(); err != nil {
			t.Fatalf("invalid trace: %v", err)
		}
	})
}

// FuzzDamage overwrites bytes of a real export and reads it: SQLite must
// see the damage or read what is left, and Open must not panic, nor
// blame the capture (ErrNoKernels) for a damaged kernel table.
//
// The input is a sequence of patches: a page number (2 bytes), an offset
// in the page (2 bytes), a length (1 byte) and the bytes.
func FuzzDamage(f *testing.F) {
	orig, err := os.ReadFile(filepath.Join(fixtureDir, "nsys2022.1.3_dlprof-rtx2070-cudnn.sqlite"))
	if err != nil {
		f.Fatal(err)
	}
	const pageSize = 4096
	if got := int(binary.BigEndian.Uint16(orig[16:])); got != pageSize {
		f.Fatalf("page size %d", got)
	}
	patch := func(page, off uint16, b ...byte) []byte {
		p := binary.LittleEndian.AppendUint16(nil, page)
		p = binary.LittleEndian.AppendUint16(p, off)
		return append(append(p, byte(len(b))), b...)
	}
	f.Add(patch(0, 100, 0)) // page 1 (sqlite_master) after the header
	f.Add(patch(3, 0, 13, 0, 0, 0, 255, 255))
	f.Add(patch(10, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, data []byte) {
		db := append([]byte(nil), orig...)
		in := &fuzzInput{data}
		for len(in.data) > 0 {
			page := int(binary.LittleEndian.Uint16([]byte{in.byte(), in.byte()}))
			off := int(binary.LittleEndian.Uint16([]byte{in.byte(), in.byte()})) % pageSize
			n := int(in.byte())
			at := (page*pageSize + off) % len(db)
			if at < 100 {
				at += 100 // the file header: Sniff and SQLite's own checks
			}
			for i := 0; i < n && len(in.data) > 0; i++ {
				db[(at+i)%len(db)] = in.byte()
			}
		}
		path := filepath.Join(t.TempDir(), "d.sqlite")
		if err := os.WriteFile(path, db, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Open(path, Options{})
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, path) {
				t.Fatalf("error %q: want one line without the path", msg)
			}
			return
		}
		if err := tr.CheckValid(); err != nil {
			t.Fatalf("invalid trace: %v", err)
		}
	})
}

// FuzzRankNames checks the pure parts of naming ranks (ranks.go) on any
// input: an NVTX payload blob and schema, thread names and environment
// assignments never make them panic, and a rank they give is one the
// input can hold (below the communicator's size; not negative).
func FuzzRankNames(f *testing.F) {
	init := make([]byte, 56)
	binary.LittleEndian.PutUint32(init[8:], 7)
	binary.LittleEndian.PutUint32(init[40:], 8)
	binary.LittleEndian.PutUint32(init[44:], 3)
	f.Add(init, int64(12), int64(5), int64(8), int64(5), "VLLM::Worker_PP1_TP3", "Worker_DP0_TP2", `RANK="4"`)
	f.Add([]byte{}, int64(0), int64(0), int64(0), int64(0), "MPI Rank 9", "Worker_", "=")
	f.Add(make([]byte, 31), int64(-1), int64(99), int64(1<<40), int64(18), "Worker_TP99999999999999999999", "xWorker_PP", `K="`)
	f.Fuzz(func(t *testing.T, blob []byte, rankOff, rankType, nranksOff, nranksType int64, name1, name2, env string) {
		s := nvtxPayload{rankOff: int(rankOff % (1 << 16)), rankSize: payloadTypeSize(rankType),
			nranksOff: int(nranksOff % (1 << 16)), nranksSize: payloadTypeSize(nranksType)}
		if in, ok := decodeInit(blob, map[int64]nvtxPayload{7: s}); ok && (in.rank < 0 || in.rank >= in.nranks) {
			t.Fatalf("rank %d of %d", in.rank, in.nranks)
		}
		for p, c := range threadRanks(map[int][]string{0: {name1}, 1: {name2}, 2: {name1, name2}}) {
			if c.rank < 0 || p < 0 || p > 2 {
				t.Fatalf("process %d: rank %+v", p, c)
			}
		}
		if k, v, ok := parseEnvAssignment(env); ok {
			if c, ok := envRank(map[string]string{k: v}); ok && c.rank < 0 {
				t.Fatalf("rank %+v from %q", c, env)
			}
		}
	})
}
