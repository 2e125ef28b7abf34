package duckdb

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/traceq/traceq/internal/gen"
)

// root is traceq's module root; the CLI runs there, so input paths read
// the same in its JSON and in the dataset's input columns.
const root = "../.."

// version is what the test's traceq build says it is (-ldflags -X).
const version = "interop-test"

// fleetCase is one run of the test dataset.
type fleetCase struct {
	run   string
	args  []string // traceq's input arguments, relative to root or absolute
	ranks int      // distinct rank partitions (the null rank counts one)
	pids  int      // distinct processes
	kinds []string // step kinds that must be present
	steps bool     // the inputs have step markers
}

// TestFleet exports synthetic and real traces into one dataset, one run
// each, and checks with DuckDB that the dataset gives the CLI's numbers
// to the nanosecond. The CLI's side is read from its JSON output, not
// from traceq's packages, so that no internal change can make the
// comparison agree with itself.
func TestFleet(t *testing.T) {
	tmp := t.TempDir()
	bin := buildTraceq(t, tmp)
	synth := writeSynthetic(t, filepath.Join(tmp, "synthetic8"))
	cases := []fleetCase{
		{run: "synthetic8", args: []string{synth}, ranks: 8, pids: 8, kinds: []string{"decode", "prefill", "mixed"}, steps: true},
		{run: "dlrm8", args: []string{"testdata/traces/torch/dlrm8"}, ranks: 8, pids: 8, kinds: []string{"step"}, steps: true},
		{run: "vllm-b200", args: []string{"testdata/traces/torch/vllm_b200_eager_prefill.json.gz"}, ranks: 1, pids: 1, kinds: []string{"prefill"}, steps: true},
		{run: "vllm-decode", args: []string{"testdata/traces/torch/vllm_decode_full_graph.json.gz"}, ranks: 1, pids: 1, kinds: []string{"decode"}, steps: true},
		// Two processes (torchrun, 2 GPUs) whose ranks nsys does not give:
		// both in the null rank partition, told apart by pid.
		{run: "nsys-2gpu", args: []string{"testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite"}, ranks: 2, pids: 2, kinds: []string{"all"}},
	}
	fleet := filepath.Join(tmp, "fleet")
	for _, c := range cases {
		traceq(t, bin, append([]string{"export", "--format", "parquet", "-o", fleet, "--run", c.run}, c.args...)...)
	}
	db := openFleet(t, fleet)
	for _, c := range cases {
		t.Run(c.run, func(t *testing.T) { checkRun(t, bin, db, c) })
	}
	t.Run("docs", func(t *testing.T) { checkDocs(t, db, fleet) })
}

func buildTraceq(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "traceq")
	cmd := exec.Command("go", "build", "-ldflags", "-X main.Version="+version, "-o", bin, "./cmd/traceq")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/traceq: %v\n%s", err, out)
	}
	return bin
}

// writeSynthetic writes 8 small vLLM-like rank files (prefill, decode
// and mixed steps, all-reduces in each) with internal/gen.
func writeSynthetic(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := gen.Config{Ranks: 8, Steps: 40, DecodeEvery: 10, MixedEvery: 4, Layers: 2, DropCorrEvery: 7, Seed: 16}
	for r := range cfg.Ranks {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := gen.Write(zw, cfg, r); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank%d.json.gz", r)), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// traceq runs the CLI in root and returns its stdout.
func traceq(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("traceq %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

func cliJSON(t *testing.T, bin string, v any, args ...string) {
	t.Helper()
	if err := json.Unmarshal(traceq(t, bin, args...), v); err != nil {
		t.Fatalf("traceq %s: %v", strings.Join(args, " "), err)
	}
}

// openFleet opens DuckDB with one view per table of the dataset.
func openFleet(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, table := range []string{"activities", "steps", "launches", "inputs"} {
		glob := filepath.ToSlash(filepath.Join(dir, table, "*", "*", "*.parquet"))
		q := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet('%s', hive_partitioning = true)", table, strings.ReplaceAll(glob, "'", "''"))
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db
}

// The CLI's JSON, the fields compared.
type (
	breakdownJSON struct {
		Inputs []struct {
			Path       string `json:"path"`
			Format     string `json:"format"`
			WorldSize  *int   `json:"world_size"`
			Activities int64  `json:"activities"`
		} `json:"inputs"`
		Groups []struct {
			Path       string `json:"path"`
			Rank       *int   `json:"rank"`
			PID        int64  `json:"pid"`
			Device     int32  `json:"device"`
			StepKind   string `json:"step_kind"`
			KernelNS   int64  `json:"kernel_ns"`
			Categories []struct {
				Category  string `json:"category"`
				KernelNS  int64  `json:"kernel_ns"`
				Instances int64  `json:"instances"`
			} `json:"categories"`
		} `json:"groups"`
	}
	kernelsJSON struct {
		Kernels []struct {
			Name      string `json:"name"`
			Instances int64  `json:"instances"`
			TotalNS   int64  `json:"total_ns"`
		} `json:"kernels"`
	}
	stepsJSON struct {
		Steps []struct {
			Path     string `json:"path"`
			PID      int64  `json:"pid"`
			Device   int32  `json:"device"`
			Index    int32  `json:"index"`
			Kind     string `json:"kind"`
			Marker   string `json:"marker"`
			StartNS  int64  `json:"start_ns"`
			SpanNS   int64  `json:"span_ns"`
			BusyNS   int64  `json:"busy_ns"`
			KernelNS int64  `json:"kernel_ns"`
		} `json:"steps"`
	}
)

// key joins the parts of a comparison key as both sides print them.
func key(parts ...any) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		switch v := p.(type) {
		case *int:
			s[i] = "null"
			if v != nil {
				s[i] = fmt.Sprint(*v)
			}
		case nil:
			s[i] = "null"
		default:
			s[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(s, " | ")
}

// sums runs a query whose last column is a BIGINT and the others a key,
// and returns key → value.
func sums(t *testing.T, db *sql.DB, q string, args ...any) map[string]int64 {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := map[string]int64{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		v, ok := vals[len(vals)-1].(int64)
		if !ok {
			t.Fatalf("%s: last column is %T, want int64 (cast the sum to BIGINT)", q, vals[len(vals)-1])
		}
		k := key(vals[:len(vals)-1]...)
		if _, dup := out[k]; dup {
			t.Fatalf("%s: key %s twice", q, k)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func one(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// same fails unless got (DuckDB) and want (the CLI) hold the same keys
// and values, and some.
func same(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	if len(want) == 0 {
		t.Errorf("%s: the CLI reports nothing to compare", what)
	}
	var diffs []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: DuckDB has no row, CLI %d", k, w))
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("%s: DuckDB %d, CLI %d (%+d)", k, g, w, g-w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: DuckDB %d, not in the CLI's output", k, g))
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s: %d of %d keys differ:\n  %s", what, len(diffs), len(want), strings.Join(diffs[:min(len(diffs), 12)], "\n  "))
	}
}

func checkRun(t *testing.T, bin string, db *sql.DB, c fleetCase) {
	var bd, flat breakdownJSON
	cliJSON(t, bin, &bd, append([]string{"breakdown", "--format", "json"}, c.args...)...)
	cliJSON(t, bin, &flat, append([]string{"breakdown", "--format", "json", "--no-steps"}, c.args...)...)
	var ks kernelsJSON
	cliJSON(t, bin, &ks, append([]string{"kernels", "--format", "json"}, c.args...)...)
	var st stepsJSON
	cliJSON(t, bin, &st, append([]string{"steps", "--format", "json"}, c.args...)...)
	const rank = "coalesce(CAST(rank AS VARCHAR), 'null')"

	// The dataset is what the run says it is.
	if n := one(t, db, "SELECT count(DISTINCT coalesce(rank, -1)) FROM activities WHERE run = ?", c.run); n != int64(c.ranks) {
		t.Errorf("%d rank partitions, want %d", n, c.ranks)
	}
	if n := one(t, db, "SELECT count(DISTINCT pid) FROM activities WHERE run = ?", c.run); n != int64(c.pids) {
		t.Errorf("%d processes, want %d", n, c.pids)
	}
	for _, k := range c.kinds {
		if one(t, db, "SELECT count(*) FROM activities WHERE run = ? AND step_kind = ?", c.run, k) == 0 {
			t.Errorf("no activity of step kind %s", k)
		}
	}

	// breakdown's kernel_ns per (rank, device, step kind, category).
	want := map[string]int64{}
	for _, g := range bd.Groups {
		for _, cat := range g.Categories {
			want[key(g.Rank, g.Device, g.StepKind, cat.Category)] += cat.KernelNS
		}
	}
	same(t, "kernel_ns per (rank, device, step kind, category)", sums(t, db,
		"SELECT "+rank+", device, step_kind, category, sum(dur_ns)::BIGINT FROM activities WHERE run = ? GROUP BY ALL", c.run), want)

	// ... and per group, with the input and process it names.
	want = map[string]int64{}
	for _, g := range bd.Groups {
		want[key(g.Path, g.PID, g.Device, g.StepKind)] = g.KernelNS
	}
	same(t, "kernel_ns per (input, pid, device, step kind)", sums(t, db,
		"SELECT input, pid, device, step_kind, sum(dur_ns)::BIGINT FROM activities WHERE run = ? GROUP BY ALL", c.run), want)

	// breakdown --no-steps: the same activities, whatever their step.
	want = map[string]int64{}
	for _, g := range flat.Groups {
		if g.StepKind != "all" {
			t.Fatalf("--no-steps gave step kind %q", g.StepKind)
		}
		for _, cat := range g.Categories {
			want[key(g.Rank, g.Device, cat.Category, cat.Instances)] += cat.KernelNS
		}
	}
	same(t, "--no-steps kernel_ns per (rank, device, category, instances)", sums(t, db,
		"SELECT "+rank+", device, category, count(*), sum(dur_ns)::BIGINT FROM activities WHERE run = ? GROUP BY ALL", c.run), want)

	// kernels: total per name (kernels only, as the command counts them).
	want = map[string]int64{}
	for _, k := range ks.Kernels {
		want[key(k.Name, k.Instances)] = k.TotalNS
	}
	same(t, "kernels total_ns per (name, instances)", sums(t, db,
		"SELECT name, count(*), sum(dur_ns)::BIGINT FROM activities WHERE run = ? AND kind = 'kernel' GROUP BY name", c.run), want)

	// steps: every step on every device, span, busy and kernel time.
	want = map[string]int64{}
	for _, s := range st.Steps {
		want[key(s.Path, s.PID, s.Device, s.Index, s.Kind, s.Marker, s.StartNS, s.SpanNS, s.BusyNS)] = s.KernelNS
	}
	got := sums(t, db, "SELECT input, pid, device, step, kind, marker, start_ns, span_ns, busy_ns, kernel_ns FROM steps WHERE run = ?", c.run)
	if c.steps {
		same(t, "steps (span_ns, busy_ns, kernel_ns per step and device)", got, want)
	} else if len(got) != 0 || len(want) != 0 {
		t.Errorf("a run without step markers has %d step rows (CLI: %d)", len(got), len(want))
	}

	// inputs: one row per input and rank partition.
	want = map[string]int64{}
	for _, in := range bd.Inputs {
		ws := -1
		if in.WorldSize != nil {
			ws = *in.WorldSize
		}
		want[key(in.Path, in.Format, ws, version)] = in.Activities
	}
	same(t, "inputs (activities per input)", sums(t, db,
		"SELECT path, format, coalesce(world_size, -1), traceq_version, sum(activities)::BIGINT FROM inputs WHERE run = ? GROUP BY ALL", c.run), want)

	// launches: every kernel activity with a correlation id finds its
	// launch call in the same input and process (the join the dataset
	// offers for launch overhead queries).
	if n := one(t, db, "SELECT count(*) FROM launches WHERE run = ?", c.run); n == 0 {
		t.Errorf("no launches")
	}
}

// checkDocs runs the DuckDB queries of docs/fleet.md (```sql duckdb
// blocks, reading 'fleet/…') on the test dataset and compares what they
// print with the ```text block that follows each; -update rewrites those.
func checkDocs(t *testing.T, db *sql.DB, fleet string) {
	path := filepath.Join(root, "docs", "fleet.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(doc), "\n")
	var out strings.Builder
	queries := 0
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		if strings.TrimSpace(lines[i]) != "```sql duckdb" {
			continue
		}
		var q strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			q.WriteString(lines[i])
			out.WriteString(lines[i])
		}
		if i >= len(lines) {
			t.Fatalf("%s: unclosed sql block", path)
		}
		out.WriteString(lines[i])
		// The output block: a blank line, ```text, lines, ```.
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j >= len(lines) || strings.TrimSpace(lines[j]) != "```text" {
			t.Fatalf("%s: the query ending on line %d has no ```text block of its output after it", path, i+1)
		}
		k := j + 1
		for k < len(lines) && strings.TrimSpace(lines[k]) != "```" {
			k++
		}
		old := strings.Join(lines[j+1:k], "")
		sqlText := strings.ReplaceAll(q.String(), "'fleet/", "'"+filepath.ToSlash(fleet)+"/")
		printed := table(t, db, sqlText)
		queries++
		if printed != old && !*update {
			t.Errorf("%s: the output of\n%s\nis now\n%s\nthe doc says\n%s(go test -update rewrites it)", path, q.String(), printed, old)
		}
		t.Logf("%s\n%s", q.String(), printed)
		for ; i < j; i++ {
			out.WriteString(lines[i+1])
		}
		out.WriteString(printed)
		out.WriteString(lines[k])
		i = k
	}
	if queries < 2 {
		t.Errorf("%s: %d DuckDB queries found, want the two of issue 16 at least", path, queries)
	}
	if *update && out.String() != string(doc) {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// table prints a query's result as aligned columns, as the doc shows it.
func table(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	cells := [][]string{cols}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				row[i] = "NULL"
			case float64: // the query rounds
				row[i] = strconv.FormatFloat(v, 'f', -1, 64)
			default:
				row[i] = fmt.Sprint(v)
			}
		}
		cells = append(cells, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	width := make([]int, len(cols))
	for _, r := range cells {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	w := bufio.NewWriter(&b)
	for _, r := range cells {
		for i, c := range r {
			if i == len(r)-1 {
				fmt.Fprintf(w, "%s\n", c)
			} else {
				fmt.Fprintf(w, "%-*s  ", width[i], c)
			}
		}
	}
	w.Flush()
	return b.String()
}
