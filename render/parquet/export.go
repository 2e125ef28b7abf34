package parquet

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// RowGroupRows bounds a row group. A million activity rows compress to
// about 5 MB: large enough for scans to be sequential and statistics to
// prune, small enough that a writer holds little and an engine splits a
// big file across cores (DuckDB reads row groups in parallel).
const RowGroupRows = 1 << 20

// MaxDictBytes bounds the distinct kernel names of an activities row
// group: the writer holds its dictionary twice (its table's keys and its
// values) and its encoded page until the row group ends, so a row group
// whose names would pass it ends early. Real traces have a few hundred
// kernel names, 64 KB in all at most among those of ../shared/traces,
// and never reach it; 100k distinct 2 KB names
// (issue 19) made a 205 MB dictionary, held twice beside the trace's own
// names (1.25 GB peak); bounded at 16 MiB, the writer still held ~40 MB
// of them (TestNamesHeldOnce), at 4 MiB ~10 MB.
const MaxDictBytes = 4 << 20

// maxDictBytes is MaxDictBytes; tests lower it.
var maxDictBytes = MaxDictBytes

// NullRank is the partition value of a rank the trace does not give:
// Hive's spelling of null, which Spark and DuckDB read as NULL.
const NullRank = "__HIVE_DEFAULT_PARTITION__"

// Options configures an Exporter.
type Options struct {
	Version string // inputs.traceq_version
}

// CreateFunc starts the part file rel (slash-separated, relative to the
// dataset's root). Closing what it returns completes the file.
type CreateFunc func(rel string) (io.WriteCloser, error)

// Exporter writes inputs into one dataset, one input at a time.
type Exporter struct {
	create CreateFunc
	opt    Options
	next   map[string]int // per run and rank partition: the next part number
}

var runName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$`)

// CheckRun reports whether run can name a run partition: letters, digits
// and . _ + - (no escaping needed in a path or by a reader), not starting
// with . or _ (names Spark and Hive skip as hidden), and not null in any
// letter case (DuckDB's hive partitioning reads run=null as SQL NULL).
func CheckRun(run string) error {
	if !runName.MatchString(run) {
		return fmt.Errorf("run name %q: use letters, digits and . _ + - (not first), at most 200", run)
	}
	if strings.EqualFold(run, "null") {
		return fmt.Errorf("run name %q: readers take a partition named null for a missing value (SQL NULL): choose another", run)
	}
	return nil
}

// New returns an Exporter writing through create.
func New(create CreateFunc, opt Options) *Exporter {
	return &Exporter{create: create, opt: opt, next: map[string]int{}}
}

// codec is shared by every writer: it pools its encoders. The fastest
// level: on the 1 GB benchmark trace it wrote 7.8 MB where the default
// level wrote 8.6 MB, in no more time (pages are small; the dictionary
// and delta encodings have done most of the work).
var codec = &zstd.Codec{Level: zstd.SpeedFastest}

// table streams the rows of one part file.
type table[T any] struct {
	rel string
	f   io.WriteCloser
	w   *pq.GenericWriter[T]
	buf []T
}

const batch = 1024 // rows handed to the parquet writer at once

func openTable[T any](x *Exporter, dir string, part int) (*table[T], error) {
	rel := fmt.Sprintf("%s/part-%d.parquet", dir, part)
	f, err := x.create(rel)
	if err != nil {
		return nil, err
	}
	w := pq.NewGenericWriter[T](f, &pq.WriterConfig{CreatedBy: "traceq version " + x.opt.Version},
		pq.Compression(codec), pq.MaxRowsPerRowGroup(RowGroupRows),
		// Min and max of long strings (C++ kernel signatures, paths)
		// prune nothing and cost a quarter of the writing: comparing
		// every page's dictionary.
		pq.SkipPageBounds("name"), pq.SkipPageBounds("step_marker"), pq.SkipPageBounds("marker"), pq.SkipPageBounds("input"),
		pq.SkipPageStatistics("name"), pq.SkipPageStatistics("step_marker"), pq.SkipPageStatistics("marker"), pq.SkipPageStatistics("input"))
	return &table[T]{rel: rel, f: f, w: w, buf: make([]T, 0, batch)}, nil
}

func (t *table[T]) add(row T) error {
	t.buf = append(t.buf, row)
	if len(t.buf) == cap(t.buf) {
		return t.flush()
	}
	return nil
}

func (t *table[T]) flush() error {
	_, err := t.w.Write(t.buf)
	clear(t.buf) // drop the strings and pointers the rows held
	t.buf = t.buf[:0]
	return t.wrap(err)
}

// endRowGroup writes the rows so far as a row group of their own.
func (t *table[T]) endRowGroup() error {
	if err := t.flush(); err != nil {
		return err
	}
	return t.wrap(t.w.Flush())
}

// close completes the file. After an error the caller aborts the whole
// dataset, which removes it.
func (t *table[T]) close() error {
	err := t.flush()
	if err == nil {
		err = t.wrap(t.w.Close())
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (t *table[T]) wrap(err error) error {
	var pe *os.PathError
	if err == nil || errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s: %w", t.rel, err)
}

// rankPart is what one input writes into one rank partition.
type rankPart struct {
	run     string
	label   string // the rank, or NullRank
	part    int    // N of part-N.parquet
	acts    *table[Activity]
	nacts   int64
	names   groupNames
	devices []int32
}

func (p *rankPart) dir(table string) string {
	return table + "/run=" + p.run + "/rank=" + p.label
}

// groupNames tracks the distinct names of the current activities row
// group and their bytes, for MaxDictBytes.
type groupNames struct {
	group uint32   // the current row group, from 1
	in    []uint32 // per trace.NameID: the last row group that holds it
	bytes int      // of the names of the current row group
	rows  int      // of the current row group
}

// add counts a row of name id (n bytes long) and reports whether the row
// group must end before it: its names would pass MaxDictBytes.
func (g *groupNames) add(id trace.NameID, n int, names int) (end bool) {
	if g.in == nil {
		g.in, g.group = make([]uint32, names), 1
	}
	if g.in[id] != g.group {
		if g.bytes > 0 && g.bytes+n > maxDictBytes {
			g.next()
			end = true
		}
		g.in[id] = g.group
		g.bytes += n
	}
	if g.rows++; g.rows == RowGroupRows {
		g.next() // the writer ends the row group after this row
	}
	return end
}

func (g *groupNames) next() { g.group, g.bytes, g.rows = g.group+1, 0, 0 }

// Add writes the rows of the one input of tbl into run (see CheckRun):
// its path as the user gave it, its trace, its steps and categories. Rows
// go out as they are made; what Add holds besides the table is the
// input's step table and one buffered row group per rank.
func (x *Exporter) Add(run string, tbl *window.Table) error {
	if err := CheckRun(run); err != nil {
		return err
	}
	in := &tbl.Inputs[0]
	path, t := in.Path, in.Trace
	parts, partOf, pids := x.partitions(run, tbl)
	for _, p := range parts {
		var err error
		if p.acts, err = openTable[Activity](x, p.dir("activities"), p.part); err != nil {
			return err
		}
	}
	if err := x.activities(tbl, parts, partOf, pids); err != nil {
		return err
	}
	if err := x.launches(path, t, parts, partOf, pids); err != nil {
		return err
	}
	// The step figures are the steps command's, from the same table.
	if err := x.steps(path, analyze.Breakdown(tbl, analyze.Options{}).Steps, parts, partOf); err != nil {
		return err
	}
	return x.inputs(path, in.Host, t, parts)
}

// partitions maps each rank of the table (each process that has
// activities or launches) to its rank partition, the rank breakdown
// reports, and gives each process's pid.
func (x *Exporter) partitions(run string, tbl *window.Table) (parts, partOf []*rankPart, pids []int64) {
	partOf = make([]*rankPart, max(len(tbl.Inputs[0].Trace.Procs), 1))
	pids = make([]int64, len(partOf))
	byLabel := map[string]*rankPart{}
	for _, r := range tbl.Ranks {
		p := r.Proc
		pids[p] = r.PID
		label := NullRank
		if r.Number != nil {
			label = strconv.Itoa(*r.Number)
		}
		rp := byLabel[label]
		if rp == nil {
			rp = &rankPart{run: run, label: label}
			byLabel[label] = rp
			parts = append(parts, rp)
		}
		partOf[p] = rp
	}
	slices.SortFunc(parts, func(a, b *rankPart) int { return compareRanks(a.label, b.label) })
	for _, rp := range parts {
		key := run + "/" + rp.label
		rp.part = x.next[key]
		x.next[key]++
	}
	return parts, partOf, pids
}

// compareRanks orders rank labels numerically, the null rank last.
func compareRanks(a, b string) int {
	if (a == NullRank) != (b == NullRank) {
		if a == NullRank {
			return 1
		}
		return -1
	}
	ai, _ := strconv.Atoi(a)
	bi, _ := strconv.Atoi(b)
	return cmp.Compare(ai, bi)
}
