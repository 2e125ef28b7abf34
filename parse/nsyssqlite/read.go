package nsyssqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/trace"
)

// Table names, as exported from nsys 2022.1 to 2026.2.
const (
	tableStrings   = "StringIds"
	tableKernel    = "CUPTI_ACTIVITY_KIND_KERNEL"
	tableMemcpy    = "CUPTI_ACTIVITY_KIND_MEMCPY"
	tableMemset    = "CUPTI_ACTIVITY_KIND_MEMSET"
	tableRuntime   = "CUPTI_ACTIVITY_KIND_RUNTIME"
	tableDriver    = "CUPTI_ACTIVITY_KIND_DRIVER" // in no nsys export seen; read when present
	tableGraph     = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
	tableNVTX      = "NVTX_EVENTS"
	tableProcesses = "PROCESSES"
	tableGPU       = "TARGET_INFO_GPU"
	tableMemcpyOp  = "ENUM_CUDA_MEMCPY_OPER"
	tableSession   = "TARGET_INFO_SESSION_START_TIME"
	tableAnalysis  = "ANALYSIS_DETAILS"
)

// metaTables are the names of the export metadata table: META_DATA_EXPORT
// from 2023.3 on, EXPORT_META_DATA before.
var metaTables = []string{"META_DATA_EXPORT", "EXPORT_META_DATA"}

type reader struct {
	db      *sql.DB
	uri     string // of the file, for raw
	raw     *rawDB // opened by scanTable
	opt     Options
	nameCol string
	tables  map[string]string // logical name → name in this export
	b       *builder
	done    int64
	total   int64
}

// resolveTables maps each table name to the one present. Tables are created
// lazily, so absence means "no data". Some tools report "_V<n>" suffixed
// variants in newer exports: the highest n is taken. (A name like
// CUPTI_ACTIVITY_KIND_MEMCPY2 is a different table and is not matched.)
func (r *reader) resolveTables() error {
	rows, err := r.db.Query("SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return dbError(err)
	}
	defer rows.Close()
	best := map[string]int{}
	r.tables = map[string]string{}
	for rows.Next() {
		var ns sql.NullString
		if err := rows.Scan(&ns); err != nil {
			return err
		}
		name := ns.String
		base, v := name, 0
		if i := strings.LastIndex(name, "_V"); i > 0 {
			if n, err := strconv.Atoi(name[i+2:]); err == nil && n > 0 {
				base, v = name[:i], n
			}
		}
		if cur, ok := best[base]; !ok || v > cur {
			best[base] = v
			r.tables[base] = name
		}
	}
	if err := rows.Err(); err != nil {
		return dbError(err)
	}
	return nil
}

func (r *reader) has(table string) bool { _, ok := r.tables[table]; return ok }

// columns returns the column names of a table.
func (r *reader) columns(table string) (map[string]bool, error) {
	rows, err := r.db.Query(`SELECT name FROM pragma_table_info(?)`, r.tables[table])
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", table, dbError(err))
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var c sql.NullString
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols[c.String] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, dbError(err))
	}
	return cols, nil
}

// selectList builds a column list: required columns must exist, optional
// ones read as NULL when absent (columns come and go across versions; the
// select is by name, never by position, since users ALTER TABLE exports).
func (r *reader) selectList(table string, required, optional []string) (string, error) {
	cols, err := r.columns(table)
	if err != nil {
		return "", err
	}
	var list []string
	for _, c := range required {
		if !cols[c] {
			return "", notNsys("table %s has no column %s (not an nsys export, or a schema traceq does not know)", table, c)
		}
		list = append(list, `"`+c+`"`)
	}
	for _, c := range optional {
		if cols[c] {
			list = append(list, `"`+c+`"`)
		} else {
			list = append(list, "NULL")
		}
	}
	return strings.Join(list, ", "), nil
}

// count returns the number of rows of table, 0 when it is absent. It
// walks the table's pages (about 4% of the time Open takes), where
// max(rowid) would be one b-tree descent: but rowids are whatever the file
// says (a single row can claim rowid 2^63-1), and what is sized from
// counts must follow the rows present.
func (r *reader) count(table string) (int64, error) {
	if !r.has(table) {
		return 0, nil
	}
	var n int64
	if err := r.db.QueryRow(`SELECT count(*) FROM "` + r.tables[table] + `"`).Scan(&n); err != nil {
		return 0, fmt.Errorf("table %s: %w", table, dbError(err))
	}
	return n, nil
}

// counts returns the sum of count over tables.
func (r *reader) counts(tables ...string) (int64, error) {
	var sum int64
	for _, t := range tables {
		n, err := r.count(t)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

const progressEvery = 1 << 16

func (r *reader) progress(n int64) {
	r.done += n
	if r.opt.Progress != nil {
		r.opt.Progress(r.done, max(r.total, r.done))
	}
}

// scanRows runs query and calls fn for each row with the column values
// (int64, float64, string, []byte or nil) and the row's number, from 1.
// It works on the driver's rows directly: database/sql's Rows.Next and
// Scan add locking and conversion per row, measured at 16% of the time of
// a 5M-kernel read.
func (r *reader) scanRows(table, query string, ncol int, fn func(v []driver.Value, row int64)) error {
	ctx := context.Background()
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("table %s: %w", table, dbError(err))
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return errors.New("sqlite driver cannot run queries directly") // not go-sqlite3
		}
		rows, err := q.QueryContext(ctx, query, nil)
		if err != nil {
			return dbError(err)
		}
		defer rows.Close()
		if got := len(rows.Columns()); got != ncol {
			return fmt.Errorf("query returns %d columns, want %d", got, ncol)
		}
		vals := make([]driver.Value, ncol)
		var n, row int64
		for {
			if err := rows.Next(vals); err != nil {
				if err == io.EOF {
					break
				}
				return dbError(err)
			}
			row++
			fn(vals, row)
			if n++; n == progressEvery {
				r.progress(n)
				n = 0
			}
		}
		r.progress(n)
		return nil
	})
	if err != nil {
		return fmt.Errorf("table %s: %w", table, err)
	}
	return nil
}

// scanTable is scanRows for the big tables (kernels, memory copies and
// sets, API calls, NVTX events): the rows come through SQLite's C API
// (rawDB.scan), not the driver.
func (r *reader) scanTable(table, query string, ncol int, fn func(v *rowVals, row int64)) error {
	if r.raw == nil {
		raw, err := openRaw(r.uri)
		if err != nil {
			return fmt.Errorf("table %s: %w", table, dbError(err))
		}
		r.raw = raw
	}
	var n, row int64
	err := r.raw.scan(query, ncol, func(v *rowVals) error {
		row++
		fn(v, row)
		if n++; n == progressEvery {
			r.progress(n)
			n = 0
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("table %s: %w", table, dbError(err))
	}
	r.progress(n)
	return nil
}

func (r *reader) read() (*trace.Trace, error) {
	if err := r.resolveTables(); err != nil {
		return nil, err
	}
	isNsys := r.has(tableStrings) || r.has(tableNVTX)
	for base := range r.tables {
		if strings.HasPrefix(base, "CUPTI_ACTIVITY_KIND_") {
			isNsys = true
		}
	}
	if !isNsys {
		return nil, notNsys("no StringIds, CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table")
	}
	nk, err := r.count(tableKernel)
	if err != nil {
		return nil, err
	}
	napi, err := r.counts(tableRuntime, tableDriver)
	if err != nil {
		return nil, err
	}
	if nk == 0 {
		detail := "no " + tableKernel + " table"
		if r.has(tableKernel) {
			detail = tableKernel + " is empty"
		}
		if napi > 0 {
			detail += fmt.Sprintf(", yet %d CUDA API calls were traced", napi)
		}
		ngraph, err := r.count(tableGraph)
		if err != nil {
			return nil, err
		}
		if ngraph > 0 {
			detail += fmt.Sprintf(", and %d whole CUDA graph executions (add `--cuda-graph-trace=node`)", ngraph)
		}
		return nil, &noKernelsError{detail: detail}
	}
	if !r.has(tableStrings) {
		return nil, notNsys("%s without a %s table", tableKernel, tableStrings)
	}
	nmem, err := r.counts(tableMemcpy, tableMemset)
	if err != nil {
		return nil, err
	}
	nnvtx, err := r.count(tableNVTX)
	if err != nil {
		return nil, err
	}
	r.total = nk + nmem + napi + nnvtx
	// Sized from the row counts: growing these slices by append measured
	// 1.1 s of copying and page faults for 0.77M NVTX ranges. Capacity
	// never written costs address space only.
	r.b = newBuilder(int(nk+nmem), int(nnvtx))
	r.b.kernelCols = append(slices.Clip(activityCols), r.nameCol)
	t := r.b.t
	t.Meta = trace.Meta{Format: trace.FormatNsys, Rank: -1, WorldSize: -1, ProcessGroupCount: -1}

	prepare := func() error { r.b.prepareLaunches(); return nil }
	steps := []func() error{r.readMemcpyKinds, r.readKernels, r.readMemcpy, r.readMemset, prepare,
		func() error { return r.readAPI(tableRuntime) }, func() error { return r.readAPI(tableDriver) }, r.readNVTX}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if err := r.checkGraphs(); err != nil {
		return nil, err
	}
	procNames, err := r.readProcessNames()
	if err != nil {
		return nil, err
	}
	droppedAPI := r.b.droppedAPI
	if _, err := r.b.finish(r.lookupStrings, procNames); err != nil {
		return nil, err
	}
	if err := r.checkGraphLaunches(droppedAPI); err != nil {
		return nil, err
	}
	if err := r.readMeta(); err != nil {
		return nil, err
	}
	if err := r.readDevices(); err != nil {
		return nil, err
	}
	if err := r.readHost(); err != nil {
		return nil, err
	}
	if err := r.nameRanks(); err != nil {
		return nil, err
	}
	t.SortAnomalies()
	if err := t.CheckValid(); err != nil {
		return nil, fmt.Errorf("internal error: invalid trace: %w", err) // a bug in this package
	}
	return t, nil
}

func (r *reader) readMemcpyKinds() error {
	if !r.has(tableMemcpyOp) {
		return nil // absent before 2022.4 and lazily from 2025.3: use the built-in table
	}
	return r.scanRows(tableMemcpyOp, `SELECT id, label FROM "`+r.tables[tableMemcpyOp]+`"`, 2, func(v []driver.Value, _ int64) {
		id, ok := v[0].(int64)
		if s, isText := v[1].(string); ok && isText && s != "" {
			r.b.memcpyKind[id] = s
		}
	})
}

func (r *reader) readKernels() error {
	cols, err := r.selectList(tableKernel, r.b.kernelCols, configCols)
	if err != nil {
		return err
	}
	err = r.scanTable(tableKernel, "SELECT "+cols+` FROM "`+r.tables[tableKernel]+`"`, len(r.b.kernelCols)+len(configCols), r.b.kernelRow)
	if err != nil {
		return err
	}
	if b := r.b; b.kernelRows > 0 && b.kernelBad == b.kernelRows {
		var example string
		for _, a := range b.t.Anomalies {
			if a.What == badGPU {
				example = a.Example
			}
		}
		return notNsys("none of the %d rows of %s is readable (%s)", b.kernelRows, tableKernel, strings.TrimPrefix(example, tableKernel+" "))
	}
	return nil
}

func (r *reader) readMemcpy() error {
	if !r.has(tableMemcpy) {
		return nil
	}
	cols, err := r.selectList(tableMemcpy, memcpyCols, nil)
	if err != nil {
		return err
	}
	return r.scanTable(tableMemcpy, "SELECT "+cols+` FROM "`+r.tables[tableMemcpy]+`"`, len(memcpyCols), r.b.memcpyRow)
}

func (r *reader) readMemset() error {
	if !r.has(tableMemset) {
		return nil
	}
	cols, err := r.selectList(tableMemset, activityCols, nil)
	if err != nil {
		return err
	}
	return r.scanTable(tableMemset, "SELECT "+cols+` FROM "`+r.tables[tableMemset]+`"`, len(activityCols), r.b.memsetRow)
}

// readAPI reads CUDA API calls from table: CUPTI_ACTIVITY_KIND_RUNTIME,
// where nsys writes runtime and driver calls alike (cudaLaunchKernel_v7000
// with eventClass 0, cuLaunchKernelEx with eventClass 1), or
// CUPTI_ACTIVITY_KIND_DRIVER when an export has one with the same columns
// (no nsys export seen has; nvprof's has other columns and is skipped).
func (r *reader) readAPI(table string) error {
	if !r.has(table) {
		return nil
	}
	cols, err := r.selectList(table, apiCols, nil)
	var nn *notNsysError
	if table == tableDriver && errors.As(err, &nn) {
		r.b.t.AddAnomaly(tableDriver+" without nsys's columns skipped", 1, err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	return r.scanTable(table, "SELECT "+cols+` FROM "`+r.tables[table]+`"`, len(apiCols), func(v *rowVals, row int64) {
		r.b.apiRow(table, v, row)
	})
}

func (r *reader) readNVTX() error {
	if !r.has(tableNVTX) {
		return nil
	}
	cols, err := r.selectList(tableNVTX, nvtxCols[:4], nvtxCols[4:])
	if err != nil {
		return err
	}
	// Only ranges and domain names; marks and the rest are skipped in SQL.
	q := fmt.Sprintf(`SELECT %s FROM "%s" WHERE eventType IN (%d, %d, %d, %d, %d)`, cols, r.tables[tableNVTX],
		nvtxPushPop, nvtxStartEnd, nvtxtPushPop, nvtxtStartEnd, nvtxDomainCreate)
	return r.scanTable(tableNVTX, q, len(nvtxCols), r.b.nvtxRow)
}

// lookupStrings fetches StringIds values for ids, by primary key, a chunk
// at a time: the table can hold far more strings (environment, call
// stacks) than the few thousand names a trace uses.
func (r *reader) lookupStrings(ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	const chunk = 500
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		// Only a name's first MaxNameLen bytes are fetched (substr on a
		// BLOB counts bytes): a hostile StringIds row of hundreds of MB
		// costs nothing.
		q := `SELECT id, substr(CAST(value AS BLOB), 1, ` + strconv.Itoa(trace.MaxNameLen+1) + `) FROM "` + r.tables[tableStrings] + `" WHERE id IN (?` + strings.Repeat(", ?", n-1) + ")"
		rows, err := r.db.Query(q, args...)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", tableStrings, dbError(err))
		}
		for rows.Next() {
			var id int64
			var v []byte // TEXT may hold NULs (environment blocks); []byte keeps them
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("table %s: %w", tableStrings, err)
			}
			s, cut := trace.CutName(string(v))
			if cut && !r.b.counted(trace.AnomLongName) {
				r.b.t.AddAnomaly(trace.AnomLongName, 1, fmt.Sprintf("%s id %d", tableStrings, id))
			}
			out[id] = s
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", tableStrings, dbError(err))
		}
		ids = ids[n:]
	}
	return out, nil
}

// readProcessNames maps globalPid (VM and PID bits) to the process name.
// PROCESSES lists every process on the host; only the ones with GPU work
// or NVTX ranges become trace.Procs.
func (r *reader) readProcessNames() (map[int64]string, error) {
	out := map[int64]string{}
	if !r.has(tableProcesses) {
		return out, nil
	}
	cols, err := r.columns(tableProcesses)
	if err != nil {
		return nil, err
	}
	if !cols["globalPid"] || !cols["name"] {
		return out, nil
	}
	err = r.scanRows(tableProcesses, `SELECT globalPid, name FROM "`+r.tables[tableProcesses]+`"`, 2, func(v []driver.Value, _ int64) {
		g, ok := v[0].(int64)
		if s, isText := v[1].(string); ok && isText {
			if _, dup := out[g&pidMask]; !dup {
				out[g&pidMask] = s
			}
		}
	})
	return out, err
}

// readMeta fills ToolVersion, SchemaVersion and BaseTime.
func (r *reader) readMeta() error {
	m := &r.b.t.Meta
	for _, mt := range metaTables {
		if !r.has(mt) {
			continue
		}
		err := r.scanRows(mt, `SELECT name, value FROM "`+r.tables[mt]+`" WHERE name IN ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')`, 2, func(v []driver.Value, _ int64) {
			name, _ := v[0].(string)
			val, _ := v[1].(string)
			switch name {
			case "EXPORT_PRODUCT_VERSION":
				m.ToolVersion = val
			case "EXPORT_SCHEMA_VERSION":
				m.SchemaVersion = val
			}
		})
		if err != nil {
			return err
		}
		break
	}
	// Timestamps are the target's system clock; the wall clock is
	// utcEpochNs + (t - startTime).
	if r.has(tableSession) && r.has(tableAnalysis) {
		var utc, start sql.NullInt64
		e1 := r.db.QueryRow(`SELECT utcEpochNs FROM "` + r.tables[tableSession] + `"`).Scan(&utc)
		e2 := r.db.QueryRow(`SELECT startTime FROM "` + r.tables[tableAnalysis] + `"`).Scan(&start)
		if e1 == nil && e2 == nil && utc.Valid && start.Valid && utc.Int64 > 0 {
			m.BaseTime = utc.Int64 - start.Int64
		}
	}
	return nil
}

// gpuCols are the TARGET_INFO_GPU columns readDevices reads after id,
// each optional (columns come and go across nsys versions).
var gpuCols = []string{"name", "chipName", "smCount", "totalMemory", "clockRate", "memoryBandwidth", "l2CacheSize",
	"computeMajor", "computeMinor", "threadsPerWarp", "maxWarpsPerSm", "maxRegistersPerSm", "maxShmemPerSm"}

// readDevices describes each device that ran GPU work. TARGET_INFO_GPU is
// absent in some exports (containerised 2026.2 captures): the devices are
// then listed with their ids only.
func (r *reader) readDevices() error {
	t := r.b.t
	ids := t.DeviceIDs()
	info := map[int32]trace.Device{}
	if r.has(tableGPU) {
		cols, err := r.selectList(tableGPU, []string{"id"}, gpuCols)
		if err != nil {
			return err
		}
		order := ""
		if c, _ := r.columns(tableGPU); c["vmId"] {
			order = " ORDER BY vmId"
		}
		err = r.scanRows(tableGPU, "SELECT "+cols+` FROM "`+r.tables[tableGPU]+`"`+order, 1+len(gpuCols), func(v []driver.Value, _ int64) {
			id, ok := v[0].(int64)
			if !ok || id < 0 || id > math.MaxInt32 {
				return
			}
			d := trace.Device{ID: int32(id)}
			if _, dup := info[d.ID]; dup {
				return
			}
			// A non-negative integer, else 0 (unknown).
			n := func(i int) int64 {
				x, _ := v[1+i].(int64)
				return max(x, 0)
			}
			small := func(i int) int { return int(min(n(i), math.MaxInt32)) }
			d.Name, _ = v[1].(string)
			d.Chip, _ = v[2].(string)
			d.SMs, d.MemoryBytes, d.ClockHz, d.MemoryBandwidth, d.L2Bytes = small(2), n(3), n(4), n(5), n(6)
			d.ComputeMajor, d.ComputeMinor, d.WarpSize = small(7), small(8), small(9)
			if w := n(10) * n(9); w <= math.MaxInt32 {
				d.MaxThreadsPerSM = int(w) // warps per SM × threads per warp
			}
			d.RegistersPerSM, d.SharedMemPerSM = small(11), n(12)
			info[d.ID] = d
		})
		if err != nil {
			return err
		}
	}
	for _, id := range ids {
		d, ok := info[id]
		if !ok {
			d = trace.Device{ID: id}
		}
		t.Meta.Devices = append(t.Meta.Devices, d)
	}
	return nil
}

// checkGraphs looks for CUDA graphs traced as a whole
// (CUPTI_ACTIVITY_KIND_GRAPH_TRACE, written when --cuda-graph-trace=node is
// not given): their kernels are not in the kernel table. With node
// tracing the table is absent and graph kernels carry the launch's
// correlation id.
func (r *reader) checkGraphs() error {
	if !r.has(tableGraph) {
		return nil
	}
	// Summed in Go, over the rows the kernels' rules would keep, and
	// saturating: SQL's sum() fails on overflow.
	var n int64
	var graphNs, kernNs trace.Time
	err := r.scanRows(tableGraph, `SELECT start, "end" FROM "`+r.tables[tableGraph]+`"`, 2, func(v []driver.Value, _ int64) {
		start, ok1 := v[0].(int64)
		end, ok2 := v[1].(int64)
		if ok1 && ok2 && end >= start && span(start, end) <= uint64(trace.MaxActivityDur) {
			n++
			graphNs = addSat(graphNs, end-start)
		}
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	for i := range r.b.kernels {
		kernNs = addSat(kernNs, r.b.kernels[i].Dur)
	}
	if graphNs >= kernNs {
		return fmt.Errorf("table %s: %w: %d graph executions take %d ns of GPU time, more than the %d ns of the kernels recorded one by one; re-capture with `nsys profile --cuda-graph-trace=node`",
			tableGraph, ErrWholeGraphs, n, graphNs, kernNs)
	}
	r.b.t.AddAnomaly(trace.AnomalyWholeGraphs,
		n, fmt.Sprintf("%s: %d ns of GPU time in graphs", tableGraph, graphNs))
	return nil
}

// addSat adds d to s, stopping at the limits of Time.
func addSat(s trace.Time, d int64) trace.Time { return trace.Time(trace.AddSat(int64(s), d)) }

// checkGraphLaunches counts graph launches that no GPU activity points
// back to: the graph's kernels were not recorded.
func (r *reader) checkGraphLaunches(dropped map[int64]int64) error {
	var ids []int64
	for id := range dropped {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	names, err := r.lookupStrings(ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if s := names[id]; strings.HasPrefix(s, "cudaGraphLaunch") || strings.HasPrefix(s, "cuGraphLaunch") {
			r.b.t.AddAnomaly(trace.AnomalyGraphsWithoutWork,
				dropped[id], fmt.Sprintf("%s: %s", tableRuntime, stripVersion(s)))
		}
	}
	return nil
}
