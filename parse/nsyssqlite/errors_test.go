package nsyssqlite

import (
	"github.com/traceq/traceq/trace"

	"bytes"
	"crypto/sha256"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func isNoKernels(err error) bool { return errors.Is(err, ErrNoKernels) }

// makeDB builds a SQLite file in a temporary directory from SQL text.
func makeDB(t *testing.T, name, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(script); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return path
}

// Minimal tables with the columns Open reads, in nsys's types.
const (
	ddlStrings = `CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);`
	ddlKernel  = `CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
		contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
		demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, graphNodeId INTEGER);`
	ddlRuntime = `CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
		globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);`
	ddlMemcpy = `CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
		contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
		copyKind INTEGER NOT NULL);`
	ddlNVTX = `CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
		category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);`
	ddlGraph = `CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
		contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL);`
)

// pid 7 on VM 1: globalPid = 1<<48 | 7<<24; its thread 9 adds 9.
const gpid = "281475094151168"
const gtid = "281475094151177"

// synthetic has the odd-but-survivable cases the real files lack.
const synthetic = ddlStrings + ddlKernel + ddlRuntime + ddlMemcpy + ddlNVTX + `
INSERT INTO StringIds VALUES (1, 'void gemm<float>(int)'), (2, 'gemm'), (3, 'cudaLaunchKernel_v7000'),
  (4, 'cudaGraphLaunch_v10000'), (5, 'cudaGetDevice'), (6, 'ncclGroupStart'), (7, 'NCCL');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (100, 200, 0, 1, 7, 11, ` + gpid + `, 1, 2, NULL),
  (300, 250, 0, 1, 7, 12, ` + gpid + `, 1, 2, NULL),  -- ends before it starts
  (400, 400, 0, 1, 7, 13, ` + gpid + `, 1, 2, NULL),  -- zero length
  (500, 600, 1, 1, 8, 14, ` + gpid + `, 99, 2, NULL); -- name id 99 missing from StringIds
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
  (150, 160, 0, 1, 7, 20, ` + gpid + `, 64, 1),
  (170, 180, 0, 1, 7, 21, ` + gpid + `, 64, 42); -- unknown copyKind
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (90, 95, 1, ` + gtid + `, 11, 3, 0), (290, 295, 1, ` + gtid + `, 12, 3, 0), (390, 395, 1, ` + gtid + `, 13, 3, 0),
  (490, 495, 1, ` + gtid + `, 14, 3, 0), (140, 145, 1, ` + gtid + `, 20, 3, 0),
  (10, 20, 1, ` + gtid + `, 30, 4, 0),  -- graph launch without GPU work
  (20, 30, 1, ` + gtid + `, 31, 5, 0);  -- launches nothing: dropped
INSERT INTO NVTX_EVENTS VALUES
  (1, NULL, 75, NULL, NULL, NULL, NULL, ` + gtid + `, NULL, 7, 3),  -- domain 3 is named by StringIds[7]
  (50, 700, 59, NULL, NULL, NULL, 'step', ` + gtid + `, NULL, NULL, 0),
  (60, 650, 60, 1, NULL, NULL, 'startend', ` + gtid + `, ` + gtid + `, NULL, 0),
  (70, 80, 59, NULL, NULL, NULL, NULL, ` + gtid + `, NULL, 6, 3),
  (75, 80, 59, NULL, NULL, NULL, NULL, ` + gtid + `, NULL, 6, 5),   -- domain 5 never created
  (80, NULL, 59, NULL, NULL, NULL, 'unended', ` + gtid + `, NULL, NULL, 0),
  (81, 0, 60, NULL, NULL, NULL, 'end 0', ` + gtid + `, NULL, NULL, 0),
  (90, 85, 59, NULL, NULL, NULL, 'backwards', ` + gtid + `, NULL, NULL, 0),
  (95, NULL, 34, NULL, NULL, NULL, 'a mark', ` + gtid + `, NULL, NULL, 0);
`

func TestSynthetic(t *testing.T) {
	path := makeDB(t, "synthetic.sqlite", synthetic)
	tr := mustOpen(t, path, Options{})
	var names []string
	for i := range tr.Activities {
		a := &tr.Activities[i]
		names = append(names, tr.Names[a.Name]+"/"+a.Kind.String())
		if a.Proc != 0 || a.Dur < 0 {
			t.Errorf("activity %d: %+v", i, a)
		}
	}
	want := []string{"void gemm<float>(int)/kernel", "[CUDA memcpy Host-to-Device]/memcpy", "[CUDA memcpy kind 42]/memcpy",
		"void gemm<float>(int)/kernel", "void gemm<float>(int)/kernel", "<missing string 99>/kernel"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("activities %q\nwant %q", names, want)
	}
	if len(tr.Procs) != 1 || tr.Procs[0].PID != 7 || tr.Procs[0].Rank != -1 {
		t.Errorf("procs %+v", tr.Procs)
	}
	if len(tr.Launches) != 5 {
		t.Errorf("%d launches, want 5", len(tr.Launches))
	}
	if l := tr.FindLaunch(0, 11); l == nil || tr.Names[l.Name] != "cudaLaunchKernel" || l.Thread != 9 {
		t.Errorf("FindLaunch(0, 11) = %+v", l)
	}
	var ranges []string
	for i := range tr.Ranges {
		r := &tr.Ranges[i]
		ranges = append(ranges, tr.Names[r.Name]+"@"+tr.Names[r.Domain])
	}
	wantR := []string{"step@", "startend@", "ncclGroupStart@NCCL", "ncclGroupStart@", "backwards@"}
	if strings.Join(ranges, ",") != strings.Join(wantR, ",") {
		t.Errorf("ranges %q\nwant %q", ranges, wantR)
	}
	wantA := map[string]int64{
		"cuda graph launches without recorded gpu work (capture with --cuda-graph-trace=node)": 1,
		"gpu activity ends before it starts; duration set to 0":                                1,
		"name missing from StringIds":                                                          1,
		"nvtx domain without a name (its create event is not in the export)":                   1,
		"nvtx range ends before it starts; duration set to 0":                                  1,
		"unended nvtx range skipped":                                                           2,
		"unknown memcpy copyKind":                                                              1,
		"zero-length gpu activity":                                                             1,
	}
	got := map[string]int64{}
	for _, a := range tr.Anomalies {
		got[a.What] = a.Count
	}
	if len(got) != len(wantA) {
		t.Errorf("anomalies %v\nwant %v", got, wantA)
	}
	for k, v := range wantA {
		if got[k] != v {
			t.Errorf("anomaly %q: %d, want %d", k, got[k], v)
		}
	}
}

func TestGraphTrace(t *testing.T) {
	base := ddlStrings + ddlKernel + ddlGraph + `
INSERT INTO StringIds VALUES (1, 'k');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 1, 7, 11, ` + gpid + `, 1, 1, NULL);
`
	t.Run("graphs dominate", func(t *testing.T) {
		path := makeDB(t, "g.sqlite", base+`INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (300, 1300, 0, 1, 7, 12, `+gpid+`, 5);`)
		_, err := Open(path, Options{})
		if !errors.Is(err, ErrWholeGraphs) || !strings.Contains(err.Error(), "--cuda-graph-trace=node") ||
			!strings.Contains(err.Error(), "CUPTI_ACTIVITY_KIND_GRAPH_TRACE") || strings.Contains(err.Error(), path) {
			t.Errorf("Open = %v", err)
		}
	})
	t.Run("graphs minor", func(t *testing.T) {
		path := makeDB(t, "g.sqlite", base+`INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (300, 310, 0, 1, 7, 12, `+gpid+`, 5);`)
		tr := mustOpen(t, path, Options{})
		if len(tr.Anomalies) != 1 || !strings.Contains(tr.Anomalies[0].What, "--cuda-graph-trace=node") {
			t.Errorf("anomalies %+v", tr.Anomalies)
		}
	})
	t.Run("graphs only", func(t *testing.T) {
		path := makeDB(t, "g.sqlite", ddlStrings+ddlGraph+`INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (300, 310, 0, 1, 7, 12, `+gpid+`, 5);`)
		_, err := Open(path, Options{})
		if !isNoKernels(err) || !strings.Contains(err.Error(), "--cuda-graph-trace=node") {
			t.Errorf("Open = %v", err)
		}
	})
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		path    string
		want    []string // substrings of the error
		nk      bool     // errors.Is(err, ErrNoKernels)
		corrupt bool     // errors.Is(err, ErrCorrupt)
	}{
		{"text file", write("notes.txt", []byte("hello, not a database\n")), []string{"not a SQLite file", "nsys export --type sqlite"}, false, false},
		{"empty file", write("empty.sqlite", nil), []string{"empty file"}, false, false},
		{"directory", dir, []string{"is a directory"}, false, false},
		{"fifo", fifo(t, filepath.Join(dir, "fifo.sqlite")), []string{"not a regular file"}, false, false},
		{"missing", filepath.Join(dir, "nope.sqlite"), []string{"no such file"}, false, false},
		{"truncated header", write("short.sqlite", []byte("SQLite for")), []string{"not a SQLite file"}, false, false},
		{"corrupt", write("corrupt.sqlite", append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xff}, 200)...)),
			[]string{"corrupt or not an nsys export: ", "SQLite file"}, false, true},
		{"unrelated db", makeDB(t, "other.sqlite", `CREATE TABLE users (id INTEGER, name TEXT); INSERT INTO users VALUES (1, 'a');`),
			[]string{"corrupt or not an nsys export: no StringIds, CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table"}, false, true},
		{"strings but no kernels", makeDB(t, "nokern.sqlite", ddlStrings+ddlRuntime+`INSERT INTO StringIds VALUES (1, 'cudaMalloc');
			INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 2, 1, `+gtid+`, 5, 1, 0);`),
			[]string{"no CUDA kernel activity (no CUPTI_ACTIVITY_KIND_KERNEL table, yet 1 CUDA API calls were traced)",
				"CUDA tracing was off or lost", "nsys profile --trace=cuda,nvtx", "--trace-fork-before-exec=true"}, true, false},
		{"empty kernel table", makeDB(t, "emptykern.sqlite", ddlStrings+ddlKernel),
			[]string{"CUPTI_ACTIVITY_KIND_KERNEL is empty"}, true, false},
		{"missing column", makeDB(t, "nocol.sqlite", ddlStrings+`CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, streamId INTEGER,
			correlationId INTEGER, globalPid INTEGER, demangledName INTEGER); INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 3, 4, 5, 6);`),
			[]string{"corrupt or not an nsys export: table CUPTI_ACTIVITY_KIND_KERNEL has no column deviceId"}, false, true},
		{"kernels without strings", makeDB(t, "nostr.sqlite", ddlKernel+`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 1, 7, 1, 1, 1, 1, NULL);`),
			[]string{"corrupt or not an nsys export: CUPTI_ACTIVITY_KIND_KERNEL without a StringIds table"}, false, true},
		{"no readable kernel", makeDB(t, "text.sqlite", ddlStrings+ddlKernel+`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('x', 2, 0, 1, 7, 1, 1, 1, 1, NULL);`),
			[]string{`corrupt or not an nsys export: none of the 1 rows of CUPTI_ACTIVITY_KIND_KERNEL is readable (row 1: start is TEXT "x")`}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Open(tt.path, Options{})
			if err == nil {
				t.Fatalf("Open = %d activities, want an error", len(tr.Activities))
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Open error %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error has several lines: %q", msg)
			}
			// The caller (package parse) names the file.
			if strings.Contains(msg, tt.path) {
				t.Errorf("error %q names the file", msg)
			}
			if isNoKernels(err) != tt.nk {
				t.Errorf("errors.Is(%q, ErrNoKernels) = %v, want %v", msg, !tt.nk, tt.nk)
			}
			if errors.Is(err, ErrCorrupt) != tt.corrupt {
				t.Errorf("errors.Is(%q, ErrCorrupt) = %v, want %v", msg, !tt.corrupt, tt.corrupt)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		if _, err := Open(filepath.Join(dir, "nope.sqlite"), Options{}); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open = %v, want fs.ErrNotExist", err)
		}
	})
}

// fifo makes a named pipe: opening it for reading would wait for a writer.
func fifo(t *testing.T, path string) string {
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

func TestNamesOption(t *testing.T) {
	path := filepath.Join(fixtureDir, "nsys2022.1.3_dlprof-rtx2070-cudnn.sqlite")
	if _, err := Open(path, Options{Names: "mangled"}); err == nil || !strings.Contains(err.Error(), `unknown Names option "mangled"`) {
		t.Errorf("Open(Names: mangled) = %v", err)
	}
}

func TestTableSuffix(t *testing.T) {
	ddl := strings.Replace(ddlKernel, "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_KERNEL_V3", 1)
	path := makeDB(t, "v3.sqlite", ddlStrings+ddl+`INSERT INTO StringIds VALUES (1, 'k');
		INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL_V3 VALUES (1, 2, 0, 1, 7, 1, `+gpid+`, 1, 1, NULL);`)
	if tr := mustOpen(t, path, Options{}); len(tr.Activities) != 1 {
		t.Errorf("%d activities, want 1", len(tr.Activities))
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

func copyFixture(t *testing.T, dst string) string {
	src := filepath.Join(fixtureDir, "nsys2023.1.2_memfusion-rtx3090-tensorrt.sqlite")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestFileHandling: odd paths, read-only files and files held by another
// process all open, and the file is never changed.
func TestFileHandling(t *testing.T) {
	dir := t.TempDir()
	t.Run("space and question mark", func(t *testing.T) {
		p := copyFixture(t, filepath.Join(dir, "my traces", "run?1 #2 100%.sqlite"))
		mustOpen(t, p, Options{})
		if _, err := os.Stat(filepath.Join(dir, "my traces", "run")); err == nil {
			t.Errorf("Open created a file named after the path before '?'")
		}
	})
	t.Run("relative path", func(t *testing.T) {
		wd, _ := os.Getwd()
		rel, err := filepath.Rel(wd, copyFixture(t, filepath.Join(dir, "rel.sqlite")))
		if err != nil {
			t.Skip(err)
		}
		mustOpen(t, rel, Options{})
	})
	t.Run("read-only", func(t *testing.T) {
		p := copyFixture(t, filepath.Join(dir, "ro", "ro.sqlite"))
		if err := os.Chmod(p, 0o444); err != nil {
			t.Fatal(err)
		}
		before := fileSum(t, p)
		st, _ := os.Stat(p)
		mustOpen(t, p, Options{})
		after, _ := os.Stat(p)
		if fileSum(t, p) != before || !after.ModTime().Equal(st.ModTime()) {
			t.Errorf("Open changed the file")
		}
		if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
			t.Errorf("Open left files next to the export: %v", ents)
		}
	})
	t.Run("locked by a writer", func(t *testing.T) {
		p := copyFixture(t, filepath.Join(dir, "locked.sqlite"))
		before := fileSum(t, p)
		w, err := sql.Open("sqlite3", "file:"+p+"?_txlock=exclusive")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		tx, err := w.Begin() // BEGIN EXCLUSIVE: other connections get "database is locked"
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.Exec(`CREATE TABLE scratch (x)`); err != nil {
			t.Fatal(err)
		}
		// A plain reader is locked out, so the test does hold a lock...
		plain, err := sql.Open("sqlite3", "file:"+p+"?mode=ro&_busy_timeout=0")
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		var n int
		if err := plain.QueryRow("SELECT count(*) FROM StringIds").Scan(&n); err == nil || !strings.Contains(err.Error(), "locked") {
			t.Fatalf("plain reader under an exclusive lock: err = %v", err)
		}
		// ...and Open, which takes none, reads the file: the writer has not
		// written to it yet (its journal is not hot; TestJournal has one
		// that did).
		tr := mustOpen(t, p, Options{})
		if len(tr.Activities) == 0 {
			t.Errorf("no activities")
		}
		tx.Rollback()
		if fileSum(t, p) != before {
			t.Errorf("file changed")
		}
	})
}

func TestProgress(t *testing.T) {
	var calls int
	var last, total int64
	path := filepath.Join(fixtureDir, "nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite")
	mustOpen(t, path, Options{Progress: func(done, tot int64) {
		if done < last || done > tot {
			t.Errorf("progress %d/%d after %d", done, tot, last)
		}
		calls++
		last, total = done, tot
	}})
	if calls == 0 || last == 0 || total == 0 {
		t.Errorf("progress: %d calls, last %d/%d", calls, last, total)
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"SQLite format 3\x00\x10\x00", true},
		{"SQLite format 3\x00", true},
		{"SQLite format 3", false},
		{`{"traceEvents": []}`, false},
		{"\x1f\x8b\x08", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := Sniff([]byte(tt.in)); got != tt.want {
			t.Errorf("Sniff(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestLongName: a kernel name of 1 MiB in StringIds is cut to
// trace.MaxNameLen, counted as an anomaly, and never read whole.
func TestLongName(t *testing.T) {
	path := copyFixture(t, filepath.Join(t.TempDir(), "long.sqlite"))
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("k", 1<<20)
	if _, err := db.Exec(`UPDATE StringIds SET value = ? WHERE id = (SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1)`, long); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE StringIds SET value = ? WHERE id = (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1)`, long); err != nil {
		t.Fatal(err)
	}
	db.Close()
	tr, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cut := 0
	for _, n := range tr.Names {
		if len(n) > trace.MaxNameLen {
			t.Fatalf("a name of %d bytes kept", len(n))
		}
		if len(n) == trace.MaxNameLen {
			cut++
		}
	}
	found := false
	for _, a := range tr.Anomalies {
		found = found || a.What == trace.AnomLongName
	}
	if cut == 0 || !found {
		t.Errorf("cut names %d, anomaly %v: %+v", cut, found, tr.Anomalies)
	}
}
