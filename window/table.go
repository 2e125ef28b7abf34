package window

import (
	"errors"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// Input is one parsed trace of an input set and what the table keeps of
// it. The loader sets Path, Run, Host, Trace and Steps; Build (Add) fills
// the rest from the trace, so that they outlive the model: once Release
// drops it, Trace is nil and Steps has no per-activity Of.
type Input struct {
	Path string
	// Run names the run the input belongs to (docs/ranks.md#runs).
	Run string
	// Host is the machine the input was captured on, from the directory
	// or file name; "" when unknown.
	Host  string
	Trace *trace.Trace
	// Steps is the input's step segmentation; nil when the trace has no
	// step markers, and the whole trace is then one window per device.
	Steps *step.Steps

	Format trace.Format
	// Rank and WorldSize are what the trace says (Kineto's
	// distributedInfo); nil when it does not.
	Rank, WorldSize *int
	// Activities is the number of GPU activities read; Origin the first
	// one's start, the zero of every time printed relative to the input.
	Activities int
	Origin     trace.Time
	// Truncated says where the input ended early; "" when complete.
	Truncated string
	// Stepped summarises the steps; nil without steps.
	Stepped *StepSummary
	// DeviceIDs are the devices of the activities, ascending; Devices
	// what the trace says of its devices (trace.Meta.Devices).
	DeviceIDs []int32
	Devices   []trace.Device
	// Anomalies are the trace's odd events (trace.Trace.Anomalies).
	Anomalies []trace.Anomaly
	// ProcessGroups are the trace's communicators as its pg_config lists
	// them (trace.Meta.ProcessGroups), for the collectives of kernels
	// without args.
	ProcessGroups []trace.ProcessGroup
	// OpSigs and Configs count the trace's op signatures and launch
	// configurations: whether it has what the efficiency analysis
	// prices with.
	OpSigs, Configs int

	// Durations are the activities' durations, per name, category,
	// device, class and kind (nil with Options.SkipDurations); Collectives
	// the collective kernels (empty with Options.SkipCollectives).
	Durations   []Durations
	Collectives Collectives

	args *Args // the trace's collective args; nil without any
}

// Held reports whether the input's model is still held (not Released).
func (in *Input) Held() bool { return in.Trace != nil }

// StepSummary is what a report says about the steps of one input.
type StepSummary struct {
	Steps int // markers found
	// Empty is the number of steps with no GPU activity attributed.
	Empty int
	// UnattributedNS is the kernel time (summed durations) of activities
	// that belong to no step, and Unattributed their number.
	UnattributedNS int64
	Unattributed   int64
}

// RankID indexes Table.Ranks.
type RankID int32

// Rank is one rank of an input set: one process of one input (a rank file
// of a torch.profiler run, or one process of an nsys export) that ran GPU
// work or launched it. It is the one place a rank's names live.
type Rank struct {
	ID    RankID
	Input int   // index in Table.Inputs
	Proc  int32 // index in the input's Trace.Procs
	Path  string
	Run   string
	Host  string
	PID   int64
	// Number is the distributed rank: the process's own (an nsys export's
	// process list), or the trace's when it has one process; nil when
	// unknown.
	Number *int
	// WorldSize is the trace's world size; -1 when unknown.
	WorldSize int
	// Activities counts the rank's GPU activities.
	Activities int64
	// Source says what told Number (Kineto's distributedInfo, an nsys
	// export's NCCL payload, thread name, environment or device, the
	// file name); Name is the rank as that source wrote it when it says
	// more than the number ("TP5", "PP1_TP3"), else "".
	Source trace.RankSource
	Name   string
	// RunHosts is the number of hosts the ranks of its run are on (those
	// whose host is known): with more than one, tables name the host
	// beside the rank.
	RunHosts int
}

// NameID indexes the names of a Table.
type NameID int32

// CatID indexes the categories of a Table.
type CatID int32

// Options configures Build.
type Options struct {
	Classifier *classify.Classifier // nil means classify.Default()
	// ByTop folds every category into its top level in the windows' sums
	// (communication/* becomes communication); activities keep their full
	// category (Category).
	ByTop bool
	// Gaps, when set, receives each idle gap as the table's pass finds it
	// (in the order of the activities that end them): for a caller that
	// draws them (a merged timeline), where the table keeps only sums.
	Gaps func(Gap)
	// SkipDurations and SkipCollectives leave out the records of the
	// kernels table and of the collectives (Input.Durations,
	// Input.Collectives), for commands that show neither.
	SkipDurations, SkipCollectives bool
}

// Table is an input set reduced to what the analyses read: the inputs,
// the rank table, each activity name's category (the one category rule,
// ActivityCategory, applied once per name) and the (rank, device, step)
// windows with their sums. Build makes it once per input set; every
// analysis reads it.
type Table struct {
	Inputs []Input
	Ranks  []Rank
	// Windows are in input order, then in order of first activity.
	Windows []Window
	// EmptyLaunches counts the launch calls whose correlation id matches
	// no recorded GPU activity, per rank and API.
	EmptyLaunches []EmptyLaunch

	opt     Options
	names   []string
	ids     map[string]NameID
	mangled map[NameID]string
	cats    []classify.Category
	catIDs  map[classify.Category]CatID
	fold    []CatID // per category: the one windows sum it under
	// Per input, per trace.NameID: the table's name and full category of
	// the activities of that name (-1 for names no activity has); per
	// activity, its category when some activity's differs from its
	// name's (nil otherwise).
	nameOf [][]NameID
	catOf  [][]CatID
	actCat [][]CatID
	total  int64 // summed durations of every input, for CheckSums
}

// EmptyLaunch counts one rank's launch calls of one API whose
// correlation id matches no recorded GPU activity.
type EmptyLaunch struct {
	Rank  RankID
	API   string
	Calls int64
	CPUNS int64
}

// Build reduces inputs to their table, in one pass over each input's
// activities. It refuses (ErrOverflow) inputs whose figures would not fit
// 64-bit nanoseconds, so that no analysis of the table needs to check.
// The models stay held (see Add and Release).
func Build(inputs []Input, opt Options) (*Table, error) {
	t := NewTable(opt)
	for _, in := range inputs {
		if err := t.Add(in); err != nil {
			return nil, err
		}
	}
	t.countHosts()
	return t, nil
}

// countHosts sets each rank's RunHosts.
func (t *Table) countHosts() {
	hosts := map[string]map[string]bool{}
	for _, r := range t.Ranks {
		if r.Host == "" {
			continue
		}
		if hosts[r.Run] == nil {
			hosts[r.Run] = map[string]bool{}
		}
		hosts[r.Run][r.Host] = true
	}
	for i := range t.Ranks {
		t.Ranks[i].RunHosts = len(hosts[t.Ranks[i].Run])
	}
}

// NewTable returns an empty table, for inputs added one at a time (Add).
func NewTable(opt Options) *Table {
	if opt.Classifier == nil {
		opt.Classifier = classify.Default()
	}
	return &Table{opt: opt, ids: map[string]NameID{}, catIDs: map[classify.Category]CatID{}, EmptyLaunches: []EmptyLaunch{}}
}

// Add reduces one more input (its Trace and Steps set) to its windows and
// records, in one pass over its activities. Its model stays held until
// Release: a loader adds an input, runs what else needs its model, and
// releases it before the next, so that a run's memory is one model and
// the records of every input.
func (t *Table) Add(in Input) error { return t.add(in) }

// Release drops input i's model: its Trace, its steps' per-activity Of,
// its args index and per-activity categories. What needs the model
// (ActivityCategory, Steps.ActivityClass) must not be
// called for it afterwards; everything else the table holds stays.
func (t *Table) Release(i int) {
	in := &t.Inputs[i]
	in.Trace, in.Steps, in.args = nil, in.Steps.Lean(), nil
	t.nameOf[i], t.catOf[i], t.actCat[i] = nil, nil, nil
}

// NameRuns sets each rank's Run to its input's: for a loader that names
// the runs once every input is added (Input.Run is set after Add).
func (t *Table) NameRuns() {
	for i := range t.Ranks {
		t.Ranks[i].Run = t.Inputs[t.Ranks[i].Input].Run
	}
	t.countHosts()
}

// Name returns the name of id.
func (t *Table) Name(id NameID) string { return t.names[id] }

// NameIDOf returns the id of name, and whether some activity has it.
func (t *Table) NameIDOf(name string) (NameID, bool) {
	id, ok := t.ids[name]
	return id, ok
}

// Mangled returns the raw name the trace recorded when parse demangled
// it (trace.Trace.Mangled); "" otherwise.
func (t *Table) Mangled(id NameID) string { return t.mangled[id] }

// Names returns the distinct names of the inputs' GPU activities, sorted:
// the set kernel labels are made from (package labels).
func (t *Table) Names() []string {
	out := slices.Clone(t.names)
	slices.Sort(out)
	return out
}

// Category returns the category of id.
func (t *Table) Category(id CatID) classify.Category { return t.cats[id] }

// Fold returns the category the windows sum category id under: id
// itself, or its top level with Options.ByTop.
func (t *Table) Fold(id CatID) CatID { return t.fold[id] }

// ActivityCategory returns the full category of activity i of input in
// (never folded): memcpy and memset by their kind, kernels by name, and a
// collective kernel whose name does not say its op (communication/other,
// as ncclDevKernel_Generic) by the op its args name
// (classify.CollectiveCategory).
func (t *Table) ActivityCategory(in, i int) CatID {
	if ac := t.actCat[in]; ac != nil {
		return ac[i]
	}
	return t.catOf[in][t.Inputs[in].Trace.Activities[i].Name]
}

// Select returns the table of some of t's inputs (by index, ascending):
// their ranks and windows, renumbered; names and categories are shared.
func (t *Table) Select(inputs []int) *Table {
	keep := make([]bool, len(t.Inputs))
	for _, i := range inputs {
		keep[i] = true
	}
	out := *t
	out.Inputs, out.Ranks, out.Windows, out.EmptyLaunches = nil, nil, nil, []EmptyLaunch{}
	out.nameOf, out.catOf, out.actCat = nil, nil, nil
	inputAt := make([]int, len(t.Inputs))
	for i := range t.Inputs {
		inputAt[i] = -1
		if keep[i] {
			inputAt[i] = len(out.Inputs)
			out.Inputs = append(out.Inputs, t.Inputs[i])
			out.nameOf = append(out.nameOf, t.nameOf[i])
			out.catOf = append(out.catOf, t.catOf[i])
			out.actCat = append(out.actCat, t.actCat[i])
		}
	}
	rankAt := make([]RankID, len(t.Ranks))
	for i, r := range t.Ranks {
		rankAt[i] = -1
		if inputAt[r.Input] >= 0 {
			r.ID, r.Input = RankID(len(out.Ranks)), inputAt[r.Input]
			rankAt[i] = r.ID
			out.Ranks = append(out.Ranks, r)
		}
	}
	for _, w := range t.Windows {
		if rankAt[w.Rank] >= 0 {
			w.Rank = rankAt[w.Rank]
			out.Windows = append(out.Windows, w)
		}
	}
	for _, e := range t.EmptyLaunches {
		if rankAt[e.Rank] >= 0 {
			e.Rank = rankAt[e.Rank]
			out.EmptyLaunches = append(out.EmptyLaunches, e)
		}
	}
	out.countHosts()
	return &out
}

// ErrOverflow is Build's error for inputs whose times cannot be summed in
// 64 bits.
var ErrOverflow = errors.New("the summed GPU time overflows 64-bit nanoseconds (292 years): the trace's durations or timestamps are corrupt")

// activityCategory is the category of an activity: memcpy and memset
// activities by their kind, whatever their name; kernels by name.
func activityCategory(a *trace.Activity, name string, cl *classify.Classifier) classify.Category {
	switch a.Kind {
	case trace.KindMemcpy:
		return classify.MemcpyCategory
	case trace.KindMemset:
		return classify.MemsetCategory
	}
	return cl.Classify(name)
}

func (t *Table) catID(c classify.Category) CatID {
	if id, ok := t.catIDs[c]; ok {
		return id
	}
	id := CatID(len(t.cats))
	t.catIDs[c] = id
	t.cats = append(t.cats, c)
	f := id
	if t.opt.ByTop && c.Sub != "" {
		f = t.catID(classify.Category{Top: c.Top})
	}
	t.fold = append(t.fold, f)
	return id
}

func (t *Table) nameID(s string) NameID {
	if id, ok := t.ids[s]; ok {
		return id
	}
	id := NameID(len(t.names))
	t.ids[s] = id
	t.names = append(t.names, s)
	return id
}

// describe fills what the table keeps of an input's trace (s: its
// survey).
func describe(in *Input, s *survey) {
	tr := in.Trace
	in.Format, in.Activities = tr.Meta.Format, len(tr.Activities)
	in.ProcessGroups = tr.Meta.ProcessGroups
	if tr.Meta.Rank >= 0 {
		v := tr.Meta.Rank
		in.Rank = &v
	}
	if tr.Meta.WorldSize >= 0 {
		v := tr.Meta.WorldSize
		in.WorldSize = &v
	}
	if tr.Truncated != nil {
		in.Truncated = tr.Truncated.Reason
	}
	if len(tr.Activities) > 0 {
		in.Origin = tr.Activities[0].Start
	}
	in.DeviceIDs, in.Devices = s.deviceIDs(), tr.Meta.Devices
	in.OpSigs, in.Configs = len(tr.OpSigs), len(tr.Configs)
	in.Anomalies = tr.Anomalies
	if st := in.Steps; st != nil {
		sum := &StepSummary{Steps: len(st.List)}
		for _, r := range s.ranges {
			sum.Unattributed += r.unattributed
			sum.UnattributedNS += r.unattributedNS
		}
		for i := range st.List {
			has := false
			for _, r := range s.ranges {
				has = has || r.has[i]
			}
			if !has {
				sum.Empty++
			}
		}
		in.Stepped = sum
	}
}

// numberOf is the distributed rank of a process of t: its own (an nsys
// export's process list), or the trace's when it has one process; nil
// when unknown.
func numberOf(t *trace.Trace, proc int32) *int {
	if int(proc) < len(t.Procs) && t.Procs[proc].Rank >= 0 {
		v := t.Procs[proc].Rank
		return &v
	}
	if t.Meta.Rank >= 0 && len(t.Procs) <= 1 {
		v := t.Meta.Rank
		return &v
	}
	return nil
}

// addRanks appends the ranks of input ii: its processes with activities
// or launch calls, in process order (s: its survey).
func (t *Table) addRanks(ii int, s *survey) (first RankID) {
	in := &t.Inputs[ii]
	tr := in.Trace
	np := max(len(tr.Procs), 1)
	acts, used := s.procActs()
	first = RankID(len(t.Ranks))
	for p := range np {
		if !used[p] {
			continue
		}
		r := Rank{ID: RankID(len(t.Ranks)), Input: ii, Proc: int32(p), Path: in.Path, Run: in.Run, Host: in.Host,
			Number: numberOf(tr, int32(p)), WorldSize: tr.Meta.WorldSize, Activities: acts[p]}
		if p < len(tr.Procs) {
			r.PID, r.Name = tr.Procs[p].PID, tr.Procs[p].RankName
		}
		if r.Number != nil {
			r.Source = tr.Meta.RankSource
		}
		t.Ranks = append(t.Ranks, r)
	}
	return first
}
