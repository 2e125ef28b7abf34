package chrometrace

import (
	"bufio"
	"cmp"
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
}

// ErrNotTrace is returned for JSON that has no traceEvents array.
var ErrNotTrace = errors.New("not a Chrome trace: no traceEvents array")

// SyntaxError reports malformed JSON at a byte offset of the decompressed
// stream.
type SyntaxError struct {
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
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
	gz := IsGzip(head)
	if gz {
		zr, err := gzip.NewReader(br)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, errors.New("gzip stream truncated inside its header")
			}
			return nil, fmt.Errorf("corrupt gzip header: %w", err)
		}
		defer zr.Close()
		in = zr
	}
	return parse(in, opt, gz)
}

func parse(in io.Reader, opt Options, gz bool) (*trace.Trace, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	bs := opt.BlockSize
	if bs <= 0 {
		bs = defaultBlockSize
	}
	s := &splitter{r: in, blockSize: bs}
	m := newMerger(workers)

	var runErr error
	if workers == 1 {
		d := newDecoder(0)
		s.emit = func(b *batch) { m.add(d.decode(b)) }
		runErr = s.run()
	} else {
		batches := make(chan *batch, workers)
		results := make(chan *result, workers*2)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := newDecoder(w)
				for b := range batches {
					results <- d.decode(b)
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
		s.emit = func(b *batch) { batches <- b }
		runErr = s.run()
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
		var se *syntaxError
		switch {
		case errors.As(runErr, &se):
			return nil, &SyntaxError{Offset: se.off, Msg: se.msg}
		case runErr == errEmpty && s.readErr == nil:
			return nil, errors.New("empty input")
		}
		// Input ended early: a short file or a cut gzip stream. Any other
		// read error (a corrupt deflate block, a bad checksum) is fatal.
		if s.readErr != nil && !errors.Is(s.readErr, io.ErrUnexpectedEOF) {
			what := "read error"
			if gz {
				what = "corrupt gzip stream"
			}
			return nil, fmt.Errorf("%s after byte %d of decompressed data: %w", what, s.base+int64(len(s.buf)), s.readErr)
		}
		if !s.sawArray {
			return nil, fmt.Errorf("input ends at byte %d before any traceEvents", s.base+int64(len(s.buf)))
		}
		reason := "JSON ends before the document closes"
		if s.readErr != nil {
			reason = "gzip stream ends early"
		}
		t.Truncated = &trace.Truncation{
			Offset: s.base + int64(len(s.buf)),
			Reason: reason,
			Events: s.nevents,
		}
		if s.lastGood < t.Truncated.Offset {
			t.Truncated.Reason += fmt.Sprintf("; the %d bytes after the last complete event (byte %d) were lost", t.Truncated.Offset-s.lastGood, s.lastGood)
		}
	} else if !s.sawArray {
		return nil, ErrNotTrace
	}
	return t, nil
}

// merger assembles worker results in batch order, so that the model is the
// same whatever the number of workers.
type merger struct {
	names  *trace.Interner
	remap  [][]trace.NameID // per worker: local id -> global id
	t      *trace.Trace
	anoms  []trace.Anomaly
	cpuPID int64
	hasPID bool
}

func newMerger(workers int) *merger {
	m := &merger{names: trace.NewInterner(), remap: make([][]trace.NameID, workers), t: &trace.Trace{}}
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
	m.t.Activities = append(m.t.Activities, r.acts...)
	m.t.Launches = append(m.t.Launches, r.launches...)
	m.t.Ranges = append(m.t.Ranges, r.ranges...)
	for _, a := range r.anomalies {
		m.t.AddAnomaly(a.What, a.Count, a.Example)
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
		for i := 1; i < n; i++ {
			if t.Activities[i] == out[len(out)-1] {
				dups++
				continue
			}
			out = append(out, t.Activities[i])
		}
		if dups > 0 {
			t.AddAnomaly("duplicate GPU activity dropped", dups, t.Name(out[0].Name))
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
