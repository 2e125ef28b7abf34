package chrometrace

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/traceq/traceq/trace"
)

// Attributes (trace.Attr): a kernel's launch configuration from its args
// ("grid", "block", "registers per thread", "shared memory"), a launch
// call's (HIP runtime calls and CUDA-graph capture traces name their
// kernel in args.kernel, with grid, block and shared memory), and the CPU
// op each links to by its "External id", with the op's shapes
// ("Input Dims", "Input type", "Concrete Inputs", "Input Strides").
//
// Decoders read them raw; each worker numbers configurations, signatures
// and pids in tables of its own (localTables), which the merger maps to
// the trace's, as it does names. Which op an activity belongs to is
// decided once the whole trace is read (link.go): an op may come after
// its kernels in the file, and the fallback (the op containing the
// launch call) needs every op.

// attrFields are the raw attribute args of one event.
type attrFields struct {
	ext, grid, block, regs, smem, kernel val
	dims, types, concrete, strides       val
}

// pendAttr is an activity's or launch's attributes before the op is
// known: its External id and, in the decoder, the worker's ids of its
// configuration and kernel name (the merger's ids after the merge).
type pendAttr struct {
	ext    int64
	config trace.ConfigID
	kernel trace.NameID
}

// rawOp is a CPU op as read: its External id, interval, thread, process
// (pid table index) and signature (table index).
type rawOp struct {
	ext    int64
	start  trace.Time
	dur    int64
	thread int64
	proc   int32
	sig    trace.SigID
}

// localTables numbers one worker's configurations, op signatures and pids
// in order of first sight; since reports what was added after a mark, for
// the merger.
type localTables struct {
	configs trace.ConfigTable
	sigs    []string // signature keys (sigKey)
	sigIDs  map[string]trace.SigID
	pids    []int64
	pidIDs  map[int64]int32
	// The last configuration read and its id: a kernel's is usually
	// its predecessor's.
	lastRaw [4]string
	lastCfg trace.ConfigID
}

// locals are a batch's additions to a worker's tables.
type locals struct {
	configs []trace.Config
	sigs    []string
	pids    []int64
}

type localMark struct{ configs, sigs, pids int }

func newLocalTables() *localTables {
	return &localTables{configs: trace.NewConfigTable(),
		sigs: []string{""}, sigIDs: map[string]trace.SigID{"": 0}, pidIDs: map[int64]int32{}}
}

func (lt *localTables) mark() localMark {
	return localMark{len(lt.configs.Configs()), len(lt.sigs), len(lt.pids)}
}

func (lt *localTables) since(m localMark) locals {
	var l locals
	if cs := lt.configs.Configs(); len(cs) > m.configs {
		l.configs = append(l.configs, cs[m.configs:]...)
	}
	if len(lt.sigs) > m.sigs {
		l.sigs = append(l.sigs, lt.sigs[m.sigs:]...)
	}
	if len(lt.pids) > m.pids {
		l.pids = append(l.pids, lt.pids[m.pids:]...)
	}
	return l
}

func (lt *localTables) config(c trace.Config) trace.ConfigID { return lt.configs.ID(c) }

func (lt *localTables) sig(key string) trace.SigID {
	if id, ok := lt.sigIDs[key]; ok {
		return id
	}
	key = strings.Clone(key)
	id := trace.SigID(len(lt.sigs))
	lt.sigs = append(lt.sigs, key)
	lt.sigIDs[key] = id
	return id
}

func (lt *localTables) pid(p int64) int32 {
	if id, ok := lt.pidIDs[p]; ok {
		return id
	}
	id := int32(len(lt.pids))
	lt.pids = append(lt.pids, p)
	lt.pidIDs[p] = id
	return id
}

// anomBadConfig counts launch configurations that are not what Kineto
// writes (three non-negative int32 counts, and so on); the event is kept
// without one.
const anomBadConfig = "unreadable kernel launch configuration (grid, block, registers or shared memory) ignored"

// attrs reads the attributes of the GPU activity or launch call just
// scanned into d.out.pend, and says whether it has any. cfg says whether
// a launch configuration may be read (kernels and launch calls, not
// memcpys); kernel whether args.kernel names the kernel (launch calls).
func (d *decoder) attrs(cfg, kernel bool) bool {
	f := &d.f
	a := &f.attr
	p := pendAttr{}
	if f.seen&seenExt != 0 {
		if n, ok := num(&a.ext); ok && n > 0 {
			p.ext = n
		}
	}
	if cfg && f.seen&(seenGrid|seenBlock|seenRegs|seenSmem) != 0 {
		p.config = d.config()
	}
	if kernel && f.seen&seenKernel != 0 && a.kernel.Type == vString && a.kernel.Str != "" {
		p.kernel = d.intern(a.kernel.Str)
	}
	d.out.pend = p
	return p != pendAttr{}
}

// config reads a launch configuration, or 0 with an anomaly when it is
// malformed.
func (d *decoder) config() trace.ConfigID {
	a := &d.f.attr
	raw := [4]string{a.grid.Raw, a.block.Raw, a.regs.Raw, a.smem.Raw}
	// Compared one by one, inline (the array's == is a call per event).
	if l := &d.loc.lastRaw; d.loc.lastCfg != 0 && raw[0] == l[0] && raw[1] == l[1] && raw[2] == l[2] && raw[3] == l[3] {
		return d.loc.lastCfg
	}
	c := trace.NoConfig
	ok := true
	if a.grid.Exists() {
		ok = dim3(a.grid, &c.Grid) && ok
	}
	if a.block.Exists() {
		ok = dim3(a.block, &c.Block) && ok
	}
	if a.regs.Exists() {
		n, good := num(&a.regs)
		ok = ok && good && n >= 0 && n <= math.MaxInt32
		c.Registers = int32(n)
	}
	if a.smem.Exists() {
		n, good := num(&a.smem)
		ok = ok && good && n >= 0 && n <= math.MaxInt32
		c.SharedMem = int32(n)
	}
	if !ok {
		d.anomaly(anomBadConfig)
		return 0
	}
	id := d.loc.config(c)
	d.loc.lastRaw, d.loc.lastCfg = [4]string{strings.Clone(raw[0]), strings.Clone(raw[1]), strings.Clone(raw[2]), strings.Clone(raw[3])}, id
	return id
}

// dim3 reads "[x, y, z]" (non-negative int32 counts) into dst.
func dim3(v val, dst *[3]int32) bool {
	if v.Type != vJSON || len(v.Raw) == 0 || v.Raw[0] != '[' {
		return false
	}
	n := 0
	ok := true
	eachElem(v.Raw, func(e val) {
		x, good := num(&e)
		if n >= 3 || !good || x < 0 || x > math.MaxInt32 {
			ok = false
		} else {
			dst[n] = int32(x)
		}
		n++
	})
	return ok && n == 3
}

// eachElem calls fn with each element of the JSON array raw, read by the
// event scanner's rules (numbers stay text).
func eachElem(raw string, fn func(val)) {
	i := skipSpace(raw, 1)
	for i < len(raw) && raw[i] != ']' {
		v, e := readValue(raw, i)
		if e <= i {
			return // no value here: malformed
		}
		fn(v)
		i = skipSpace(raw, e)
		if i >= len(raw) || raw[i] != ',' {
			return // the end, or malformed
		}
		i = skipSpace(raw, i+1)
	}
}

// op records the CPU op just scanned: its External id and signature
// (name and the recorded shapes, by their text).
func (d *decoder) op(start trace.Time, dur, thread int64) {
	f := &d.f
	a := &f.attr
	o := rawOp{start: start, dur: dur, thread: thread}
	if n, ok := num(&a.ext); ok && n > 0 {
		o.ext = n
	}
	name, cut := trace.CutName(f.name.Str)
	if cut {
		d.anomaly(trace.AnomLongName)
	}
	d.key = appendSigKey(d.key[:0], name, a.dims.Raw, a.types.Raw, a.concrete.Raw, a.strides.Raw)
	o.sig = d.loc.sig(unsafeString(d.key))
	d.out.op, d.out.hasOp = o, true
}

// appendSigKey appends the text that identifies an op's signature: its
// name and the raw JSON of its recorded shapes, each after its length
// (the scanner passes any byte inside a string, so no separator would
// do).
func appendSigKey(b []byte, name, dims, types, concrete, strides string) []byte {
	for _, s := range [...]string{name, dims, types, concrete, strides} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// sigParts splits a key appendSigKey made into its five parts.
func sigParts(key string) [5]string {
	var p [5]string
	for i := range p {
		n, w := binary.Uvarint([]byte(key[:min(len(key), binary.MaxVarintLen64)]))
		if w <= 0 || uint64(len(key)-w) < n {
			return p // not a key appendSigKey made
		}
		p[i], key = key[w:w+int(n)], key[w+int(n):]
	}
	return p
}

// buildSig decodes a signature key into a trace.OpSig, interning its
// strings with id.
func buildSig(key string, id func(string) trace.NameID) trace.OpSig {
	parts := sigParts(key)
	sig := trace.OpSig{Name: id(parts[0])}
	dims, types, concrete, strides := elems(parts[1]), elems(parts[2]), elems(parts[3]), elems(parts[4])
	n := max(len(dims), len(types), len(concrete), len(strides))
	if n == 0 {
		return sig
	}
	sig.Args = make([]trace.OpArg, n)
	for i := range sig.Args {
		arg := &sig.Args[i]
		if i < len(types) && types[i].Type == vString {
			arg.Type = id(cutArg(types[i].Str))
		}
		if i < len(concrete) && concrete[i].Type == vString {
			arg.Value = id(cutArg(concrete[i].Str))
		}
		if i < len(dims) {
			if list, nested := ints2(dims[i]); nested {
				arg.List = list
			} else {
				arg.Dims = ints(dims[i])
			}
		}
		if i < len(strides) {
			if _, nested := ints2(strides[i]); !nested {
				arg.Strides = ints(strides[i])
			}
		}
	}
	return sig
}

// cutArg bounds a recorded argument's text (a concrete input can be a
// long list) to what a name may hold.
func cutArg(s string) string {
	s, _ = trace.CutName(s)
	return s
}

// elems returns the elements of the JSON array raw, nil when raw is not
// one.
func elems(raw string) []val {
	raw = strings.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '[' {
		return nil
	}
	var out []val
	eachElem(raw, func(v val) { out = append(out, v) })
	return out
}

// ints reads an array of integers ([] included); nil when v is not one.
func ints(v val) []int64 {
	es := elems(v.Raw)
	if v.Type != vJSON || es == nil && strings.TrimSpace(v.Raw) != "[]" {
		return nil
	}
	out := make([]int64, 0, len(es))
	for _, e := range es {
		n, ok := num(&e)
		if !ok || e.Type != vNumber {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// ints2 reads an array of integer arrays (a TensorList's dims); nested
// is false when v is not a non-empty array of arrays.
func ints2(v val) (list [][]int64, nested bool) {
	es := elems(v.Raw)
	if len(es) == 0 {
		return nil, false
	}
	for _, e := range es {
		if e.Type != vJSON || !strings.HasPrefix(e.Raw, "[") {
			return nil, false
		}
		list = append(list, ints(e))
	}
	return list, true
}

// idSet is a set of External ids. Kineto numbers ops from 1 up, so a
// bitmap over [0, 64·len(bits)) holds them in a bit each (a trace of
// millions of ops: a few hundred kB, where a map took tens of MB); ids
// that would stretch it past 64 words plus 4 per id added go to a map, so
// that memory follows the ids present, not their values.
type idSet struct {
	bits  []uint64
	n     int
	other map[int64]struct{}
}

func (s *idSet) add(id int64) {
	s.n++
	if id >= 0 {
		if w := uint64(id) >> 6; w < uint64(len(s.bits)) || w < 64+4*uint64(s.n) {
			if w >= uint64(len(s.bits)) {
				s.bits = slices.Grow(s.bits, int(w)+1-len(s.bits))[:w+1]
			}
			s.bits[w] |= 1 << (uint64(id) & 63)
			return
		}
	}
	if s.other == nil {
		s.other = map[int64]struct{}{}
	}
	s.other[id] = struct{}{}
}

func (s *idSet) has(id int64) bool {
	if id >= 0 {
		if w := uint64(id) >> 6; w < uint64(len(s.bits)) && s.bits[w]&(1<<(uint64(id)&63)) != 0 {
			return true
		}
	}
	_, ok := s.other[id]
	return ok
}
