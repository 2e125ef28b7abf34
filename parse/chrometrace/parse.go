package chrometrace

import (
	"bufio"
	"cmp"
	"compress/flate"
	"compress/gzip"
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
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(2)
	var in io.Reader = br
	var zr *gzip.Reader
	if IsGzip(head) {
		var err error
		zr, err = gzip.NewReader(br)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, errors.New("truncated: the file ends inside the gzip header, before any data")
			}
			return nil, errors.New("corrupt gzip header (the file starts like gzip but is not valid gzip)")
		}
		defer zr.Close()
		ra := newReadAhead(zr)
		defer ra.stop()
		in = ra
	}
	return parse(in, opt, zr)
}

// parse reads the JSON from in; zr is the gzip reader under it, or nil.
func parse(in io.Reader, opt Options, zr *gzip.Reader) (*trace.Trace, error) {
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
	s := &splitter{r: in, blockSize: bs, pool: newBlocks(bs, 2*workers+2)}
	m := newMerger(workers)
	m.hint = opt.SizeHint

	var runErr error
	if workers == 1 {
		d := newDecoder(0)
		d.free = m.free
		runErr = s.each(func(b *batch) { m.add(d.decode(b)); b.blk.release() })
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
					b.blk.release()
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

	t := m.trace()
	if err := readMeta(t, s.meta); err != nil {
		return nil, err
	}
	if runErr != nil {
		var se *SyntaxError
		switch {
		case errors.As(runErr, &se) && se.Msg == errNotArray:
			return nil, fmt.Errorf("not a Chrome trace: traceEvents is not an array (byte %d)", se.Offset)
		case errors.As(runErr, &se):
			se.Gzip = zr != nil
			return nil, se
		case runErr == errEmpty && s.readErr == nil:
			return nil, errors.New("empty input")
		}
		end := s.base + int64(len(s.buf))
		// Input ended early: a short file or a cut gzip stream. Any other
		// read error (a corrupt deflate block, a bad checksum) is fatal.
		if s.readErr != nil && !errors.Is(s.readErr, io.ErrUnexpectedEOF) {
			return nil, readError(s.readErr, zr, end)
		}
		where := fmt.Sprintf("the file ends at byte %d", end)
		if zr != nil {
			where = fmt.Sprintf("the gzip stream ends early, after %d bytes of decompressed JSON", end)
		}
		if !s.sawArray {
			return nil, fmt.Errorf("truncated: %s, before the traceEvents array", where)
		}
		// Say roughly what was lost: the partial value after the last
		// complete event, and everything after it.
		if s.closed {
			where += fmt.Sprintf(", after the traceEvents array (which ends at byte %d): every event was read, only metadata after it was lost", s.lastGood)
		} else if s.nevents == 0 {
			where += ", before the first complete event"
		} else if s.lastGood < end {
			where += fmt.Sprintf("; the %d bytes after the last complete event (which ends at byte %d) were lost, with whatever followed", end-s.lastGood, s.lastGood)
		} else {
			where += ", right after a complete event; whatever followed was lost"
		}
		t.Truncated = &trace.Truncation{Offset: end, Reason: where, Events: s.nevents}
	} else if !s.sawArray {
		return nil, ErrNotTrace
	} else if s.readErr != nil && zr != nil {
		// The JSON is complete but the gzip stream is not right after it.
		end := s.base + int64(len(s.buf))
		switch {
		case errors.Is(s.readErr, io.ErrUnexpectedEOF), errors.Is(s.readErr, gzip.ErrHeader):
			// Every event was read. The stream was cut in its 8-byte
			// trailer (so the checksum could not be checked, as for any
			// plain file), or stray bytes follow it, which gzip -d also
			// ignores ("trailing garbage ignored"); the two look alike.
		default:
			return nil, readError(s.readErr, zr, end)
		}
	}
	if s.nevents > 0 && s.nevents == notEvents(t) {
		// A JSON list of records (a config, a results file) reads as the
		// Array Format: say it is not a trace rather than "no GPU activity".
		if s.nevents == 1 {
			return nil, errors.New("not a Chrome trace: its only element is not an event (an object with a ph)")
		}
		return nil, fmt.Errorf("not a Chrome trace: none of its %d elements is an event (an object with a ph)", s.nevents)
	}
	return t, nil
}

// notEvents counts the elements of traceEvents that are not events at all.
func notEvents(t *trace.Trace) int64 {
	var n int64
	for _, a := range t.Anomalies {
		if a.What == anomNoPhase || a.What == anomNotObject {
			n += a.Count
		}
	}
	return n
}

// errNotArray is the splitter's message for a traceEvents that is valid
// JSON but not an array: the input is not a trace, rather than bad JSON.
const errNotArray = "traceEvents is not an array"

// readError describes a read error other than a cut: for gzip, corrupt
// compressed data or a checksum that does not match.
func readError(err error, zr *gzip.Reader, end int64) error {
	if zr == nil {
		return fmt.Errorf("read error after byte %d: %w", end, err)
	}
	if errors.Is(err, gzip.ErrChecksum) {
		return errors.New("corrupt gzip data: the checksum does not match (the file is damaged)")
	}
	var ce flate.CorruptInputError
	if errors.As(err, &ce) {
		// ce counts bytes of deflate data; add the gzip header in front of
		// it (exact for the usual single-member file).
		at := int64(ce) + 10
		if zr.Header.Extra != nil {
			at += 2 + int64(len(zr.Header.Extra))
		}
		if zr.Header.Name != "" {
			at += int64(len(zr.Header.Name)) + 1
		}
		if zr.Header.Comment != "" {
			at += int64(len(zr.Header.Comment)) + 1
		}
		return fmt.Errorf("corrupt gzip data near byte %d of the file, after %d bytes of decompressed JSON", at, end)
	}
	return fmt.Errorf("corrupt gzip data after %d bytes of decompressed JSON: %w", end, err)
}

// merger assembles worker results in batch order, so that the model is the
// same whatever the number of workers.
type merger struct {
	names  *trace.Interner
	remap  [][]trace.NameID // per worker: local id -> global id
	hint   int64            // Options.SizeHint
	seen   int64            // bytes of the batches merged so far
	free   chan []trace.Activity
	t      *trace.Trace
	anoms  []trace.Anomaly
	cpuPID int64
	hasPID bool

	anomIdx map[string]int // index of t.Anomalies by What
}

// maxAnomalyKinds bounds the kinds of anomaly listed. Kinds that name a
// value (an unknown phase or category) are unbounded in junk input; the
// ones past the bound, in file order, are counted together.
const maxAnomalyKinds = 64

// otherAnomalies is the kind that counts them.
const otherAnomalies = "odd events of other kinds (too many kinds to list)"

func (m *merger) anomaly(a trace.Anomaly) {
	if m.anomIdx == nil {
		m.anomIdx = map[string]int{}
	}
	i, ok := m.anomIdx[a.What]
	if !ok && len(m.t.Anomalies) >= maxAnomalyKinds {
		a.Example = a.What + ": " + a.Example
		a.What = otherAnomalies
		i, ok = m.anomIdx[a.What]
	}
	if ok {
		m.t.Anomalies[i].Count += a.Count
		return
	}
	m.anomIdx[a.What] = len(m.t.Anomalies)
	m.t.Anomalies = append(m.t.Anomalies, a)
}

func newMerger(workers int) *merger {
	m := &merger{names: trace.NewInterner(), remap: make([][]trace.NameID, workers), t: &trace.Trace{},
		free: make(chan []trace.Activity, 2*workers+2)}
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
	m.t.Collectives = append(m.t.Collectives, r.colls...)
	// With a size hint, the slices are sized once from the density of
	// the batches so far: doubling would copy them at each growth and,
	// at the moment of growth, hold three times the model.
	m.seen += int64(r.bytes)
	m.t.Activities = append(grow(m.t.Activities, len(r.acts), m.seen, m.hint), r.acts...)
	m.t.Launches = append(grow(m.t.Launches, len(r.launches), m.seen, m.hint), r.launches...)
	m.t.Ranges = append(grow(m.t.Ranges, len(r.ranges), m.seen, m.hint), r.ranges...)
	select { // the batch's buffer goes back to the decoders
	case m.free <- r.acts[:0]:
	default:
	}
	r.acts = nil
	for _, a := range r.anomalies {
		m.anomaly(a)
	}
	if r.hasPID && !m.hasPID {
		m.cpuPID, m.hasPID = r.cpuPID, true
	}
}

func (m *merger) trace() *trace.Trace {
	t := m.t
	t.Names = m.names.Names()
	t.Procs = []trace.Proc{{PID: m.cpuPID, Rank: -1}}
	t.Sort()
	// Exact duplicates (a trace concatenated with itself, a profiler
	// flushing a buffer twice) would double-count time.
	if n := len(t.Activities); n > 1 {
		out := t.Activities[:1]
		var dups int64
		var example string
		for i := 1; i < n; i++ {
			if a := t.Activities[i]; a == out[len(out)-1] {
				if dups == 0 {
					example = fmt.Sprintf("%s at ts %d ns", t.Name(a.Name), a.Start)
				}
				dups++
				continue
			}
			out = append(out, t.Activities[i])
		}
		if dups > 0 {
			t.AddAnomaly("duplicate GPU activity dropped", dups, example)
			t.Activities = out
		}
	}
	t.SortAnomalies()
	t.Meta = trace.Meta{Format: trace.FormatChrome, Rank: -1, WorldSize: -1}
	return t
}

// readMeta decodes the top-level values kept by the splitter.
func readMeta(t *trace.Trace, meta map[string][]byte) error {
	get := func(k string) gjson.Result {
		if b, ok := meta[k]; ok {
			return gjson.ParseBytes(b)
		}
		return gjson.Result{}
	}
	if v := get("schemaVersion"); v.Exists() {
		t.Meta.SchemaVersion = v.String()
	}
	for _, k := range []string{"pytorch_version", "torch_version"} {
		if v := get(k); v.Exists() {
			t.Meta.ToolVersion = v.String()
		}
	}
	if v := get("baseTimeNanoseconds"); v.Exists() {
		if n, ok := num(v); ok {
			t.Meta.BaseTime = n
		}
	}
	if di := get("distributedInfo"); di.IsObject() {
		if n, ok := num(di.Get("rank")); ok {
			t.Meta.Rank = int(n)
		}
		if n, ok := num(di.Get("world_size")); ok {
			t.Meta.WorldSize = int(n)
		}
		t.Meta.Backend = di.Get("backend").String()
	}
	if len(t.Procs) == 1 {
		t.Procs[0].Rank = t.Meta.Rank
	}
	for _, dp := range get("deviceProperties").Array() {
		id, ok := num(dp.Get("id"))
		if !ok {
			continue
		}
		t.Meta.Devices = append(t.Meta.Devices, trace.Device{
			ID:          int32(id),
			Name:        dp.Get("name").String(),
			SMs:         int(dp.Get("numSms").Int()),
			MemoryBytes: dp.Get("totalGlobalMem").Int(),
		})
	}
	slices.SortFunc(t.Meta.Devices, func(a, b trace.Device) int { return cmp.Compare(a.ID, b.ID) })
	return nil
}
