package nsyssqlite

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/traceq/traceq/trace"
)

// This file holds the pure row → trace conversion: no SQL, so that it can
// be fuzzed (FuzzRows) and reasoned about without a database.

// NVTX event types (ENUM_NSYS_EVENT_TYPE; the values are the same in every
// export seen, 2022.1 to 2026.2, and old exports have no enum table).
const (
	nvtxPushPop      = 59 // NvtxPushPopRange
	nvtxStartEnd     = 60 // NvtxStartEndRange
	nvtxtPushPop     = 70 // NvtxtPushPopRange
	nvtxtStartEnd    = 71 // NvtxtStartEndRange
	nvtxDomainCreate = 75 // NvtxDomainCreate: text is the domain's name
)

// pidMask keeps the VM and PID bits of a globalTid/globalPid:
// globalTid = vm<<48 | pid<<24 | tid.
const pidMask = ^int64(0xFFFFFF)

func decodePID(g int64) int64 { return (g >> 24) & 0xFFFFFF }
func decodeTID(g int64) int64 { return g & 0xFFFFFF }

// activityRow is one row of CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY or _MEMSET.
type activityRow struct {
	start, end     int64
	device, stream int64
	corr           int64 // 0 when NULL
	globalPid      int64 // 0 when NULL
	name           int64 // StringIds id (kernels only)
}

// launchRow is one row of CUPTI_ACTIVITY_KIND_RUNTIME.
type launchRow struct {
	start, end int64
	globalTid  int64
	corr       int64
	name       int64 // StringIds id
}

// nvtxRow is one row of NVTX_EVENTS; the has* fields say which nullable
// columns were set.
type nvtxRow struct {
	start, end int64
	hasEnd     bool
	eventType  int64
	text       string
	hasText    bool
	globalTid  int64
	textID     int64
	hasTextID  bool
	domainID   int64
}

// nameKind says how a provisional name becomes a string.
type nameKind uint8

const (
	nameLiteral nameKind = iota // lit is the string
	nameKernel                  // StringIds[id], as is
	nameAPI                     // StringIds[id] without its "_vNNNNN" suffix
	nameNVTX                    // StringIds[id], as is
)

type pendingName struct {
	id   int64
	lit  string
	kind nameKind
}

// names hands out provisional name ids while rows are read; the strings are
// fetched from StringIds once, after the scan, for the ids actually used.
// Provisional ids are then mapped to interned trace.NameIDs in order of
// first use, which is deterministic because rows are read in table order.
type names struct {
	pending []pendingName
	// kernel holds provisional id + 1 per kernel-name string id in
	// [kernelBase, kernelBase+denseLimit) (a slice, not a map: it is
	// looked up once per kernel).
	kernel     []uint32
	kernelBase int64
	kernelRefs int // kernelName calls, which bound the window's size
	byKey      map[nameKey]uint32
	lits       map[string]uint32
	// apiID and apiName are the last API name looked up (api) and its
	// provisional id, when hasAPI.
	apiID   int64
	apiName uint32
	hasAPI  bool
}

type nameKey struct {
	id   int64
	kind nameKind
}

// The kernel-name window is at most denseLimit ids (16 MiB of uint32),
// and at most 4096 + 16 per kernel read: memory follows the rows, never
// the id values alone (one kernel named by id 4M must not cost 16 MiB).
const denseLimit = 1 << 22

func (n *names) windowLimit() int64 { return min(denseLimit, 4096+16*int64(n.kernelRefs)) }

func newNames() *names {
	return &names{byKey: map[nameKey]uint32{}, lits: map[string]uint32{}}
}

func (n *names) add(p pendingName) uint32 {
	id := uint32(len(n.pending))
	n.pending = append(n.pending, p)
	return id
}

func (n *names) kernelName(id int64) uint32 {
	n.kernelRefs++
	if n.kernel == nil && id >= 0 {
		// Kernel name ids are clustered, and far from 0 in time-sliced
		// exports (1.36M in one): start the window just below the first.
		n.kernelBase = max(0, id-1024)
	}
	if d := id - n.kernelBase; d >= 0 && d < n.windowLimit() {
		if d < int64(len(n.kernel)) {
			if v := n.kernel[d]; v != 0 {
				return v - 1
			}
		} else {
			n.kernel = slices.Grow(n.kernel, int(d)+1-len(n.kernel))[:d+1]
		}
		p := n.add(pendingName{id: id, kind: nameKernel})
		n.kernel[d] = p + 1
		return p
	}
	return n.keyed(id, nameKernel)
}

func (n *names) keyed(id int64, kind nameKind) uint32 {
	k := nameKey{id, kind}
	if p, ok := n.byKey[k]; ok {
		return p
	}
	p := n.add(pendingName{id: id, kind: kind})
	n.byKey[k] = p
	return p
}

// api is keyed(id, nameAPI) with the last answer remembered: the calls
// kept are mostly of one or two launch APIs, in runs.
func (n *names) api(id int64) uint32 {
	if n.hasAPI && id == n.apiID {
		return n.apiName
	}
	p := n.keyed(id, nameAPI)
	n.apiID, n.apiName, n.hasAPI = id, p, true
	return p
}

func (n *names) literal(s string) uint32 {
	if p, ok := n.lits[s]; ok {
		return p
	}
	p := n.add(pendingName{lit: s, kind: nameLiteral})
	n.lits[s] = p
	return p
}

// stringIDs returns the distinct StringIds ids the pending names need,
// ascending.
func (n *names) stringIDs() []int64 {
	var ids []int64
	for _, p := range n.pending {
		if p.kind != nameLiteral {
			ids = append(ids, p.id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// stripVersion drops the "_vNNNNN" suffix of CUDA runtime API names
// ("cudaLaunchKernel_v7000" → "cudaLaunchKernel"), as nsys's cuda_api_sum
// does, so that names match other trace formats.
func stripVersion(s string) string {
	i := strings.LastIndex(s, "_v")
	if i <= 0 || i+2 == len(s) {
		return s
	}
	for _, c := range s[i+2:] {
		if c < '0' || c > '9' {
			return s
		}
	}
	return s[:i]
}

// procs assigns provisional process indices by first appearance; finish
// renumbers them in PID order.
type procs struct {
	index map[int64]int32 // globalPid & pidMask → provisional index
	keys  []int64
	corrs []corrSet // GPU activity correlation ids per process
	nact  []int     // GPU activities per process
}

// find returns the provisional index of key. An export has a handful of
// processes: scanning them beats hashing the key, once per row.
func (p *procs) find(key int64) (int32, bool) {
	if len(p.keys) <= 8 {
		for i, k := range p.keys {
			if k == key {
				return int32(i), true
			}
		}
		return 0, false
	}
	i, ok := p.index[key]
	return i, ok
}

func (p *procs) get(key int64) int32 {
	if i, ok := p.find(key); ok {
		return i
	}
	i := int32(len(p.keys))
	p.index[key] = i
	p.keys = append(p.keys, key)
	p.corrs = append(p.corrs, corrSet{})
	p.nact = append(p.nact, 0)
	return i
}

// compare orders provisional processes by PID.
func (p *procs) compare(x, y int32) int {
	kx, ky := p.keys[x], p.keys[y]
	if c := cmp.Compare(decodePID(kx), decodePID(ky)); c != 0 {
		return c
	}
	return cmp.Compare(kx, ky) // same PID on two VMs
}

// corrSet is a set of correlation ids. CUPTI hands them out per process
// from a counter, so they are dense: a bitmap over
// [base, base+64*len(bits)) holds them, and a map the ones that would
// stretch the bitmap past 64 + 4 words (32 bytes) per id added, so that
// memory follows the rows, not the id values (two ids 2^40 apart must not
// cost a 16 GiB bitmap).
type corrSet struct {
	base  int64 // a multiple of 64
	bits  []uint64
	n     int // ids added
	other map[int64]struct{}
}

func (s *corrSet) maxWords() uint64 { return 64 + 4*uint64(s.n) }

func (s *corrSet) add(c int64) {
	s.n++
	if s.bits == nil {
		s.base = c &^ 63
		s.bits = make([]uint64, 1, 8)
	}
	if c >= s.base {
		w := span(s.base, c) >> 6
		if w < uint64(len(s.bits)) || w < s.maxWords() {
			if w >= uint64(len(s.bits)) {
				s.bits = slices.Grow(s.bits, int(w)+1-len(s.bits))[:w+1]
			}
			s.bits[w] |= 1 << (uint64(c) & 63)
			return
		}
	} else if below := (span(c, s.base) + 63) >> 6; below+uint64(len(s.bits)) <= s.maxWords() {
		// Ids come in start order, which is not quite id order: move the
		// base down, with room for more (but not below math.MinInt64).
		room := min(s.maxWords()-uint64(len(s.bits)), below+uint64(len(s.bits))/2, span(math.MinInt64, s.base)>>6)
		bits := make([]uint64, room+uint64(len(s.bits)))
		copy(bits[room:], s.bits)
		s.bits, s.base = bits, s.base-int64(room<<6)
		s.bits[span(s.base, c)>>6] |= 1 << (uint64(c) & 63)
		return
	}
	if s.other == nil {
		s.other = map[int64]struct{}{}
	}
	s.other[c] = struct{}{}
}

func (s *corrSet) has(c int64) bool {
	if c >= s.base {
		if w := span(s.base, c) >> 6; w < uint64(len(s.bits)) && s.bits[w]&(1<<(uint64(c)&63)) != 0 {
			return true
		}
	}
	_, ok := s.other[c]
	return ok
}

type domainKey struct {
	proc int32
	id   int64
}

// builder turns rows into a trace. Names and Proc fields hold provisional
// ids until finish.
type builder struct {
	t     *trace.Trace
	names *names
	procs procs
	// Activities are kept in two runs that are each usually already in
	// start order (nsys writes tables sorted by start): kernels, and
	// memcpys+memsets. finish merges them.
	kernels []trace.Activity
	mem     []trace.Activity
	// launches are bucketed by provisional process. prepareLaunches may
	// carve the buckets out of one array (launchArena), laid out in final
	// process order, so that finish can compact it in place.
	launches    [][]trace.Launch
	launchArena []trace.Launch
	arenaCap    []int // per process, the capacity of its arena region
	// rangeDomain parallels t.Ranges until finish.
	rangeDomain []domainKey
	domains     map[domainKey]uint32 // NVTX domain names (provisional)
	// droppedAPI counts runtime calls without GPU activity, per name id,
	// to spot graph launches whose kernels were not recorded.
	droppedAPI map[int64]int64
	memcpyKind map[int64]string // copyKind → label
	// kernelCols names the kernel columns read, for anomaly examples.
	kernelCols []string
	// procKeys and procGPU are, per process of the trace, its globalPid
	// key and whether it ran GPU work (set by finish).
	procKeys []int64
	procGPU  []bool
	// attrs holds the kernels' launch configurations; nameCfgs, per
	// provisional kernel name, the first maxNameCfgs configurations its
	// kernels were launched with and their attributes (not those out of
	// range: each of their kernels is counted).
	attrs    *trace.AttrInterner
	nameCfgs [][]cfgEntry
	// kernelRows and kernelBad count kernel rows read and skipped as
	// unreadable: a table of unreadable rows is a damaged file.
	kernelRows, kernelBad int64
}

func newBuilder(gpuHint, nvtxHint int) *builder {
	return &builder{
		t:           &trace.Trace{Ranges: make([]trace.Range, 0, nvtxHint)},
		rangeDomain: make([]domainKey, 0, nvtxHint),
		names:       newNames(),
		procs:       procs{index: map[int64]int32{}},
		kernels:     make([]trace.Activity, 0, gpuHint),
		domains:     map[domainKey]uint32{},
		droppedAPI:  map[int64]int64{},
		memcpyKind:  builtinMemcpyKinds(),
		kernelCols:  append(slices.Clip(activityCols), "demangledName"),
		attrs:       trace.NewAttrInterner(),
	}
}

type cfgEntry struct {
	vals [nConfigCols]int64
	attr trace.AttrID
}

// maxNameCfgs bounds the configurations remembered per kernel name.
const maxNameCfgs = 8

// builtinMemcpyKinds is ENUM_CUDA_MEMCPY_OPER as exported by nsys 2022.4 to
// 2026.2, for exports without the enum table (before 2022.4, and lazy
// exports from 2025.3 on that did not need it).
func builtinMemcpyKinds() map[int64]string {
	return map[int64]string{
		0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array", 4: "Array-to-Host",
		5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array", 8: "Device-to-Device",
		9: "Host-to-Host", 10: "Peer-to-Peer", 11: "Unified Host-to-Device", 12: "Unified Device-to-Host",
		13: "Unified Device-to-Device",
	}
}

func clampInt32(v int64) int32 {
	if v < -1<<31 || v > 1<<31-1 {
		return -1
	}
	return int32(v)
}

// Anomalies of odd device and stream ids, worded as the Chrome parser's.
const (
	anomBadDevice = "GPU event with an unreadable or out-of-range device id skipped"
	anomBadStream = "stream id out of range; set to -1"
)

// deviceOK reports whether a row's device id is an int32 ordinal; a row
// whose id is not is skipped and counted, never put on a made-up device.
func (b *builder) deviceOK(r *activityRow, table string, row int64) bool {
	if r.device >= 0 && r.device <= math.MaxInt32 {
		return true
	}
	if !b.counted(anomBadDevice) {
		b.t.AddAnomaly(anomBadDevice, 1, fmt.Sprintf("%s row %d: deviceId %d", table, row, r.device))
	}
	return false
}

// activity converts the fields common to kernels, memcpys and memsets of
// a row whose duration gpuDur and device deviceOK accepted.
func (b *builder) activity(r *activityRow, dur int64, table string, kind trace.Kind, name uint32) trace.Activity {
	p := b.procs.get(r.globalPid & pidMask)
	b.procs.nact[p]++
	if r.corr != 0 {
		b.procs.corrs[p].add(r.corr)
	}
	stream := clampInt32(r.stream)
	if int64(stream) != r.stream {
		if !b.counted(anomBadStream) {
			b.t.AddAnomaly(anomBadStream, 1, fmt.Sprintf("%s: streamId %d", table, r.stream))
		}
	}
	return trace.Activity{Start: trace.Time(r.start), Dur: dur, Corr: r.corr, Name: trace.NameID(name),
		Device: int32(r.device), Stream: stream, Proc: p, Kind: kind}
}

func (b *builder) kernel(r *activityRow, cfg *configRow, row int64) {
	dur, ok := b.gpuDur(tableKernel, row, r.start, r.end)
	if !ok || !b.deviceOK(r, tableKernel, row) {
		return
	}
	name := b.names.kernelName(r.name)
	a := b.activity(r, dur, tableKernel, trace.KindKernel, name)
	a.Attr = b.kernelAttr(name, cfg, row)
	b.kernels = append(b.kernels, a)
}

// kernelAttr returns the attributes of a kernel's launch configuration
// (0 when the export has none), name being the kernel's provisional
// name. A kernel name has a few configurations: they are looked up among
// its own (nameCfgs), with no hashing; interning takes two map lookups.
func (b *builder) kernelAttr(name uint32, cfg *configRow, row int64) trace.AttrID {
	if cfg == nil || !cfg.present {
		return 0
	}
	if int(name) >= len(b.nameCfgs) {
		b.nameCfgs = slices.Grow(b.nameCfgs, int(name)+1-len(b.nameCfgs))[:name+1]
	}
	known := b.nameCfgs[name]
	for i := range known {
		if known[i].vals == cfg.vals {
			return known[i].attr
		}
	}
	v := &cfg.vals
	for _, x := range v {
		if x < 0 || x > math.MaxInt32 {
			const what = "kernel launch configuration out of range ignored"
			if !b.counted(what) {
				b.t.AddAnomaly(what, 1, fmt.Sprintf("%s row %d: grid %d×%d×%d, block %d×%d×%d, %d registers, shared memory %d+%d",
					tableKernel, row, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]))
			}
			return 0
		}
	}
	c := trace.Config{
		Grid:  [3]int32{int32(v[0]), int32(v[1]), int32(v[2])},
		Block: [3]int32{int32(v[3]), int32(v[4]), int32(v[5])}, Registers: int32(v[6]),
		SharedMem: -1, DynamicSharedMem: int32(v[8]),
	}
	if sum := v[7] + v[8]; sum <= math.MaxInt32 {
		c.SharedMem = int32(sum)
	}
	attr := b.attrs.Attr(trace.Attr{Config: b.attrs.Config(c)})
	if len(known) < maxNameCfgs {
		b.nameCfgs[name] = append(known, cfgEntry{cfg.vals, attr})
	}
	return attr
}

func (b *builder) memcpy(r *activityRow, copyKind, row int64) {
	dur, ok := b.gpuDur(tableMemcpy, row, r.start, r.end)
	if !ok || !b.deviceOK(r, tableMemcpy, row) {
		return
	}
	label, ok := b.memcpyKind[copyKind]
	if !ok {
		b.t.AddAnomaly("unknown memcpy copyKind", 1, fmt.Sprintf("%s: copyKind %d", tableMemcpy, copyKind))
		label = fmt.Sprintf("kind %d", copyKind)
	}
	// The name nsys's cuda_gpu_sum prints.
	b.mem = append(b.mem, b.activity(r, dur, tableMemcpy, trace.KindMemcpy, b.names.literal("[CUDA memcpy "+label+"]")))
}

func (b *builder) memset(r *activityRow, row int64) {
	dur, ok := b.gpuDur(tableMemset, row, r.start, r.end)
	if !ok || !b.deviceOK(r, tableMemset, row) {
		return
	}
	b.mem = append(b.mem, b.activity(r, dur, tableMemset, trace.KindMemset, b.names.literal("[CUDA memset]")))
}

// prepareLaunches sizes the launch buckets from the GPU activity counts,
// once all GPU activity is read. Kept launches are about one per activity;
// growing millions of them by append cost 2 s of copying and page faults
// on a 5M-kernel export.
func (b *builder) prepareLaunches() {
	var order []int32
	total := 0
	for i, n := range b.procs.nact {
		if n > 0 {
			order = append(order, int32(i))
			total += n
		}
	}
	slices.SortFunc(order, b.procs.compare)
	b.launchArena = make([]trace.Launch, total)
	b.launches = make([][]trace.Launch, len(b.procs.keys))
	b.arenaCap = make([]int, len(b.procs.keys))
	off := 0
	for _, p := range order {
		n := b.procs.nact[p]
		// A full bucket grows out of the arena by itself (append); finish
		// notices.
		b.launches[p] = b.launchArena[off : off : off+n]
		b.arenaCap[p] = n
		off += n
	}
}

// launch keeps a runtime/driver call only when some GPU activity of the same
// process carries its correlation id: the other calls (cudaGetDevice,
// cudaStreamIsCapturing, ...) are most of the table and useless to traceq.
func (b *builder) launch(r *launchRow, table string, row int64) {
	p, ok := b.procs.find(r.globalTid & pidMask)
	if !ok || !b.procs.corrs[p].has(r.corr) {
		b.droppedAPI[r.name]++
		return
	}
	var dur int64
	if r.end < r.start {
		const what = "cuda api call ends before it starts; duration set to 0"
		if !b.counted(what) {
			b.t.AddAnomaly(what, 1, fmt.Sprintf("%s: start %d > end %d", table, r.start, r.end))
		}
	} else if d := span(r.start, r.end); d > uint64(trace.MaxActivityDur) {
		if !b.counted(longAPI) {
			b.t.AddAnomaly(longAPI, 1, fmt.Sprintf("%s row %d: start %d, end %d", table, row, r.start, r.end))
		}
		return
	} else {
		dur = int64(d)
	}
	for int(p) >= len(b.launches) {
		b.launches = append(b.launches, nil)
	}
	b.launches[p] = append(b.launches[p], trace.Launch{Start: trace.Time(r.start), Dur: dur, Corr: r.corr,
		Thread: decodeTID(r.globalTid), Name: trace.NameID(b.names.api(r.name)), Proc: p})
}

func (b *builder) nvtx(r *nvtxRow, row int64) {
	switch r.eventType {
	case nvtxDomainCreate:
		k := domainKey{b.procs.get(r.globalTid & pidMask), r.domainID}
		if _, ok := b.domains[k]; !ok {
			b.domains[k] = b.nvtxName(r)
		}
		return
	case nvtxPushPop, nvtxStartEnd, nvtxtPushPop, nvtxtStartEnd:
	default:
		return // marks, categories, thread names: not ranges
	}
	if !r.hasEnd || r.end == 0 {
		const what = "unended nvtx range skipped"
		if !b.counted(what) {
			b.t.AddAnomaly(what, 1, fmt.Sprintf("%s: start %d", tableNVTX, r.start))
		}
		return
	}
	var dur int64
	if r.end < r.start {
		const what = "nvtx range ends before it starts; duration set to 0"
		if !b.counted(what) {
			b.t.AddAnomaly(what, 1, fmt.Sprintf("%s: start %d > end %d", tableNVTX, r.start, r.end))
		}
	} else if d := span(r.start, r.end); d > math.MaxInt64 {
		if !b.counted(longNVTX) {
			b.t.AddAnomaly(longNVTX, 1, fmt.Sprintf("%s row %d: start %d, end %d", tableNVTX, row, r.start, r.end))
		}
		return
	} else {
		dur = int64(d)
	}
	p := b.procs.get(r.globalTid & pidMask)
	b.t.Ranges = append(b.t.Ranges, trace.Range{Start: trace.Time(r.start), Dur: dur, Thread: decodeTID(r.globalTid),
		Name: trace.NameID(b.nvtxName(r)), Proc: p, Device: -1, Stream: -1, Kind: trace.RangeCPU})
	b.rangeDomain = append(b.rangeDomain, domainKey{p, r.domainID})
}

// nvtxName is coalesce(text, StringIds[textId]), as nsys's reports name
// ranges.
func (b *builder) nvtxName(r *nvtxRow) uint32 {
	if r.hasText {
		return b.names.literal(r.text)
	}
	if r.hasTextID {
		return b.names.keyed(r.textID, nameNVTX)
	}
	return b.names.literal("")
}

// finish resolves names and processes and puts everything in canonical
// order. lookup returns StringIds values for the given ids (absent ids are
// missing from the map).
func (b *builder) finish(lookup func(ids []int64) (map[int64]string, error), procName map[int64]string) (*trace.Trace, error) {
	t := b.t
	strs, err := lookup(b.names.stringIDs())
	if err != nil {
		return nil, err
	}
	in := trace.NewInterner()
	final := make([]trace.NameID, len(b.names.pending))
	for i, p := range b.names.pending {
		s := p.lit
		if p.kind != nameLiteral {
			v, ok := strs[p.id]
			if !ok {
				t.AddAnomaly("name missing from StringIds", 1, fmt.Sprintf("string id %d", p.id))
				v = fmt.Sprintf("<missing string %d>", p.id)
			} else if p.kind == nameAPI {
				v = stripVersion(v)
			}
			s = v
		}
		final[i] = in.ID(s)
	}

	// Processes: only those with GPU activity or NVTX ranges, by PID.
	hasRange := make([]bool, len(b.procs.keys))
	for i := range t.Ranges {
		hasRange[t.Ranges[i].Proc] = true
	}
	var order []int32
	for i := range b.procs.keys {
		if b.procs.nact[i] > 0 || hasRange[i] {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, b.procs.compare)
	perm := make([]int32, len(b.procs.keys))
	for i := range perm {
		perm[i] = -1
	}
	t.Procs = make([]trace.Proc, len(order))
	for i, p := range order {
		perm[p] = int32(i)
		k := b.procs.keys[p]
		t.Procs[i] = trace.Proc{PID: decodePID(k), Name: procName[k], Rank: -1}
		b.procKeys = append(b.procKeys, k)
		b.procGPU = append(b.procGPU, b.procs.nact[p] > 0)
	}

	// Activities: rename, then merge the two runs.
	fix := func(as []trace.Activity) {
		for i := range as {
			a := &as[i]
			a.Name = final[a.Name]
			a.Proc = perm[a.Proc]
		}
		if !slices.IsSortedFunc(as, compareActivities) {
			slices.SortFunc(as, compareActivities)
		}
	}
	fix(b.kernels)
	fix(b.mem)
	t.Activities = mergeActivities(b.kernels, b.mem)
	b.kernels, b.mem = nil, nil

	// Launches: buckets in final process order. The arena is laid out in
	// that order, so unless a bucket outgrew it, compacting it in place
	// (each bucket moves down, never up) gives the final slice.
	inArena := b.launchArena != nil
	n := 0
	for _, p := range order {
		if int(p) < len(b.launches) {
			n += len(b.launches[p])
			// append moves a bucket that outgrows its region: its
			// capacity changes.
			inArena = inArena && int(p) < len(b.arenaCap) && cap(b.launches[p]) == b.arenaCap[p]
		}
	}
	if inArena {
		t.Launches = b.launchArena[:0]
	} else {
		t.Launches = make([]trace.Launch, 0, n)
	}
	for _, p := range order {
		if int(p) >= len(b.launches) {
			continue
		}
		ls := b.launches[p]
		for i := range ls {
			ls[i].Name = final[ls[i].Name]
			ls[i].Proc = perm[p]
		}
		if !slices.IsSortedFunc(ls, compareLaunches) {
			slices.SortFunc(ls, compareLaunches)
		}
		t.Launches = append(t.Launches, ls...) // copy handles the overlap
	}
	b.launches, b.launchArena = nil, nil
	for i := 1; i < len(t.Launches); i++ {
		if p, l := &t.Launches[i-1], &t.Launches[i]; p.Proc == l.Proc && p.Corr == l.Corr {
			// Seen when an interposer (MPI, a tool) wraps the runtime:
			// "cudaMemcpy" and "cudaMemcpy_v3020" with one id. FindLaunch
			// returns the earliest.
			t.AddAnomaly("several cuda api calls share a correlation id", 1,
				fmt.Sprintf("%s: correlationId %d", tableRuntime, l.Corr))
		}
	}

	// Ranges and their domains. Domain 0 is NVTX's default domain.
	unnamed := map[domainKey]bool{}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		r.Name = final[r.Name]
		if k := b.rangeDomain[i]; k.id != 0 {
			if d, ok := b.domains[k]; ok {
				r.Domain = final[d]
			} else if !unnamed[k] {
				unnamed[k] = true
				// The domain-create event can lie outside a time-sliced
				// export; the ranges stay, in the default domain.
				t.AddAnomaly("nvtx domain without a name (its create event is not in the export)", 1,
					fmt.Sprintf("%s: domainId %d", tableNVTX, k.id))
			}
		}
		r.Proc = perm[r.Proc]
	}
	b.rangeDomain = nil

	t.Names = in.Names()
	t.Attrs, t.Configs, t.OpSigs = b.attrs.Tables()
	for i := range t.Activities {
		if strings.HasPrefix(t.Names[t.Activities[i].Name], "nccl") {
			t.Meta.Backend = "nccl"
			break
		}
	}
	// Activities and launches are in order already (merged runs, checked
	// after renaming); only the ranges are sorted here.
	slices.SortFunc(t.Ranges, func(a, b trace.Range) int { return trace.CompareRanges(&a, &b) })
	t.SortAnomalies()
	return t, nil
}

func compareActivities(a, b trace.Activity) int { return trace.CompareActivities(&a, &b) }
func compareLaunches(a, b trace.Launch) int     { return trace.CompareLaunches(&a, &b) }

// mergeActivities merges two sorted runs, reusing a's storage when it has
// room (the caller sizes it for all GPU rows).
func mergeActivities(a, b []trace.Activity) []trace.Activity {
	if len(b) == 0 {
		return a
	}
	n := len(a) + len(b)
	out := a
	if cap(a) >= n {
		out = a[:n]
	} else {
		out = make([]trace.Activity, n)
		copy(out, a)
	}
	// Merge from the back so a's elements are read before being overwritten.
	i, j, k := len(a)-1, len(b)-1, n-1
	for j >= 0 {
		if i >= 0 && trace.CompareActivities(&out[i], &b[j]) > 0 {
			out[k] = out[i]
			i--
		} else {
			out[k] = b[j]
			j--
		}
		k--
	}
	return out
}
