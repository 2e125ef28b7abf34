package report

import (
	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/render/chart"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// Timelines holds, per input, the timeline of the step a report draws
// (its median step; the whole trace without steps), taken while the
// loader holds the input's model (load.Options.Reduce): the one thing a
// report needs of a model, so that the loader can drop each model once
// its input is added.
type Timelines struct {
	filter step.Filter
	tracks map[trackKey]trackResult
}

type trackKey struct{ input, index int }

type trackResult struct {
	tl  *chart.Track
	err error
}

// NewTimelines returns the timelines of a report with filter f
// (Options.Filter).
func NewTimelines(f step.Filter) *Timelines {
	return &Timelines{filter: f, tracks: map[trackKey]trackResult{}}
}

// Reduce takes the timeline input i of tbl would draw; the table must hold
// its model.
func (t *Timelines) Reduce(tbl *window.Table, i int) error {
	// The step the report picks (stepSection): the median of the input's
	// series, or 0 without steps. The series are the input's alone.
	one := tbl.Select([]int{i})
	c := &Charts{tbl: one, opt: ChartOptions{Filter: t.filter}, groups: analyze.Breakdown(one, analyze.Options{Filter: t.filter})}
	idx, _ := medianStep(c.series(0, true))
	for _, x := range []int{0, idx} {
		if x < 0 {
			continue
		}
		index, err := timelineStep(&tbl.Inputs[i], x, t.filter)
		if err != nil {
			continue // Draw says so without the model
		}
		k := trackKey{i, index}
		if _, ok := t.tracks[k]; !ok {
			tl, err := chart.StepTrack(tbl, i, index)
			t.tracks[k] = trackResult{tl, err}
		}
	}
	return nil
}

// track is the timeline of step index of input i: the one taken, else
// drawn from the model the table holds.
func (c *Charts) track(i, index int) (*chart.Track, error) {
	if t := c.opt.Timelines; t != nil {
		if r, ok := t.tracks[trackKey{i, index}]; ok {
			return r.tl, r.err
		}
	}
	return chart.StepTrack(c.tbl, i, index)
}
