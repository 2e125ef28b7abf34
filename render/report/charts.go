package report

import (
	"fmt"
	"io"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/render/chart"
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
	Classifier *classify.Classifier // nil: classify.Default()
	// StepKind draws only steps of this kind; for the histogram, KindAny
	// means the most frequent kind.
	StepKind analyze.StepKind
	Top      int // kernels in the top chart
	// From and To draw a window of the timeline's step: ns from the
	// step's first activity start; To <= 0 runs to the step's end. Zero
	// values draw the whole step.
	From, To int64
	// Longest is how many of the longest kernels a timeline names (0: the
	// chart's default; negative: none).
	Longest int
	// BytesPerToken and Link are the collectives analysis's options
	// (analyze.CollectiveOptions).
	BytesPerToken int64
	Link          *analyze.Link
	// Unattributed draws, in the shares chart, the groups outside any
	// step that hold almost nothing (chart.LeaveOutUnattributed).
	Unattributed bool
}

// Charts is what the charts of one set of inputs are drawn from.
type Charts struct {
	inputs  []analyze.Input
	opt     ChartOptions
	groups  *analyze.GroupTable
	steps   *analyze.StepTable
	kernels []analyze.KernelStat
	coll    *analyze.CollectiveTable // made on first use
}

// NewCharts analyses inputs for drawing.
func NewCharts(inputs []analyze.Input, opt ChartOptions) *Charts {
	if opt.Classifier == nil {
		opt.Classifier = classify.Default()
	}
	aopt := analyze.Options{Classifier: opt.Classifier, Kind: opt.StepKind}
	g, st := analyze.Breakdown(inputs, aopt)
	return &Charts{inputs: inputs, opt: opt, groups: g, steps: st,
		kernels: analyze.Kernels(inputs, analyze.KernelOptions{Options: aopt, MemOps: true, Limit: opt.Top})}
}

// Collectives is the collectives analysis of the inputs, made on first
// use: only multi-rank reports and the collectives chart need it.
func (c *Charts) Collectives() *analyze.CollectiveTable {
	if c.coll == nil {
		c.coll = analyze.Collectives(c.inputs, analyze.CollectiveOptions{Classifier: c.opt.Classifier, Kind: c.opt.StepKind,
			BytesPerToken: c.opt.BytesPerToken, Link: c.opt.Link})
	}
	return c.coll
}

// series is the step rows the per-input charts draw for input i: its first
// device, the chosen step kind (for hist, the most frequent kind by
// default).
func (c *Charts) series(i int, forHist bool) []analyze.StepRow {
	if c.steps == nil {
		return nil
	}
	kind := c.opt.StepKind
	if kind == analyze.KindAny && forHist {
		kind = analyze.DominantKind(analyze.StepSeries(c.steps.Rows, i, analyze.KindAny))
	}
	return analyze.StepSeries(c.steps.Rows, i, kind)
}

// Draw writes chart kind in format (svg or png); per-input charts draw
// input i, the timeline its step stepIndex.
func (c *Charts) Draw(w io.Writer, kind ChartKind, i, stepIndex int, format string) error {
	opt := chart.Options{Format: format, Title: chartTitle(c.inputs)}
	one := chart.Options{Format: format, Title: chartInputTitle(c.inputs, i)}
	noSteps := func(what string) error {
		markers := "no step markers"
		if c.opt.StepKind != analyze.KindAny {
			markers = "no steps of kind " + c.opt.StepKind.String()
		}
		return fmt.Errorf("%s: %s, so no %s chart; try --type shares or top", c.inputs[i].Path, markers, what)
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
		return chart.Top(w, c.kernels, opt)
	case Timeline:
		tl, err := analyze.StepTimeline(c.inputs[i], stepIndex, c.opt.Classifier)
		if err != nil {
			return err
		}
		if c.opt.From != 0 || c.opt.To != 0 {
			if tl, err = tl.Between(c.opt.From, c.opt.To); err != nil {
				return fmt.Errorf("%s: %w", c.inputs[i].Path, err)
			}
		}
		one.Longest = c.opt.Longest
		return chart.Timeline(w, tl, one)
	case Collectives:
		return chart.Collectives(w, c.Collectives(), opt)
	}
	return fmt.Errorf("unknown chart %v", kind)
}
