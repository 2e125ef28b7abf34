package trace

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Attributes: what a trace says about an activity or a launch call beyond
// its place and time. They live in side tables, as Perfetto's args table
// and pprof's NumLabel do, so that the records of the millions of
// activities without any stay small:
//
//	Activity.Attr, Launch.Attr ─→ Attrs[AttrID] ─┬→ Configs[ConfigID]  how it was launched (grid, block, …)
//	                                             ├→ Ops[OpID] ─→ OpSigs[SigID]  the CPU op and its shapes
//	                                             └→ Kernel (NameID): a launch's kernel, as the call names it
//
// Index 0 of every table means "none": a record whose Attr is 0 has no
// attributes, and so on. A trace without attributes may leave the tables
// empty; when a table is not empty, its element 0 is the zero value.
// Configs, OpSigs and the Attrs without an op are interned (records with
// equal attributes share an id); each Op is one call of a CPU op (an
// instance), and the Attrs that name an op are usually its own.
//
// The tables are referenced by index from the records, so Sort, which
// reorders Activities and Launches, leaves them as they are: an index
// moves with the record that holds it.

// AttrID indexes Trace.Attrs; 0 is "no attributes".
type AttrID uint32

// ConfigID indexes Trace.Configs; 0 is "launch configuration unknown".
type ConfigID uint32

// OpID indexes Trace.Ops; 0 is "no CPU op".
type OpID uint32

// SigID indexes Trace.OpSigs; 0 is "no signature".
type SigID uint32

// Attr is the attribute set of one activity or launch call.
type Attr struct {
	// Config is how the kernel was launched: from the kernel's own
	// record (Kineto's kernel args, nsys's kernel columns) or, on a
	// launch call, from the call's args (HIP runtime calls and CUDA-graph
	// capture traces name the grid and block of what they enqueue).
	Config ConfigID
	// Op is the CPU op that launched the work: for an activity, the op
	// its launch call ran in (see Op); for a launch call, the op it ran
	// in. 0 when the trace does not say (nsys; CUDA-graph replays, whose
	// kernels no op launched one by one).
	Op OpID
	// Kernel is, on a launch call, the kernel the call names in its own
	// record (Kineto's args.kernel on HIP launches and during graph
	// capture, when the kernel itself does not run); 0 otherwise, and
	// always 0 on an activity (Activity.Name is its name).
	Kernel NameID
}

// Config is a kernel's launch configuration. Fields are 0 when unknown,
// except the shared memory sizes, which are -1 (0 bytes is a real
// value).
type Config struct {
	Grid  [3]int32 // blocks in x, y, z
	Block [3]int32 // threads per block in x, y, z
	// Registers is the number of registers per thread.
	Registers int32
	// SharedMem is the shared memory per block in bytes, static and
	// dynamic together (Kineto's "shared memory" is their sum).
	SharedMem int32
	// DynamicSharedMem is the dynamic part of SharedMem, -1 when the
	// source gives only the sum.
	DynamicSharedMem int32
}

// NoConfig is the Config of an unknown launch configuration: the value of
// Configs[0].
var NoConfig = Config{SharedMem: -1, DynamicSharedMem: -1}

// Blocks returns the number of thread blocks launched (grid x·y·z), 0
// when the grid is unknown.
func (c Config) Blocks() int64 {
	return int64(c.Grid[0]) * int64(c.Grid[1]) * int64(c.Grid[2])
}

// Threads returns the number of threads per block (block x·y·z), 0 when
// the block is unknown.
func (c Config) Threads() int64 {
	return int64(c.Block[0]) * int64(c.Block[1]) * int64(c.Block[2])
}

// Op is one call of a CPU op (torch.profiler's cpu_op events: aten::addmm,
// vllm::unified_attention, …) that launched GPU work. Only ops that some
// activity or launch refers to are kept.
//
// An activity belongs to the op whose Kineto "External id" it carries
// (Kineto links a kernel to the innermost op on the thread that launched
// it); without one, to the op of its launch call: the call's External
// id, else the innermost op on the call's thread whose interval contains
// the call's start. Kernels replayed from a CUDA graph have no op: the op
// that launched the graph did not launch them one by one.
type Op struct {
	Start Time  // the op's start on the CPU
	Dur   int64 // ns, >= 0
	Proc  int32 // index into Trace.Procs
	Sig   SigID // what it was called with
}

// End returns Start+Dur.
func (o *Op) End() Time { return o.Start + Time(o.Dur) }

// OpSig is an op's name and what torch.profiler's record_shapes recorded
// of its arguments ("Input Dims", "Input type", "Input Strides",
// "Concrete Inputs"), one OpArg per argument in order. Interned: every
// call with the same name and arguments shares one.
type OpSig struct {
	Name NameID // "aten::addmm"
	Args []OpArg
}

// OpArg is one argument of an op call, as recorded. For a tensor, Dims
// and (when recorded) Strides; for a tensor list ("TensorList"), List
// holds the dims of each tensor; for a scalar, Value its text.
type OpArg struct {
	// Type is the recorded type: "c10::BFloat16", "float", "long int",
	// "Scalar", "TensorList", "GenericList", …; "" (0) when not recorded.
	Type NameID
	// Dims are a tensor's sizes ("Input Dims"): [] for a scalar or a
	// 0-d tensor, nil when not recorded.
	Dims []int64
	// Strides are a tensor's strides ("Input Strides"), nil when not
	// recorded.
	Strides []int64
	// List holds, for a list of tensors, the sizes of each; nil
	// otherwise.
	List [][]int64
	// Value is "Concrete Inputs": the value of a scalar argument as
	// written ("1", "False", "[0, 1]"); "" (0) when none.
	Value NameID
}

// ProcessGroup is one communicator of a distributed run as Kineto's
// distributedInfo.pg_config describes it.
type ProcessGroup struct {
	Name    string // pg_name: "0", "1", …
	Desc    string // pg_desc: "default_pg", "undefined", …
	Backend string // backend_config: "cuda:nccl", "cpu:gloo,cuda:gloo"
	Size    int    // pg_size; -1 when absent
	Ranks   []int  // the global ranks in it
}

// RankSource says what told a trace's ranks.
type RankSource uint8

const (
	// RankUnknown: nothing; ranks are -1.
	RankUnknown RankSource = iota
	// RankFromDistributedInfo: Kineto's distributedInfo.rank.
	RankFromDistributedInfo
	// RankFromNCCL: NCCL's own NVTX payloads (ncclCommInitRank's "Rank").
	RankFromNCCL
	// RankFromThreadName: a thread name of the process
	// (VLLM::Worker_TP5, Worker_PP1_TP3, MPI Rank 2).
	RankFromThreadName
	// RankFromEnv: an environment variable captured with the process
	// (RANK, OMPI_COMM_WORLD_RANK, …).
	RankFromEnv
	// RankFromDevice: the CUDA device the process used, one process per
	// device.
	RankFromDevice
	// RankFromFileName: the trace file's name (vLLM's
	// {instance}-rank-{N}.….pt.trace.json.gz), for a trace that does not
	// say its rank; the loader sets it.
	RankFromFileName
	// RankFromMerge: the record traceq merge writes in a merged trace of
	// which process holds which rank.
	RankFromMerge
)

var rankSourceNames = [...]string{RankUnknown: "unknown", RankFromDistributedInfo: "distributedInfo",
	RankFromNCCL: "nccl", RankFromThreadName: "thread name", RankFromEnv: "environment", RankFromDevice: "device",
	RankFromFileName: "file name", RankFromMerge: "traceq merge"}

func (s RankSource) String() string {
	if int(s) < len(rankSourceNames) {
		return rankSourceNames[s]
	}
	return fmt.Sprintf("rank source(%d)", s)
}

// AttrOf returns the attributes of id: the zero Attr for 0 (or an empty
// table).
func (t *Trace) AttrOf(id AttrID) Attr {
	if id == 0 || int(id) >= len(t.Attrs) {
		return Attr{}
	}
	return t.Attrs[id]
}

// ConfigOf returns the launch configuration of id: NoConfig for 0.
func (t *Trace) ConfigOf(id ConfigID) Config {
	if id == 0 || int(id) >= len(t.Configs) {
		return NoConfig
	}
	return t.Configs[id]
}

// OpOf returns the op of id, or nil for 0.
func (t *Trace) OpOf(id OpID) *Op {
	if id == 0 || int(id) >= len(t.Ops) {
		return nil
	}
	return &t.Ops[id]
}

// SigOf returns the signature of id: the zero OpSig for 0.
func (t *Trace) SigOf(id SigID) *OpSig {
	if id == 0 || int(id) >= len(t.OpSigs) {
		return &OpSig{}
	}
	return &t.OpSigs[id]
}

// CompareOps is the order of Trace.Ops: by process, start, the longer
// (enclosing) op first, then signature.
func CompareOps(a, b *Op) int {
	if c := cmp.Compare(a.Proc, b.Proc); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Dur, a.Dur); c != 0 {
		return c
	}
	return cmp.Compare(a.Sig, b.Sig)
}

// checkAttrs reports the first violated invariant of the attribute
// tables, or nil.
func (t *Trace) checkAttrs() error {
	n := NameID(len(t.Names))
	np := int32(len(t.Procs))
	if len(t.Attrs) > 0 && t.Attrs[0] != (Attr{}) {
		return fmt.Errorf("attr 0 is not empty: %+v", t.Attrs[0])
	}
	if len(t.Configs) > 0 && t.Configs[0] != NoConfig {
		return fmt.Errorf("config 0 is not NoConfig: %+v", t.Configs[0])
	}
	if len(t.Ops) > 0 && t.Ops[0] != (Op{}) {
		return fmt.Errorf("op 0 is not empty: %+v", t.Ops[0])
	}
	if len(t.OpSigs) > 0 && (t.OpSigs[0].Name != 0 || t.OpSigs[0].Args != nil) {
		return fmt.Errorf("op signature 0 is not empty")
	}
	for i := range t.Attrs {
		a := &t.Attrs[i]
		if int(a.Config) >= max(len(t.Configs), 1) {
			return fmt.Errorf("attr %d: config %d out of range (%d configs)", i, a.Config, len(t.Configs))
		}
		if int(a.Op) >= max(len(t.Ops), 1) {
			return fmt.Errorf("attr %d: op %d out of range (%d ops)", i, a.Op, len(t.Ops))
		}
		if a.Kernel >= n {
			return fmt.Errorf("attr %d: kernel name id %d out of range (%d names)", i, a.Kernel, n)
		}
	}
	for i := range t.Configs {
		c := &t.Configs[i]
		for _, v := range append(c.Grid[:], c.Block[:]...) {
			if v < 0 {
				return fmt.Errorf("config %d: negative grid or block %v %v", i, c.Grid, c.Block)
			}
		}
		if c.Registers < 0 || c.SharedMem < -1 || c.DynamicSharedMem < -1 {
			return fmt.Errorf("config %d: negative size %+v", i, *c)
		}
	}
	for i := range t.Ops {
		o := &t.Ops[i]
		if o.Dur < 0 {
			return fmt.Errorf("op %d: negative duration %d", i, o.Dur)
		}
		if o.Proc < 0 || (o.Proc >= np && np > 0) || (np == 0 && o.Proc != 0) {
			return fmt.Errorf("op %d: proc %d out of range (%d procs)", i, o.Proc, np)
		}
		if int(o.Sig) >= max(len(t.OpSigs), 1) {
			return fmt.Errorf("op %d: signature %d out of range (%d signatures)", i, o.Sig, len(t.OpSigs))
		}
		if i > 1 && CompareOps(&t.Ops[i-1], o) > 0 {
			return fmt.Errorf("op %d: out of order", i)
		}
	}
	for i := range t.OpSigs {
		s := &t.OpSigs[i]
		if s.Name >= n {
			return fmt.Errorf("op signature %d: name id out of range (%d names)", i, n)
		}
		for j := range s.Args {
			if a := &s.Args[j]; a.Type >= n || a.Value >= n {
				return fmt.Errorf("op signature %d, argument %d: name id out of range (%d names)", i, j, n)
			}
		}
	}
	return nil
}

// AttrInterner assigns AttrIDs, ConfigIDs and SigIDs to values, sharing
// an id between equal values. Parsers use it to build the tables; an Attr
// that names an op is not looked up, only appended (ops are instances:
// their attributes rarely repeat).
//
// Its maps are keyed by 64-bit integers, not the structs: Go's maps hash
// a struct key an order of magnitude slower than an integer (measured:
// 5 M lookups among 200 k configurations took 4 s, 0.2 s keyed by a
// uint64), and an nsys export interns a configuration per kernel.
type AttrInterner struct {
	attrs   []Attr
	attrIDs map[uint64]AttrID // op-less attributes: Config | Kernel<<32
	configs ConfigTable
	sigs    []OpSig
	sigIDs  map[string]SigID
}

// NewAttrInterner returns an interner whose tables hold their zero
// element at index 0.
func NewAttrInterner() *AttrInterner {
	return &AttrInterner{
		attrs: []Attr{{}}, attrIDs: map[uint64]AttrID{0: 0},
		configs: NewConfigTable(),
		sigs:    []OpSig{{}}, sigIDs: map[string]SigID{"": 0},
	}
}

// Attr returns the id of a.
func (in *AttrInterner) Attr(a Attr) AttrID {
	if a.Op != 0 {
		in.attrs = append(in.attrs, a)
		return AttrID(len(in.attrs) - 1)
	}
	k := uint64(a.Config) | uint64(a.Kernel)<<32
	if id, ok := in.attrIDs[k]; ok {
		return id
	}
	id := AttrID(len(in.attrs))
	in.attrs = append(in.attrs, a)
	in.attrIDs[k] = id
	return id
}

// Config returns the id of c.
func (in *AttrInterner) Config(c Config) ConfigID { return in.configs.ID(c) }

// ConfigOf returns the configuration of id.
func (in *AttrInterner) ConfigOf(id ConfigID) Config { return in.configs.configs[id] }

// ConfigTable interns launch configurations: Configs()[id] is the
// configuration of id; id 0 is NoConfig.
type ConfigTable struct {
	configs []Config
	byHash  map[uint64]ConfigID // by Config.hash, the first with that hash
	others  map[Config]ConfigID // configurations whose hash another has
}

// NewConfigTable returns a table holding NoConfig as id 0.
func NewConfigTable() ConfigTable {
	return ConfigTable{configs: []Config{NoConfig}, byHash: map[uint64]ConfigID{NoConfig.hash(): 0}}
}

// ID returns the id of c, assigning the next one if c is new.
func (t *ConfigTable) ID(c Config) ConfigID {
	h := c.hash()
	id, ok := t.byHash[h]
	if ok && t.configs[id] == c {
		return id
	}
	if ok { // a collision: two configurations, one hash
		if id, ok := t.others[c]; ok {
			return id
		}
	}
	id = ConfigID(len(t.configs))
	t.configs = append(t.configs, c)
	if !ok {
		t.byHash[h] = id
	} else {
		if t.others == nil {
			t.others = map[Config]ConfigID{}
		}
		t.others[c] = id
	}
	return id
}

// Configs returns the table, indexed by ConfigID.
func (t *ConfigTable) Configs() []Config { return t.configs }

// hash mixes the fields of c into 64 bits.
func (c Config) hash() uint64 {
	h := uint64(0x9E3779B97F4A7C15)
	for _, v := range [...]int32{c.Grid[0], c.Grid[1], c.Grid[2], c.Block[0], c.Block[1], c.Block[2],
		c.Registers, c.SharedMem, c.DynamicSharedMem} {
		h ^= uint64(uint32(v))
		h *= 0xBF58476D1CE4E5B9
		h ^= h >> 31
	}
	return h
}

// Sig returns the id of the signature whose key is key (any text that is
// equal for equal signatures: a parser uses the recorded text; it is
// copied when kept), calling build for its value the first time.
func (in *AttrInterner) Sig(key string, build func() OpSig) SigID {
	if id, ok := in.sigIDs[key]; ok {
		return id
	}
	id := SigID(len(in.sigs))
	in.sigs = append(in.sigs, build())
	in.sigIDs[strings.Clone(key)] = id
	return id
}

// Tables returns the tables built, for Trace.Attrs, Configs and OpSigs;
// all nil when nothing but the zero elements was added.
func (in *AttrInterner) Tables() ([]Attr, []Config, []OpSig) {
	attrs, configs, sigs := slices.Clip(in.attrs), slices.Clip(in.configs.configs), slices.Clip(in.sigs)
	if len(attrs) == 1 {
		attrs = nil
	}
	if len(configs) == 1 {
		configs = nil
	}
	if len(sigs) == 1 {
		sigs = nil
	}
	return attrs, configs, sigs
}
