package trace

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Time is a timestamp in nanoseconds on the trace's own clock. Only
// differences between Times of the same Trace are meaningful.
type Time int64

// AddSat returns a + b, held at the int64 limits instead of wrapping
// round: window arithmetic (a start plus an offset, an end plus a
// margin) on timestamps near the limits.
func AddSat(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// NameID indexes Trace.Names.
type NameID uint32

// Kind says what a GPU activity is.
type Kind uint8

const (
	KindKernel Kind = iota // a compute kernel
	KindMemcpy             // a memory copy executed by a copy engine or kernel
	KindMemset             // a memory set
)

var kindNames = [...]string{KindKernel: "kernel", KindMemcpy: "memcpy", KindMemset: "memset"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Format names the input format a trace came from.
type Format string

const (
	FormatChrome Format = "chrome-trace" // torch.profiler / Kineto Chrome-trace JSON
	FormatNsys   Format = "nsys-sqlite"  // nsys export --type sqlite
)

// MaxActivityDur bounds a single GPU activity: one hour. Longer ones are
// clock glitches (an unset end time becomes a duration of days) and would
// swamp every total; both parsers drop them and count an anomaly. Sums
// can still overflow int64 (2^63 ns is 2.56 million hours), so analyses
// check their additions.
const MaxActivityDur = int64(3600e9)

// Activity is one execution of GPU work: a kernel, memcpy or memset.
//
// The struct is kept small (48 bytes) because a trace holds millions of them:
// Attr sits in what would be padding after Kind.
type Activity struct {
	Start  Time  // start on the GPU
	Dur    int64 // duration in ns, >= 0
	Corr   int64 // correlation id linking it to its Launch; 0 when unknown
	Name   NameID
	Device int32 // GPU ordinal; -1 when unknown
	Stream int32 // stream id; -1 when unknown
	Proc   int32 // index into Trace.Procs of the process that launched it
	Kind   Kind
	Attr   AttrID // its attributes (Trace.Attrs): launch configuration, CPU op; 0 when none
}

// End returns Start+Dur.
func (a *Activity) End() Time { return a.Start + Time(a.Dur) }

// Launch is the CPU-side API call that enqueued GPU work (cudaLaunchKernel,
// cudaGraphLaunch, cudaMemcpyAsync, hipLaunchKernel, ...). Corr matches
// Activity.Corr within the same Proc; a CUDA-graph launch shares its Corr with
// every kernel of the replay.
type Launch struct {
	Start  Time
	Dur    int64 // ns
	Corr   int64
	Thread int64 // OS thread id (or a synthetic id for a non-numeric tid)
	Name   NameID
	Proc   int32
	// Attr holds what the call's own record says (Trace.Attrs): the CPU op
	// it ran in and, when the call names them, the kernel and its launch
	// configuration. 0 when none.
	Attr AttrID
}

// RangeKind says where an annotation range lives.
type RangeKind uint8

const (
	// RangeCPU is a range on a CPU thread: torch user_annotation,
	// ProfilerStep#N, an NVTX push/pop or start/end range.
	RangeCPU RangeKind = iota
	// RangeGPU is the GPU-side mirror of a CPU annotation
	// (Kineto's gpu_user_annotation), placed on a device and stream.
	RangeGPU
)

// Range is a named interval: a step marker, a user annotation, an NVTX range.
type Range struct {
	Start  Time
	Dur    int64  // ns, >= 0
	Thread int64  // CPU thread (RangeCPU)
	Name   NameID // the annotation text
	Proc   int32  // index into Trace.Procs (RangeCPU)
	Device int32  // RangeGPU; -1 otherwise
	Stream int32  // RangeGPU; -1 otherwise
	Kind   RangeKind
	Domain NameID // NVTX domain, or the Kineto category ("user_annotation", "cpu_op")
}

// End returns Start+Dur.
func (r *Range) End() Time { return r.Start + Time(r.Dur) }

// CollectiveSource says where a Collective's figures were read.
type CollectiveSource uint8

const (
	// CollectiveOnKernel: the args of the kernel event itself (Kineto
	// copies them onto NCCL kernels since PyTorch 2.1). Proc and Corr name
	// the kernel's launch, as Activity.Corr does.
	CollectiveOnKernel CollectiveSource = iota
	// CollectiveOnCPUOp: the args of a record_param_comms CPU op. It
	// applies to the kernels whose launch call starts inside the op's
	// interval [Start, Start+Dur) on (Proc, Thread).
	CollectiveOnCPUOp
)

var collectiveSourceNames = [...]string{CollectiveOnKernel: "args", CollectiveOnCPUOp: "cpu_op"}

func (s CollectiveSource) String() string {
	if int(s) < len(collectiveSourceNames) {
		return collectiveSourceNames[s]
	}
	return fmt.Sprintf("source(%d)", s)
}

// Collective is what the profiler recorded about one collective call:
// torch.profiler's "Collective name", "In msg nelems", "Out msg nelems",
// "Group size", "dtype" and process group. A trace without such args
// (nsys exports, CUDA-graph replays, custom all-reduce kernels) has none.
type Collective struct {
	Start  Time  // CollectiveOnCPUOp: the op's start; else the kernel's
	Dur    int64 // CollectiveOnCPUOp: the op's duration; else 0
	Corr   int64 // CollectiveOnKernel: the kernel's correlation id
	Thread int64 // CollectiveOnCPUOp: the op's thread
	// InElems and OutElems are the message element counts, -1 when absent.
	InElems, OutElems int64
	Proc              int32
	GroupSize         int32  // -1 when absent
	Op                NameID // "allreduce", "_allgather_base", "broadcast", ...
	DType             NameID // "Float", "BFloat16", ...; 0 ("") when absent
	Group             NameID // "Process Group Name"; 0 when absent
	GroupRanks        NameID // "Process Group Ranks", as written: "[0, 1]"
	Source            CollectiveSource
	// InSplit and OutSplit sum "In split size" and "Out split size", the
	// per-peer counts an all_to_all sends and receives (rows along dim 0
	// for all_to_all_single, elements for the list form); -1 when absent,
	// empty (an even split), truncated (more than 30 peers) or malformed.
	InSplit, OutSplit int64
}

// Proc is one process of the traced program. A Kineto trace holds one
// (or one per process that launched work, when a file holds several); an
// nsys export may hold several (one per TP rank, say).
type Proc struct {
	PID  int64
	Name string
	// Rank is the distributed rank of this process, -1 when unknown;
	// Meta.RankSource says what told it.
	Rank int
	// RankName is the rank as its source wrote it, when that says more
	// than the number: "TP5" (a vLLM worker thread VLLM::Worker_TP5),
	// "PP1_TP3", "DP0_TP2"; "" otherwise.
	RankName string
}

// Device describes one GPU, as Kineto's deviceProperties and nsys's
// TARGET_INFO_GPU give it. Every property is zero ("") when the trace
// does not say.
type Device struct {
	ID   int32
	Name string // e.g. "NVIDIA H100 80GB HBM3"
	// Chip is the chip's name ("GH100"; nsys only).
	Chip string
	// SMs is the number of streaming multiprocessors (AMD: compute units).
	SMs int
	// MemoryBytes is the device memory (totalGlobalMem, totalMemory).
	MemoryBytes int64
	// ClockHz is the SM clock (nsys's clockRate; Kineto does not record it).
	ClockHz int64
	// MemoryBandwidth is the memory bandwidth in bytes per second (nsys's
	// memoryBandwidth).
	MemoryBandwidth int64
	// L2Bytes is the L2 cache size (nsys).
	L2Bytes int64
	// ComputeMajor and ComputeMinor are the compute capability (9.0 for
	// an H100; AMD's gfx version, 9.4 for gfx942).
	ComputeMajor, ComputeMinor int
	// WarpSize is the threads per warp (32; 64 on AMD).
	WarpSize int
	// MaxThreadsPerSM, RegistersPerSM and SharedMemPerSM are the
	// per-multiprocessor limits occupancy is computed from.
	MaxThreadsPerSM int
	RegistersPerSM  int
	SharedMemPerSM  int64
}

// Meta is what a trace says about itself.
type Meta struct {
	Format Format
	// Rank and WorldSize come from Kineto's distributedInfo (or from the
	// process list of an nsys export); -1 when the trace does not say.
	Rank      int
	WorldSize int
	Backend   string // "nccl", "gloo", ...; "" when unknown
	// SchemaVersion is Kineto's schemaVersion, or the nsys export version.
	SchemaVersion string
	// ToolVersion is the producer's version when present (PyTorch, nsys).
	ToolVersion string
	// BaseTime is Kineto's baseTimeNanoseconds (0 when absent): the
	// wall-clock offset of the trace's relative timestamps.
	BaseTime int64
	Devices  []Device
	// Host is the name of the machine the trace was taken on (nsys's
	// TARGET_INFO_SYSTEM_ENV Hostname; Kineto traces do not record it);
	// "" when unknown.
	Host string
	// ProcessGroups are the communicators of a distributed run as
	// Kineto's distributedInfo.pg_config lists them, in the trace's order
	// (the ones this rank belongs to, in the traces seen), and
	// ProcessGroupCount is its pg_count (-1 when absent): 71 groups in a
	// vLLM run on 8 GPUs whose rank 0 lists 15.
	ProcessGroups     []ProcessGroup
	ProcessGroupCount int
	// RankSource says what told Rank and each Proc's Rank.
	RankSource RankSource
}

// Anomaly counts odd but survivable input: events that were dropped,
// clamped or repaired. A parser fills it in; the CLI prints a one-line
// summary.
type Anomaly struct {
	What  string // short, lower-case description: "negative dur clamped to 0"
	Count int64
	// Example is one instance (an event index or byte offset and name).
	Example string
}

// Anomalies an analysis acts on, by their What: a finding names what the
// trace lacks when a parser reported them (package findings).
const (
	// AnomalyWholeGraphs: nsys traced CUDA graphs as whole graphs, so
	// their kernels are missing.
	AnomalyWholeGraphs = "cuda graphs traced as whole graphs, their kernels are missing (capture with --cuda-graph-trace=node)"
	// AnomalyGraphsWithoutWork: graph launches with no GPU work recorded.
	AnomalyGraphsWithoutWork = "cuda graph launches without recorded gpu work (capture with --cuda-graph-trace=node)"
)

// Truncation records that the input ended early and what was salvaged.
type Truncation struct {
	// Offset is the byte offset (in the decompressed stream) where the
	// input ended, and Size the size of the whole file as found on disk.
	Offset int64
	// Reason says why reading stopped ("unexpected end of JSON", "gzip: unexpected EOF").
	Reason string
	// Events is the number of complete events read before the cut.
	Events int64
}

// Trace is one parsed input.
//
// Invariants (CheckValid): Activities, Launches and Ranges are in the total
// orders of CompareActivities, CompareLaunches and CompareRanges; every
// NameID indexes Names; every Proc indexes Procs; every attribute id
// indexes its table, whose element 0 is the zero value; no duration is
// negative.
type Trace struct {
	Meta       Meta
	Names      []string
	Activities []Activity
	Launches   []Launch
	Ranges     []Range
	Procs      []Proc
	// Collectives are sorted by (Source, Proc, Corr, Start, Thread), then
	// the other fields (CompareCollectives).
	Collectives []Collective
	Anomalies   []Anomaly
	Truncated   *Truncation // nil when the input was complete
	// Mangled holds the raw spelling of the names parse demangled: the
	// Itanium-mangled kernel names ("_ZN5aiter…") of ROCm traces, whose
	// Names entry reads demangled. nil when no name was mangled.
	Mangled map[NameID]string

	// The attribute tables (attr.go): Activity.Attr and Launch.Attr index
	// Attrs, whose entries index Configs and Ops; Ops index OpSigs. Each
	// is nil when the trace has no such attribute, and holds the zero
	// value at index 0 otherwise.
	Attrs   []Attr
	Configs []Config
	// Ops are sorted by CompareOps (after the zero element).
	Ops    []Op
	OpSigs []OpSig
}

// Name returns the string of id.
func (t *Trace) Name(id NameID) string { return t.Names[id] }

// CompareActivities is the total order of Trace.Activities.
func CompareActivities(a, b *Activity) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Device, b.Device); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Stream, b.Stream); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Dur, b.Dur); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Corr, b.Corr); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Proc, b.Proc); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return cmp.Compare(a.Attr, b.Attr)
}

// CompareLaunches is the total order of Trace.Launches: grouped for lookup by
// (Proc, Corr).
func CompareLaunches(a, b *Launch) int {
	if c := cmp.Compare(a.Proc, b.Proc); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Corr, b.Corr); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Thread, b.Thread); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Dur, b.Dur); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return cmp.Compare(a.Attr, b.Attr)
}

// CompareRanges is the total order of Trace.Ranges: by start, then the
// longer (enclosing) range first.
func CompareRanges(a, b *Range) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Dur, a.Dur); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Proc, b.Proc); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Thread, b.Thread); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Device, b.Device); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Stream, b.Stream); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return cmp.Compare(a.Domain, b.Domain)
}

// CompareCollectives is the total order of Trace.Collectives: by (Source,
// Proc, Corr, Start, Thread), then the other fields.
func CompareCollectives(a, b *Collective) int {
	if c := cmp.Compare(a.Source, b.Source); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Proc, b.Proc); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Corr, b.Corr); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Thread, b.Thread); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Dur, b.Dur); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Op, b.Op); c != 0 {
		return c
	}
	if c := cmp.Compare(a.InElems, b.InElems); c != 0 {
		return c
	}
	if c := cmp.Compare(a.OutElems, b.OutElems); c != 0 {
		return c
	}
	if c := cmp.Compare(a.GroupSize, b.GroupSize); c != 0 {
		return c
	}
	if c := cmp.Compare(a.DType, b.DType); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	if c := cmp.Compare(a.InSplit, b.InSplit); c != 0 {
		return c
	}
	if c := cmp.Compare(a.OutSplit, b.OutSplit); c != 0 {
		return c
	}
	return cmp.Compare(a.GroupRanks, b.GroupRanks)
}

// Sort puts the slices of t into their canonical order. Parsers call it
// once, last, so that analyses and output never depend on input order.
// The attribute tables are referenced by index and keep their order.
func (t *Trace) Sort() {
	if !activitiesSorted(t.Activities) {
		slices.SortFunc(t.Activities, func(a, b Activity) int { return CompareActivities(&a, &b) })
	}
	sortTotal(t.Launches, CompareLaunches)
	slices.SortFunc(t.Ranges, func(a, b Range) int { return CompareRanges(&a, &b) })
	slices.SortFunc(t.Collectives, func(a, b Collective) int { return CompareCollectives(&a, &b) })
}

// sortTotal sorts s by cmp, a total order over every field of T (so that
// s has one sorted order), unless s is sorted already: a parser's records
// nearly always are, and checking them by pointer costs a fraction of a
// sort's pass over sorted records, which copies both at each comparison
// (15 ms of a GB of trace's serial tail).
func sortTotal[T any](s []T, cmp func(a, b *T) int) {
	for i := 1; i < len(s); i++ {
		if cmp(&s[i-1], &s[i]) > 0 {
			slices.SortFunc(s, func(a, b T) int { return cmp(&a, &b) })
			return
		}
	}
}

// activitiesSorted reports whether s is in CompareActivities order. Most
// neighbours differ in start, CompareActivities' first key, which is
// compared here inline: the check is a GB of trace's 1.8 M activities,
// alone on a core after the parse.
func activitiesSorted(s []Activity) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1].Start < s[i].Start {
			continue
		}
		if CompareActivities(&s[i-1], &s[i]) > 0 {
			return false
		}
	}
	return true
}

// FindLaunch returns the launch call of (proc, corr), or nil. When several
// calls share the pair (it should not happen), the earliest wins.
func (t *Trace) FindLaunch(proc int32, corr int64) *Launch {
	i, ok := slices.BinarySearchFunc(t.Launches, struct {
		p int32
		c int64
	}{proc, corr}, func(l Launch, k struct {
		p int32
		c int64
	}) int {
		if c := cmp.Compare(l.Proc, k.p); c != 0 {
			return c
		}
		return cmp.Compare(l.Corr, k.c)
	})
	if !ok {
		return nil
	}
	return &t.Launches[i]
}

// DeviceIDs returns the distinct device ordinals of the activities, ascending.
func (t *Trace) DeviceIDs() []int32 {
	seen := map[int32]bool{}
	var ids []int32
	last, some := int32(0), false
	for i := range t.Activities {
		d := t.Activities[i].Device
		// Runs of one device are common: a map lookup per activity
		// cost 10 ms of a GB of trace's serial tail.
		if some && d == last {
			continue
		}
		last, some = d, true
		if !seen[d] {
			seen[d] = true
			ids = append(ids, d)
		}
	}
	slices.Sort(ids)
	return ids
}

// AddAnomaly counts one more instance of what; example is kept from the first.
func (t *Trace) AddAnomaly(what string, n int64, example string) {
	for i := range t.Anomalies {
		if t.Anomalies[i].What == what {
			t.Anomalies[i].Count += n
			return
		}
	}
	t.Anomalies = append(t.Anomalies, Anomaly{What: what, Count: n, Example: example})
}

// SortAnomalies orders anomalies by description, for deterministic output.
func (t *Trace) SortAnomalies() {
	slices.SortFunc(t.Anomalies, func(a, b Anomaly) int { return cmp.Compare(a.What, b.What) })
}

// CheckValid reports the first violated invariant of t, or nil.
func (t *Trace) CheckValid() error {
	n := NameID(len(t.Names))
	np := int32(len(t.Procs))
	na := AttrID(max(len(t.Attrs), 1))
	for i := range t.Activities {
		a := &t.Activities[i]
		if a.Name >= n {
			return fmt.Errorf("activity %d: name id %d out of range (%d names)", i, a.Name, n)
		}
		if a.Attr >= na {
			return fmt.Errorf("activity %d: attr %d out of range (%d attrs)", i, a.Attr, len(t.Attrs))
		}
		if a.Dur < 0 {
			return fmt.Errorf("activity %d: negative duration %d", i, a.Dur)
		}
		if a.Proc < 0 || (a.Proc >= np && np > 0) || (np == 0 && a.Proc != 0) {
			return fmt.Errorf("activity %d: proc %d out of range (%d procs)", i, a.Proc, np)
		}
		if i > 0 && CompareActivities(&t.Activities[i-1], a) > 0 {
			return fmt.Errorf("activity %d: out of order", i)
		}
	}
	for i := range t.Launches {
		l := &t.Launches[i]
		if l.Name >= n {
			return fmt.Errorf("launch %d: name id %d out of range (%d names)", i, l.Name, n)
		}
		if l.Attr >= na {
			return fmt.Errorf("launch %d: attr %d out of range (%d attrs)", i, l.Attr, len(t.Attrs))
		}
		if l.Dur < 0 {
			return fmt.Errorf("launch %d: negative duration %d", i, l.Dur)
		}
		if i > 0 && CompareLaunches(&t.Launches[i-1], l) > 0 {
			return fmt.Errorf("launch %d: out of order", i)
		}
	}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Name >= n || r.Domain >= n {
			return fmt.Errorf("range %d: name id out of range (%d names)", i, n)
		}
		if r.Dur < 0 {
			return fmt.Errorf("range %d: negative duration %d", i, r.Dur)
		}
		if i > 0 && CompareRanges(&t.Ranges[i-1], r) > 0 {
			return fmt.Errorf("range %d: out of order", i)
		}
	}
	for i := range t.Collectives {
		c := &t.Collectives[i]
		if c.Op >= n || c.DType >= n || c.Group >= n || c.GroupRanks >= n {
			return fmt.Errorf("collective %d: name id out of range (%d names)", i, n)
		}
		if c.Dur < 0 {
			return fmt.Errorf("collective %d: negative duration %d", i, c.Dur)
		}
		if c.Proc < 0 || (c.Proc >= np && np > 0) || (np == 0 && c.Proc != 0) {
			return fmt.Errorf("collective %d: proc %d out of range (%d procs)", i, c.Proc, np)
		}
		if i > 0 && CompareCollectives(&t.Collectives[i-1], c) > 0 {
			return fmt.Errorf("collective %d: out of order", i)
		}
	}
	return t.checkAttrs()
}
