package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
)

// StepTable is every step on every device of the stepped inputs of an
// analysis: traceq steps, the step charts, the step columns of reports.
type StepTable struct {
	// Rows lists each step on each device, by input, step index, process
	// and device.
	Rows []StepRow
	// Inputs says, for each stepped input, how many markers it has and
	// what belongs to no step.
	Inputs []StepSummary
}

// StepRow is one step on one device.
type StepRow struct {
	Input  int // index of the input in the analysis
	Path   string
	Run    string
	Rank   *int
	PID    int64
	Device int32
	Step   Step
	// Start is the step's first activity start on the device (trace
	// clock); Offset the same from the input's first activity.
	Start  trace.Time
	Offset int64
	SpanNS int64
	BusyNS int64
	// IdleNS is the time inside the span when the device ran no activity
	// of any step.
	IdleNS   int64
	KernelNS int64
	// Idle splits IdleNS by cause.
	Idle IdleSplit
	// Categories split KernelNS, largest first.
	Categories []StepCat
	Outlier    bool
	// PeriodNS is the time from this step's start to the next step's
	// start on the same device (any kind), when HasNext; GapNS is
	// PeriodNS - SpanNS: the device time between the two, spent on the
	// host and scheduler (negative when the steps overlap).
	PeriodNS int64
	GapNS    int64
	HasNext  bool
}

// StepCat is one category's kernel time in one step on one device.
type StepCat struct {
	Category classify.Category
	KernelNS int64
	// ShareOfKernel is KernelNS over the step's kernel time; ShareOfSpan
	// over its span (it can exceed 1 when streams overlap).
	ShareOfKernel float64
	ShareOfSpan   float64
}

// TopCategory returns the step's largest category and its share of the
// step's kernel time; ok is false for a step without activity.
func (r *StepRow) TopCategory() (c StepCat, ok bool) {
	if len(r.Categories) == 0 {
		return StepCat{}, false
	}
	return r.Categories[0], true
}

// KernelOf returns the step's kernel time in category c.
func (r *StepRow) KernelOf(c classify.Category) int64 {
	for _, sc := range r.Categories {
		if sc.Category == c {
			return sc.KernelNS
		}
	}
	return 0
}

// StepSummary is what a report says about the steps of one input.
type StepSummary struct {
	Path  string
	Steps int // markers found
	// Empty is the number of steps with no GPU activity attributed.
	Empty int
	// UnattributedNS is the kernel time (summed durations) of activities
	// that belong to no step, and Unattributed their number.
	UnattributedNS int64
	Unattributed   int64
}

// Summary describes one per-step figure (ns) across the steps of a group:
// its extremes, mean, and percentiles by linear interpolation between
// closest ranks (Percentile).
type Summary struct {
	Min  int64
	Mean float64
	P50  float64
	P90  float64
	P99  float64
	Max  int64
}

// CategorySummary is one category's kernel time per step across a group's
// steps; a step without that category counts as 0.
type CategorySummary struct {
	Category classify.Category
	KernelNS Summary
}

// StepStats describes the steps of one breakdown group (one input,
// process, device and step kind).
type StepStats struct {
	Count    int
	SpanNS   Summary
	BusyNS   Summary
	IdleNS   Summary
	KernelNS Summary
	// PeriodNS and GapNS summarise the steps that have a next step on the
	// device (Periods of them; none when Periods is 0).
	Periods  int
	PeriodNS Summary
	GapNS    Summary
	// TokenSteps counts the steps whose marker gives a token count;
	// Tokens summarises those counts, and NSPerToken is their summed span
	// over their summed tokens (0 without tokens).
	TokenSteps int
	Tokens     Summary
	NSPerToken float64
	Categories []CategorySummary
	// Outliers lists the indices of the outlier steps (OutlierRule).
	Outliers []int
}

// Outlier rule: among at least OutlierMinSteps steps of one kind on one
// device, a step is an outlier when its span exceeds the median span by
// more than 3.5 robust standard deviations, estimated as MAD/0.6745
// (Iglewicz and Hoaglin's modified z-score > 3.5), with the MAD taken as at
// least 1% of the median so that near-identical steps (CUDA-graph decode)
// do not flag nanosecond jitter. Only slow steps are flagged.
const (
	OutlierMinSteps = 5
	outlierZ        = 3.5
	madToSigma      = 0.6745
	madFloor        = 0.01
)

// outlierLimit returns the span above which a step is an outlier, or +Inf
// when there are too few steps to tell.
func outlierLimit(sortedSpans []int64) float64 {
	n := len(sortedSpans)
	if n < OutlierMinSteps {
		return math.Inf(1)
	}
	med := Percentile(sortedSpans, 50)
	dev := make([]float64, n)
	for i, x := range sortedSpans {
		dev[i] = math.Abs(float64(x) - med)
	}
	slices.Sort(dev)
	mad := dev[n/2]
	if n%2 == 0 {
		mad = (dev[n/2-1] + dev[n/2]) / 2
	}
	mad = max(mad, madFloor*med)
	return med + outlierZ/madToSigma*mad
}

// stepTable lists the per-step windows (one per step and device), in
// input, step, process, device order, and summarises each stepped input.
func (acc *accumulation) stepTable() *StepTable {
	st := &StepTable{}
	for _, w := range acc.wins {
		in := acc.inputs[w.input]
		if in.Steps == nil || w.step < 0 {
			continue
		}
		t := in.Trace
		row := StepRow{
			Input: w.input, Path: in.Path, Run: in.Run, Rank: Rank(t, w.proc), Step: in.Steps.List[w.step],
			PID: procPID(t, w.proc), Device: w.device,
			Start: w.first, Offset: int64(w.first - t.Activities[0].Start),
			SpanNS: int64(w.last - w.first), BusyNS: w.busy.sum(), IdleNS: w.idle, KernelNS: w.kernel,
			Idle: w.split,
		}
		for ci, ca := range w.cats {
			row.Categories = append(row.Categories, StepCat{Category: acc.cats.cats[ci], KernelNS: ca.kernel,
				ShareOfKernel: Ratio(ca.kernel, w.kernel), ShareOfSpan: Ratio(ca.kernel, row.SpanNS)})
		}
		slices.SortFunc(row.Categories, func(a, b StepCat) int {
			if c := cmp.Compare(b.KernelNS, a.KernelNS); c != 0 {
				return c
			}
			return classify.Compare(a.Category, b.Category)
		})
		st.Rows = append(st.Rows, row)
	}
	slices.SortFunc(st.Rows, func(a, b StepRow) int {
		if c := cmp.Compare(a.Input, b.Input); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Step.Index, b.Step.Index); c != 0 {
			return c
		}
		if c := cmp.Compare(a.PID, b.PID); c != 0 {
			return c
		}
		return cmp.Compare(a.Device, b.Device)
	})
	// Each step's period: to the next row of the same device.
	next := map[stepDeviceKey]int{}
	for i := len(st.Rows) - 1; i >= 0; i-- {
		r := &st.Rows[i]
		k := stepDeviceKey{r.Input, r.PID, r.Device}
		if j, ok := next[k]; ok {
			r.PeriodNS = int64(st.Rows[j].Start - r.Start)
			r.GapNS = r.PeriodNS - r.SpanNS
			r.HasNext = true
		}
		next[k] = i
	}
	for _, in := range acc.inputs {
		if in.Steps == nil {
			continue
		}
		sum := StepSummary{Path: in.Path, Steps: len(in.Steps.List)}
		has := make([]bool, len(in.Steps.List))
		for ai, s := range in.Steps.Of {
			if s < 0 {
				sum.Unattributed++
				sum.UnattributedNS += in.Trace.Activities[ai].Dur
				continue
			}
			has[s] = true
		}
		for _, h := range has {
			if !h {
				sum.Empty++
			}
		}
		st.Inputs = append(st.Inputs, sum)
	}
	return st
}

type stepDeviceKey struct {
	input  int
	pid    int64
	device int32
}

type stepGroupKey struct {
	input  int
	pid    int64
	device int32
	kind   StepKind
}

// addStats marks the outlier rows and gives each step-kind group its
// StepStats.
func (st *StepTable) addStats(groups []Group) {
	byKey := map[stepGroupKey][]int{} // indices in st.Rows
	for i := range st.Rows {
		row := &st.Rows[i]
		k := stepGroupKey{row.Input, row.PID, row.Device, row.Step.Kind}
		byKey[k] = append(byKey[k], i)
	}
	stats := map[stepGroupKey]*StepStats{}
	for k, rows := range byKey {
		ss := &StepStats{Count: len(rows), Outliers: []int{}}
		col := func(f func(*StepRow) int64) []int64 {
			xs := make([]int64, len(rows))
			for j, ri := range rows {
				xs[j] = f(&st.Rows[ri])
			}
			return xs
		}
		spans := col(func(s *StepRow) int64 { return s.SpanNS })
		ss.SpanNS = summarize(spans)
		limit := outlierLimit(spans) // spans is sorted now
		for _, ri := range rows {
			if float64(st.Rows[ri].SpanNS) > limit {
				st.Rows[ri].Outlier = true
				ss.Outliers = append(ss.Outliers, st.Rows[ri].Step.Index)
			}
		}
		slices.Sort(ss.Outliers)
		ss.BusyNS = summarize(col(func(s *StepRow) int64 { return s.BusyNS }))
		ss.IdleNS = summarize(col(func(s *StepRow) int64 { return s.IdleNS }))
		ss.KernelNS = summarize(col(func(s *StepRow) int64 { return s.KernelNS }))
		var periods, gaps []int64
		for _, ri := range rows {
			if r := &st.Rows[ri]; r.HasNext {
				periods = append(periods, r.PeriodNS)
				gaps = append(gaps, r.GapNS)
			}
		}
		ss.Periods = len(periods)
		ss.PeriodNS, ss.GapNS = summarize(periods), summarize(gaps)
		var tokens []int64
		var tokSpan, tokSum int64
		for _, ri := range rows {
			if r := &st.Rows[ri]; r.Step.Tokens >= 0 {
				tokens = append(tokens, r.Step.Tokens)
				tokSpan += r.SpanNS
				tokSum += r.Step.Tokens
			}
		}
		ss.TokenSteps, ss.Tokens, ss.NSPerToken = len(tokens), summarize(tokens), Ratio(tokSpan, tokSum)
		seen := map[classify.Category]bool{}
		var cats []classify.Category
		for _, ri := range rows {
			for _, c := range st.Rows[ri].Categories {
				if !seen[c.Category] {
					seen[c.Category] = true
					cats = append(cats, c.Category)
				}
			}
		}
		slices.SortFunc(cats, classify.Compare)
		for _, c := range cats {
			ss.Categories = append(ss.Categories, CategorySummary{Category: c,
				KernelNS: summarize(col(func(s *StepRow) int64 { return s.KernelOf(c) }))})
		}
		// Largest mean first, as the group's categories are ordered.
		slices.SortStableFunc(ss.Categories, func(a, b CategorySummary) int {
			return cmp.Compare(b.KernelNS.Mean, a.KernelNS.Mean)
		})
		stats[k] = ss
	}
	for i := range groups {
		g := &groups[i]
		if ss, ok := stats[stepGroupKey{g.Input, g.PID, g.Device, g.StepKind}]; ok {
			g.StepStats = ss
		}
	}
}
