package chrometrace

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/traceq/traceq/trace"
)

// Options tunes Parse. The zero value is ready to use.
type Options struct {
	// Workers is the number of goroutines decoding events; 0 means
	// GOMAXPROCS. 1 decodes on the reading goroutine (the reference order
	// the parallel path must reproduce).
	Workers int
	// BlockSize is the size of the blocks events are handed out in; 0 means
	// 4 MiB. Tests make it tiny to force many blocks.
	BlockSize int
	// SizeHint is the size of the decompressed JSON when known (0 when
	// not). It is only used to size the model's slices once, from the
	// density of the first batches, instead of growing them by doubling.
	SizeHint int64
}

// ErrNotTrace is returned for JSON that has no traceEvents array.
var ErrNotTrace = errors.New("not a Chrome trace: no traceEvents array")

// SyntaxError reports malformed JSON at a byte offset of the decompressed
// stream.
type SyntaxError struct {
	Offset int64
	Msg    string
	// Gzip says Offset counts decompressed bytes, not bytes of the file.
	Gzip bool
}

func (e *SyntaxError) Error() string {
	if e.Gzip {
		return fmt.Sprintf("invalid JSON at byte %d of the decompressed data: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// IsGzip reports whether the header starts a gzip stream.
func IsGzip(header []byte) bool { return len(header) >= 2 && header[0] == 0x1f && header[1] == 0x8b }

// Parse reads a Chrome trace (plain or gzip-compressed JSON, detected by
// its first bytes) from r.
//
// A trace that ends early (a killed profiler, a half-copied .gz) is not an
// error when whole events were read: Parse returns them with t.Truncated
// set. Malformed JSON, a corrupt gzip stream and JSON that is not a trace
// are errors.
func Parse(r io.Reader, opt Options) (*trace.Trace, error) {
	in, err := openInput(r)
	if err != nil {
		return nil, err
	}
	defer in.close()
	return parse(in, opt)
}

// parse reads the JSON of in.
func parse(in *input, opt Options) (*trace.Trace, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	bs := opt.BlockSize
	if bs <= 0 {
		bs = defaultBlockSize
		// A small trace gets smaller blocks: allocating 4 MiB blocks
		// cost more than parsing a trace of a few kB, and several
		// blocks let all workers share it. The model is the same for
		// any block size.
		if h := opt.SizeHint; h > 0 && h < int64(bs)*int64(workers) {
			bs = int(max(64<<10, min(int64(bs), h/int64(workers)+1)))
		}
	}
	s := &splitter{r: in.r, blockSize: bs, pool: newBlocks(bs, 2*workers+2)}
	m := newMerger(workers)
	m.hint = opt.SizeHint

	var runErr error
	if workers == 1 {
		d := newDecoder(0)
		d.free = m.free
		runErr = s.each(func(b *batch) { m.add(d.decode(b)); b.release() })
	} else {
		batches := make(chan *batch, workers)
		results := make(chan *result, workers*2)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := newDecoder(w)
				d.free = m.free
				for b := range batches {
					r := d.decode(b)
					b.release()
					results <- r
				}
			}()
		}
		done := make(chan struct{})
		go func() {
			pending := map[int]*result{}
			next := 0
			for r := range results {
				pending[r.seq] = r
				for p, ok := pending[next]; ok; p, ok = pending[next] {
					delete(pending, next)
					m.add(p)
					next++
				}
			}
			close(done)
		}()
		runErr = s.each(func(b *batch) { batches <- b })
		close(batches)
		wg.Wait()
		close(results)
		<-done
	}

	trunc, err := in.finish(s, runErr)
	if err != nil {
		return nil, err
	}
	t := m.trace()
	t.Meta = readMeta(s.meta)
	t.Procs[0].Rank = t.Meta.Rank
	t.Truncated = trunc
	if n := notEvents(t.Anomalies); s.nevents > 0 && n == s.nevents {
		return nil, notEventsError(n)
	}
	return t, nil
}

// notEvents counts the elements of traceEvents that are not events at all.
func notEvents(anoms []trace.Anomaly) int64 {
	var n int64
	for _, a := range anoms {
		if a.What == anomNoPhase || a.What == anomNotObject {
			n += a.Count
		}
	}
	return n
}

// merger assembles worker results in batch order, so that the model is the
// same whatever the number of workers.
type merger struct {
	names *trace.Interner
	remap [][]trace.NameID // per worker: local id -> global id
	hint  int64            // Options.SizeHint
	seen  int64            // bytes of the batches merged so far
	free  chan *result
	t     *trace.Trace
	anoms anomalies
	// The records, kept free of exact duplicates.
	acts     distinct[trace.Activity]
	launches distinct[trace.Launch]
	ranges   distinct[trace.Range]
	colls    distinct[trace.Collective]
	cpuPID   int64
	hasPID   bool
}

// maxAnomalyKinds bounds the kinds of anomaly listed. Kinds that name a
// value (an unknown phase or category) are unbounded in junk input; the
// ones past the bound, in file order, are counted together.
const maxAnomalyKinds = 64

// otherAnomalies is the kind that counts them.
const otherAnomalies = "odd events of other kinds (too many kinds to list)"

// anomalies adds up the decoders' counts, in file order.
type anomalies struct {
	list []trace.Anomaly
	idx  map[string]int // index of list by What
}

func (as *anomalies) add(a trace.Anomaly) {
	if as.idx == nil {
		as.idx = map[string]int{}
	}
	i, ok := as.idx[a.What]
	if !ok && len(as.list) >= maxAnomalyKinds {
		a.Example = a.What + ": " + a.Example
		a.What = otherAnomalies
		i, ok = as.idx[a.What]
	}
	if ok {
		as.list[i].Count += a.Count
		return
	}
	as.idx[a.What] = len(as.list)
	as.list = append(as.list, a)
}

func newMerger(workers int) *merger {
	m := &merger{names: trace.NewInterner(), remap: make([][]trace.NameID, workers), t: &trace.Trace{},
		free: make(chan *result, 2*workers+2)}
	m.acts.cmp = func(a, b trace.Activity) int { return trace.CompareActivities(&a, &b) }
	m.launches.cmp = func(a, b trace.Launch) int { return trace.CompareLaunches(&a, &b) }
	m.ranges.cmp = func(a, b trace.Range) int { return trace.CompareRanges(&a, &b) }
	m.colls.cmp = func(a, b trace.Collective) int { return trace.CompareCollectives(&a, &b) }
	for i := range m.remap {
		m.remap[i] = []trace.NameID{0} // every interner starts with ""
	}
	return m
}

func (m *merger) add(r *result) {
	rm := m.remap[r.worker]
	for _, s := range r.newNames {
		rm = append(rm, m.names.ID(s))
	}
	m.remap[r.worker] = rm
	for i := range r.acts {
		r.acts[i].Name = rm[r.acts[i].Name]
	}
	for i := range r.launches {
		r.launches[i].Name = rm[r.launches[i].Name]
	}
	for i := range r.ranges {
		r.ranges[i].Name = rm[r.ranges[i].Name]
		r.ranges[i].Domain = rm[r.ranges[i].Domain]
	}
	for i := range r.colls {
		c := &r.colls[i]
		c.Op, c.DType, c.Group, c.GroupRanks = rm[c.Op], rm[c.DType], rm[c.Group], rm[c.GroupRanks]
	}
	// With a size hint, the slices are sized once from the density of
	// the batches so far: doubling would copy them at each growth and,
	// at the moment of growth, hold three times the model.
	m.seen += int64(r.bytes)
	t := m.t
	t.Activities = m.acts.add(t.Activities, r.acts, m.seen, m.hint)
	t.Launches = m.launches.add(t.Launches, r.launches, m.seen, m.hint)
	t.Ranges = m.ranges.add(t.Ranges, r.ranges, m.seen, m.hint)
	t.Collectives = m.colls.add(t.Collectives, r.colls, m.seen, m.hint)
	for _, a := range r.anomalies {
		m.anoms.add(a)
	}
	if r.hasPID && !m.hasPID {
		m.cpuPID, m.hasPID = r.cpuPID, true
	}
	r.recycle(m.free)
}

func (m *merger) trace() *trace.Trace {
	t := m.t
	t.Names = m.names.Names()
	t.Procs = []trace.Proc{{PID: m.cpuPID, Rank: -1}}
	// Sorting drops the duplicates left: exact copies of an event (a
	// trace concatenated with itself, a profiler flushing a buffer twice)
	// would count its time twice.
	t.Activities = m.acts.compact(t.Activities)
	t.Launches = m.launches.compact(t.Launches)
	t.Ranges = m.ranges.compact(t.Ranges)
	t.Collectives = m.colls.compact(t.Collectives)
	t.Anomalies = m.anoms.list
	if a := m.acts; a.n > 0 {
		t.AddAnomaly("duplicate GPU activity dropped", a.n, fmt.Sprintf("%s at ts %d ns", t.Name(a.min.Name), a.min.Start))
	}
	if l := m.launches; l.n > 0 {
		t.AddAnomaly("duplicate launch call dropped", l.n, fmt.Sprintf("%s at ts %d ns", t.Name(l.min.Name), l.min.Start))
	}
	if r := m.ranges; r.n > 0 {
		t.AddAnomaly("duplicate range dropped", r.n, fmt.Sprintf("%s at ts %d ns", t.Name(r.min.Name), r.min.Start))
	}
	if c := m.colls; c.n > 0 {
		t.AddAnomaly("duplicate collective dropped", c.n, fmt.Sprintf("%s at ts %d ns", t.Name(c.min.Op), c.min.Start))
	}
	t.SortAnomalies()
	return t
}

// readMeta decodes the top-level values kept by the splitter.
func readMeta(meta map[string][]byte) trace.Meta {
	m := trace.Meta{Format: trace.FormatChrome, Rank: -1, WorldSize: -1}
	get := func(k string) gjson.Result {
		if b, ok := meta[k]; ok {
			return gjson.ParseBytes(b)
		}
		return gjson.Result{}
	}
	if v := get("schemaVersion"); v.Exists() {
		m.SchemaVersion = v.String()
	}
	for _, k := range []string{"pytorch_version", "torch_version"} {
		if v := get(k); v.Exists() {
			m.ToolVersion = v.String()
		}
	}
	if v := get("baseTimeNanoseconds"); v.Exists() {
		if n, ok := num(v); ok {
			m.BaseTime = n
		}
	}
	if di := get("distributedInfo"); di.IsObject() {
		if n, ok := num(di.Get("rank")); ok {
			m.Rank = int(n)
		}
		if n, ok := num(di.Get("world_size")); ok {
			m.WorldSize = int(n)
		}
		m.Backend = di.Get("backend").String()
	}
	for _, dp := range get("deviceProperties").Array() {
		id, ok := num(dp.Get("id"))
		if !ok {
			continue
		}
		m.Devices = append(m.Devices, trace.Device{
			ID:          int32(id),
			Name:        dp.Get("name").String(),
			SMs:         int(dp.Get("numSms").Int()),
			MemoryBytes: dp.Get("totalGlobalMem").Int(),
		})
	}
	slices.SortFunc(m.Devices, func(a, b trace.Device) int { return cmp.Compare(a.ID, b.ID) })
	return m
}
