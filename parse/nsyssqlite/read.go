package nsyssqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
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
	path    string
	db      *sql.DB
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
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
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
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols[c] = true
	}
	return cols, rows.Err()
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
			return "", fmt.Errorf("table %s: missing column %s (not an nsys export, or a schema traceq does not know)", table, c)
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

// rowCount estimates a table's rows cheaply: max(rowid) is a b-tree
// descent, count(*) a full scan. nsys tables are append-only, so the two
// agree.
func (r *reader) rowCount(table string) int64 {
	if !r.has(table) {
		return 0
	}
	var n sql.NullInt64
	r.db.QueryRow(`SELECT max(rowid) FROM "` + r.tables[table] + `"`).Scan(&n)
	return n.Int64
}

const progressEvery = 1 << 16

func (r *reader) progress(n int64) {
	r.done += n
	if r.opt.Progress != nil {
		r.opt.Progress(r.done, max(r.total, r.done))
	}
}

// scanRows runs query and calls fn for each row with the column values
// (int64, float64, string, []byte or nil). It works on the driver's rows
// directly: database/sql's Rows.Next and Scan add locking and conversion
// per row, measured at 16% of the time of a 5M-kernel read.
func (r *reader) scanRows(table, query string, ncol int, fn func(v []driver.Value) error) error {
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
			if err := fn(vals); err != nil {
				return fmt.Errorf("row %d: %w", row, err)
			}
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

// intCol reads an INTEGER column; NULL reads as 0, false.
func intCol(v any) (int64, bool, error) {
	switch x := v.(type) {
	case int64:
		return x, true, nil
	case nil:
		return 0, false, nil
	case float64: // REAL in an INTEGER column: a hand-edited file
		return int64(x), true, nil
	}
	return 0, false, fmt.Errorf("want an integer, got %T %v", v, v)
}

// ints reads integer columns of vals into dst, NULLs as 0.
func ints(vals []driver.Value, dst ...*int64) error {
	for i, d := range dst {
		x, _, err := intCol(vals[i])
		if err != nil {
			return fmt.Errorf("column %d: %w", i+1, err)
		}
		*d = x
	}
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
		return nil, errors.New("not an nsys export: no StringIds, CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table")
	}
	nk := r.rowCount(tableKernel)
	if nk == 0 {
		detail := "no " + tableKernel + " table"
		if r.has(tableKernel) {
			detail = tableKernel + " is empty"
		}
		if n := r.rowCount(tableRuntime); n > 0 {
			detail += fmt.Sprintf(", yet %d CUDA API calls were traced", n)
		}
		if n := r.rowCount(tableGraph); n > 0 {
			detail += fmt.Sprintf(", and %d whole CUDA graph executions (add `--cuda-graph-trace=node`)", n)
		}
		return nil, &noKernelsError{path: r.path, detail: detail}
	}
	if !r.has(tableStrings) {
		return nil, fmt.Errorf("not an nsys export: %s without a %s table", tableKernel, tableStrings)
	}
	nmem := r.rowCount(tableMemcpy) + r.rowCount(tableMemset)
	nnvtx := r.rowCount(tableNVTX)
	r.total = nk + nmem + r.rowCount(tableRuntime) + nnvtx
	// Sized from the row counts: growing these slices by append measured
	// 1.1 s of copying and page faults for 0.77M NVTX ranges. Capacity
	// never written costs address space only.
	r.b = newBuilder(int(nk+nmem), int(nnvtx))
	t := r.b.t
	t.Meta = trace.Meta{Format: trace.FormatNsys, Rank: -1, WorldSize: -1}

	prepare := func() error { r.b.prepareLaunches(); return nil }
	steps := []func() error{r.readMemcpyKinds, r.readKernels, r.readMemcpy, r.readMemset, prepare, r.readRuntime, r.readNVTX}
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
	return r.scanRows(tableMemcpyOp, `SELECT id, label FROM "`+r.tables[tableMemcpyOp]+`"`, 2, func(v []driver.Value) error {
		id, _, err := intCol(v[0])
		if err != nil {
			return err
		}
		if s, ok := v[1].(string); ok && s != "" {
			r.b.memcpyKind[id] = s
		}
		return nil
	})
}

var activityCols = []string{"start", "end", "deviceId", "streamId", "correlationId", "globalPid"}

func (r *reader) readKernels() error {
	cols, err := r.selectList(tableKernel, append(slices.Clip(activityCols), r.nameCol), nil)
	if err != nil {
		return err
	}
	var a activityRow
	return r.scanRows(tableKernel, "SELECT "+cols+` FROM "`+r.tables[tableKernel]+`"`, 7, func(v []driver.Value) error {
		if err := ints(v, &a.start, &a.end, &a.device, &a.stream, &a.corr, &a.globalPid, &a.name); err != nil {
			return err
		}
		r.b.kernel(&a)
		return nil
	})
}

func (r *reader) readMemcpy() error {
	if !r.has(tableMemcpy) {
		return nil
	}
	cols, err := r.selectList(tableMemcpy, append(slices.Clip(activityCols), "copyKind"), nil)
	if err != nil {
		return err
	}
	var a activityRow
	var kind int64
	return r.scanRows(tableMemcpy, "SELECT "+cols+` FROM "`+r.tables[tableMemcpy]+`"`, 7, func(v []driver.Value) error {
		if err := ints(v, &a.start, &a.end, &a.device, &a.stream, &a.corr, &a.globalPid, &kind); err != nil {
			return err
		}
		r.b.memcpy(&a, kind)
		return nil
	})
}

func (r *reader) readMemset() error {
	if !r.has(tableMemset) {
		return nil
	}
	cols, err := r.selectList(tableMemset, activityCols, nil)
	if err != nil {
		return err
	}
	var a activityRow
	return r.scanRows(tableMemset, "SELECT "+cols+` FROM "`+r.tables[tableMemset]+`"`, 6, func(v []driver.Value) error {
		if err := ints(v, &a.start, &a.end, &a.device, &a.stream, &a.corr, &a.globalPid); err != nil {
			return err
		}
		r.b.memset(&a)
		return nil
	})
}

func (r *reader) readRuntime() error {
	if !r.has(tableRuntime) {
		return nil
	}
	cols, err := r.selectList(tableRuntime, []string{"start", "end", "globalTid", "correlationId", "nameId"}, nil)
	if err != nil {
		return err
	}
	var l launchRow
	return r.scanRows(tableRuntime, "SELECT "+cols+` FROM "`+r.tables[tableRuntime]+`"`, 5, func(v []driver.Value) error {
		if err := ints(v, &l.start, &l.end, &l.globalTid, &l.corr, &l.name); err != nil {
			return err
		}
		r.b.launch(&l)
		return nil
	})
}

func (r *reader) readNVTX() error {
	if !r.has(tableNVTX) {
		return nil
	}
	cols, err := r.selectList(tableNVTX, []string{"start", "end", "eventType", "globalTid"}, []string{"text", "textId", "domainId"})
	if err != nil {
		return err
	}
	// Only ranges and domain names; marks and the rest are skipped in SQL.
	q := fmt.Sprintf(`SELECT %s FROM "%s" WHERE eventType IN (%d, %d, %d, %d, %d)`, cols, r.tables[tableNVTX],
		nvtxPushPop, nvtxStartEnd, nvtxtPushPop, nvtxtStartEnd, nvtxDomainCreate)
	var n nvtxRow
	return r.scanRows(tableNVTX, q, 7, func(v []driver.Value) error {
		var err error
		if n.start, _, err = intCol(v[0]); err != nil {
			return err
		}
		if n.end, n.hasEnd, err = intCol(v[1]); err != nil {
			return err
		}
		if n.eventType, _, err = intCol(v[2]); err != nil {
			return err
		}
		if n.globalTid, _, err = intCol(v[3]); err != nil {
			return err
		}
		switch s := v[4].(type) {
		case string:
			n.text, n.hasText = s, true
		case []byte:
			n.text, n.hasText = string(s), true
		default:
			n.text, n.hasText = "", false
		}
		if n.textID, n.hasTextID, err = intCol(v[5]); err != nil {
			return err
		}
		if n.domainID, _, err = intCol(v[6]); err != nil {
			return err
		}
		r.b.nvtx(&n)
		return nil
	})
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
		q := `SELECT id, value FROM "` + r.tables[tableStrings] + `" WHERE id IN (?` + strings.Repeat(", ?", n-1) + ")"
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
			out[id] = string(v)
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
	err = r.scanRows(tableProcesses, `SELECT globalPid, name FROM "`+r.tables[tableProcesses]+`"`, 2, func(v []driver.Value) error {
		g, ok, err := intCol(v[0])
		if err != nil || !ok {
			return err
		}
		if s, ok := v[1].(string); ok {
			if _, dup := out[g&pidMask]; !dup {
				out[g&pidMask] = s
			}
		}
		return nil
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
		err := r.scanRows(mt, `SELECT name, value FROM "`+r.tables[mt]+`" WHERE name IN ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')`, 2, func(v []driver.Value) error {
			name, _ := v[0].(string)
			val, _ := v[1].(string)
			switch name {
			case "EXPORT_PRODUCT_VERSION":
				m.ToolVersion = val
			case "EXPORT_SCHEMA_VERSION":
				m.SchemaVersion = val
			}
			return nil
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

// readDevices describes each device that ran GPU work. TARGET_INFO_GPU is
// absent in some exports (containerised 2026.2 captures): the devices are
// then listed with their ids only.
func (r *reader) readDevices() error {
	t := r.b.t
	ids := t.DeviceIDs()
	info := map[int32]trace.Device{}
	if r.has(tableGPU) {
		cols, err := r.selectList(tableGPU, []string{"id"}, []string{"name", "smCount", "totalMemory"})
		if err != nil {
			return err
		}
		order := ""
		if c, _ := r.columns(tableGPU); c["vmId"] {
			order = " ORDER BY vmId"
		}
		err = r.scanRows(tableGPU, "SELECT "+cols+` FROM "`+r.tables[tableGPU]+`"`+order, 4, func(v []driver.Value) error {
			id, _, err := intCol(v[0])
			if err != nil {
				return err
			}
			d := trace.Device{ID: clampInt32(id)}
			if _, dup := info[d.ID]; dup {
				return nil
			}
			d.Name, _ = v[1].(string)
			sm, _, _ := intCol(v[2])
			mem, _, _ := intCol(v[3])
			d.SMs, d.MemoryBytes = int(sm), mem
			info[d.ID] = d
			return nil
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
	var n, graphNs sql.NullInt64
	err := r.db.QueryRow(`SELECT count(*), sum(max("end" - start, 0)) FROM "`+r.tables[tableGraph]+`"`).Scan(&n, &graphNs)
	if err != nil {
		return fmt.Errorf("table %s: %w", tableGraph, dbError(err))
	}
	if n.Int64 == 0 {
		return nil
	}
	var kernNs int64
	for i := range r.b.kernels {
		kernNs += r.b.kernels[i].Dur
	}
	if graphNs.Int64 >= kernNs {
		return fmt.Errorf("table %s: %w: %d graph executions take %d ns of GPU time, more than the %d ns of the kernels recorded one by one; re-capture with `nsys profile --cuda-graph-trace=node`",
			tableGraph, ErrWholeGraphs, n.Int64, graphNs.Int64, kernNs)
	}
	r.b.t.AddAnomaly("cuda graphs traced as whole graphs, their kernels are missing (capture with --cuda-graph-trace=node)",
		n.Int64, fmt.Sprintf("%s: %d ns of GPU time in graphs", tableGraph, graphNs.Int64))
	return nil
}

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
			r.b.t.AddAnomaly("cuda graph launches without recorded gpu work (capture with --cuda-graph-trace=node)",
				dropped[id], fmt.Sprintf("%s: %s", tableRuntime, stripVersion(s)))
		}
	}
	return nil
}
