package nsyssqlite

import (
	"github.com/traceq/traceq/internal/testenv"

	"cmp"
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/trace"
)

// The tests here check Open against SQL run on the same file through
// database/sql: nsys's cuda_gpu_kern_sum statistics per kernel name,
// per-device kernel and busy time, correlation, NVTX. They run over every
// committed fixture, and over /work/shared/traces/nsys when present.

const fixtureDir = "../../testdata/traces/nsys"

func fixtures(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.sqlite"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	return files
}

// oracleFiles is the fixtures plus the shared real exports when present.
func oracleFiles(t *testing.T) []string {
	files := fixtures(t)
	have := map[string]bool{}
	for _, f := range files {
		have[filepath.Base(f)] = true
	}
	var shared []string
	if dir := testenv.SharedIfPresent(t, "traces", "nsys"); dir != "" {
		shared, _ = filepath.Glob(filepath.Join(dir, "*.sqlite"))
	}
	for _, f := range shared {
		if !have[filepath.Base(f)] && !strings.Contains(f, "no-kernel") {
			files = append(files, f)
		}
	}
	return files
}

func sqlDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	abs, _ := filepath.Abs(path)
	u := url.URL{Path: abs}
	db, err := sql.Open("sqlite3", "file:"+u.EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func tableExists(t testing.TB, db *sql.DB, name string) bool {
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// kernStat is one row of cuda_gpu_kern_sum.
type kernStat struct {
	name               string
	total, n, min, max int64
	avg, med, stddev   float64
}

// kernSumSQL is cuda_gpu_kern_sum in plain SQLite: nsys's own median() and
// stdev() aggregates are replaced by a window query (median: mean of the
// middle one or two durations) and a two-pass sample variance.
const kernSumSQL = `
WITH k AS (
  SELECT s.value AS name, k."end" - k.start AS d
  FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.%s
),
agg AS (
  SELECT name, sum(d) AS total, count(*) AS n, avg(d) AS mean, min(d) AS mn, max(d) AS mx FROM k GROUP BY name
),
ranked AS (
  SELECT name, d, row_number() OVER (PARTITION BY name ORDER BY d) AS rn, count(*) OVER (PARTITION BY name) AS cnt FROM k
),
med AS (
  SELECT name, avg(d) AS med FROM ranked WHERE rn IN ((cnt + 1) / 2, (cnt + 2) / 2) GROUP BY name
),
var AS (
  SELECT k.name, CASE WHEN agg.n > 1 THEN sum((k.d - agg.mean) * (k.d - agg.mean)) / (agg.n - 1) ELSE 0 END AS var
  FROM k JOIN agg ON agg.name = k.name GROUP BY k.name
)
SELECT agg.name, total, n, mean, med.med, mn, mx, var.var
FROM agg JOIN med ON med.name = agg.name JOIN var ON var.name = agg.name
ORDER BY total DESC, n ASC, agg.name ASC`

func sqlKernSum(t *testing.T, db *sql.DB, col string) []kernStat {
	rows, err := db.Query(fmt.Sprintf(kernSumSQL, col))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []kernStat
	for rows.Next() {
		var k kernStat
		var v float64
		if err := rows.Scan(&k.name, &k.total, &k.n, &k.avg, &k.med, &k.min, &k.max, &v); err != nil {
			t.Fatal(err)
		}
		k.stddev = math.Sqrt(v)
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// goKernSum computes the same statistics from the parsed trace.
func goKernSum(tr *trace.Trace) []kernStat {
	durs := map[string][]int64{}
	for i := range tr.Activities {
		a := &tr.Activities[i]
		if a.Kind == trace.KindKernel {
			durs[tr.Names[a.Name]] = append(durs[tr.Names[a.Name]], a.Dur)
		}
	}
	var out []kernStat
	for name, ds := range durs {
		slices.Sort(ds)
		k := kernStat{name: name, n: int64(len(ds)), min: ds[0], max: ds[len(ds)-1]}
		for _, d := range ds {
			k.total += d
		}
		k.avg = float64(k.total) / float64(k.n)
		if m := len(ds) / 2; len(ds)%2 == 1 {
			k.med = float64(ds[m])
		} else {
			k.med = float64(ds[m-1]+ds[m]) / 2
		}
		if k.n > 1 {
			var ss float64
			for _, d := range ds {
				ss += (float64(d) - k.avg) * (float64(d) - k.avg)
			}
			k.stddev = math.Sqrt(ss / float64(k.n-1))
		}
		out = append(out, k)
	}
	// cuda_gpu_kern_sum's order: total desc, instances asc, name asc.
	slices.SortFunc(out, func(a, b kernStat) int {
		if c := cmp.Compare(b.total, a.total); c != 0 {
			return c
		}
		if c := cmp.Compare(a.n, b.n); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	return out
}

func closeEnough(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func mustOpen(t testing.TB, path string, opt Options) *trace.Trace {
	t.Helper()
	tr, err := Open(path, opt)
	if err != nil {
		t.Fatalf("Open(%s) = %v", path, err)
	}
	if err := tr.CheckValid(); err != nil {
		t.Fatalf("Open(%s): CheckValid = %v", path, err)
	}
	return tr
}

func TestKernSumMatchesSQL(t *testing.T) {
	for _, path := range oracleFiles(t) {
		for _, c := range []struct{ names, col string }{{"", "demangledName"}, {"short", "shortName"}} {
			t.Run(filepath.Base(path)+"/"+c.col, func(t *testing.T) {
				tr := mustOpen(t, path, Options{Names: c.names})
				want := sqlKernSum(t, sqlDB(t, path), c.col)
				got := goKernSum(tr)
				if len(got) != len(want) {
					t.Fatalf("%d kernel names, SQL has %d", len(got), len(want))
				}
				for i := range want {
					g, w := got[i], want[i]
					if g.name != w.name || g.total != w.total || g.n != w.n || g.min != w.min || g.max != w.max ||
						!closeEnough(g.avg, w.avg) || !closeEnough(g.med, w.med) || !closeEnough(g.stddev, w.stddev) {
						t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
					}
				}
			})
		}
	}
}

// busySQL is, per device, the kernel time summed and the length of the
// union of kernel intervals: each kernel, in start order, adds the part of
// it that lies past the latest end seen so far.
const busySQL = `
SELECT d, sum(e - s), sum(max(0, e - max(s, coalesce(pe, s))))
FROM (
  SELECT deviceId AS d, start AS s, "end" AS e,
         max("end") OVER (PARTITION BY deviceId ORDER BY start, "end" ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pe
  FROM CUPTI_ACTIVITY_KIND_KERNEL
) GROUP BY d ORDER BY d`

type devTime struct {
	dev         int32
	total, busy int64
}

// goBusy computes the same from the trace: a sweep over kernels, which the
// trace holds in start order.
func goBusy(tr *trace.Trace) []devTime {
	m := map[int32]*devTime{}
	last := map[int32]trace.Time{}
	var out []devTime
	for i := range tr.Activities {
		a := &tr.Activities[i]
		if a.Kind != trace.KindKernel {
			continue
		}
		d := m[a.Device]
		if d == nil {
			d = &devTime{dev: a.Device}
			m[a.Device] = d
			last[a.Device] = a.Start
		}
		d.total += a.Dur
		if a.End() > last[a.Device] {
			d.busy += int64(a.End() - max(a.Start, last[a.Device]))
			last[a.Device] = a.End()
		}
	}
	for _, d := range m {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b devTime) int { return cmp.Compare(a.dev, b.dev) })
	return out
}

func TestDeviceTimeMatchesSQL(t *testing.T) {
	for _, path := range oracleFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr := mustOpen(t, path, Options{})
			rows, err := sqlDB(t, path).Query(busySQL)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var want []devTime
			for rows.Next() {
				var d devTime
				if err := rows.Scan(&d.dev, &d.total, &d.busy); err != nil {
					t.Fatal(err)
				}
				want = append(want, d)
			}
			if got := goBusy(tr); !slices.Equal(got, want) {
				t.Errorf("per-device kernel/busy time:\n got %v\nwant %v", got, want)
			}
			var ids []int32
			for _, d := range tr.Meta.Devices {
				ids = append(ids, d.ID)
			}
			if !slices.Equal(ids, tr.DeviceIDs()) {
				t.Errorf("Meta.Devices ids %v, activity devices %v", ids, tr.DeviceIDs())
			}
		})
	}
}

// TestMemoryOpsMatchSQL checks memcpy and memset counts and time, and the
// memcpy names ([CUDA memcpy Host-to-Device], as nsys prints them).
func TestMemoryOpsMatchSQL(t *testing.T) {
	for _, path := range oracleFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr := mustOpen(t, path, Options{})
			db := sqlDB(t, path)
			got := map[string][2]int64{}
			for i := range tr.Activities {
				a := &tr.Activities[i]
				if a.Kind != trace.KindKernel {
					v := got[tr.Names[a.Name]]
					got[tr.Names[a.Name]] = [2]int64{v[0] + 1, v[1] + a.Dur}
				}
			}
			want := map[string][2]int64{}
			var qs []string
			if tableExists(t, db, "CUPTI_ACTIVITY_KIND_MEMCPY") {
				label := "CASE copyKind WHEN 1 THEN 'Host-to-Device' WHEN 2 THEN 'Device-to-Host' WHEN 8 THEN 'Device-to-Device' WHEN 10 THEN 'Peer-to-Peer' END"
				if tableExists(t, db, "ENUM_CUDA_MEMCPY_OPER") {
					label = "(SELECT label FROM ENUM_CUDA_MEMCPY_OPER e WHERE e.id = copyKind)"
				}
				qs = append(qs, "SELECT '[CUDA memcpy ' || "+label+" || ']', count(*), sum(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1")
			}
			if tableExists(t, db, "CUPTI_ACTIVITY_KIND_MEMSET") {
				qs = append(qs, "SELECT '[CUDA memset]', count(*), sum(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_MEMSET HAVING count(*) > 0")
			}
			for _, q := range qs {
				rows, err := db.Query(q)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var name string
					var n, d int64
					if err := rows.Scan(&name, &n, &d); err != nil {
						t.Fatal(err)
					}
					want[name] = [2]int64{n, d}
				}
				rows.Close()
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("memory ops (count, ns) by name:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestCorrelation checks that kernels find their launch call through
// FindLaunch exactly as often as an SQL join on (correlationId, process)
// finds one, and that the kept launches are exactly the API rows (runtime
// and driver calls) some GPU activity of the same process points to, name
// by name.
func TestCorrelation(t *testing.T) {
	for _, path := range oracleFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr := mustOpen(t, path, Options{})
			db := sqlDB(t, path)
			if !tableExists(t, db, "CUPTI_ACTIVITY_KIND_RUNTIME") {
				t.Skip("no runtime table")
			}
			var kernels, missing int64
			for i := range tr.Activities {
				a := &tr.Activities[i]
				if a.Kind != trace.KindKernel {
					continue
				}
				kernels++
				l := tr.FindLaunch(a.Proc, a.Corr)
				if l == nil {
					missing++
					continue
				}
				if l.Start > a.Start {
					t.Errorf("kernel at %d launched later, at %d (corr %d)", a.Start, l.Start, a.Corr)
				}
			}
			const mask = "-16777216" // ^0xFFFFFF: the VM and PID bits
			var wantMissing int64
			// Joins against DISTINCT subqueries, so that SQLite builds
			// automatic indexes (the tables have none).
			q := `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN (
				SELECT DISTINCT correlationId AS c, globalTid & ` + mask + ` AS p FROM CUPTI_ACTIVITY_KIND_RUNTIME) r
				ON r.c = k.correlationId AND r.p = (k.globalPid & ` + mask + `) WHERE r.c IS NULL`
			if err := db.QueryRow(q).Scan(&wantMissing); err != nil {
				t.Fatal(err)
			}
			if missing != wantMissing {
				t.Errorf("%d of %d kernels without a launch, SQL says %d", missing, kernels, wantMissing)
			}
			var gpu []string
			for _, tb := range []string{"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"} {
				if tableExists(t, db, tb) {
					gpu = append(gpu, "SELECT correlationId, globalPid FROM "+tb)
				}
			}
			// API calls: the runtime table (runtime and driver calls, told
			// apart by eventClass) and a driver table where there is one.
			api := []string{"SELECT nameId, correlationId, globalTid, eventClass FROM CUPTI_ACTIVITY_KIND_RUNTIME"}
			if tableExists(t, db, "CUPTI_ACTIVITY_KIND_DRIVER") {
				api = append(api, "SELECT nameId, correlationId, globalTid, 1 FROM CUPTI_ACTIVITY_KIND_DRIVER")
			}
			q = `SELECT s.value, r.eventClass, count(*) FROM (` + strings.Join(api, " UNION ALL ") + `) r JOIN (
				SELECT DISTINCT correlationId AS c, globalPid & ` + mask + ` AS p FROM (` + strings.Join(gpu, " UNION ALL ") + `)) a
				ON a.c = r.correlationId AND a.p = (r.globalTid & ` + mask + `) JOIN StringIds s ON s.id = r.nameId GROUP BY 1, 2`
			rows, err := db.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			var wantLaunches, driverCalls int
			for rows.Next() {
				var name string
				var class, n int
				if err := rows.Scan(&name, &class, &n); err != nil {
					t.Fatal(err)
				}
				want[versionSuffix.ReplaceAllString(name, "")] += n
				wantLaunches += n
				if class == 1 {
					driverCalls += n
				}
			}
			rows.Close()
			got := map[string]int{}
			for i := range tr.Launches {
				got[tr.Names[tr.Launches[i].Name]]++
			}
			if len(tr.Launches) != wantLaunches || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("launches by name %v\nSQL's API rows that match GPU activity: %v", got, want)
			}
			t.Logf("%d kernels, %d without launch; %d launches kept, %d of them driver calls", kernels, missing, len(tr.Launches), driverCalls)
		})
	}
}

// versionSuffix is the "_v7000" of CUDA runtime API names.
var versionSuffix = regexp.MustCompile(`_v[0-9]+$`)

// TestNVTXMatchesSQL checks the kept ranges: push/pop and start/end ranges
// with an end, named coalesce(text, StringIds[textId]).
func TestNVTXMatchesSQL(t *testing.T) {
	for _, path := range oracleFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr := mustOpen(t, path, Options{})
			db := sqlDB(t, path)
			want := map[string]int{}
			if tableExists(t, db, "NVTX_EVENTS") {
				rows, err := db.Query(`SELECT coalesce(n.text, s.value, ''), count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
					WHERE n.eventType IN (59, 60, 70, 71) AND n."end" IS NOT NULL AND n."end" != 0 GROUP BY 1`)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var s string
					var n int
					if err := rows.Scan(&s, &n); err != nil {
						t.Fatal(err)
					}
					want[s] = n
				}
				rows.Close()
			}
			got := map[string]int{}
			for i := range tr.Ranges {
				r := &tr.Ranges[i]
				if r.Kind != trace.RangeCPU || r.Device != -1 {
					t.Fatalf("range %d: kind %v device %d", i, r.Kind, r.Device)
				}
				got[tr.Names[r.Name]]++
			}
			if len(got) != len(want) {
				t.Errorf("%d distinct range names, SQL has %d", len(got), len(want))
			}
			for s, n := range want {
				if got[s] != n {
					t.Errorf("range %q: %d, SQL has %d", s, got[s], n)
				}
			}
		})
	}
}

func TestFixtureFacts(t *testing.T) {
	tests := []struct {
		file              string
		version, schema   string
		kernels, launches int
		ranges            int
		procs             []int64
		devices           []string
		domains           []string // distinct non-default NVTX domains
		backend           string
		anomaly           string // substring of some anomaly, "" for none expected
		host              string
		ranks             []string // per process: rank and rank name
		source            trace.RankSource
	}{
		{"nsys2022.1.3_dlprof-rtx2070-cudnn.sqlite", "2022.1.3.3", "2.9.1", 46, 62, 82, []int64{9908},
			[]string{"NVIDIA GeForce RTX 2070 SUPER/40"}, nil, "", "", "mohanadodema", []string{"-1 "}, trace.RankUnknown},
		// Its thread is named "MPI Rank 0".
		{"nsys2022.2.1_saxpy-mpi-a100-nonlazy.sqlite", "2022.2.1.31", "2.9.1", 5, 40, 22, []int64{1230493},
			[]string{"NVIDIA A100-SXM4-40GB/108"}, []string{"MPI"}, "", "several cuda api calls share a correlation id",
			"nid001608", []string{"0 MPI Rank 0"}, trace.RankFromThreadName},
		{"nsys2023.1.2_memfusion-rtx3090-tensorrt.sqlite", "2023.1.2.43", "3.1.2", 36, 40, 59, []int64{24129},
			[]string{"NVIDIA GeForce RTX 3090/82"}, []string{"TensorRT"}, "", "", "69fcf9e4442f", []string{"-1 "}, trace.RankUnknown},
		// torchrun's two processes: no NCCL payload, thread name or
		// environment names them; each used its own device.
		{"nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite", "2026.2.1.210", "3.25.0", 3587, 4717, 17113, []int64{148, 149},
			[]string{"/0", "/0"}, nil, "nccl", "nvtx domain without a name", "modal", []string{"0 cuda:0", "1 cuda:1"}, trace.RankFromDevice},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr := mustOpen(t, filepath.Join(fixtureDir, tt.file), Options{})
			m := tr.Meta
			wantRank := -1
			if len(tt.ranks) == 1 {
				fmt.Sscan(tt.ranks[0], &wantRank)
			}
			if m.Format != trace.FormatNsys || m.ToolVersion != tt.version || m.SchemaVersion != tt.schema || m.Rank != wantRank || m.WorldSize != -1 ||
				m.Host != tt.host || m.RankSource != tt.source {
				t.Errorf("Meta = %+v", m)
			}
			if m.BaseTime == 0 {
				t.Errorf("BaseTime not set")
			}
			if m.Backend != tt.backend {
				t.Errorf("Backend = %q, want %q", m.Backend, tt.backend)
			}
			var kernels int
			for i := range tr.Activities {
				if tr.Activities[i].Kind == trace.KindKernel {
					kernels++
				}
			}
			if kernels != tt.kernels || len(tr.Launches) != tt.launches || len(tr.Ranges) != tt.ranges {
				t.Errorf("kernels, launches, ranges = %d, %d, %d; want %d, %d, %d",
					kernels, len(tr.Launches), len(tr.Ranges), tt.kernels, tt.launches, tt.ranges)
			}
			var pids []int64
			var ranks []string
			for _, p := range tr.Procs {
				pids = append(pids, p.PID)
				ranks = append(ranks, fmt.Sprintf("%d %s", p.Rank, p.RankName))
				if p.Name == "" {
					t.Errorf("proc %+v", p)
				}
			}
			if !slices.Equal(ranks, tt.ranks) {
				t.Errorf("ranks %q, want %q", ranks, tt.ranks)
			}
			if !slices.Equal(pids, tt.procs) {
				t.Errorf("procs %v, want %v", pids, tt.procs)
			}
			var devs []string
			for _, d := range m.Devices {
				devs = append(devs, fmt.Sprintf("%s/%d", d.Name, d.SMs))
			}
			if !slices.Equal(devs, tt.devices) {
				t.Errorf("devices %v, want %v", devs, tt.devices)
			}
			var doms []string
			for i := range tr.Ranges {
				if d := tr.Ranges[i].Domain; d != 0 && !slices.Contains(doms, tr.Names[d]) {
					doms = append(doms, tr.Names[d])
				}
			}
			if !slices.Equal(doms, tt.domains) {
				t.Errorf("nvtx domains %q, want %q", doms, tt.domains)
			}
			found := tt.anomaly == ""
			for _, a := range tr.Anomalies {
				found = found || strings.Contains(a.What, tt.anomaly)
			}
			if !found {
				t.Errorf("no anomaly %q in %+v", tt.anomaly, tr.Anomalies)
			}
			// Launch threads are OS tids of the launching process.
			for i := range tr.Launches {
				if l := &tr.Launches[i]; l.Thread <= 0 || l.Thread > 0xFFFFFF {
					t.Fatalf("launch %d: thread %d", i, l.Thread)
				}
			}
		})
	}
}

// TestShared opens every real export in ../shared: each either parses
// into a valid trace or fails with the documented ErrNoKernels error.
func TestShared(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testenv.Shared(t, "traces", "nsys"), "*.sqlite"))
	if len(files) == 0 {
		t.Skip("../shared/traces/nsys holds no exports")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr, err := Open(path, Options{})
			if err != nil {
				if !isNoKernels(err) || !strings.Contains(err.Error(), "--trace-fork-before-exec=true") {
					t.Fatalf("Open = %v", err)
				}
				t.Logf("%v", err)
				return
			}
			if err := tr.CheckValid(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d activities, %d launches, %d ranges, %d anomalies", len(tr.Activities), len(tr.Launches), len(tr.Ranges), len(tr.Anomalies))
		})
	}
}

// TestConfigsMatchSQL: every kernel's launch configuration is the row's
// grid, block, registers and shared memory, as SQL on the file reads
// them: the multiset of (name, start, configuration) is the same.
func TestConfigsMatchSQL(t *testing.T) {
	for _, path := range oracleFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr := mustOpen(t, path, Options{})
			db := sqlDB(t, path)
			rows, err := db.Query(`SELECT s.value, k.start, gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread,
				staticSharedMemory + dynamicSharedMemory, dynamicSharedMemory
				FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var want []string
			for rows.Next() {
				var name string
				var v [10]int64
				if err := rows.Scan(&name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]); err != nil {
					t.Fatal(err)
				}
				want = append(want, fmt.Sprintf("%s@%d grid %d %d %d block %d %d %d regs %d smem %d dyn %d", name, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]))
			}
			var got []string
			for _, a := range tr.Activities {
				if a.Kind != trace.KindKernel {
					continue
				}
				c := tr.ConfigOf(tr.AttrOf(a.Attr).Config)
				got = append(got, fmt.Sprintf("%s@%d grid %d %d %d block %d %d %d regs %d smem %d dyn %d", tr.Name(a.Name), a.Start,
					c.Grid[0], c.Grid[1], c.Grid[2], c.Block[0], c.Block[1], c.Block[2], c.Registers, c.SharedMem, c.DynamicSharedMem))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%d kernels, want %d; configurations differ from SQL's", len(got), len(want))
			}
			if len(tr.Configs) < 2 {
				t.Errorf("no configuration read")
			}
		})
	}
}

// TestDevicesMatchSQL: each device's properties are TARGET_INFO_GPU's.
func TestDevicesMatchSQL(t *testing.T) {
	for _, path := range oracleFiles(t) {
		db := sqlDB(t, path)
		if !tableExists(t, db, "TARGET_INFO_GPU") {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr := mustOpen(t, path, Options{})
			for _, d := range tr.Meta.Devices {
				var want trace.Device
				var warps int64
				err := db.QueryRow(`SELECT id, name, chipName, smCount, totalMemory, clockRate, memoryBandwidth, l2CacheSize,
					computeMajor, computeMinor, threadsPerWarp, maxWarpsPerSm, maxRegistersPerSm, maxShmemPerSm
					FROM TARGET_INFO_GPU WHERE id = ? ORDER BY vmId LIMIT 1`, d.ID).Scan(&want.ID, &want.Name, &want.Chip, &want.SMs,
					&want.MemoryBytes, &want.ClockHz, &want.MemoryBandwidth, &want.L2Bytes, &want.ComputeMajor, &want.ComputeMinor,
					&want.WarpSize, &warps, &want.RegistersPerSM, &want.SharedMemPerSM)
				if err != nil {
					t.Fatal(err)
				}
				want.MaxThreadsPerSM = int(warps) * want.WarpSize
				if d != want || d.SMs == 0 || d.ClockHz == 0 {
					t.Errorf("device %d: %+v\n want %+v", d.ID, d, want)
				}
			}
		})
	}
}
