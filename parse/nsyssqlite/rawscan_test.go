//go:build cgo

package nsyssqlite

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/traceq/traceq/trace"
)

// TestRawScan checks rawDB.scan against database/sql reading the same
// query: every row, in order, with each value's datatype and value,
// whether it is an integer (any of 64 bits), NULL, REAL, TEXT (NULs and
// all) or BLOB, and wherever the rows that are not all integers fall
// against the batches of scanBatch rows (first, last, either side of a
// boundary, two in a row, the very last row).
func TestRawScan(t *testing.T) {
	odd := map[int]string{
		0:               "1.5",
		scanBatch - 2:   "'text'",
		scanBatch - 1:   "X'00ff'",
		scanBatch:       "'a' || char(0) || 'b'",
		scanBatch + 1:   "-1e300",
		2*scanBatch - 1: "''",
		2 * scanBatch:   "X''",
		3*scanBatch + 6: "'last'",
	}
	n := 3*scanBatch + 7
	var rows []string
	for i := range n {
		x := fmt.Sprint(int64(i) * 1_000_003)
		if v, ok := odd[i]; ok {
			x = v
		}
		nul := "NULL"
		if i%3 == 0 {
			nul = fmt.Sprint(i)
		}
		big := []string{"9223372036854775807", "-9223372036854775808", "255", "256", "-1"}[i%5]
		rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s)", i, x, nul, big))
	}
	// No declared types: every value keeps its datatype.
	path := makeDB(t, "scan.sqlite", "CREATE TABLE t (a, b, c, d);\nINSERT INTO t VALUES "+strings.Join(rows, ",\n")+";")
	const q = "SELECT a, b, c, d FROM t ORDER BY a"

	want := driverRows(t, path, q)
	raw, err := openRaw(dbURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.close()
	var got [][]driver.Value
	err = raw.scan(q, 4, func(r *rowVals) error {
		row := make([]driver.Value, len(r.kinds))
		for i := range row {
			row[i] = r.value(i)
			if k := r.kinds[i]; k != kindOf(row[i]) {
				t.Errorf("row %d column %d: kind %d for %#v", len(got), i, k, row[i])
			}
		}
		got = append(got, row)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || len(want) != n {
		t.Fatalf("%d rows, want %d (database/sql read %d)", len(got), n, len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("row %d: %#v, want %#v", i, got[i], want[i])
		}
	}
	if s, ok := got[scanBatch][1].(string); !ok || s != "a\x00b" {
		t.Errorf("TEXT with a NUL read as %#v", got[scanBatch][1])
	}

	t.Run("errors", func(t *testing.T) {
		stop := errors.New("stop")
		calls := 0
		if err := raw.scan(q, 4, func(*rowVals) error { calls++; return stop }); err != stop || calls != 1 {
			t.Errorf("scan returned %v after %d rows, want the callback's error after 1", err, calls)
		}
		if err := raw.scan(q, 3, func(*rowVals) error { return nil }); err == nil || !strings.Contains(err.Error(), "4 columns, want 3") {
			t.Errorf("wrong column count: %v", err)
		}
		err := raw.scan("SELECT nope FROM t", 1, func(*rowVals) error { return nil })
		if err == nil || err.Error() != "no such column: nope" || sqliteErrClass(err) != errOther {
			t.Errorf("bad query: %v", err)
		}
	})
}

// driverRows reads query's rows through database/sql.
func driverRows(t *testing.T, path, query string) [][]driver.Value {
	t.Helper()
	rows, err := sqlDB(t, path).Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]driver.Value
	for rows.Next() {
		v := make([]any, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		row := make([]driver.Value, len(v))
		for i, x := range v {
			row[i] = x
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func kindOf(v driver.Value) uint8 {
	switch v.(type) {
	case int64:
		return colInt
	case float64:
		return colFloat
	case string:
		return colText
	case []byte:
		return colBlob
	case nil:
		return colNull
	}
	return 0
}

// TestRawDamaged: a damaged page met while scanning is SQLite's
// corruption error, sorted as database/sql's (errDamaged).
func TestRawDamaged(t *testing.T) {
	var rows []string
	for i := range 5000 {
		rows = append(rows, fmt.Sprintf("(%d, '%s')", i, strings.Repeat("x", 100)))
	}
	path := makeDB(t, "damaged.sqlite", "CREATE TABLE t (a INTEGER, b TEXT);\nINSERT INTO t VALUES "+strings.Join(rows, ",")+";")
	// Overwrite a page in the middle of the table's b-tree.
	editFile(t, path, 64*1024, strings.Repeat("\xff", 4096))
	raw, err := openRaw(dbURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.close()
	err = raw.scan("SELECT a, b FROM t", 2, func(*rowVals) error { return nil })
	if err == nil || sqliteErrClass(err) != errDamaged {
		t.Fatalf("scan of a damaged table: %v, want a corruption error", err)
	}
	if got := finalError(dbError(err)); !errors.Is(got, ErrCorrupt) || !strings.HasPrefix(got.Error(), "corrupt or not an nsys export: corrupt or truncated SQLite file (") {
		t.Errorf("final error %q", got)
	}
}

// TestNameConfigs: each kernel gets the configuration of its own row
// when a name has more configurations than kernelAttr remembers
// (maxNameCfgs), when names alternate, and when one is out of range
// (ignored and counted each time, never remembered).
func TestNameConfigs(t *testing.T) {
	cfg := func(grid int64) []driver.Value {
		return []driver.Value{grid, int64(1), int64(1), int64(128), int64(1), int64(1), int64(32), int64(0), int64(1024)}
	}
	type kern struct {
		name int64
		grid int64 // -1: out of range
	}
	var ks []kern
	for i := range 3 * maxNameCfgs {
		ks = append(ks, kern{1, int64(1 + i%(maxNameCfgs+3))}, kern{2, int64(7 + i%2)})
	}
	ks = append(ks, kern{1, -1}, kern{2, 7}, kern{1, -1}, kern{1, 1})
	b := newBuilder(len(ks), 0)
	for i, k := range ks {
		v := append([]driver.Value{int64(100 * i), int64(100*i + 50), int64(0), int64(7), int64(i + 1), int64(1 << 24), k.name}, cfg(k.grid)...)
		if k.grid < 0 {
			v[7+4] = int64(math.MaxInt32) + 1 // blockY
		}
		b.kernelRow(rowOf(v), int64(i+1))
	}
	tr, err := b.finish(func(ids []int64) (map[int64]string, error) {
		return map[int64]string{1: "a", 2: "b"}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Activities) != len(ks) {
		t.Fatalf("%d activities, want %d", len(tr.Activities), len(ks))
	}
	for i, a := range tr.Activities {
		k := ks[i]
		c := tr.ConfigOf(tr.AttrOf(a.Attr).Config)
		want := trace.Config{Grid: [3]int32{int32(k.grid), 1, 1}, Block: [3]int32{128, 1, 1}, Registers: 32, SharedMem: 1024, DynamicSharedMem: 1024}
		if k.grid < 0 {
			if a.Attr != 0 {
				t.Errorf("kernel %d: configuration %+v, want none (out of range)", i, c)
			}
			continue
		}
		if c != want || tr.Names[a.Name] != map[int64]string{1: "a", 2: "b"}[k.name] {
			t.Errorf("kernel %d (%s): configuration %+v, want %+v", i, tr.Names[a.Name], c, want)
		}
	}
	if got := anomalyCount(tr, "kernel launch configuration out of range ignored"); got != 2 {
		t.Errorf("out of range counted %d times, want 2", got)
	}
	if got, want := len(tr.Configs), 1+maxNameCfgs+3; got != want { // NoConfig and a's grids (b's are among them)
		t.Errorf("%d configurations, want %d", got, want)
	}
}

// editFile writes s at offset off of the file at path.
func editFile(t *testing.T, path string, off int64, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(s), off); err != nil {
		t.Fatal(err)
	}
}

// TestKernelRowDecoding: what a kernel row's datatypes make of it, one
// row at a time (rowVals as the raw scanner fills them): a NULL or
// non-integer time, device, stream or name skips the row; a NULL
// correlation id or process reads as 0; a configuration all NULL is
// absent, one with some NULLs or a non-integer is ignored and counted,
// the kernel kept.
func TestKernelRowDecoding(t *testing.T) {
	const (
		skipped = "gpu activity with a NULL or non-integer value skipped"
		ignored = "kernel launch configuration with a NULL or non-integer value ignored"
	)
	base := func() []driver.Value {
		return []driver.Value{int64(100), int64(150), int64(0), int64(7), int64(11), int64(1 << 24), int64(1),
			int64(4), int64(2), int64(1), int64(256), int64(1), int64(1), int64(64), int64(1024), int64(2048)}
	}
	with := func(col int, v driver.Value) []driver.Value { r := base(); r[col] = v; return r }
	allNull := base()
	for i := 7; i < len(allNull); i++ {
		allNull[i] = nil
	}
	tests := []struct {
		name    string
		row     []driver.Value
		kept    bool
		corr    int64
		config  bool   // a configuration is set
		anomaly string // the one anomaly, "" for none
	}{
		{"integers", base(), true, 11, true, ""},
		{"NULL start", with(0, nil), false, 0, false, skipped},
		{"REAL end", with(1, 150.0), false, 0, false, skipped},
		{"TEXT device", with(2, "0"), false, 0, false, skipped},
		{"BLOB stream", with(3, []byte{7}), false, 0, false, skipped},
		{"NULL name", with(6, nil), false, 0, false, skipped},
		{"NULL correlation id", with(4, nil), true, 0, true, ""},
		{"TEXT correlation id", with(4, "11"), false, 0, false, skipped},
		{"NULL process", with(5, nil), true, 11, true, ""},
		{"no configuration", base()[:7], true, 11, false, ""},
		{"configuration all NULL", allNull, true, 11, false, ""},
		{"one NULL in the configuration", with(9, nil), true, 11, false, ignored},
		{"REAL in the configuration", with(12, 1.5), true, 11, false, ignored},
		{"TEXT in the configuration", with(15, "2048"), true, 11, false, ignored},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(1, 0)
			b.kernelRow(rowOf(tt.row), 1)
			tr, err := b.finish(func(ids []int64) (map[int64]string, error) { return map[int64]string{1: "k"}, nil }, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(tr.Activities) == 1; got != tt.kept {
				t.Fatalf("kept %v, want %v", got, tt.kept)
			}
			var what []string
			for _, a := range tr.Anomalies {
				what = append(what, a.What)
			}
			if want := []string{tt.anomaly}; !(tt.anomaly == "" && len(what) == 0 || reflect.DeepEqual(what, want)) {
				t.Errorf("anomalies %q, want %q", what, tt.anomaly)
			}
			if !tt.kept {
				return
			}
			a := tr.Activities[0]
			if a.Start != 100 || a.Dur != 50 || a.Corr != tt.corr || a.Device != 0 || a.Stream != 7 || tr.Names[a.Name] != "k" {
				t.Errorf("activity %+v (name %q)", a, tr.Names[a.Name])
			}
			c := tr.ConfigOf(tr.AttrOf(a.Attr).Config)
			want := trace.Config{Grid: [3]int32{4, 2, 1}, Block: [3]int32{256, 1, 1}, Registers: 64, SharedMem: 3072, DynamicSharedMem: 2048}
			if got := a.Attr != 0; got != tt.config || tt.config && c != want {
				t.Errorf("configuration %+v (set %v), want set %v", c, got, tt.config)
			}
		})
	}
}
