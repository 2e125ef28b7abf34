package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// StepRow is one step on one device.
type StepRow struct {
	Rank   *window.Rank
	Device int32
	Step   step.Step
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
	Idle window.IdleSplit
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

// CategorySummary is one category's kernel time per step across a group's
// steps; a step without that category counts as 0.
type CategorySummary struct {
	Category classify.Category
	KernelNS stats.Dist
}

// StepStats describes the steps of one breakdown group (one input,
// process, device and step kind).
type StepStats struct {
	Count    int
	SpanNS   stats.Dist
	BusyNS   stats.Dist
	IdleNS   stats.Dist
	KernelNS stats.Dist
	// PeriodNS and GapNS summarise the steps that have a next step on the
	// device (Periods of them; none when Periods is 0).
	Periods  int
	PeriodNS stats.Dist
	GapNS    stats.Dist
	// TokenSteps counts the steps whose marker gives a token count;
	// Tokens summarises those counts, and NSPerToken is their summed span
	// over their summed tokens: nil when those are 0 (undefined).
	TokenSteps int
	Tokens     stats.Dist
	NSPerToken *float64
	Categories []CategorySummary
	// Outliers lists the indices of the outlier steps (OutlierRule).
	Outliers []int
}

// Outlier rule: among at least outlierMinSteps steps of one kind on one
// device, a step is an outlier when its span exceeds the median span by
// more than 3.5 robust standard deviations, estimated as MAD/0.6745
// (Iglewicz and Hoaglin's modified z-score > 3.5), with the MAD taken as at
// least 1% of the median so that near-identical steps (CUDA-graph decode)
// do not flag nanosecond jitter. Only slow steps are flagged.
const (
	outlierMinSteps = 5
	outlierZ        = 3.5
	madToSigma      = 0.6745
	madFloor        = 0.01
)

// outlierLimit returns the span above which a step is an outlier, or +Inf
// when there are too few steps to tell.
func outlierLimit(sortedSpans []int64) float64 {
	n := len(sortedSpans)
	if n < outlierMinSteps {
		return math.Inf(1)
	}
	med := stats.Percentile(sortedSpans, 50)
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

// stepRows lists the step windows (one per step and device), by input,
// step index, process and device, each with its period to the next.
func stepRows(tbl *window.Table) []StepRow {
	var rows []StepRow
	for i := range tbl.Windows {
		w := &tbl.Windows[i]
		if w.Class.Scope != step.InStep {
			continue
		}
		rk := &tbl.Ranks[w.Rank]
		in := &tbl.Inputs[rk.Input]
		row := StepRow{
			Rank: rk, Device: w.Device, Step: in.Steps.List[w.Step],
			Start: w.First, Offset: int64(w.First - in.Origin),
			SpanNS: w.SpanNS(), BusyNS: w.BusyNS, IdleNS: w.IdleNS, KernelNS: w.KernelNS, Idle: w.Idle,
		}
		if len(w.Cats) > 0 {
			row.Categories = make([]StepCat, 0, len(w.Cats))
		}
		for _, c := range w.Cats {
			row.Categories = append(row.Categories, StepCat{Category: tbl.Category(c.Cat), KernelNS: c.KernelNS,
				ShareOfKernel: stats.Ratio(c.KernelNS, w.KernelNS), ShareOfSpan: stats.Ratio(c.KernelNS, row.SpanNS)})
		}
		slices.SortFunc(row.Categories, func(a, b StepCat) int {
			if c := cmp.Compare(b.KernelNS, a.KernelNS); c != 0 {
				return c
			}
			return classify.Compare(a.Category, b.Category)
		})
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b StepRow) int {
		return cmp.Or(cmp.Compare(a.Rank.Input, b.Rank.Input), cmp.Compare(a.Step.Index, b.Step.Index),
			cmp.Compare(a.Rank.PID, b.Rank.PID), cmp.Compare(a.Device, b.Device))
	})
	// Each step's period: to the next row of the same device.
	next := map[stepDeviceKey]int{}
	for i := len(rows) - 1; i >= 0; i-- {
		r := &rows[i]
		k := stepDeviceKey{r.Rank.Input, r.Rank.PID, r.Device}
		if j, ok := next[k]; ok {
			r.PeriodNS = int64(rows[j].Start - r.Start)
			r.GapNS = r.PeriodNS - r.SpanNS
			r.HasNext = true
		}
		next[k] = i
	}
	return rows
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
	kind   step.Kind
}

// addStats marks the outlier rows and gives each step group its
// StepStats.
func addStats(all []StepRow, groups []Group) {
	byKey := map[stepGroupKey][]int{} // indices in all
	for i := range all {
		row := &all[i]
		k := stepGroupKey{row.Rank.Input, row.Rank.PID, row.Device, row.Step.Kind}
		byKey[k] = append(byKey[k], i)
	}
	byGroup := map[stepGroupKey]*StepStats{}
	for k, rows := range byKey {
		ss := &StepStats{Count: len(rows), Outliers: []int{}}
		col := func(f func(*StepRow) int64) []int64 {
			xs := make([]int64, len(rows))
			for j, ri := range rows {
				xs[j] = f(&all[ri])
			}
			return xs
		}
		spans := col(func(s *StepRow) int64 { return s.SpanNS })
		ss.SpanNS = stats.Of(spans)
		limit := outlierLimit(spans) // spans is sorted now
		for _, ri := range rows {
			if float64(all[ri].SpanNS) > limit {
				all[ri].Outlier = true
				ss.Outliers = append(ss.Outliers, all[ri].Step.Index)
			}
		}
		slices.Sort(ss.Outliers)
		ss.BusyNS = stats.Of(col(func(s *StepRow) int64 { return s.BusyNS }))
		ss.IdleNS = stats.Of(col(func(s *StepRow) int64 { return s.IdleNS }))
		ss.KernelNS = stats.Of(col(func(s *StepRow) int64 { return s.KernelNS }))
		var periods, gaps []int64
		for _, ri := range rows {
			if r := &all[ri]; r.HasNext {
				periods = append(periods, r.PeriodNS)
				gaps = append(gaps, r.GapNS)
			}
		}
		ss.Periods = len(periods)
		ss.PeriodNS, ss.GapNS = stats.Of(periods), stats.Of(gaps)
		var tokens []int64
		var tokSpan, tokSum int64
		for _, ri := range rows {
			if r := &all[ri]; r.Step.Tokens >= 0 {
				tokens = append(tokens, r.Step.Tokens)
				tokSpan += r.SpanNS
				tokSum += r.Step.Tokens
			}
		}
		ss.TokenSteps, ss.Tokens, ss.NSPerToken = len(tokens), stats.Of(tokens), perToken(tokSpan, tokSum)
		// Each category's column, a step's kernel time in it, in one
		// pass over the rows' categories: a step without the category
		// counts 0, and a row's first entry of it counts.
		colOf := map[classify.Category]int{}
		var cats []classify.Category
		var cols [][]int64
		var setIn []int // per column, 1 + the last row that set it
		for j, ri := range rows {
			for _, c := range all[ri].Categories {
				x, ok := colOf[c.Category]
				if !ok {
					x = len(cats)
					colOf[c.Category] = x
					cats = append(cats, c.Category)
					cols = append(cols, make([]int64, len(rows)))
					setIn = append(setIn, 0)
				}
				if setIn[x] != j+1 {
					cols[x][j], setIn[x] = c.KernelNS, j+1
				}
			}
		}
		order := make([]int, len(cats))
		for x := range order {
			order[x] = x
		}
		slices.SortFunc(order, func(x, y int) int { return classify.Compare(cats[x], cats[y]) })
		for _, x := range order {
			ss.Categories = append(ss.Categories, CategorySummary{Category: cats[x], KernelNS: stats.Of(cols[x])})
		}
		// Largest mean first, as the group's categories are ordered.
		slices.SortStableFunc(ss.Categories, func(a, b CategorySummary) int {
			return cmp.Compare(b.KernelNS.Mean, a.KernelNS.Mean)
		})
		byGroup[k] = ss
	}
	for i := range groups {
		g := &groups[i]
		if g.Class.Scope != step.InStep {
			continue
		}
		if ss, ok := byGroup[stepGroupKey{g.Rank.Input, g.Rank.PID, g.Device, g.Class.Kind}]; ok {
			g.StepStats = ss
		}
	}
}
