package window

import (
	"cmp"
	"encoding/binary"
	"iter"
	"math"
	"slices"
	"sync"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// What the table keeps of an input's activities beyond the windows' sums,
// for the analyses that need more than a sum: the kernels table (every
// duration, for its medians and spreads) and the collectives (each
// collective kernel, in order, to match across ranks). Both are gathered
// in the table's one pass, so that the model can be dropped once the
// input is added (Table.Release): a run's cost grows with one rank's
// model plus these records, not with every model (docs/performance.md).

// Durations are the durations of an input's GPU activities of one name,
// full category, device, window class and kind, sorted: what the kernels
// table reads of them (docs/definitions.md#the-kernels-table). They are
// held delta-encoded (a varint per activity, one or two bytes for most),
// a quarter of the 8 bytes a duration takes in the model.
type Durations struct {
	Name   NameID
	Cat    CatID // the activities' full category (never folded)
	Device int32
	Class  step.Class
	// Kernel is true for kernels, false for memcpy and memset.
	Kernel bool
	N      int64
	Total  int64
	Min    int64
	Max    int64
	enc    []byte
}

// Bytes is the size of the encoded durations.
func (d *Durations) Bytes() int { return len(d.enc) }

// AppendTo appends the durations, ascending, to dst.
func AppendTo[T int32 | int64](dst []T, d *Durations) []T {
	b := d.enc
	if len(b) == 0 {
		return dst
	}
	dst = slices.Grow(dst, int(d.N))
	x, n := binary.Varint(b)
	b = b[n:]
	dst = append(dst, T(x))
	for len(b) > 0 {
		// Most steps between sorted durations take one byte.
		if b[0] < 0x80 {
			x += int64(b[0])
			b = b[1:]
		} else {
			dx, n := binary.Uvarint(b)
			b = b[n:]
			x += int64(dx)
		}
		dst = append(dst, T(x))
	}
	return dst
}

// Fits32 reports whether every duration fits an int32 (kernels shorter
// than 2.1 s: the kernels table then holds them in half the memory).
func (d *Durations) Fits32() bool { return d.Min >= math.MinInt32 && d.Max <= math.MaxInt32 }

type durKey struct {
	name   NameID
	cat    CatID
	device int32
	class  step.Class
	kernel bool
}

// durations gathers an input's durations during the pass: the pass
// notes each activity's slot (of) and counts the activities of each slot
// (n), and done then puts each slot's durations in place, in activity
// order, each slot's share of one slice sized once (appending to a slice
// per slot, growing it, held more memory at once).
type durations struct {
	m    map[durKey]int
	keys []durKey
	of   []int32 // per activity: its slot
	n    []int32 // per slot: the activities of the part's pass
	// parts are the runs of activities whose slots were counted, in
	// order: this pass's own first, then those of parts absorbed.
	parts []durPart
	vals  [][]int64
}

// durPart is one part of the pass's slots: activities [from, to), their
// counts per slot of that part, and the slot of this pass each of those
// is (nil: the same).
type durPart struct {
	from, to int
	n        []int32
	slot     []int32
}

// slot returns the index of k's durations, adding k when new. The pass
// looks it up once per window and name (nameAcc.durs), not per activity.
func (d *durations) slot(k durKey) int {
	if d.m == nil {
		d.m = map[durKey]int{}
	}
	i, ok := d.m[k]
	if !ok {
		i = len(d.keys)
		d.m[k] = i
		d.keys = append(d.keys, k)
		d.n = append(d.n, 0)
	}
	return i
}

// absorb adds o's slots to d's, o being the durations of the activities
// [from, to) gathered by another part of the pass, which follows d's
// [dFrom, dTo) and those d absorbed before.
func (d *durations) absorb(o *durations, dFrom, dTo, from, to int) {
	if d.parts == nil {
		d.parts = []durPart{{from: dFrom, to: dTo, n: d.n}}
	}
	slot := make([]int32, len(o.keys))
	for s, k := range o.keys {
		slot[s] = int32(d.slot(k))
	}
	d.parts = append(d.parts, durPart{from: from, to: to, n: o.n, slot: slot})
}

// place makes vals, each slot's durations in activity order: each part
// of the pass writes its activities' at their place, on its own
// goroutine.
func (d *durations) place(acts []trace.Activity) {
	if d.of == nil { // Options.SkipDurations
		return
	}
	parts := d.parts
	if parts == nil {
		parts = []durPart{{from: 0, to: len(d.of), n: d.n}}
	}
	// at[j][s] is where part j's next duration of slot s goes.
	at := make([][]int32, len(parts))
	for j, p := range parts {
		at[j] = make([]int32, len(d.keys))
		for s, c := range p.n {
			g := int32(s)
			if p.slot != nil {
				g = p.slot[s]
			}
			at[j][g] = c
		}
	}
	all := make([]int64, len(d.of))
	d.vals = make([][]int64, len(d.keys))
	var sum int32
	for s := range d.keys {
		from := sum
		for j := range parts {
			c := at[j][s]
			at[j][s] = sum
			sum += c
		}
		d.vals[s] = all[from:sum:sum]
	}
	var wg sync.WaitGroup
	for j := range parts {
		p := &parts[j]
		wg.Add(1)
		go func() {
			defer wg.Done()
			put(all, at[j], p, d.of[p.from:p.to], acts[p.from:p.to])
		}()
	}
	wg.Wait()
}

// put writes the durations of one part of the pass at their places.
func put(all []int64, at []int32, p *durPart, of []int32, acts []trace.Activity) {
	if p.slot == nil {
		for i, s := range of {
			all[at[s]] = acts[i].Dur
			at[s]++
		}
		return
	}
	for i, s := range of {
		g := p.slot[s]
		all[at[g]] = acts[i].Dur
		at[g]++
	}
}

// done sorts and encodes the durations, in key order. It runs after an
// input's pass, when a core would otherwise idle: the slots are split in
// two halves of about as many values, one sorted on another goroutine.
func (d *durations) done(acts []trace.Activity) []Durations {
	out := make([]Durations, len(d.keys))
	d.place(acts)
	total, half := len(d.of), 0
	cut := len(d.keys)
	for i, v := range d.vals {
		if half >= total/2 {
			cut = i
			break
		}
		half += len(v)
	}
	if total < 1<<16 {
		cut = 0 // too few to share
	}
	var wg sync.WaitGroup
	if cut > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.encode(out, 0, cut)
		}()
	}
	d.encode(out, cut, len(d.keys))
	wg.Wait()
	d.of = nil
	slices.SortFunc(out, func(a, b Durations) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Cat, b.Cat), cmp.Compare(a.Device, b.Device),
			a.Class.Compare(b.Class), cmp.Compare(boolInt(a.Kernel), boolInt(b.Kernel)))
	})
	return out
}

// encode sorts and encodes the durations of slots [from, to) into out.
func (d *durations) encode(out []Durations, from, to int) {
	var buf []byte
	var scratch []int64
	for i := from; i < to; i++ {
		k := d.keys[i]
		v := d.vals[i]
		sortInts(v, &scratch)
		r := Durations{Name: k.name, Cat: k.cat, Device: k.device, Class: k.class, Kernel: k.kernel,
			N: int64(len(v)), Min: v[0], Max: v[len(v)-1]}
		buf = binary.AppendVarint(buf[:0], v[0])
		for j := 1; j < len(v); j++ {
			buf = binary.AppendUvarint(buf, uint64(v[j]-v[j-1]))
		}
		for _, x := range v {
			r.Total += x
		}
		r.enc = slices.Clone(buf)
		d.vals[i] = nil
		out[i] = r
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Collectives are an input's collective kernels (kernels whose full
// category is communication/*, ActivityCategory): what the collectives
// analysis matches across ranks, and all it reads of the model. 24 bytes
// a kernel; what kernels share (process, stream, category, args) is held
// once.
type Collectives struct {
	// Kernels are in activity order (by start).
	Kernels []CollectiveKernel
	Keys    []CollectiveKey
	// Args are the distinct collective args of the kernels (Args.Find).
	Args []CollectiveArgs
	// Shapes are the distinct first tensors of the record_param_comms ops
	// that launched kernels without args (older PyTorch writes none).
	Shapes []CollectiveShape
}

// CollectiveShape is the first tensor of a record_param_comms op: its
// element count and type as Kineto writes it ("float", "long int").
type CollectiveShape struct {
	Elems int64
	Type  string
}

// CollectiveKernel is one collective kernel.
type CollectiveKernel struct {
	Start trace.Time
	Dur   int64
	// Step is the index of its step in the input's Steps.List; -1 for
	// none (outside any step, or no steps).
	Step int32
	Key  int32 // index in Collectives.Keys
}

// End is the kernel's end.
func (k *CollectiveKernel) End() trace.Time { return k.Start + trace.Time(k.Dur) }

// CollectiveKey is what collective kernels of an input share.
type CollectiveKey struct {
	Proc   int32 // index in the input's processes (Rank.Proc)
	Stream int32
	Cat    CatID // full category: communication/<op>
	Args   int32 // index in Collectives.Args; -1 for none
	// Name is the kernel's name (the table's), Device its GPU; Shape,
	// for a kernel without args, its launching op's tensor (an index in
	// Collectives.Shapes; -1 for none).
	Name   NameID
	Device int32
	Shape  int32
}

// CollectiveArgs are a collective kernel's args (trace.Collective) with
// their names resolved.
type CollectiveArgs struct {
	Op, DType, Group, GroupRanks string
	// InElems and OutElems are the message element counts, -1 when absent.
	InElems, OutElems int64
	GroupSize         int32 // -1 when absent
	Source            trace.CollectiveSource
	// InSplit and OutSplit sum the all_to_all's per-peer split sizes
	// (trace.Collective); -1 when not given in full.
	InSplit, OutSplit int64
}

// collectives gathers an input's collective kernels during the pass.
type collectives struct {
	out    Collectives
	keys   map[CollectiveKey]int32
	args   map[argsKey]int32
	shapes map[CollectiveShape]int32
	// The kernels, in chunks of collChunk (appending to one slice copied
	// it as it grew: 10 ms of a GB of trace's 300k collective kernels):
	// chunks full, chunk the last. done joins them.
	chunks [][]CollectiveKernel
	chunk  []CollectiveKernel
	// The key of the last kernel and its index: a stream's kernels
	// mostly share it (a map lookup of a 28-byte key per kernel was 9 ms
	// of those 300k).
	lastKey CollectiveKey
	lastKi  int32
	// more are the kernels of the parts of the pass absorbed, in order,
	// with their keys' indices in out.Keys (absorb).
	more []absorbed
}

var collChunk = 4096 // a variable for TestCollectivesAbsorb

type absorbed struct {
	kernels *collectives
	keys    []int32
}

// argsKey is the content of a trace.Collective's args, its names by id.
type argsKey struct {
	op, dtype, group, ranks trace.NameID
	in, out                 int64
	inSplit, outSplit       int64
	size                    int32
	source                  trace.CollectiveSource
}

func (c *collectives) add(t *trace.Trace, a *trace.Activity, step int32, cat CatID, name NameID, args *trace.Collective) {
	if c.keys == nil {
		c.keys, c.args, c.shapes = map[CollectiveKey]int32{}, map[argsKey]int32{}, map[CollectiveShape]int32{}
	}
	k := CollectiveKey{Proc: a.Proc, Stream: a.Stream, Cat: cat, Args: -1, Name: name, Device: a.Device, Shape: -1}
	if args == nil {
		if sh, ok := opShape(t, a); ok {
			k.Shape = indexOf(c.shapes, &c.out.Shapes, sh, func() CollectiveShape { return sh })
		}
	}
	if args != nil {
		ak := argsKey{args.Op, args.DType, args.Group, args.GroupRanks, args.InElems, args.OutElems, args.InSplit, args.OutSplit, args.GroupSize, args.Source}
		k.Args = indexOf(c.args, &c.out.Args, ak, func() CollectiveArgs {
			return CollectiveArgs{Op: t.Names[args.Op], DType: t.Names[args.DType], Group: t.Names[args.Group],
				GroupRanks: t.Names[args.GroupRanks], InElems: args.InElems, OutElems: args.OutElems,
				GroupSize: args.GroupSize, Source: args.Source, InSplit: args.InSplit, OutSplit: args.OutSplit}
		})
	}
	ki := c.lastKi
	if k != c.lastKey || len(c.out.Keys) == 0 {
		ki = indexOf(c.keys, &c.out.Keys, k, func() CollectiveKey { return k })
		c.lastKey, c.lastKi = k, ki
	}
	if len(c.chunk) == cap(c.chunk) {
		if len(c.chunk) > 0 {
			c.chunks = append(c.chunks, c.chunk)
		}
		c.chunk = make([]CollectiveKernel, 0, collChunk)
	}
	c.chunk = append(c.chunk, CollectiveKernel{Start: a.Start, Dur: a.Dur, Step: step, Key: ki})
}

// kernels are the kernels gathered, in order (chunks, then chunk).
func (c *collectives) kernels() iter.Seq[[]CollectiveKernel] {
	return func(yield func([]CollectiveKernel) bool) {
		for _, ch := range c.chunks {
			if !yield(ch) {
				return
			}
		}
		if len(c.chunk) > 0 {
			yield(c.chunk)
		}
	}
}

// count is the number of kernels gathered.
func (c *collectives) count() int {
	n := len(c.chunk)
	for _, ch := range c.chunks {
		n += len(ch)
	}
	return n
}

// absorb adds o's kernels, gathered by another part of the pass over
// the activities that follow c's, to c: its keys, args and shapes are
// numbered as one pass over both would have, its kernels joined to c's by
// done.
func (c *collectives) absorb(o *collectives) {
	if o.count() == 0 {
		return
	}
	if c.keys == nil {
		c.keys, c.args, c.shapes = map[CollectiveKey]int32{}, map[argsKey]int32{}, map[CollectiveShape]int32{}
	}
	argKeys := make([]argsKey, len(o.out.Args))
	for k, i := range o.args {
		argKeys[i] = k
	}
	args := make([]int32, len(o.out.Args))
	for i, k := range argKeys {
		args[i] = indexOf(c.args, &c.out.Args, k, func() CollectiveArgs { return o.out.Args[i] })
	}
	shapes := make([]int32, len(o.out.Shapes))
	for i, sh := range o.out.Shapes {
		shapes[i] = indexOf(c.shapes, &c.out.Shapes, sh, func() CollectiveShape { return sh })
	}
	keys := make([]int32, len(o.out.Keys))
	for i, k := range o.out.Keys {
		if k.Args >= 0 {
			k.Args = args[k.Args]
		}
		if k.Shape >= 0 {
			k.Shape = shapes[k.Shape]
		}
		keys[i] = indexOf(c.keys, &c.out.Keys, k, func() CollectiveKey { return k })
	}
	c.more = append(c.more, absorbed{o, keys})
}

// indexOf returns the index of key k in list, whose indices m holds by
// key: a new key's value (v) is appended. The collectives' keys, args and
// shapes are numbered so, in order of first use.
func indexOf[K comparable, V any](m map[K]int32, list *[]V, k K, v func() V) int32 {
	i, ok := m[k]
	if !ok {
		i = int32(len(*list))
		m[k] = i
		*list = append(*list, v())
	}
	return i
}

// opShape is the first tensor of the record_param_comms op that launched
// kernel a (its op: trace.Attr.Op), when it has one with dimensions.
func opShape(t *trace.Trace, a *trace.Activity) (CollectiveShape, bool) {
	o := t.OpOf(t.AttrOf(a.Attr).Op)
	if o == nil || int(o.Sig) >= len(t.OpSigs) {
		return CollectiveShape{}, false
	}
	sig := &t.OpSigs[o.Sig]
	if t.Names[sig.Name] != "record_param_comms" || len(sig.Args) == 0 || len(sig.Args[0].Dims) == 0 {
		return CollectiveShape{}, false
	}
	n := int64(1)
	for _, d := range sig.Args[0].Dims {
		if d <= 0 || n > math.MaxInt64/int64(d) {
			return CollectiveShape{}, false
		}
		n *= int64(d)
	}
	return CollectiveShape{Elems: n, Type: t.Names[sig.Args[0].Type]}, true
}

// done is the input's record, its slices at their size.
func (c *collectives) done() Collectives {
	out := c.out
	n := c.count()
	for _, m := range c.more {
		n += m.kernels.count()
	}
	if n == 0 {
		return out
	}
	out.Kernels = make([]CollectiveKernel, 0, n)
	for ch := range c.kernels() {
		out.Kernels = append(out.Kernels, ch...)
	}
	for _, m := range c.more {
		for ch := range m.kernels.kernels() {
			for _, k := range ch {
				k.Key = m.keys[k.Key]
				out.Kernels = append(out.Kernels, k)
			}
		}
	}
	return out
}

// isComm reports whether category id is a collective's.
func (t *Table) isComm(id CatID) bool { return t.cats[id].Top == classify.Communication }
