package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
)

// Summary describes one per-step figure (ns) across the steps of a group:
// its extremes, mean, and percentiles by linear interpolation between
// closest ranks (Percentile).
type Summary struct {
	Min  int64   `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  int64   `json:"max"`
}

// summarise computes the Summary of xs; it sorts xs in place.
func summarise(xs []int64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	slices.Sort(xs)
	var sum int64
	for _, x := range xs {
		sum += x
	}
	return Summary{Min: xs[0], Max: xs[len(xs)-1], Mean: float64(sum) / float64(len(xs)),
		P50: Percentile(xs, 50), P90: Percentile(xs, 90), P99: Percentile(xs, 99)}
}

// CategorySummary is one category's kernel time per step across a group's
// steps; a step without that category counts as 0.
type CategorySummary struct {
	Category string  `json:"category"`
	KernelNS Summary `json:"kernel_ns"`
}

// StepStats describes the steps of one breakdown group (one input,
// process, device and step kind).
type StepStats struct {
	Count      int               `json:"count"`
	SpanNS     Summary           `json:"span_ns"`
	BusyNS     Summary           `json:"busy_ns"`
	IdleNS     Summary           `json:"idle_ns"`
	KernelNS   Summary           `json:"kernel_ns"`
	Categories []CategorySummary `json:"categories"`
	// Outliers lists the indices of the outlier steps (OutlierRule).
	Outliers []int `json:"outliers"`
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

// StepCat is one category's kernel time in one step on one device.
type StepCat struct {
	Category string `json:"category"`
	KernelNS int64  `json:"kernel_ns"`
	// ShareOfKernel is KernelNS over the step's kernel time; ShareOfSpan
	// over its span (it can exceed 1 when streams overlap).
	ShareOfKernel float64 `json:"share_of_kernel"`
	ShareOfSpan   float64 `json:"share_of_span"`
}

// StepLine is one step on one device, as `traceq steps` lists it.
type StepLine struct {
	Path   string `json:"path"`
	Rank   *int   `json:"rank"`
	PID    int64  `json:"pid"`
	Device int32  `json:"device"`
	Step
	// StartNS is the step's first activity start on the device (trace
	// clock); OffsetNS the same from the input's first activity.
	StartNS    trace.Time `json:"start_ns"`
	OffsetNS   int64      `json:"offset_ns"`
	SpanNS     int64      `json:"span_ns"`
	BusyNS     int64      `json:"busy_ns"`
	IdleNS     int64      `json:"idle_ns"`
	KernelNS   int64      `json:"kernel_ns"`
	Categories []StepCat  `json:"categories"` // by kernel time, largest first
	// TopCategory is Categories[0]; TopShare its share of kernel time.
	TopCategory string  `json:"top_category"`
	TopShare    float64 `json:"top_share"`
	Outlier     bool    `json:"outlier"`
}

// StepSummary is what a report says about the steps of one input.
type StepSummary struct {
	Path  string `json:"path"`
	Steps int    `json:"steps"` // markers found
	// Empty is the number of steps with no GPU activity attributed.
	Empty int `json:"steps_without_gpu_work"`
	// UnattributedNS is the kernel time (summed durations) of activities
	// that belong to no step, and Unattributed their number.
	UnattributedNS int64 `json:"unattributed_kernel_ns"`
	Unattributed   int64 `json:"unattributed_activities"`
}

type stepGroupKey struct {
	input  int
	pid    int64
	device int32
	kind   string
}

// addStepStats fills r.Steps, r.StepSummaries and each step-kind group's
// StepStats from r.StepRows.
func addStepStats(inputs []Input, r *Report) {
	byKey := map[stepGroupKey][]int{} // indices in r.StepRows
	for i := range r.StepRows {
		row := &r.StepRows[i]
		k := stepGroupKey{row.Input, row.PID, row.Device, row.Step.Kind}
		byKey[k] = append(byKey[k], i)
	}
	outlier := make([]bool, len(r.StepRows))
	stats := map[stepGroupKey]*StepStats{}
	for k, rows := range byKey {
		ss := &StepStats{Count: len(rows), Outliers: []int{}}
		col := func(f func(*StepRow) int64) []int64 {
			xs := make([]int64, len(rows))
			for j, ri := range rows {
				xs[j] = f(&r.StepRows[ri])
			}
			return xs
		}
		spans := col(func(s *StepRow) int64 { return s.SpanNS })
		ss.SpanNS = summarise(spans)
		limit := outlierLimit(spans) // spans is sorted now
		for _, ri := range rows {
			if float64(r.StepRows[ri].SpanNS) > limit {
				outlier[ri] = true
				ss.Outliers = append(ss.Outliers, r.StepRows[ri].Step.Index)
			}
		}
		slices.Sort(ss.Outliers)
		ss.BusyNS = summarise(col(func(s *StepRow) int64 { return s.BusyNS }))
		ss.IdleNS = summarise(col(func(s *StepRow) int64 { return s.SpanNS - s.BusyNS }))
		ss.KernelNS = summarise(col(func(s *StepRow) int64 { return s.KernelNS }))
		cats := map[string]bool{}
		for _, ri := range rows {
			for c := range r.StepRows[ri].ByCat {
				cats[c] = true
			}
		}
		names := make([]string, 0, len(cats))
		for c := range cats {
			names = append(names, c)
		}
		slices.SortFunc(names, classify.Compare)
		for _, c := range names {
			ss.Categories = append(ss.Categories, CategorySummary{Category: c,
				KernelNS: summarise(col(func(s *StepRow) int64 { return s.ByCat[c] }))})
		}
		// Largest mean first, as the group's categories are ordered.
		slices.SortStableFunc(ss.Categories, func(a, b CategorySummary) int {
			return cmp.Compare(b.KernelNS.Mean, a.KernelNS.Mean)
		})
		stats[k] = ss
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		if ss, ok := stats[stepGroupKey{g.input, g.PID, g.Device, g.StepKind}]; ok {
			g.StepStats = ss
		}
	}

	for i := range r.StepRows {
		row := &r.StepRows[i]
		t := inputs[row.Input].Trace
		line := StepLine{Path: row.Path, PID: row.PID, Device: row.Device, Step: row.Step,
			StartNS: row.Start, OffsetNS: int64(row.Start - t.Activities[0].Start),
			SpanNS: row.SpanNS, BusyNS: row.BusyNS, IdleNS: row.SpanNS - row.BusyNS, KernelNS: row.KernelNS,
			Outlier: outlier[i]}
		for p := range t.Procs {
			if t.Procs[p].PID == row.PID {
				line.Rank = procRank(t, int32(p))
				break
			}
		}
		for c, ns := range row.ByCat {
			line.Categories = append(line.Categories, StepCat{Category: c, KernelNS: ns,
				ShareOfKernel: ratio(ns, row.KernelNS), ShareOfSpan: ratio(ns, row.SpanNS)})
		}
		slices.SortFunc(line.Categories, func(a, b StepCat) int {
			if c := cmp.Compare(b.KernelNS, a.KernelNS); c != 0 {
				return c
			}
			return classify.Compare(a.Category, b.Category)
		})
		if len(line.Categories) > 0 {
			line.TopCategory, line.TopShare = line.Categories[0].Category, line.Categories[0].ShareOfKernel
		}
		r.Steps = append(r.Steps, line)
	}

	for _, in := range inputs {
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
		r.StepSummaries = append(r.StepSummaries, sum)
	}
}
