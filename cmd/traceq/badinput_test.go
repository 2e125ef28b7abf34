package main

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const torchDir = "../../testdata/traces/torch"

// gzipBytes compresses b.
func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A small valid trace: two kernels.
const smallTrace = `{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 20, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": 2}}
]}`

// TestBadInputErrors checks that input traceq cannot read gives exit 1 and
// exactly one line on stderr, which names the file first and says what is
// wrong (with the byte offset where there is one).
func TestBadInputErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sglang, err := os.ReadFile(filepath.Join(torchDir, "sglang_decode.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	// Overwrite bytes in the middle of the deflate data.
	corrupt := slices.Clone(sglang)
	copy(corrupt[3000:], []byte{0xff, 0xff, 0xff, 0xff})
	// A gzip file whose CRC-32 trailer does not match its content.
	badCRC := gzipBytes(t, []byte(smallTrace))
	crc := binary.LittleEndian.Uint32(badCRC[len(badCRC)-8:])
	binary.LittleEndian.PutUint32(badCRC[len(badCRC)-8:], crc^1)
	emptyDir := filepath.Join(dir, "no-traces")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write("no-traces/notes.txt", []byte("hello"))
	notDir := write("plain-file", []byte("x"))
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "gone.json"), dangling); err != nil {
		t.Fatal(err)
	}

	const cutMeta = `{"schemaVersion": 1, "deviceProperties": [{"id": 0, `
	const cutCPU = `{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}, {"ph": "X", "cat": "ker`
	const sqlite = "../../testdata/traces/nsys/nsys2022.1.3_dlprof-rtx2070-cudnn.sqlite"
	tests := []struct {
		name string
		path string
		want string // the error after "traceq: PATH: "
	}{
		{"empty file", write("empty.json", nil), "empty file"},
		{"whitespace only", write("blank.json", []byte(" \n\t\n")), "empty file (only whitespace)"},
		{"deeply indented JSON", write("indented.json", []byte(strings.Repeat(" ", 100)+`{"a": 1}`)), "not a Chrome trace: no traceEvents array"},
		{"missing file", filepath.Join(dir, "missing.json"), "no such file or directory"},
		{"dangling symlink", dangling, "no such file or directory"},
		{"path through a file", filepath.Join(notDir, "x.json"), "not a directory"},
		{"directory without traces", emptyDir, "directory holds no trace files (*.json, *.json.gz, *.sqlite)"},
		{"text file", write("notes.txt", []byte("hello world\n")), `not a trace: neither JSON, gzip nor SQLite (starts with "hello wo")`},
		{"nsys report", write("run.nsys-rep", []byte("\x00\x01binary report")), "an nsys report file: export it first with 'nsys export --type sqlite FILE'"},
		{"JSON, not a trace", write("config.json", []byte(`{"model": "llama", "layers": [1, 2]}`)), "not a Chrome trace: no traceEvents array"},
		{"traceEvents not an array", write("obj.json", []byte(`{"traceEvents": {"ph": "X"}}`)), "not a Chrome trace: traceEvents is not an array (byte 16)"},
		{"JSON array of numbers", write("numbers.json", []byte(`[1, 2, 3]`)), "not a Chrome trace: none of its 3 elements is an event (an object with a ph)"},
		{"JSON list of records", write("runs.json", []byte(`[{"file": "a.json.gz", "batch_size": 32}]`)), "not a Chrome trace: its only element is not an event (an object with a ph)"},
		{"no events", write("noevents.json", []byte(`{"traceEvents": []}`)), "no GPU activity"},
		{"CPU-only trace", filepath.Join(torchDir, "hta_cpu_only.json.gz"), "no GPU activity (kernels, memcpys, memsets) in the trace: was it captured with CUDA activities enabled (torch.profiler activities=[ProfilerActivity.CUDA])?"},
		{"missing comma", write("comma.json", []byte(`{"traceEvents": [{"ph": "X"} {"ph": "X"}]}`)), `invalid JSON at byte 29: expected ',' or ']' between events, found '{'`},
		{"garbage after the document", write("tail.json", []byte(smallTrace+"\nx")), fmt.Sprintf("invalid JSON at byte %d: unexpected 'x' after the end of the document", len(smallTrace)+1)},
		{"bad JSON in gzip", write("comma.json.gz", gzipBytes(t, []byte(`{"traceEvents": [{"ph": "X"} {"ph": "X"}]}`))), `invalid JSON at byte 29 of the decompressed data: expected ',' or ']' between events, found '{'`},
		{"corrupt gzip data", write("corrupt.json.gz", corrupt), "corrupt gzip data near byte 30"},
		{"corrupt gzip header", write("header.json.gz", []byte("\x1f\x8b\x09\x00garbage")), "corrupt gzip header (the file starts like gzip but is not valid gzip)"},
		{"gzip checksum", write("crc.json.gz", badCRC), "corrupt gzip data: the checksum does not match (the file is damaged)"},
		{"gzip cut in its header", write("cuthead.json.gz", sglang[:6]), "truncated: the file ends inside the gzip header, before any data"},
		{"cut before traceEvents", write("cutmeta.json", []byte(cutMeta)), fmt.Sprintf("truncated: the file ends at byte %d, before the traceEvents array", len(cutMeta))},
		{"cut before any GPU activity", write("cutcpu.json", []byte(cutCPU)), fmt.Sprintf("truncated before any GPU activity (1 complete event read): the file ends at byte %d; the %d bytes after the last complete event (which ends at byte %d) were lost, with whatever followed",
			len(cutCPU), len(cutCPU)-strings.Index(cutCPU, "}")-1, strings.Index(cutCPU, "}")+1)},
		// Run with --input-format chrome, below.
		{"SQLite forced as chrome", sqlite, "invalid JSON at byte 0: expected a JSON object or array, found 'S'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"kernels", tc.path}
			if tc.path == sqlite {
				args = []string{"kernels", "--input-format", "chrome", tc.path}
			}
			want := tc.want
			code, out, errs := runCLI(args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if strings.Count(errs, "\n") != 1 || !strings.HasSuffix(errs, "\n") {
				t.Errorf("stderr is not one line: %q", errs)
			}
			prefix := "traceq: " + tc.path + ": "
			if !strings.HasPrefix(errs, prefix) || !strings.Contains(errs[len(prefix):], want) {
				t.Errorf("stderr %q\nwant   %q", errs, prefix+want+"…")
			}
			// No Go-internal wording reaches the user.
			for _, jargon := range []string{"flate:", "gzip:", "EOF", "%!", "<nil>", "panic", "goroutine"} {
				if strings.Contains(errs, jargon) {
					t.Errorf("stderr %q contains %q", errs, jargon)
				}
			}
		})
	}
}

// TestUnreadableFile needs a file the process cannot open: chmod 000 does
// not stop root.
func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: chmod 000 does not stop reading (the 'path through a file' case covers open errors)")
	}
	p := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(p, []byte(smallTrace), 0o000); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("kernels", p)
	if code != 1 || errs != "traceq: "+p+": permission denied\n" {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// oddTrace holds odd but valid content. Each event's fate is in its name
// or the comment beside the expected anomaly counts below.
const oddTrace = `{"schemaVersion": 1, "traceEvents": [
{"ph": "X", "cat": "kernel", "name": "string_ids", "pid": "0", "tid": "stream 7", "ts": "100", "dur": "10", "args": {"device": "0", "stream": "7", "correlation": "1"}},
{"ph": "X", "cat": "kernel", "name": "missing_dur", "pid": 0, "tid": 7, "ts": 200, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "negative_dur", "pid": 0, "tid": 7, "ts": 300, "dur": -5, "args": {"correlation": 3}},
{"ph": "X", "cat": "kernel", "name": "absurd_dur", "pid": 0, "tid": 7, "ts": 400, "dur": 4e9, "args": {"correlation": 4}},
{"ph": "X", "cat": "kernel", "name": "duplicated", "pid": 0, "tid": 7, "ts": 500, "dur": 20, "args": {"correlation": 5}},
{"ph": "X", "cat": "kernel", "name": "duplicated", "pid": 0, "tid": 7, "ts": 500, "dur": 20, "args": {"correlation": 5}},
{"ph": "X", "cat": "kernel", "name": "no_correlation", "pid": 0, "tid": 7, "ts": 600, "dur": 30},
{"ph": "Q", "cat": "kernel", "name": "unknown_phase", "pid": 0, "tid": 7, "ts": 700, "dur": 1, "args": {"correlation": 7}},
{"ph": "B", "cat": "kernel", "name": "begin_phase", "pid": 0, "tid": 7, "ts": 700, "args": {"correlation": 7}},
{"ph": "X", "cat": "brand_new_category", "name": "unknown_category", "pid": 0, "tid": 7, "ts": 800, "dur": 1},
{"ph": "X", "cat": "kernel", "name": "void gemm<\"fp8\">(\\x) \u00e9 計算 \ud83d\ude00", "pid": 0, "tid": 7, "ts": 900, "dur": 7, "args": {"correlation": 9}},
{"ph": "X", "cat": "kernel", "name": "ns_resolution", "pid": 0, "tid": 7, "ts": 1712191898123456.789, "dur": 2.0004, "args": {"correlation": 10}},
{"cat": "kernel", "name": "no_phase", "ts": 1, "dur": 1},
42,
{"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 1000, "dur": 4, "args": {"correlation": 11}}
]}`

// TestOddInput checks that odd but valid events are read, dropped or
// repaired as documented, and each kind counted once in the summary line.
func TestOddInput(t *testing.T) {
	p := filepath.Join(t.TempDir(), "odd.json")
	if err := os.WriteFile(p, []byte(oddTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("kernels", "--format", "json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Expected kernels: name -> instances, total ns (durations in µs × 1000).
	want := map[string][2]int64{
		"string_ids":                  {1, 10000},
		"negative_dur":                {1, 0}, // clamped to 0
		"duplicated":                  {1, 20000},
		"no_correlation":              {1, 30000},
		`void gemm<"fp8">(\x) é 計算 😀`: {1, 7000},
		"ns_resolution":               {1, 2000}, // 2.0004 µs rounds to 2000 ns
		"":                            {1, 4000}, // no name
	}
	var rep struct {
		Kernels []struct {
			Name      string `json:"name"`
			Instances int64  `json:"instances"`
			TotalNS   int64  `json:"total_ns"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int64{}
	for _, k := range rep.Kernels {
		got[k.Name] = [2]int64{k.Instances, k.TotalNS}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kernels\n got %v\nwant %v", got, want)
	}
	// The anomalies, sorted by description, as the summary lists them.
	anomalies := []string{
		"1 GPU activity longer than 1 h skipped",
		`1 GPU activity with phase "B" skipped`,
		"1 GPU activity without correlation id",
		"1 GPU activity without dur skipped",
		`1 complete event of unknown category "brand_new_category" skipped`,
		"1 duplicate GPU activity dropped",
		"1 event without a name",
		"1 event without ph skipped",
		"1 negative dur read as zero length",
		"1 non-object element in traceEvents skipped",
		`1 unknown phase "Q" skipped`,
	}
	line := fmt.Sprintf("traceq: %s: %d odd events: %s (--verbose lists them)\n", p, len(anomalies), strings.Join(anomalies, "; "))
	if errs != line {
		t.Errorf("stderr\n got %q\nwant %q", errs, line)
	}
	// --verbose: a header and one line per kind, with an example.
	_, _, verr := runCLI("kernels", "--verbose", p)
	lines := strings.Split(strings.TrimSuffix(verr, "\n"), "\n")
	if len(lines) != 1+len(anomalies) || lines[0] != fmt.Sprintf("traceq: %s: %d odd events:", p, len(anomalies)) {
		t.Fatalf("--verbose stderr:\n%s", verr)
	}
	for i, l := range lines[1:] {
		n, what, _ := strings.Cut(anomalies[i], " ")
		example := "event " // the index and byte offset of the event
		if strings.HasPrefix(what, "duplicate") {
			example = "duplicated at ts 500000 ns)"
		}
		if !strings.HasPrefix(l, "  "+n+" × "+what+" (first: "+example) {
			t.Errorf("--verbose line %q, want %q…", l, "  "+n+" × "+what+" (first: "+example)
		}
	}
}

// TestOneAnomaly checks the summary's wording for a single odd event.
func TestOneAnomaly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "one.json")
	if err := os.WriteFile(p, []byte(`{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("kernels", p)
	if want := "traceq: " + p + ": 1 odd event: 1 GPU activity without correlation id (--verbose lists them)\n"; code != 0 || errs != want {
		t.Errorf("exit %d, stderr %q; want %q", code, errs, want)
	}
}

// TestNsResolutionTrace checks that a trace with ns-resolution ts keeps its
// sub-µs digits: the reference reader (exact decimals) agrees with traceq,
// and some kernel totals are not whole µs.
func TestNsResolutionTrace(t *testing.T) {
	path := filepath.Join(torchDir, "hta_ns_resolution.json.gz")
	code, out, errs := runCLI("kernels", "--format", "json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Kernels []struct {
			Instances int64 `json:"instances"`
			TotalNS   int64 `json:"total_ns"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var n, total, subMicro int64
	for _, k := range rep.Kernels {
		n += k.Instances
		total += k.TotalNS
		if k.TotalNS%1000 != 0 {
			subMicro++
		}
	}
	var refN, refTotal int64
	for _, a := range refRead(t, path) {
		if a.kernel {
			refN++
			refTotal += a.end - a.start
		}
	}
	if n != refN || total != refTotal {
		t.Errorf("%d kernels, %d ns; reference %d kernels, %d ns", n, total, refN, refTotal)
	}
	if subMicro == 0 {
		t.Errorf("every kernel total is a whole number of µs: ns digits were lost")
	}
}

// TestBadFlags checks that mistakes in how traceq is called exit 2 with a
// one-line message, before any input is read.
func TestBadFlags(t *testing.T) {
	trace := filepath.Join(torchDir, "hta_triton.json.gz")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"kernels", "--no-such-flag", trace}, "traceq: flag provided but not defined: -no-such-flag\n"},
		{[]string{"kernels", "--top", "many", trace}, `traceq: invalid value "many" for flag -top: parse error` + "\n"},
		{[]string{"kernels", "--top", "-1", trace}, "traceq: kernels: --top must be >= 0\n"},
		{[]string{"breakdown", "--top", "0", trace}, "traceq: breakdown: --top must be at least 1\n"},
		{[]string{"kernels", "--format", "yaml", trace}, `traceq: unknown format "yaml" (want text, markdown, csv, json)` + "\n"},
		{[]string{"breakdown", "--format", "yaml", trace}, `traceq: unknown format "yaml" (want text, markdown, csv, json)` + "\n"},
		{[]string{"kernels", "--input-format", "perfetto", trace}, `traceq: unknown --input-format "perfetto" (want chrome or nsys)` + "\n"},
		{[]string{"kernels", "--names", "long", trace}, `traceq: unknown --names "long" (want demangled or short)` + "\n"},
		{[]string{"kernels"}, "traceq: kernels: no input files (see 'traceq kernels --help')\n"},
		{[]string{"breakdown"}, "traceq: breakdown: no input files (see 'traceq breakdown --help')\n"},
		{[]string{"classify", "extra-arg"}, "traceq: classify reads names on stdin and takes no arguments\n"},
		{[]string{"no-such-command"}, `traceq: unknown command "no-such-command" (want breakdown, advise, kernels, classify, rules, chart, report, steps, diff, slice, export, collectives, merge, gpus, efficiency)` + "\n"},
		{[]string{"breakdown", "--kind", "decdoe", trace}, `traceq: unknown --kind "decdoe" (want decode, prefill, mixed, step, unattributed, all)` + "\n"},
		{[]string{"kernels", "--kind", "Decode", trace}, `traceq: unknown --kind "Decode" (want decode, prefill, mixed, step, unattributed, all)` + "\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// urfave/cli prints the command's help for a flag error; the
			// error itself is the last line of stderr.
			code, _, errs := runCLI(tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.HasSuffix(errs, tc.want) {
				t.Errorf("stderr %q\nwant suffix %q", errs, tc.want)
			}
		})
	}
}

// makeSQLite builds a SQLite file from SQL text.
func makeSQLite(t *testing.T, path, script string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(script); err != nil {
		t.Fatal(err)
	}
}

// TestBadNsys covers the nsys cases: not SQLite, SQLite but not nsys,
// missing tables, a cut file; and a read-only file and a file another
// process holds locked, which must read normally.
func TestBadNsys(t *testing.T) {
	dir := t.TempDir()
	real := "../../testdata/traces/nsys/nsys2022.1.3_dlprof-rtx2070-cudnn.sqlite"
	raw, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notNsys := filepath.Join(dir, "inventory.sqlite")
	makeSQLite(t, notNsys, `CREATE TABLE items (id INTEGER, name TEXT); INSERT INTO items VALUES (1, 'x');`)
	noKernels := filepath.Join(dir, "nokernels.sqlite")
	makeSQLite(t, noKernels, `CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);`)
	noStrings := filepath.Join(dir, "nostrings.sqlite")
	makeSQLite(t, noStrings, `CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0);`)

	tests := []struct {
		name, path, want string
	}{
		{"text named .sqlite", write("text.sqlite", []byte("id,name\n1,x\n")), "not a trace: neither JSON, gzip nor SQLite"},
		{"SQLite, not nsys", notNsys, "not an nsys export"},
		{"no kernel table", noKernels, "no CUDA kernel activity"},
		{"kernels without StringIds", noStrings, "not an nsys export"},
		{"cut SQLite file", write("cut.sqlite", raw[:len(raw)/3]), "corrupt or truncated SQLite file"},
		{"zeroed SQLite pages", write("zeroed.sqlite", append(slices.Clone(raw[:4096]), make([]byte, len(raw)-4096)...)), "SQLite file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI("kernels", tc.path)
			prefix := "traceq: " + tc.path + ": "
			if code != 1 || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, prefix) || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q…%q", code, errs, prefix, tc.want)
			}
		})
	}

	t.Run("read-only file", func(t *testing.T) {
		p := write("ro.sqlite", raw)
		if err := os.Chmod(p, 0o444); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI("kernels", p)
		if code != 0 {
			t.Errorf("exit %d: %s", code, errs)
		}
		if b, _ := os.ReadFile(p); !bytes.Equal(b, raw) {
			t.Errorf("reading changed the file")
		}
	})

	t.Run("locked file", func(t *testing.T) {
		p := write("locked.sqlite", raw)
		db, err := sql.Open("sqlite3", "file:"+p)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		conn, err := db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// An exclusive transaction that has written holds the lock that
		// keeps readers out, as nsys does while it exports.
		if _, err := conn.ExecContext(t.Context(), "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; CREATE TABLE lock_probe (x);"); err != nil {
			t.Fatal(err)
		}
		defer conn.ExecContext(t.Context(), "ROLLBACK")
		// traceq opens the file immutable and takes no lock, so another
		// process's lock does not stop it: it reads what is on disk.
		code, out, errs := runCLI("kernels", "--format", "csv", p)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		_, want, _ := runCLI("kernels", "--format", "csv", real)
		if out != want {
			t.Errorf("locked file reads differently:\n%s\nunlocked:\n%s", out, want)
		}
	})
}

// TestBadRulesFile checks the messages for a --rules file that cannot be
// read or parsed: the file first, exit 1.
func TestBadRulesFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.rules")
	if err := os.WriteFile(bad, []byte("garbage line without tabs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(torchDir, "hta_triton.json.gz")
	for _, tc := range []struct{ rules, want string }{
		{filepath.Join(dir, "missing.rules"), filepath.Join(dir, "missing.rules") + ": no such file or directory\n"},
		{dir, dir + ": "},
		{bad, bad + ":1: "},
	} {
		code, _, errs := runCLI("kernels", "--rules", tc.rules, trace)
		if code != 1 || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "traceq: "+tc.want) {
			t.Errorf("--rules %s: exit %d, stderr %q; want exit 1 and %q", tc.rules, code, errs, "traceq: "+tc.want)
		}
	}
}
