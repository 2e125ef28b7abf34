package chrometrace

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

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
	// Reopen, when set, returns the input again from its start. Parse
	// then reads it in speculative chunks (chunk.go), and reads it again
	// through the event splitter when a guess fails; without it, Parse
	// does so on an io.Seeker (seeking back to where it started), and
	// reads anything else through the splitter only.
	Reopen func() (io.Reader, error)
	// NoChunks makes Parse read through the event splitter only (tests
	// compare the two ways).
	NoChunks bool
	// Index, when set, is called with the input's chunk index (index.go)
	// when Parse read it in speculative chunks that all held and the
	// input was whole; otherwise (the chunks gave up, a cut file, no
	// Reopen) it is not called.
	Index func(*Index)
	// Data, when not nil, is the whole input, plain JSON in memory (a
	// mapped file), which Parse reads in place instead of reading r: no
	// byte is copied out of it, and nothing Parse returns refers to it,
	// so that it may be unmapped once Parse returns. A fault reading it
	// (the mapped file was truncated meanwhile) is ErrChanged, not a
	// crash.
	Data []byte
	// Done, when set with Data, is called with each stretch of Data that
	// Parse has finished with, Data[from:to], from any goroutine, while
	// Parse runs; the stretches cover what was read (all of Data unless
	// Parse fails), and may overlap. Parse may read a stretch again after
	// (a mapped file's pages dropped by Done are read from the file
	// again).
	Done func(from, to int64)
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
	if opt.Data != nil {
		return parseData(opt)
	}
	reopen := opt.Reopen
	if sk, ok := r.(io.Seeker); ok && reopen == nil {
		if at, err := sk.Seek(0, io.SeekCurrent); err == nil {
			reopen = func() (io.Reader, error) {
				_, err := sk.Seek(at, io.SeekStart)
				return r, err
			}
		}
	}
	in, err := openInput(r)
	if err != nil {
		return nil, err
	}
	if reopen != nil && !opt.NoChunks {
		t, err := parse(in, opt, true)
		in.close()
		if err != errSpeculation {
			return t, err
		}
		respeculated.Add(1)
		if r, err = reopen(); err != nil {
			return nil, err
		}
		if in, err = openInput(r); err != nil {
			return nil, err
		}
	}
	defer in.close()
	return parse(in, opt, false)
}

// parseData is Parse of opt.Data: in speculative chunks, then through the
// event splitter when they give up.
func parseData(opt Options) (*trace.Trace, error) {
	in := &input{}
	if !opt.NoChunks {
		t, err := parse(in, opt, true)
		if err != errSpeculation {
			return t, err
		}
		respeculated.Add(1)
	}
	return parse(in, opt, false)
}

// chunkBlockSize is the default size of a speculative chunk.
const chunkBlockSize = 2 << 20

// respeculated counts the inputs read again after chunks gave up (tests
// check that the fast path was taken).
var respeculated atomic.Int64

// parse reads the JSON of in, in speculative chunks or through the
// event splitter. It returns errSpeculation when chunks gave up.
func parse(in *input, opt Options, chunks bool) (*trace.Trace, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	bs := opt.BlockSize
	if bs <= 0 {
		bs = defaultBlockSize
		if chunks {
			// Chunks are held until merged in order: smaller ones keep
			// fewer bytes out at once.
			bs = chunkBlockSize
		}
		// A small trace gets smaller blocks: allocating 4 MiB blocks
		// cost more than parsing a trace of a few kB, and several
		// blocks let all workers share it. The model is the same for
		// any block size.
		if h := opt.SizeHint; h > 0 && h < int64(bs)*int64(workers) {
			bs = int(max(64<<10, min(int64(bs), h/int64(workers)+1)))
		}
	}
	s := &splitter{r: in.r, blockSize: bs, pool: newBlocks(bs, 3*workers+2), meta: map[string][]byte{}}
	// g catches a fault on the data, read in place, in the goroutines
	// that read it: the splitter's, the decoders' and the merger's.
	var g *guard
	if opt.Data != nil {
		s.r, s.pool, s.data, s.done = nil, nil, opt.Data, opt.Done
		g = newGuard(opt.Data)
		// The window the splitter holds last is let go of once the
		// decoders and the merger are done with theirs.
		defer func() { s.blk.release() }()
	}
	if in.ra != nil {
		// The decompressor fills the splitter's blocks (readAhead.take).
		s.pool = newBlocks(bs+aheadHead, 3*workers+2+aheadBlocks)
		in.ra.attach(s.pool, aheadHead)
		s.ra = in.ra
	}
	m := newMerger(workers)
	m.hint = opt.SizeHint

	var sp *speculation
	var gaveUp atomic.Bool
	var idx *Index
	if chunks && opt.Index != nil {
		idx = &Index{}
		s.top = func(key string, raw []byte, _ int64) {
			idx.Tops = append(idx.Tops, TopLevel{Key: key, Raw: slices.Clone(raw)})
		}
	}
	newDec := func(w int) *decoder {
		d := newDecoder(w)
		d.free = m.free
		if idx != nil {
			d.sum = &chunkSum{}
		}
		return d
	}
	var next func() (*batch, error) = s.next
	merge := m.add
	if chunks {
		sp = &speculation{}
		// A chunk's block is held until its result is merged in order
		// (the tail may need it): at most this many are out at once,
		// so that memory stays a few blocks however the goroutines are
		// scheduled.
		tokens := make(chan struct{}, 2*workers+2)
		next = func() (*batch, error) {
			if s.state != inEvents {
				// The document up to the events array, as the
				// splitter reads it; then chunks.
				for s.err == nil && s.state != inEvents && s.state != inDone {
					switch s.state {
					case inStart:
						s.err = s.start()
					case inObject:
						s.err = s.member()
					case inEnd:
						s.err = s.end()
					}
				}
				if s.err != nil || s.state != inEvents {
					gaveUp.Store(true)
					return nil, errSpeculation
				}
				sp.next = s.base + int64(s.pos)
			}
			if gaveUp.Load() {
				return nil, errSpeculation
			}
			tokens <- struct{}{}
			b := s.nextChunk()
			if b == nil {
				<-tokens
			}
			return b, nil
		}
		merge = func(r *result) {
			defer func() { <-tokens }()
			if sp.check(r) {
				if idx != nil {
					idx.add(r.sum)
				}
				m.add(r)
				return
			}
			if sp.failed {
				gaveUp.Store(true)
			}
			r.recycle(m.free)
		}
	}
	each := func(fn func(*batch)) error {
		for {
			b, err := next()
			if b == nil {
				return err
			}
			fn(b)
		}
	}

	var runErr error
	if workers == 1 {
		d := newDec(0)
		runErr = g.run(func() error {
			return each(func(b *batch) { r := d.decode(b); b.release(); merge(r) })
		})
	} else {
		batches := make(chan *batch, workers)
		results := make(chan *result, workers*2)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer g.onFault()()
				d := newDec(w)
				for b := range batches {
					r := g.decode(d, b)
					b.release()
					results <- r
				}
			}()
		}
		done := make(chan struct{})
		go func() {
			defer g.onFault()()
			pending := map[int]*result{}
			next := 0
			for r := range results {
				pending[r.seq] = r
				for p, ok := pending[next]; ok; p, ok = pending[next] {
					delete(pending, next)
					g.merge(merge, p)
					next++
				}
			}
			close(done)
		}()
		runErr = g.run(func() error { return each(func(b *batch) { batches <- b }) })
		close(batches)
		wg.Wait()
		close(results)
		<-done
	}
	if g.failed() {
		return nil, ErrChanged
	}
	if chunks {
		if runErr != nil || sp.failed || !sp.closed || s.readErr != nil || sp.finishTail(s) != nil {
			return nil, errSpeculation
		}
	}

	trunc, err := in.finish(s, runErr)
	if err != nil {
		return nil, err
	}
	if idx != nil && trunc == nil && !idx.full {
		opt.Index(idx)
	}
	t := m.trace()
	t.Meta = readMeta(s.meta)
	if len(t.Procs) == 1 {
		t.Procs[0].Rank = t.Meta.Rank
	}
	mergedRanks(t, s.meta["traceq"])
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
	// Attributes: the trace's configurations and signatures (the
	// workers' mapped to them as names are), the pending attributes of
	// the records (a record's Attr is 1 + its index in pend until link)
	// and every CPU op read.
	attrs    *trace.AttrInterner
	cfgRemap [][]trace.ConfigID
	sigRemap [][]trace.SigID
	pend     []pendAttr
	ops      distinct[rawOp]
	opList   []rawOp
	sigKeys  []string // op signatures by their text (sigKey), in order of first sight
	sigIdx   map[string]trace.SigID
	opExt    idSet                   // the External ids of the ops read so far
	pendIDs  map[uint64]trace.AttrID // the entries of pend without an External id, by config | kernel<<32
	// The pids of the events, in order of first sight (a record's Proc
	// indexes pids until trace assigns processes); pidRemap maps each
	// worker's pid table to it.
	pids      []int64
	pidIDs    map[int64]int32
	pidRemap  [][]int32
	hasLaunch []bool // per pid: launch calls were read from it
	// events counts the elements of the chunks merged so far, where the
	// next chunk's indices start (0 for a splitter's batches, which know
	// their first index).
	events int64
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
		free: make(chan *result, 2*workers+2), attrs: trace.NewAttrInterner(),
		cfgRemap: make([][]trace.ConfigID, workers), sigRemap: make([][]trace.SigID, workers),
		pidIDs: map[int64]int32{}, pidRemap: make([][]int32, workers), sigKeys: []string{""}, sigIdx: map[string]trace.SigID{"": 0},
		pendIDs: map[uint64]trace.AttrID{}}
	// Records equal but for their attributes are duplicates (the
	// attributes of an exact copy are the same; the documented rule names
	// start, duration, device, stream, name and correlation); the one with
	// the first attributes in value order is kept, whatever the batches.
	m.acts.cmp = func(a, b trace.Activity) int {
		pa, pb := a.Attr, b.Attr
		a.Attr, b.Attr = 0, 0
		if c := trace.CompareActivities(&a, &b); c != 0 {
			return c
		}
		return m.comparePend(pa, pb)
	}
	m.acts.eq = func(a, b trace.Activity) bool { a.Attr, b.Attr = 0, 0; return a == b }
	m.acts.key = func(a *trace.Activity) int64 { return int64(a.Start) } // CompareActivities' first
	m.launches.cmp = func(a, b trace.Launch) int {
		pa, pb := a.Attr, b.Attr
		a.Attr, b.Attr = 0, 0
		if c := trace.CompareLaunches(&a, &b); c != 0 {
			return c
		}
		return m.comparePend(pa, pb)
	}
	m.launches.eq = func(a, b trace.Launch) bool { a.Attr, b.Attr = 0, 0; return a == b }
	m.ranges.cmp = func(a, b trace.Range) int { return trace.CompareRanges(&a, &b) }
	m.colls.cmp = func(a, b trace.Collective) int { return trace.CompareCollectives(&a, &b) }
	m.ops.cmp = compareRawOps
	for i := range m.remap {
		m.remap[i] = []trace.NameID{0} // every interner starts with ""
		m.cfgRemap[i] = []trace.ConfigID{0}
		m.sigRemap[i] = []trace.SigID{0}
	}
	return m
}

// comparePend orders pending attributes by value (0, none, first).
func (m *merger) comparePend(a, b trace.AttrID) int {
	if a == 0 || b == 0 {
		return cmp.Compare(a, b)
	}
	pa, pb := &m.pend[a-1], &m.pend[b-1]
	if c := cmp.Compare(pa.ext, pb.ext); c != 0 {
		return c
	}
	if c := cmp.Compare(pa.config, pb.config); c != 0 {
		return c
	}
	return cmp.Compare(pa.kernel, pb.kernel)
}

// pid returns the merger's index of pid p.
func (m *merger) pid(p int64) int32 {
	if id, ok := m.pidIDs[p]; ok {
		return id
	}
	id := int32(len(m.pids))
	m.pids = append(m.pids, p)
	m.pidIDs[p] = id
	m.hasLaunch = append(m.hasLaunch, false)
	return id
}

// pending maps a batch's pending attribute (1 + index in r.pend) into
// m.pend and returns the record's new Attr.
func (m *merger) pending(r *result, attr trace.AttrID, rm []trace.NameID) trace.AttrID {
	if attr == 0 {
		return 0
	}
	p := r.pend[attr-1]
	p.config = m.cfgRemap[r.worker][p.config]
	p.kernel = rm[p.kernel]
	if !m.opExt.has(p.ext) {
		// No op read so far has this External id: Kineto writes the CPU
		// ops before the GPU work they launched, so none will, and
		// containment finds the op at the end. Without it the record's
		// attributes are those of many (a configuration): one entry.
		p.ext = 0
		k := uint64(p.config) | uint64(p.kernel)<<32
		if id, ok := m.pendIDs[k]; ok {
			return id
		}
		m.pend = append(m.pend, p)
		m.pendIDs[k] = trace.AttrID(len(m.pend))
		return trace.AttrID(len(m.pend))
	}
	if len(m.pend) == cap(m.pend) {
		// Sized as the records are, from the density of the input so
		// far, rather than by doubling.
		m.pend = grow(m.pend, len(r.pend), m.seen+int64(r.bytes), m.hint)
	}
	m.pend = append(m.pend, p)
	return trace.AttrID(len(m.pend))
}

func (m *merger) add(r *result) {
	rm := m.remap[r.worker]
	for _, s := range r.newNames {
		// The worker's interner made s a copy of its own: the trace
		// keeps that one (issue 19: 100k names of 2 KB were held twice).
		rm = append(rm, m.names.Adopt(s))
	}
	m.remap[r.worker] = rm
	nl := &r.newLocals
	for _, c := range nl.configs {
		m.cfgRemap[r.worker] = append(m.cfgRemap[r.worker], m.attrs.Config(c))
	}
	for _, key := range nl.sigs {
		id, ok := m.sigIdx[key]
		if !ok {
			id = trace.SigID(len(m.sigKeys))
			m.sigKeys = append(m.sigKeys, key)
			m.sigIdx[key] = id
		}
		m.sigRemap[r.worker] = append(m.sigRemap[r.worker], id)
	}
	for _, p := range nl.pids {
		m.pidRemap[r.worker] = append(m.pidRemap[r.worker], m.pid(p))
	}
	pids := m.pidRemap[r.worker]
	sigs := m.sigRemap[r.worker]
	for i := range r.ops {
		o := &r.ops[i]
		o.sig, o.proc = sigs[o.sig], pids[o.proc]
		if o.ext != 0 {
			m.opExt.add(o.ext)
		}
	}
	for i := range r.acts {
		a := &r.acts[i]
		a.Name, a.Proc = rm[a.Name], pids[a.Proc]
		a.Attr = m.pending(r, a.Attr, rm)
	}
	for i := range r.launches {
		l := &r.launches[i]
		l.Name, l.Proc = rm[l.Name], pids[l.Proc]
		l.Attr = m.pending(r, l.Attr, rm)
		m.hasLaunch[l.Proc] = true
	}
	for i := range r.ranges {
		g := &r.ranges[i]
		g.Name, g.Domain, g.Proc = rm[g.Name], rm[g.Domain], pids[g.Proc]
	}
	for i := range r.colls {
		c := &r.colls[i]
		c.Op, c.DType, c.Group, c.GroupRanks = rm[c.Op], rm[c.DType], rm[c.Group], rm[c.GroupRanks]
		c.Proc = pids[c.Proc]
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
	m.opList = m.ops.add(m.opList, r.ops, m.seen, m.hint)
	for _, a := range r.examples(m.events) {
		m.anoms.add(a)
	}
	m.events += r.events
	r.recycle(m.free)
}

func (m *merger) trace() *trace.Trace {
	t := m.t
	// Sorting drops the duplicates left: exact copies of an event (a
	// trace concatenated with itself, a profiler flushing a buffer twice)
	// would count its time twice.
	t.Activities = m.acts.compact(t.Activities)
	t.Launches = m.launches.compact(t.Launches)
	t.Ranges = m.ranges.compact(t.Ranges)
	t.Collectives = m.colls.compact(t.Collectives)
	t.Anomalies = m.anoms.list
	m.opList = m.ops.compact(m.opList)
	m.procs()
	slices.SortFunc(t.Launches, func(a, b trace.Launch) int { return trace.CompareLaunches(&a, &b) })
	t.Names = m.names.Names()
	link(t, m.attrs, m.names, m.pend, m.opList, m.sigKeys)
	m.pend, m.opList, m.sigKeys, m.sigIdx, m.opExt, m.pendIDs = nil, nil, nil, nil, idSet{}, nil
	t.Names = m.names.Names()
	t.Attrs, t.Configs, t.OpSigs = m.attrs.Tables()
	t.Sort()
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
	m := trace.Meta{Format: trace.FormatChrome, Rank: -1, WorldSize: -1, ProcessGroupCount: -1}
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
	for _, k := range []string{"host_name", "hostname"} {
		if v := get(k); v.Type == gjson.String && m.Host == "" {
			m.Host, _ = trace.CutName(v.Str)
		}
	}
	if v := get("baseTimeNanoseconds"); v.Exists() {
		if n, ok := metaNum(v); ok {
			m.BaseTime = n
		}
	}
	if di := get("distributedInfo"); di.IsObject() {
		if n, ok := metaNum(di.Get("rank")); ok {
			m.Rank = int(n)
			m.RankSource = trace.RankFromDistributedInfo
		}
		if n, ok := metaNum(di.Get("world_size")); ok {
			m.WorldSize = int(n)
		}
		m.Backend = di.Get("backend").String()
		if n, ok := metaNum(di.Get("pg_count")); ok && n >= 0 && n <= math.MaxInt32 {
			m.ProcessGroupCount = int(n)
		}
		for _, pg := range di.Get("pg_config").Array() {
			if !pg.IsObject() {
				continue
			}
			g := trace.ProcessGroup{Name: pg.Get("pg_name").String(), Desc: pg.Get("pg_desc").String(),
				Backend: pg.Get("backend_config").String(), Size: -1}
			if n, ok := metaNum(pg.Get("pg_size")); ok && n >= 0 && n <= math.MaxInt32 {
				g.Size = int(n)
			}
			for _, r := range pg.Get("ranks").Array() {
				if n, ok := metaNum(r); ok && n >= 0 && n <= math.MaxInt32 {
					g.Ranks = append(g.Ranks, int(n))
				}
			}
			m.ProcessGroups = append(m.ProcessGroups, g)
		}
	}
	for _, dp := range get("deviceProperties").Array() {
		id, ok := metaNum(dp.Get("id"))
		if !ok || id < 0 || id > math.MaxInt32 {
			continue
		}
		// Kineto's names (cudaDeviceProp's); AMD builds write
		// maxSharedMemoryPerMultiProcessor.
		smem := dp.Get("sharedMemPerMultiprocessor")
		if !smem.Exists() {
			smem = dp.Get("maxSharedMemoryPerMultiProcessor")
		}
		m.Devices = append(m.Devices, trace.Device{
			ID:              int32(id),
			Name:            dp.Get("name").String(),
			SMs:             propInt(dp.Get("numSms")),
			MemoryBytes:     int64(propInt(dp.Get("totalGlobalMem"))),
			ComputeMajor:    propInt(dp.Get("computeMajor")),
			ComputeMinor:    propInt(dp.Get("computeMinor")),
			WarpSize:        propInt(dp.Get("warpSize")),
			MaxThreadsPerSM: propInt(dp.Get("maxThreadsPerMultiprocessor")),
			RegistersPerSM:  propInt(dp.Get("regsPerMultiprocessor")),
			SharedMemPerSM:  int64(propInt(smem)),
		})
	}
	slices.SortFunc(m.Devices, func(a, b trace.Device) int { return cmp.Compare(a.ID, b.ID) })
	return m
}

// anomProcUnknown counts the GPU activities of a trace with several
// launching processes whose process cannot be told.
const anomProcUnknown = "GPU activity whose process cannot be told (its pid launched nothing, and no single process launched its correlation id): given to the first process"

// procs makes the trace's processes and puts each record in one. A
// process is a pid that launch calls were read from, in order of first
// sight; a file of one process (every Kineto trace) has one, or none
// launched anything and its process is pid 0, as before. Launch calls and
// CPU events (ranges, ops, a record_param_comms op's collective) belong
// to their pid's process, the first when that pid launched nothing. A GPU
// activity (and a collective read from a kernel's args) belongs to the
// process of its pid when that pid launched work (an exporter that writes
// the process's pid on GPU events); else, Kineto writing the device
// there, to the one process that launched its correlation id — with
// several, correlation ids repeat across processes and the first is
// taken, and counted (anomProcUnknown).
func (m *merger) procs() {
	t := m.t
	procOf := make([]int32, len(m.pids)) // pid index → process, -1 if it launched nothing
	for i := range procOf {
		procOf[i] = -1
		if m.hasLaunch[i] {
			procOf[i] = int32(len(t.Procs))
			t.Procs = append(t.Procs, trace.Proc{PID: m.pids[i], Rank: -1})
		}
	}
	if len(t.Procs) == 0 {
		t.Procs = []trace.Proc{{Rank: -1}}
	}
	cpu := func(p int32) int32 { return max(procOf[p], 0) }
	for i := range t.Launches {
		t.Launches[i].Proc = cpu(t.Launches[i].Proc)
	}
	for i := range t.Ranges {
		t.Ranges[i].Proc = cpu(t.Ranges[i].Proc)
	}
	for i := range m.opList {
		m.opList[i].proc = cpu(m.opList[i].proc)
	}
	if len(t.Procs) == 1 {
		for i := range t.Activities {
			t.Activities[i].Proc = 0
		}
		for i := range t.Collectives {
			t.Collectives[i].Proc = 0
		}
		return
	}
	// Which processes launched each correlation id: the first, and
	// whether another did too.
	type launcher struct {
		proc int32
		many bool
	}
	byCorr := map[int64]launcher{}
	for i := range t.Launches {
		l := &t.Launches[i]
		if w, ok := byCorr[l.Corr]; !ok {
			byCorr[l.Corr] = launcher{proc: l.Proc}
		} else if w.proc != l.Proc {
			byCorr[l.Corr] = launcher{proc: w.proc, many: true}
		}
	}
	var unknown int64
	var example string
	gpu := func(p int32, corr int64, name trace.NameID, start trace.Time) int32 {
		if procOf[p] >= 0 {
			return procOf[p]
		}
		if w, ok := byCorr[corr]; ok && !w.many {
			return w.proc
		}
		if unknown == 0 {
			example = fmt.Sprintf("%s at ts %d ns (pid %d, correlation %d)", m.names.Names()[name], start, m.pids[p], corr)
		}
		unknown++
		return 0
	}
	for i := range t.Activities {
		a := &t.Activities[i]
		a.Proc = gpu(a.Proc, a.Corr, a.Name, a.Start)
	}
	if unknown > 0 {
		t.AddAnomaly(anomProcUnknown, unknown, example)
	}
	for i := range t.Collectives {
		c := &t.Collectives[i]
		if c.Source == trace.CollectiveOnCPUOp {
			c.Proc = cpu(c.Proc)
			continue
		}
		u := unknown
		c.Proc = gpu(c.Proc, c.Corr, c.Op, c.Start)
		unknown = u // counted with its kernel
	}
}

// compareRawOps orders the ops read, to drop exact duplicates: by
// process, thread, start, the enclosing op first, then the rest.
func compareRawOps(a, b rawOp) int {
	if c := cmp.Compare(a.proc, b.proc); c != 0 {
		return c
	}
	if c := cmp.Compare(a.thread, b.thread); c != 0 {
		return c
	}
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	if c := cmp.Compare(b.dur, a.dur); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ext, b.ext); c != 0 {
		return c
	}
	return cmp.Compare(a.sig, b.sig)
}

// propInt reads a device property: a non-negative integer, else 0
// (unknown).
func propInt(v gjson.Result) int {
	n, ok := metaNum(v)
	if !ok || n < 0 {
		return 0
	}
	return int(n)
}

// metaNum is num for a metadata value read by gjson.
func metaNum(v gjson.Result) (int64, bool) {
	switch v.Type {
	case gjson.Number:
		return parseInt(v.Raw)
	case gjson.String:
		return parseInt(v.Str)
	}
	return 0, false
}
