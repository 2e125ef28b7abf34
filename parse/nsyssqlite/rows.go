package nsyssqlite

import (
	"database/sql/driver"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/traceq/traceq/trace"
)

// This file turns the column values of one row (rowVals: integers, NULL,
// and REAL, TEXT or BLOB values) into the builder's rows.
// nsys writes integers; a NULL in a column its schema declares NOT NULL,
// or a REAL (a fraction, Inf, 1e300), TEXT or BLOB anywhere, comes from a
// damaged or hand-edited file. Such a row is skipped and counted, as the
// Chrome parser skips odd events: coercing it (NULL as 0, 1.5 as 1) would
// put made-up times and names into the totals.

// Column lists, in the order the row methods read them.
var (
	activityCols = []string{"start", "end", "deviceId", "streamId", "correlationId", "globalPid"}
	memcpyCols   = append(slices.Clip(activityCols), "copyKind")
	apiCols      = []string{"start", "end", "globalTid", "correlationId", "nameId"}
	// configCols follow the name in a kernel row; each is optional (read
	// as NULL where an export lacks it).
	configCols = []string{"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "registersPerThread",
		"staticSharedMemory", "dynamicSharedMemory"}[:nConfigCols]
	nvtxCols = []string{"start", "end", "eventType", "globalTid", "text", "textId", "domainId"}
)

// nConfigCols is len(configCols).
const nConfigCols = 9

// Anomalies for skipped rows, one per kind of row.
const (
	badGPU  = "gpu activity with a NULL or non-integer value skipped"
	badAPI  = "cuda api call with a NULL or non-integer value skipped"
	badNVTX = "nvtx event with a NULL or non-integer value skipped"
)

// SQLite's fundamental datatypes, as sqlite3_column_type returns them.
const (
	colInt   = 1
	colFloat = 2
	colText  = 3
	colBlob  = 4
	colNull  = 5
)

// rowVals is one row as read: per column, its datatype (kinds) and, for
// an INTEGER, its value (ints; 0 otherwise); other holds the value of a
// column of another datatype (float64, string or []byte; any other type
// when a row comes from elsewhere), nil otherwise. Only rows with such a
// value are slow to read (package comment of sqlite_cgo.go).
type rowVals struct {
	ints  []int64
	kinds []uint8
	other []driver.Value
}

// value returns column i as a driver.Value.
func (r *rowVals) value(i int) driver.Value {
	switch r.kinds[i] {
	case colInt:
		return r.ints[i]
	case colNull:
		return nil
	}
	return r.other[i]
}

// from returns the row's columns from i on.
func (r *rowVals) from(i int) rowVals {
	return rowVals{ints: r.ints[i:], kinds: r.kinds[i:], other: r.other[i:]}
}

// rowDecoder reads one row's values; bad is the first column that did not
// hold what it must, or -1.
type rowDecoder struct {
	r   *rowVals
	bad int
}

func decoder(r *rowVals) rowDecoder { return rowDecoder{r: r, bad: -1} }

// req reads a NOT NULL INTEGER column.
func (d *rowDecoder) req(i int) int64 {
	if d.r.kinds[i] == colInt {
		return d.r.ints[i]
	}
	d.fail(i)
	return 0
}

// opt reads a nullable INTEGER column: NULL reads as 0, false.
func (d *rowDecoder) opt(i int) (int64, bool) {
	switch d.r.kinds[i] {
	case colInt:
		return d.r.ints[i], true
	case colNull:
		return 0, false
	}
	d.fail(i)
	return 0, false
}

// text reads a nullable TEXT column.
func (d *rowDecoder) text(i int) (string, bool) {
	switch d.r.kinds[i] {
	case colText, colBlob:
		switch x := d.r.other[i].(type) {
		case string:
			return x, true
		case []byte:
			return string(x), true
		}
	case colNull:
		return "", false
	}
	d.fail(i)
	return "", false
}

func (d *rowDecoder) fail(i int) {
	if d.bad < 0 {
		d.bad = i
	}
}

// skip counts a row the decoder found bad, with the first as the example.
func (b *builder) skip(what, table string, cols []string, row int64, d *rowDecoder) {
	if !b.counted(what) {
		b.t.AddAnomaly(what, 1, fmt.Sprintf("%s row %d: %s is %s", table, row, cols[d.bad], describeValue(d.r.value(d.bad))))
	}
}

// counted adds one to the anomaly what if it is already known, and says
// whether it was: the caller then adds it with an example, so that the
// example is formatted once, not per row.
func (b *builder) counted(what string) bool {
	for i := range b.t.Anomalies {
		if a := &b.t.Anomalies[i]; a.What == what {
			a.Count++
			return true
		}
	}
	return false
}

// describeValue says what a column held, briefly.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return "REAL " + strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		const max = 24
		if utf8.RuneCountInString(x) > max {
			n := 0
			for i := range x {
				if n == max {
					x = x[:i] + "…"
					break
				}
				n++
			}
		}
		return "TEXT " + strconv.Quote(x)
	case []byte:
		return fmt.Sprintf("BLOB of %d bytes", len(x))
	}
	return fmt.Sprintf("%T", v)
}

// decodeActivity reads the columns of activityCols.
func decodeActivity(d *rowDecoder) activityRow {
	r := activityRow{start: d.req(0), end: d.req(1), device: d.req(2), stream: d.req(3)}
	r.corr, _ = d.opt(4)
	r.globalPid, _ = d.opt(5)
	return r
}

// configRow is a kernel's launch configuration columns (configCols);
// present is false when they are all NULL (absent from the export).
type configRow struct {
	vals    [nConfigCols]int64
	present bool
}

// kernelRow reads activityCols, the kernel-name column and, when the row
// has them, configCols. A configuration with a NULL among values that are
// set, or a value that is not an integer, is ignored and counted; the
// kernel is kept.
func (b *builder) kernelRow(v *rowVals, row int64) {
	b.kernelRows++
	d := decoder(v)
	r := decodeActivity(&d)
	r.name = d.req(6)
	if d.bad >= 0 {
		b.kernelBad++
		b.skip(badGPU, tableKernel, b.kernelCols, row, &d)
		return
	}
	var cfg *configRow
	if len(v.kinds) >= 7+len(configCols) {
		var c configRow
		nulls := 0
		cfgVals := v.from(7)
		cd := decoder(&cfgVals)
		for i := range c.vals {
			x, ok := cd.opt(i)
			if !ok && cd.bad < 0 {
				nulls++
			}
			c.vals[i] = x
		}
		switch {
		case cd.bad >= 0 || nulls > 0 && nulls < len(c.vals):
			const what = "kernel launch configuration with a NULL or non-integer value ignored"
			if !b.counted(what) {
				b.t.AddAnomaly(what, 1, fmt.Sprintf("%s row %d", tableKernel, row))
			}
		case nulls == 0:
			c.present = true
			cfg = &c
		}
	}
	b.kernel(&r, cfg, row)
}

// memcpyRow reads memcpyCols.
func (b *builder) memcpyRow(v *rowVals, row int64) {
	d := decoder(v)
	r := decodeActivity(&d)
	kind := d.req(6)
	if d.bad >= 0 {
		b.skip(badGPU, tableMemcpy, memcpyCols, row, &d)
		return
	}
	b.memcpy(&r, kind, row)
}

// memsetRow reads activityCols.
func (b *builder) memsetRow(v *rowVals, row int64) {
	d := decoder(v)
	r := decodeActivity(&d)
	if d.bad >= 0 {
		b.skip(badGPU, tableMemset, activityCols, row, &d)
		return
	}
	b.memset(&r, row)
}

// apiRow reads apiCols of table (the runtime or the driver table).
func (b *builder) apiRow(table string, v *rowVals, row int64) {
	d := decoder(v)
	l := launchRow{start: d.req(0), end: d.req(1)}
	l.globalTid, _ = d.opt(2)
	l.corr, _ = d.opt(3)
	l.name = d.req(4)
	if d.bad >= 0 {
		b.skip(badAPI, table, apiCols, row, &d)
		return
	}
	b.launch(&l, table, row)
}

// nvtxRow reads nvtxCols.
func (b *builder) nvtxRow(v *rowVals, row int64) {
	d := decoder(v)
	n := nvtxRow{start: d.req(0), eventType: d.req(2)}
	n.end, n.hasEnd = d.opt(1)
	n.globalTid, _ = d.opt(3)
	n.text, n.hasText = d.text(4)
	n.textID, n.hasTextID = d.opt(5)
	n.domainID, _ = d.opt(6)
	if d.bad >= 0 {
		b.skip(badNVTX, tableNVTX, nvtxCols, row, &d)
		return
	}
	b.nvtx(&n, row)
}

// Durations. A GPU activity longer than trace.MaxActivityDur is a clock
// glitch and is dropped, with the Chrome parser's wording; so is an API
// call (a launch that took an hour did not happen). An NVTX range may
// last a whole run: only a span beyond int64 is dropped. A negative
// duration reads as zero length, as in the Chrome parser.
const (
	longGPU  = "GPU activity longer than 1 h skipped"
	longAPI  = "cuda api call longer than 1 h skipped"
	longNVTX = "nvtx range longer than int64 nanoseconds skipped"
)

// span returns end - start as an unsigned number, exact whenever
// end >= start.
func span(start, end int64) uint64 { return uint64(end) - uint64(start) }

// gpuDur returns the duration of a GPU activity row, false to skip it.
func (b *builder) gpuDur(table string, row, start, end int64) (int64, bool) {
	if end < start {
		const what = "gpu activity ends before it starts; duration set to 0"
		if !b.counted(what) {
			b.t.AddAnomaly(what, 1, fmt.Sprintf("%s: start %d > end %d", table, start, end))
		}
		return 0, true
	}
	d := span(start, end)
	if d > uint64(trace.MaxActivityDur) {
		if !b.counted(longGPU) {
			b.t.AddAnomaly(longGPU, 1, fmt.Sprintf("%s row %d: start %d, end %d", table, row, start, end))
		}
		return 0, false
	}
	if d == 0 {
		const what = "zero-length gpu activity"
		if !b.counted(what) {
			b.t.AddAnomaly(what, 1, fmt.Sprintf("%s: start %d", table, start))
		}
	}
	return int64(d), true
}
