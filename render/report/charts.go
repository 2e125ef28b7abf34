package report

import (
	"fmt"
	"io"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/render/chart"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// ChartKind names a chart of `traceq chart` and of the report.
type ChartKind uint8

const (
	Steps       ChartKind = iota // per-step kernel time stacked by category (one input, one device)
	Shares                       // category shares per run, rank, device and step kind
	Top                          // the most expensive kernels across the inputs
	Hist                         // distribution of step spans (one input)
	Timeline                     // the kernels of one step on their streams (one input)
	Collectives                  // per rank, collective time split into transfer and waiting (all inputs: one run)
	numChartKinds
)

var chartKindNames = [numChartKinds]string{"steps", "shares", "top", "hist", "timeline", "collectives"}

func (k ChartKind) String() string {
	if int(k) < len(chartKindNames) {
		return chartKindNames[k]
	}
	return fmt.Sprintf("chart(%d)", k)
}

// ChartKinds lists the charts in the order a report shows them.
func ChartKinds() []ChartKind { return []ChartKind{Steps, Shares, Top, Hist, Timeline, Collectives} }

// ParseChartKind returns the chart named s.
func ParseChartKind(s string) (ChartKind, bool) {
	for i, n := range chartKindNames {
		if n == s {
			return ChartKind(i), true
		}
	}
	return 0, false
}

// PerInput reports whether the chart draws one input (the first, in
// `traceq chart`).
func (k ChartKind) PerInput() bool { return k == Steps || k == Hist || k == Timeline }

// ChartOptions selects what the charts draw.
type ChartOptions struct {
	// Filter draws only windows of one class; for the histogram, the zero
	// filter means the most frequent step kind.
	Filter step.Filter
	Top    int // kernels in the top chart
	// From and To draw a window of the timeline's step: ns from the
	// step's first activity start; To <= 0 runs to the step's end. Zero
	// values draw the whole step.
	From, To int64
	// Longest is how many of the longest kernels a timeline names (0: the
	// chart's default; negative: none).
	Longest int
	// BytesPerToken and Link are the collectives analysis's options
	// (collectives.Options).
	BytesPerToken int64
	Link          *collectives.Link
	// Links are --link's per-scope links (intra=…,inter=…).
	Links collectives.Links
	// Unattributed draws, in the shares chart, the groups outside any
	// step that hold almost nothing (chart.LeaveOutUnattributed).
	Unattributed bool
	// Timelines are the timelines taken while the inputs' models were
	// held; a timeline not among them is drawn from the model.
	Timelines *Timelines
	// Match, when set, makes the collectives analysis in place of
	// collectives.Match with the options above: a caller that matched
	// them already (for the speed of light's link time) shares its.
	Match func() *collectives.Table
}

// Charts is what the charts of one set of inputs are drawn from: one
// table, one breakdown, one kernels table, one collectives analysis.
type Charts struct {
	tbl     *window.Table
	opt     ChartOptions
	groups  *analyze.GroupTable
	kernels []analyze.KernelStat
	coll    *collectives.Table // made on first use
	names   render.Labels      // made on first use
}

// NewCharts analyses a table for drawing.
func NewCharts(tbl *window.Table, opt ChartOptions) *Charts {
	aopt := analyze.Options{Filter: opt.Filter}
	return &Charts{tbl: tbl, opt: opt, groups: analyze.Breakdown(tbl, aopt),
		kernels: analyze.Kernels(tbl, analyze.KernelOptions{Options: aopt, MemOps: true, Limit: opt.Top})}
}

// Collectives is the collectives analysis of the inputs, made on first
// use and once: only multi-rank reports and the collectives chart need
// it, and the cross-rank table's stragglers are its.
func (c *Charts) Collectives() *collectives.Table {
	if c.coll == nil && c.opt.Match != nil {
		c.coll = c.opt.Match()
	}
	if c.coll == nil {
		c.coll = collectives.Match(c.tbl, collectives.Options{Filter: c.opt.Filter,
			BytesPerToken: c.opt.BytesPerToken, Link: c.opt.Link, Links: c.opt.Links})
	}
	return c.coll
}

// stragglers is the collectives analysis when the cross-rank table has
// rows that name a straggler, else nil.
func (c *Charts) stragglers() *collectives.Table {
	if !c.groups.HasCommunication() {
		return nil
	}
	return c.Collectives()
}

// labels labels every kernel name of the inputs, once.
func (c *Charts) labels() render.Labels {
	if c.names == nil {
		c.names = render.LabelsOf(c.tbl.Names())
	}
	return c.names
}

// series is the step rows the per-input charts draw for input i: its first
// device, the chosen step kind (for hist, the most frequent kind by
// default).
func (c *Charts) series(i int, forHist bool) []analyze.StepRow {
	f := c.opt.Filter
	if _, on := f.Class(); !on && forHist {
		if k, ok := chart.DominantKind(chart.StepSeries(c.groups.Steps, i, f)); ok {
			f = step.Only(step.ClassOf(k))
		}
	}
	return chart.StepSeries(c.groups.Steps, i, f)
}

// timelineStep is the step of in a timeline draws: index, which must be
// of the filter's class, or for index -1 the first step of that class (0,
// the whole trace, without steps).
func timelineStep(in *window.Input, index int, f step.Filter) (int, error) {
	if in.Steps == nil || len(in.Steps.List) == 0 {
		return max(index, 0), nil
	}
	if index < 0 {
		for _, s := range in.Steps.List {
			if f.Keeps(step.ClassOf(s.Kind)) {
				return s.Index, nil
			}
		}
		k, _ := f.Class()
		return 0, fmt.Errorf("%s: no %s steps", in.Path, k)
	}
	if index < len(in.Steps.List) {
		if s := in.Steps.List[index]; !f.Keeps(step.ClassOf(s.Kind)) {
			k, _ := f.Class()
			return 0, fmt.Errorf("%s: step %d is a %s step, not a %s step", in.Path, index, s.Kind, k.Kind)
		}
	}
	return index, nil
}

// Draw writes chart kind in format (svg or png); per-input charts draw
// input i, the timeline its step stepIndex (-1: its first step of the
// filter's class).
func (c *Charts) Draw(w io.Writer, kind ChartKind, i, stepIndex int, format string) error {
	opt := chart.Options{Format: format, Title: chartTitle(c.tbl.Inputs)}
	one := chart.Options{Format: format, Title: chartInputTitle(c.tbl.Inputs, i)}
	noSteps := func(what string) error {
		markers := "no step markers"
		if k, on := c.opt.Filter.Class(); on {
			markers = "no steps of kind " + k.String()
		}
		return fmt.Errorf("%s: %s, so no %s chart; try --type shares or top", c.tbl.Inputs[i].Path, markers, what)
	}
	switch kind {
	case Steps:
		rows := c.series(i, false)
		if len(rows) == 0 {
			return noSteps("steps")
		}
		return chart.Steps(w, rows, one)
	case Hist:
		rows := c.series(i, true)
		if len(rows) == 0 {
			return noSteps("hist")
		}
		return chart.Hist(w, rows, one)
	case Shares:
		return chart.Shares(w, c.groups.Groups, chart.SharesOptions{Options: opt, Unattributed: c.opt.Unattributed})
	case Top:
		return chart.Top(w, c.kernels, c.labels(), opt)
	case Timeline:
		index, err := timelineStep(&c.tbl.Inputs[i], stepIndex, c.opt.Filter)
		if err != nil {
			return err
		}
		tl, err := c.track(i, index)
		if err != nil {
			return err
		}
		if c.opt.From != 0 || c.opt.To != 0 {
			if tl, err = tl.Between(c.opt.From, c.opt.To); err != nil {
				return fmt.Errorf("%s: %w", c.tbl.Inputs[i].Path, err)
			}
		}
		one.Longest = c.opt.Longest
		return chart.Timeline(w, tl, one)
	case Collectives:
		return chart.Collectives(w, c.Collectives(), opt)
	}
	return fmt.Errorf("unknown chart %v", kind)
}
