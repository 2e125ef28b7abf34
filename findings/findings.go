package findings

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// Kind is what a finding is about.
type Kind uint8

const (
	Straggler            Kind = iota + 1 // one rank arrives last at the collectives
	Transfer                             // a collective's transfer below the link
	LatencyBound                         // a collective's fixed cost dominates its transfer
	LaunchBound                          // idle time the host caused
	BetweenSteps                         // device time between steps
	ExposedCommunication                 // communication nothing else overlaps
	Roofline                             // a category below its roofline
	CaptureGap                           // what the trace lacks
)

var kindNames = [...]string{Straggler: "straggler", Transfer: "transfer", LatencyBound: "latency_bound",
	LaunchBound: "launch_bound", BetweenSteps: "between_steps", ExposedCommunication: "exposed_communication",
	Roofline: "roofline", CaptureGap: "capture_gap"}

// String is the kind's name in the JSON documents ("latency_bound").
func (k Kind) String() string {
	if k >= Straggler && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Estimate says what a finding's saving is.
type Estimate uint8

const (
	// Central: the first-order estimate of what the fix saves.
	Central Estimate = iota + 1
	// UpperBound: at most what the fix saves.
	UpperBound
	// Informational: what the time is, not what a fix saves (exposed
	// communication: what overlap could hide at most).
	Informational
	// NoSaving: a capture gap.
	NoSaving
)

var estimateNames = [...]string{Central: "central", UpperBound: "upper_bound", Informational: "informational", NoSaving: "none"}

func (e Estimate) String() string {
	if e >= Central && int(e) < len(estimateNames) {
		return estimateNames[e]
	}
	return fmt.Sprintf("estimate(%d)", e)
}

// Finding is one thing to fix (or to capture), with its size.
type Finding struct {
	Run   string
	Class step.Class
	Kind  Kind
	// SavingNS is the time per step the fix would save (0 for a capture
	// gap); Share is SavingNS over the step time of the run and class.
	SavingNS int64
	Share    float64
	Estimate Estimate
	// The evidence of the finding's kind; nil for the others.
	Straggler  *StragglerEvidence
	Collective *CollectiveEvidence
	Idle       *IdleEvidence
	Roofline   *RooflineEvidence
	Gap        *GapEvidence
	// Remedy is the usual fix, in a sentence.
	Remedy string
}

// Ranked reports whether the finding is ranked by its saving: a central
// estimate or an upper bound of a fix's saving.
func (f *Finding) Ranked() bool { return f.Estimate == Central || f.Estimate == UpperBound }

// StragglerEvidence is what names a straggler.
type StragglerEvidence struct {
	Rank *window.Rank
	// LastArrivals of Instances: how often it arrived last, over the
	// class's collective instances on several ranks.
	LastArrivals, Instances int64
	// LeadNS is its arrival after the next-to-last rank's, per step:
	// the saving.
	LeadNS int64
	// WaitNS is the others' wait per step and rank: what they spent in the
	// collectives beyond the transfer (it holds the jitter that stays
	// when the straggler is fixed, so it is not the saving).
	WaitNS int64
	// Excess lists the rank's compute categories against the median rank,
	// most excess time first: a slow GPU makes every one slower, a slow
	// kernel one of them.
	Excess []CategoryExcess
	// SlowGPU says the excess is spread over the compute categories
	// rather than held by one (at most 80 % of the excess time in one).
	SlowGPU bool
}

// CategoryExcess compares one compute category of a rank with the median
// rank, per step.
type CategoryExcess struct {
	Category classify.Category
	RankNS   int64   // the rank's kernel time per step
	MedianNS float64 // the median rank's
	Ratio    float64 // RankNS / MedianNS
}

// CollectiveEvidence describes a collective op's transfer against the
// link and its latency–bandwidth fit.
type CollectiveEvidence struct {
	Op               string
	Group            string // process group, "" without collective args
	GroupSize        int
	InstancesPerStep float64
	// TransferNS and WaitNS are per step: the transfer (once per instance)
	// and the mean rank's wait.
	TransferNS int64
	WaitNS     int64
	// Fit is the latency–bandwidth model over the instances of known size
	// (Fit.OK false with one size).
	Fit collectives.Fit
	// SizedInstances counts the instances of known size the estimate
	// covers, of Instances.
	SizedInstances, Instances int64
	// Link is what the transfer was compared with; nil without a link.
	// AtLinkNS is the sized instances' time at the link, per step; -1
	// without a link.
	Link     *collectives.Link
	AtLinkNS int64
	// LinkSavingNS is transfer − time at the link per step, over the sized
	// instances (the transfer finding's saving); -1 without a link.
	LinkSavingNS int64
	// LatencyNS is the fixed cost per step: instances per step × α (the
	// latency-bound finding's saving); -1 without a fit.
	LatencyNS int64
}

// IdleEvidence describes idle time, the gap between steps or exposed
// communication, per step.
type IdleEvidence struct {
	// IdleNS is the class's idle time per step and device; LaunchBoundNS
	// its launch-bound part.
	IdleNS, LaunchBoundNS int64
	// LaunchCPUPerGPU is launch CPU time over GPU kernel time.
	LaunchCPUPerGPU float64
	// BetweenNS is the mean time between steps, PeriodNS the step period
	// p50 (0 when unknown).
	BetweenNS int64
	PeriodNS  float64
	// CommBusyNS and CommExposedNS: communication time per step and its
	// exposed part.
	CommBusyNS, CommExposedNS int64
}

// Gap names what a trace lacks.
type Gap uint8

const (
	NoStepMarkers      Gap = iota + 1 // figures are over the whole trace
	NoMessageSizes                    // collectives without sizes: no bandwidth
	NoLink                            // bandwidths without a link to compare with
	MissingRanks                      // the world size promises more ranks
	OneRank                           // collectives on one rank: wait cannot be told from transfer
	NoCurveForOp                      // the nccl-tests output did not measure this collective
	UnmatchedInstances                // collective instances not found on every rank
	WholeGraphs                       // nsys traced CUDA graphs whole: their kernels are missing
	NoShapes                          // no kernel could be priced: no shapes recorded
)

var gapNames = [...]string{NoStepMarkers: "no_step_markers", NoMessageSizes: "no_message_sizes", NoLink: "no_link",
	MissingRanks: "missing_ranks", OneRank: "one_rank", NoCurveForOp: "no_nccl_tests_curve", UnmatchedInstances: "unmatched_instances",
	WholeGraphs: "whole_graphs", NoShapes: "no_shapes"}

func (g Gap) String() string {
	if g >= NoStepMarkers && int(g) < len(gapNames) {
		return gapNames[g]
	}
	return fmt.Sprintf("gap(%d)", g)
}

// GapEvidence is a capture gap.
type GapEvidence struct {
	Gap Gap
	// Op names the collective a gap is about ("" otherwise); Count and Of
	// count what lacks (instances without a size of all, ranks present of
	// the world size).
	Op        string
	Count, Of int64
}

// Options configures Find.
type Options struct {
	// MinShare is the threshold: savings below MinShare of the step time
	// are counted, not listed (0 means DefaultMinShare; a negative value
	// lists every finding).
	MinShare float64
	// Roofline, when the efficiency analysis ran (Priced), is its
	// per-category figures, which the caller copies from it (sibling
	// analyses are joined by their caller): the roofline findings, and
	// the capture gap of a step kind none of whose kernels it could price.
	Roofline []RooflineRow
	Priced   bool
}

// RooflineRow is one category of one run and step kind as the efficiency
// analysis measured it (docs/definitions.md#below-the-roofline).
type RooflineRow struct {
	Run      string
	Class    step.Class
	Category classify.Category
	// Windows is what its per-step figures divide by; KernelNS its
	// activity time, ModelledNS the part an op model priced, RooflineNS
	// that part's time at the device's roofline.
	Windows                          int
	KernelNS, ModelledNS, RooflineNS int64
}

// RooflineEvidence is a category's time against its roofline, per step.
type RooflineEvidence struct {
	Category classify.Category
	// KernelNS is the category's time per step, ModelledNS the part whose
	// work is known, RooflineNS that part at the roofline.
	KernelNS, ModelledNS, RooflineNS int64
	// Efficiency is RooflineNS / ModelledNS.
	Efficiency float64
}

// DefaultMinShare is --min-finding's default: 1 % of the step.
const DefaultMinShare = 0.01

func (o Options) minShare() float64 {
	switch {
	case o.MinShare == 0:
		return DefaultMinShare
	case o.MinShare < 0:
		return 0
	}
	return o.MinShare
}

// KindFindings is the findings of one run and class, with the figures
// the diff of two runs compares.
type KindFindings struct {
	Run   string
	Class step.Class
	// StepNS is the step time the shares are of: the p50 of the windows'
	// spans for steps; for a whole trace, the mean span per device.
	StepNS float64
	// Steps is the most steps any device has (1 for a whole trace);
	// Windows the (step, device) windows of the class.
	Steps, Windows int
	// Findings: the ranked savings, largest first, then the informational
	// findings, then the capture gaps. Below counts the findings under
	// the threshold (BelowNS their summed savings), which are left out.
	Findings []Finding
	Below    int
	BelowNS  int64
	// Collectives is each collective op of the class, for the diff.
	Collectives []OpState
	// Idle, per step and device: launch-bound, device-side, unknown; and
	// the mean time between steps.
	LaunchBoundNS, DeviceSideNS, UnknownNS int64
	BetweenNS                              int64
	// Straggler is the class's straggler when one stands out (nil
	// otherwise), for the diff.
	Straggler *StragglerEvidence
}

// OpState is one collective op's time per step.
type OpState struct {
	Op, Group  string
	WaitNS     int64 // per step, the mean rank's
	TransferNS int64 // per step
}

// Report is Find's result: per run and class, in the breakdown's order.
type Report struct {
	Kinds []KindFindings
	// MinShare is the threshold the findings were listed with.
	MinShare float64
}

// Of returns the findings of run and class; nil when none.
func (r *Report) Of(run string, c step.Class) *KindFindings {
	if r == nil {
		return nil
	}
	for i := range r.Kinds {
		if r.Kinds[i].Run == run && r.Kinds[i].Class == c {
			return &r.Kinds[i]
		}
	}
	return nil
}

// Find computes the findings of each run and class of a breakdown (not
// of the time outside steps). ct holds the run's matched collectives,
// with their message sizes and the link; nil when the inputs have none.
func Find(g *analyze.GroupTable, ct *collectives.Table, opt Options) *Report {
	rep := &Report{Kinds: []KindFindings{}, MinShare: opt.minShare()}
	sums := analyze.Summarize(g)
	for i := range sums {
		s := &sums[i]
		if s.Class.Scope == step.Outside || s.Windows == 0 {
			continue
		}
		kf := KindFindings{Run: s.Run, Class: s.Class, Steps: max(s.Steps, 1), Windows: s.Windows}
		kf.StepNS = s.StepSpan.P50
		if s.Class.Scope != step.InStep {
			kf.StepNS = float64(s.SpanNS) / float64(s.Windows)
		}
		f := &finder{g: g, ct: ct, s: s, kf: &kf}
		f.idle()
		f.collectives()
		f.roofline(opt)
		f.gaps()
		kf.Findings = f.rank(rep.MinShare)
		rep.Kinds = append(rep.Kinds, kf)
	}
	return rep
}

// finder builds one KindFindings.
type finder struct {
	g   *analyze.GroupTable
	ct  *collectives.Table
	s   *analyze.KindSummary
	kf  *KindFindings
	all []Finding
}

func (f *finder) add(x Finding) {
	x.Run, x.Class = f.kf.Run, f.kf.Class
	if f.kf.StepNS > 0 {
		x.Share = float64(x.SavingNS) / f.kf.StepNS
	}
	f.all = append(f.all, x)
}

// perStep divides a sum over the class's windows.
func (f *finder) perWindow(ns int64) int64 { return stats.PerStep(ns, f.s.Windows) }

// idle adds the launch-bound, between-steps and exposed-communication
// findings from the class's groups.
func (f *finder) idle() {
	var launchCPU, kernel, between, busy, exposed int64
	gaps := 0
	for i := range f.g.Groups {
		gr := &f.g.Groups[i]
		if gr.Rank.Run != f.kf.Run || gr.Class != f.kf.Class {
			continue
		}
		launchCPU += gr.LaunchCPUNS
		kernel += gr.KernelNS
		between += gr.BetweenStepsNS
		gaps += gr.BetweenStepGaps
		busy += gr.Comm.BusyNS
		exposed += gr.Comm.ExposedNS
	}
	s := f.s
	f.kf.LaunchBoundNS, f.kf.DeviceSideNS, f.kf.UnknownNS = f.perWindow(s.Idle.LaunchBoundNS), f.perWindow(s.Idle.DeviceSideNS), f.perWindow(s.Idle.UnknownNS)
	ev := IdleEvidence{IdleNS: f.perWindow(s.IdleNS), LaunchBoundNS: f.kf.LaunchBoundNS, LaunchCPUPerGPU: stats.Ratio(launchCPU, kernel),
		PeriodNS: s.PeriodP50, CommBusyNS: f.perWindow(busy), CommExposedNS: f.perWindow(exposed)}
	if gaps > 0 {
		ev.BetweenNS = stats.PerStep(between, gaps)
		f.kf.BetweenNS = ev.BetweenNS
	}
	if ev.LaunchBoundNS > 0 {
		e := ev
		f.add(Finding{Kind: LaunchBound, SavingNS: ev.LaunchBoundNS, Estimate: UpperBound, Idle: &e,
			Remedy: "replay the step as a CUDA graph, launch fewer and larger kernels, or make the host code faster"})
	}
	if ev.BetweenNS > 0 {
		e := ev
		f.add(Finding{Kind: BetweenSteps, SavingNS: ev.BetweenNS, Estimate: UpperBound, Idle: &e,
			Remedy: "overlap the scheduler's and the sampler's host work with the GPU (asynchronous scheduling), or make it faster"})
	}
	if ev.CommExposedNS > 0 {
		e := ev
		f.add(Finding{Kind: ExposedCommunication, SavingNS: ev.CommExposedNS, Estimate: Informational, Idle: &e,
			Remedy: "overlap communication with independent compute (another micro-batch, the next layer's weights), or fuse it with its neighbours"})
	}
}

// collectives adds the straggler and, per op, the transfer or
// latency-bound finding.
func (f *finder) collectives() {
	if f.ct == nil {
		return
	}
	for _, cs := range f.ct.PerClass() {
		if cs.Run != f.kf.Run || cs.Class != f.kf.Class || cs.Straggler == nil || !cs.Straggler.Distinct {
			continue
		}
		st := cs.Straggler
		ev := &StragglerEvidence{Rank: st.Rank, LastArrivals: st.LastArrivals, Instances: st.Instances}
		var wait int64
		others := 0
		for _, r := range cs.Ranks {
			if r.ID == st.ID {
				ev.LeadNS = stats.PerStep(r.LeadNS, f.kf.Steps)
				continue
			}
			wait += r.WaitNS
			others++
		}
		ev.WaitNS = stats.PerStep(wait, f.kf.Steps*max(others, 1))
		ev.Excess, ev.SlowGPU = f.excess(st.Rank, ev.LeadNS)
		f.kf.Straggler = ev
		f.add(Finding{Kind: Straggler, SavingNS: ev.LeadNS, Estimate: Central, Straggler: ev,
			Remedy: stragglerRemedy(ev)})
	}
	for i := range f.ct.Ops {
		o := &f.ct.Ops[i]
		if o.Run != f.kf.Run || o.Class != f.kf.Class {
			continue
		}
		steps := max(o.Steps, 1)
		var wait int64
		if len(o.Ranks) > 0 {
			wait = stats.PerStep(o.WaitNS, steps*len(o.Ranks))
		}
		f.kf.Collectives = append(f.kf.Collectives, OpState{Op: o.Op, Group: o.Group, WaitNS: wait, TransferNS: stats.PerStep(o.TransferNS, steps)})
		if o.UpperBound || o.SizedInstances == 0 {
			continue
		}
		f.transfer(o, steps, wait)
	}
}

// transfer adds an op's transfer or latency-bound finding.
func (f *finder) transfer(o *collectives.Op, steps int, wait int64) {
	ev := &CollectiveEvidence{Op: o.Op, Group: o.Group, GroupSize: o.GroupSize,
		InstancesPerStep: float64(o.Instances) / float64(steps),
		TransferNS:       stats.PerStep(o.TransferNS, steps), WaitNS: wait, Fit: o.Fit(),
		SizedInstances: o.SizedInstances, Instances: o.Instances, Link: o.Link, AtLinkNS: -1, LinkSavingNS: -1, LatencyNS: -1}
	if ev.Fit.OK {
		ev.LatencyNS = int64(math.Round(float64(ev.Fit.Instances) * ev.Fit.AlphaNS / float64(steps)))
	}
	if l := o.Link; l != nil {
		var at, saving float64
		ok := true
		for _, s := range o.Sizes {
			if s.Bytes < 0 {
				continue
			}
			t, known := f.linkTime(l, o, ev.Fit, s.Bytes)
			if !known {
				ok = false
				break
			}
			t *= float64(s.Instances)
			at += t
			saving += max(0, float64(s.TransferNS)-t)
		}
		if ok {
			ev.AtLinkNS = int64(math.Round(at / float64(steps)))
			ev.LinkSavingNS = int64(math.Round(saving / float64(steps)))
		}
	}
	latencyBound := ev.Fit.OK && ev.Fit.LatencyShare() >= latencyBoundShare
	switch {
	case latencyBound:
		f.add(Finding{Kind: LatencyBound, SavingNS: ev.LatencyNS, Estimate: UpperBound, Collective: ev,
			Remedy: "fewer and larger messages (fuse the collective with its neighbours), or a lower-latency algorithm (one-shot or custom all-reduce, NVLS); a faster link does not help"})
	case ev.LinkSavingNS >= 0:
		est := Central
		if !ev.Fit.OK && !ev.Link.Measured() {
			est = UpperBound // one size: the latency is counted as transfer
		}
		f.add(Finding{Kind: Transfer, SavingNS: ev.LinkSavingNS, Estimate: est, Collective: ev,
			Remedy: transferRemedy(ev)})
	}
}

// latencyBoundShare is the share of the transfer time the fixed cost must
// explain for an op to be latency-bound.
const latencyBoundShare = 0.5

// linkTime is one instance's time at the link: a measured link's time at
// the size; for a bandwidth, the fitted latency plus the bus bytes at the
// link (the latency does not shrink with a faster link), or with one
// size the bus bytes alone.
func (f *finder) linkTime(l *collectives.Link, o *collectives.Op, fit collectives.Fit, bytes int64) (float64, bool) {
	t, ok := l.TimeAt(o.Op, o.GroupSize, bytes)
	if !ok || l.Measured() || !fit.OK {
		return t, ok
	}
	return fit.AlphaNS + t, true
}

func transferRemedy(ev *CollectiveEvidence) string {
	if ev.Link != nil && ev.Link.Measured() {
		return "reach what nccl-tests reached on this machine: check the algorithm and protocol (NCCL_ALGO, NCCL_PROTO), channels, and the PCIe/NVLink topology (nvidia-smi topo -m)"
	}
	return "move fewer bytes (quantised or fused all-reduce), or get closer to the link: algorithm and protocol, channels, topology; run nccl-tests on the machine (--link FILE) for what it can reach"
}

// excess compares the rank's compute categories with the median rank's,
// per step, and says whether the excess is spread (a slow GPU). A
// category counts when it is at least minExcessRatio of the median and
// its extra time at least minExcessOfLead of the rank's lead: a category
// that cannot explain the lateness is not its cause.
func (f *finder) excess(rank *window.Rank, lead int64) ([]CategoryExcess, bool) {
	cats := map[classify.Category]map[window.RankID]int64{}
	windows := map[window.RankID]int{}
	for i := range f.g.Groups {
		gr := &f.g.Groups[i]
		if gr.Rank.Run != f.kf.Run || gr.Class != f.kf.Class {
			continue
		}
		windows[gr.Rank.ID] += max(gr.Steps, 1)
		for _, c := range gr.Categories {
			if c.Category.Top == classify.Communication {
				continue
			}
			if cats[c.Category] == nil {
				cats[c.Category] = map[window.RankID]int64{}
			}
			cats[c.Category][gr.Rank.ID] += c.KernelNS
		}
	}
	var out []CategoryExcess
	var total, most float64
	for cat, by := range cats {
		xs := make([]int64, 0, len(windows))
		for id, w := range windows {
			xs = append(xs, stats.PerStep(by[id], w))
		}
		slices.Sort(xs)
		med := stats.Percentile(xs, 50)
		mine := stats.PerStep(by[rank.ID], windows[rank.ID])
		if med <= 0 {
			continue
		}
		e := CategoryExcess{Category: cat, RankNS: mine, MedianNS: med, Ratio: float64(mine) / med}
		if extra := float64(mine) - med; extra > 0 && e.Ratio >= minExcessRatio && extra >= minExcessOfLead*float64(lead) {
			out = append(out, e)
			total += extra
			most = max(most, extra)
		}
	}
	slices.SortFunc(out, func(a, b CategoryExcess) int {
		return cmp.Or(cmp.Compare(float64(b.RankNS)-b.MedianNS, float64(a.RankNS)-a.MedianNS), classify.Compare(a.Category, b.Category))
	})
	return out, len(out) >= 2 && most <= 0.8*total
}

// minExcessRatio and minExcessOfLead decide which categories count as
// the straggler's excess: 5 % over the median rank, and a tenth of its
// lead.
const (
	minExcessRatio  = 1.05
	minExcessOfLead = 0.1
)

func stragglerRemedy(ev *StragglerEvidence) string {
	switch {
	case ev.SlowGPU:
		return "every compute category is slower on this rank: a slow GPU (clocks, power or thermal limits, a shared or throttled device, PCIe placement); check nvidia-smi -q -d CLOCK,PERFORMANCE on it"
	case len(ev.Excess) > 0:
		return "one category is slower on this rank: its kernels (another shape, algorithm or data on this rank: uneven sharding, expert load)"
	}
	return "its compute is not slower: it starts late (host, data loading or scheduling on this rank)"
}

// roofline adds, per compute category the efficiency analysis priced,
// its time above the roofline: an upper bound of what a faster kernel
// would save (docs/definitions.md#below-the-roofline); and the capture
// gap of a step kind none of whose kernels could be priced while the
// run's other kinds were.
func (f *finder) roofline(opt Options) {
	if !opt.Priced {
		return
	}
	var kernel, modelled, runModelled int64
	for _, r := range opt.Roofline {
		if r.Run == f.kf.Run {
			runModelled += r.ModelledNS
		}
		if r.Run != f.kf.Run || r.Class != f.kf.Class || r.Category.Top == classify.Communication {
			continue
		}
		kernel += r.KernelNS
		modelled += r.ModelledNS
		if r.ModelledNS <= 0 || r.RooflineNS >= r.ModelledNS {
			continue
		}
		w := max(r.Windows, 1)
		ev := &RooflineEvidence{Category: r.Category, KernelNS: stats.PerStep(r.KernelNS, w), ModelledNS: stats.PerStep(r.ModelledNS, w),
			RooflineNS: stats.PerStep(r.RooflineNS, w), Efficiency: stats.Ratio(r.RooflineNS, r.ModelledNS)}
		f.add(Finding{Kind: Roofline, SavingNS: ev.ModelledNS - ev.RooflineNS, Estimate: UpperBound, Roofline: ev,
			Remedy: "a faster kernel for these shapes (another library, tile or algorithm, a fused or quantised op), or a larger batch where it is memory-bound: traceq efficiency lists its ops"})
	}
	// A step kind priced nowhere while another kind of the run was: its
	// shapes are not recorded (a CUDA-graph decode without its capture
	// trace beside eagerly launched prefills).
	if kernel > 0 && modelled == 0 && runModelled > 0 {
		e := GapEvidence{Gap: NoShapes}
		f.add(Finding{Kind: CaptureGap, Estimate: NoSaving, Gap: &e,
			Remedy: "record shapes (torch.profiler record_shapes=True) and, for CUDA-graph replays, the graph's capture trace beside the run: without them no kernel can be priced against the roofline"})
	}
}

// gaps adds what the trace lacks for a better answer.
func (f *finder) gaps() {
	add := func(g GapEvidence, remedy string) {
		e := g
		f.add(Finding{Kind: CaptureGap, Estimate: NoSaving, Gap: &e, Remedy: remedy})
	}
	if f.kf.Class.Scope == step.Whole {
		add(GapEvidence{Gap: NoStepMarkers}, "per-step figures need step markers: torch.profiler's ProfilerStep (prof.step()), vLLM's and SGLang's own, or --step REGEX for your record_function ranges")
	}
	// Ranks the world size promises but the run lacks.
	var present int64
	world := -1
	for _, r := range f.g.Table.Ranks {
		if r.Run == f.kf.Run && r.Activities > 0 {
			present++
			world = max(world, r.WorldSize)
		}
	}
	if int64(world) > present {
		add(GapEvidence{Gap: MissingRanks, Count: present, Of: int64(world)}, "give every rank's trace: the straggler and the waiting are measured across the ranks of a collective")
	}
	// CUDA graphs whose kernels the capture left out (nsys without
	// --cuda-graph-trace=node): the run's inputs' anomalies.
	var graphs int64
	for i := range f.g.Table.Inputs {
		in := &f.g.Table.Inputs[i]
		if in.Run != f.kf.Run {
			continue
		}
		for _, a := range in.Anomalies {
			if a.What == trace.AnomalyWholeGraphs || a.What == trace.AnomalyGraphsWithoutWork {
				graphs += a.Count
			}
		}
	}
	if graphs > 0 {
		add(GapEvidence{Gap: WholeGraphs, Count: graphs}, "capture with nsys profile --cuda-graph-trace=node: traced whole, a graph's kernels are missing from every figure")
	}
	if f.ct == nil {
		return
	}
	for i := range f.ct.Ops {
		o := &f.ct.Ops[i]
		if o.Run != f.kf.Run || o.Class != f.kf.Class {
			continue
		}
		if o.UpperBound {
			if world > 1 {
				continue // MissingRanks says it
			}
			add(GapEvidence{Gap: OneRank, Op: o.Op, Count: o.Instances, Of: o.Instances}, "give the traces of every rank of the run: on one rank waiting cannot be told from transfer")
			continue
		}
		if o.UnmatchedInstances > 0 {
			add(GapEvidence{Gap: UnmatchedInstances, Op: o.Op, Count: o.UnmatchedInstances, Of: o.Instances + o.UnmatchedInstances},
				"capture the same steps on every rank (start and stop the profiler together), and one communicator at a time")
		}
		if _, ok := collectives.BusFactor(o.Op, o.GroupSize); !ok {
			continue
		}
		if o.SizedInstances < o.Instances {
			add(GapEvidence{Gap: NoMessageSizes, Op: o.Op, Count: o.Instances - o.SizedInstances, Of: o.Instances},
				"capture the collective args (torch.profiler of PyTorch ≥ 2.1 records them on NCCL kernels and record_param_comms ops); for a tensor-parallel all-reduce without them (CUDA graphs, custom all-reduce) give --bytes-per-token N, hidden size × bytes per element (or TRACEQ_BYTES_PER_TOKEN, or bytes_per_token in traceq.toml)")
		}
		if o.SizedInstances > 0 && o.Link == nil {
			add(GapEvidence{Gap: NoLink, Op: o.Op, Count: o.SizedInstances, Of: o.Instances},
				"give --link (or TRACEQ_LINK, or link in traceq.toml): a link name, GB/s per direction, or an nccl-tests output measured on the machine")
		}
		if l := o.Link; o.SizedInstances > 0 && l != nil && l.Measured() {
			if _, ok := l.TimeAt(o.Op, o.GroupSize, 1); !ok {
				add(GapEvidence{Gap: NoCurveForOp, Op: o.Op, Count: o.SizedInstances, Of: o.Instances},
					"run the nccl-tests binary of this collective on the machine and add its output to the --link file")
			}
		}
	}
}

// rank orders the findings: the savings, largest first (ties in kind
// order), those under the threshold counted and left out; then the
// informational ones above the threshold; then the capture gaps.
func (f *finder) rank(minShare float64) []Finding {
	out := []Finding{}
	var info, gaps []Finding
	for _, x := range f.all {
		switch {
		case x.Estimate == NoSaving:
			gaps = append(gaps, x)
		case x.SavingNS <= 0 || x.Share < minShare:
			f.kf.Below++
			f.kf.BelowNS += max(x.SavingNS, 0)
		case x.Ranked():
			out = append(out, x)
		default:
			info = append(info, x)
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.SavingNS, a.SavingNS), cmp.Compare(a.Kind, b.Kind))
	})
	return append(append(out, info...), gaps...)
}
