package nsyssqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/trace"
)

// The tests here are issue 11's hostile inputs: copies of a real export
// edited with SQL or at the byte level.

const hostileFixture = "nsys2023.1.2_memfusion-rtx3090-tensorrt.sqlite"

// tmpFixture copies the fixture into a fresh directory.
func tmpFixture(t *testing.T) string {
	t.Helper()
	return copyFixture(t, filepath.Join(t.TempDir(), "x.sqlite"))
}

// fileURI is path as a "file:" URI: test directories can hold '#' or '?'.
func fileURI(path string) string {
	abs, _ := filepath.Abs(path)
	return "file:" + (&url.URL{Path: abs}).EscapedPath()
}

// editDB runs statements on path through an ordinary read-write
// connection, closed before it returns.
func editDB(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", fileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// pageOf returns the byte offset and size of the root page of table.
func pageOf(t *testing.T, path, table string) (off, size int64) {
	t.Helper()
	db, err := sql.Open("sqlite3", fileURI(path)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var root int64
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = ?`, table).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	return (root - 1) * size, size
}

func overwrite(t *testing.T, path string, off int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
}

// allocated returns the bytes of Go heap f allocates: a count, not a
// sample, so the same on every run. SQLite's own memory (C) is not in it;
// its page cache is bounded by SQLite.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func anomalyCount(tr *trace.Trace, what string) int64 {
	for _, a := range tr.Anomalies {
		if a.What == what {
			return a.Count
		}
	}
	return 0
}

// TestRowids: nsys never uses rowids, so their values, however large,
// negative or sparse, must change neither what is read nor the memory it
// takes. Arrays used to be sized from max(rowid): a panic for the largest
// int64 or a negative one, 48 GB for a kernel rowid of 10^9.
func TestRowids(t *testing.T) {
	base := mustOpen(t, filepath.Join(fixtureDir, hostileFixture), Options{})
	baseAlloc := allocated(func() { mustOpen(t, filepath.Join(fixtureDir, hostileFixture), Options{}) })
	const lastKernel = `(SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)`
	tests := []struct {
		name    string
		stmts   []string
		unended int64 // extra unended NVTX ranges
	}{
		{"nvtx rowid max int64", []string{`INSERT INTO NVTX_EVENTS(rowid, start, eventType) VALUES (9223372036854775807, 1, 59)`}, 1},
		{"kernel rowid 1e7", []string{`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = 10000000 WHERE rowid = ` + lastKernel}, 0},
		{"kernel rowid 1e9", []string{`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = 1000000000 WHERE rowid = ` + lastKernel}, 0},
		{"kernel rowid max int64", []string{`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = 9223372036854775807 WHERE rowid = ` + lastKernel}, 0},
		{"all rowids negative", []string{
			`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = -rowid`,
			`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET rowid = -rowid`,
			`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET rowid = -rowid`,
			`UPDATE NVTX_EVENTS SET rowid = -rowid`}, 0},
		{"rowids min int64 and sparse", []string{
			`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = rowid * 1000000000000`,
			`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = -9223372036854775808 WHERE rowid = ` + lastKernel,
			`UPDATE NVTX_EVENTS SET rowid = rowid * 100000000000000`}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tmpFixture(t)
			editDB(t, path, tt.stmts...)
			var tr *trace.Trace
			n := allocated(func() { tr = mustOpen(t, path, Options{}) })
			// Rows come in rowid order, so names are interned in another
			// order: compare with names spelt out.
			if got, want := canonical(tr), canonical(base); !slices.Equal(got, want) {
				t.Errorf("the trace differs from the unedited file's: %d activities, %d launches, %d ranges; want %d, %d, %d",
					len(tr.Activities), len(tr.Launches), len(tr.Ranges), len(base.Activities), len(base.Launches), len(base.Ranges))
			}
			const what = "unended nvtx range skipped"
			if got, want := anomalyCount(tr, what), anomalyCount(base, what)+tt.unended; got != want {
				t.Errorf("%q: %d, want %d", what, got, want)
			}
			// The edited file holds the same rows: Open may allocate a
			// little more (the rows are read in another order), never
			// what the rowids would ask for.
			if n > baseAlloc+1<<20 {
				t.Errorf("Open allocated %d bytes, %d for the unedited file", n, baseAlloc)
			}
		})
	}
}

// canonical lists a trace's activities, launches and ranges with their
// names spelt out, sorted.
func canonical(tr *trace.Trace) []string {
	var out []string
	for i, a := range tr.Activities {
		a.Name, a.Attr = 0, 0 // ids follow the row order: spelt out
		out = append(out, fmt.Sprintf("A %+v %s %+v", a, tr.Names[tr.Activities[i].Name], tr.ConfigOf(tr.AttrOf(tr.Activities[i].Attr).Config)))
	}
	for i, l := range tr.Launches {
		l.Name = 0
		out = append(out, fmt.Sprintf("L %+v %s", l, tr.Names[tr.Launches[i].Name]))
	}
	for i, r := range tr.Ranges {
		r.Name, r.Domain = 0, 0
		out = append(out, fmt.Sprintf("R %+v %s %s", r, tr.Names[tr.Ranges[i].Name], tr.Names[tr.Ranges[i].Domain]))
	}
	slices.Sort(out)
	return out
}

// isCorrupt checks the promise for a damaged file: ErrCorrupt, a message
// that starts "corrupt or not an nsys export: ", one line, no path.
func isCorrupt(t *testing.T, path string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("Open succeeded, want an error")
	}
	msg := err.Error()
	if !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(msg, "corrupt or not an nsys export: ") {
		t.Errorf("Open = %q; want ErrCorrupt, \"corrupt or not an nsys export: …\"", msg)
	}
	if errors.Is(err, ErrNoKernels) {
		t.Errorf("Open = %q matches ErrNoKernels: a damaged file is not a capture without CUDA", msg)
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, path) {
		t.Errorf("Open = %q: want one line without the path", msg)
	}
}

// TestDamagedPages: byte-level damage to a real export.
func TestDamagedPages(t *testing.T) {
	for _, table := range []string{"CUPTI_ACTIVITY_KIND_KERNEL", "StringIds", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME"} {
		t.Run("zeroed root page of "+table, func(t *testing.T) {
			path := tmpFixture(t)
			off, size := pageOf(t, path, table)
			overwrite(t, path, off, make([]byte, size))
			_, err := Open(path, Options{})
			isCorrupt(t, path, err)
		})
	}
	t.Run("random kernel root page", func(t *testing.T) {
		path := tmpFixture(t)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		off, size := pageOf(t, path, "CUPTI_ACTIVITY_KIND_KERNEL")
		for seed := range uint64(50) {
			page := make([]byte, size)
			r := rand.New(rand.NewPCG(seed, 11))
			for i := range page {
				page[i] = byte(r.Uint32())
			}
			if seed%2 == 1 {
				page[0] = 13 // a table leaf: SQLite reads the cells
			}
			data := slices.Clone(orig)
			copy(data[off:], page)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			tr, err := Open(path, Options{})
			if err == nil {
				if err := tr.CheckValid(); err != nil {
					t.Errorf("seed %d: invalid trace: %v", seed, err)
				}
				continue
			}
			isCorrupt(t, path, err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		path := tmpFixture(t)
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, st.Size()/3); err != nil {
			t.Fatal(err)
		}
		_, err = Open(path, Options{})
		isCorrupt(t, path, err)
	})
}

// relaxed drops the NOT NULL constraints, as a hand-made or damaged file
// may lack them.
func relaxed(ddl string) string { return strings.ReplaceAll(ddl, " NOT NULL", "") }

// TestOddValues: NULL, REAL (fractions, Inf, 1e300), TEXT or BLOB where
// nsys writes integers, and implausible durations. Such rows are skipped
// and counted, as the Chrome parser skips odd events; a negative duration
// reads as zero length, as there.
func TestOddValues(t *testing.T) {
	const hour = "3600000000000"
	k := func(start, end, dev, corr, name string) string {
		return "(" + start + ", " + end + ", " + dev + ", 1, 7, " + corr + ", " + gpid + ", " + name + ", 2, NULL)"
	}
	script := relaxed(ddlStrings+ddlKernel+ddlRuntime+ddlMemcpy+ddlNVTX) + `
INSERT INTO StringIds VALUES (1, 'k'), (2, 'k_short'), (3, 'cudaLaunchKernel_v7000');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ` + strings.Join([]string{
		k("100", "200", "0", "11", "1"),
		k("NULL", "300", "0", "12", "1"),
		k("150.5", "300", "0", "13", "1"),
		k("160", "9e999", "0", "14", "1"),
		k("170", "1e300", "0", "15", "1"),
		k("'x'", "300", "0", "16", "1"),
		k("180", "300", "0", "17", "NULL"),
		k("400", "350", "0", "18", "1"),            // ends before it starts: kept, zero length
		k("500", "500+"+hour+"+1", "0", "19", "1"), // over 1 h
		k("600", "600+"+hour, "0", "20", "1"),      // exactly 1 h: kept
		k("-9223372036854775808", "9223372036854775807", "0", "21", "1"),
		k("700", "800", "NULL", "22", "1"),
		k("X'00'", "800", "0", "23", "1"),
		k("710", "720", "0", "2.5", "1"),
	}, ", ") + `;
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (150, 160, 0, 1, 7, 30, ` + gpid + `, 64, NULL), (150, 160, 0, 1, 7, 31, ` + gpid + `, 64, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (90, 95, 1, ` + gtid + `, 11, 3, 0), (NULL, 95, 1, ` + gtid + `, 18, 3, 0),
  (95, 96, 1, ` + gtid + `, 20, NULL, 0), (97, 98.5, 1, ` + gtid + `, 31, 3, 0);
INSERT INTO NVTX_EVENTS VALUES (NULL, 100, 59, NULL, NULL, NULL, 'a', ` + gtid + `, NULL, NULL, 0),
  (10, 20.5, 59, NULL, NULL, NULL, 'b', ` + gtid + `, NULL, NULL, 0),
  (10, 20, 59, NULL, NULL, NULL, NULL, ` + gtid + `, NULL, 2.5, 0),
  (10, 20, 59, NULL, NULL, NULL, 'ok', ` + gtid + `, NULL, NULL, 0);
`
	path := makeDB(t, "odd.sqlite", script)
	tr := mustOpen(t, path, Options{})
	var got []string
	for _, a := range tr.Activities {
		got = append(got, tr.Names[a.Name]+"@"+itoa(int64(a.Start))+"+"+itoa(a.Dur))
	}
	want := []string{"k@100+100", "[CUDA memcpy Host-to-Device]@150+10", "k@400+0", "k@600+3600000000000"}
	if !slices.Equal(got, want) {
		t.Errorf("activities %q\nwant %q", got, want)
	}
	if len(tr.Launches) != 1 || tr.Launches[0].Corr != 11 {
		t.Errorf("launches %+v, want the one of correlation id 11", tr.Launches)
	}
	if len(tr.Ranges) != 1 || tr.Names[tr.Ranges[0].Name] != "ok" {
		t.Errorf("ranges %+v, want the one named ok", tr.Ranges)
	}
	wantA := []trace.Anomaly{
		{What: "GPU activity longer than 1 h skipped", Count: 2, Example: "CUPTI_ACTIVITY_KIND_KERNEL row 9: start 500, end 3600000000501"},
		{What: "cuda api call with a NULL or non-integer value skipped", Count: 3, Example: "CUPTI_ACTIVITY_KIND_RUNTIME row 2: start is NULL"},
		{What: "gpu activity ends before it starts; duration set to 0", Count: 1, Example: "CUPTI_ACTIVITY_KIND_KERNEL: start 400 > end 350"},
		{What: "gpu activity with a NULL or non-integer value skipped", Count: 10, Example: "CUPTI_ACTIVITY_KIND_KERNEL row 2: start is NULL"},
		{What: "nvtx event with a NULL or non-integer value skipped", Count: 3, Example: "NVTX_EVENTS row 1: start is NULL"},
	}
	if !slices.Equal(tr.Anomalies, wantA) {
		t.Errorf("anomalies:\n%v\nwant\n%v", tr.Anomalies, wantA)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestOddValueExamples checks how each kind of odd value is described.
func TestOddValueExamples(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, "NULL"},
		{1.5, "REAL 1.5"},
		{1e300, "REAL 1e+300"},
		{"x", `TEXT "x"`},
		{strings.Repeat("a", 100), `TEXT "aaaaaaaaaaaaaaaaaaaaaaaa…"`},
		{[]byte{0, 1}, "BLOB of 2 bytes"},
	}
	for _, tt := range tests {
		if got := describeValue(tt.v); got != tt.want {
			t.Errorf("describeValue(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestOddDeviceAndConfig: a device id beyond int32 (or negative) is an
// odd row, skipped and counted, never wrapped or set to another device
// (issue 19: it became -1, a device that ran nothing); a stream beyond
// int32 reads as -1, counted; a launch configuration out of range or not
// integers is ignored, counted, and the kernel kept.
func TestOddDeviceAndConfig(t *testing.T) {
	base := mustOpen(t, filepath.Join(fixtureDir, hostileFixture), Options{})
	path := tmpFixture(t)
	const first = `(SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)`
	editDB(t, path,
		`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 99999999999 WHERE rowid = `+first,
		`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = -3 WHERE rowid = `+first+` + 1`,
		`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = 4294967296 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY)`,
		`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = 99999999999 WHERE rowid = `+first+` + 2`,
		`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridY = -1 WHERE rowid = `+first+` + 3`,
		`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET blockZ = 1.5 WHERE rowid = `+first+` + 4`,
		`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET registersPerThread = 'x' WHERE rowid = `+first+` + 5`)
	tr := mustOpen(t, path, Options{})
	if got, want := len(tr.Activities), len(base.Activities)-3; got != want {
		t.Errorf("%d activities, want %d (three on impossible devices skipped)", got, want)
	}
	for _, a := range tr.Activities {
		if a.Device != 0 {
			t.Errorf("activity on device %d", a.Device)
		}
	}
	streams, noConfig := 0, 0
	for _, a := range tr.Activities {
		if a.Stream == -1 {
			streams++
		}
		if a.Kind == trace.KindKernel && tr.AttrOf(a.Attr).Config == 0 {
			noConfig++
		}
	}
	if streams != 1 || noConfig != 3 {
		t.Errorf("%d activities on stream -1 (want 1), %d kernels without a configuration (want 3)", streams, noConfig)
	}
	for what, want := range map[string]int64{
		anomBadDevice: 3, anomBadStream: 1,
		"kernel launch configuration out of range ignored":                     1,
		"kernel launch configuration with a NULL or non-integer value ignored": 2,
	} {
		if got := anomalyCount(tr, what); got != want {
			t.Errorf("%q: %d, want %d", what, got, want)
		}
	}
}
