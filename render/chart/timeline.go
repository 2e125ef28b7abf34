package chart

import (
	"fmt"
	"image/color"
	"io"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
)

// timelineResolution is the number of distinguishable positions across
// the timeline's width (about one per point). Neighbours on a lane closer
// than one position merge into one rectangle when they share a category or
// one of them is narrower than a position, coloured by the category with
// the most time in it; no rectangle is narrower than one position. A whole
// trace with thousands of kernels so stays a small file that still shows
// the idle gaps and the long kernels.
const timelineResolution = 800

// Timeline draws tl: one lane per (process, device, stream), each activity
// a rectangle from its start to its end coloured by its category's top
// level, time in ms from the first activity's start. White between
// rectangles is time the stream ran nothing.
func Timeline(w io.Writer, tl *analyze.Timeline, opt Options) error {
	f, err := timelineFigure(tl, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

func timelineFigure(tl *analyze.Timeline, opt Options) (*figure, error) {
	if tl == nil || len(tl.Spans) == 0 {
		return nil, fmt.Errorf("timeline chart: no activities")
	}
	what := "the whole trace"
	if s := tl.Step; s != nil {
		what = fmt.Sprintf("step %d (%s, %s)", s.Index, s.Kind, clip(s.Marker, 48))
	}
	title := "Timeline of " + what
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	span := int64(tl.End - tl.Start)
	p.X.Label.Text = fmt.Sprintf("time since the step's first kernel (ms); GPU span %s ms", fmtMS(ms(span)))
	if tl.Step == nil {
		p.X.Label.Text = fmt.Sprintf("time since the first kernel (ms); GPU span %s ms", fmtMS(ms(span)))
	}
	p.X.Tick.Marker = niceTicks{}
	n := len(tl.Lanes)
	pids := map[int64]bool{}
	for _, ln := range tl.Lanes {
		pids[ln.PID] = true
	}
	ticks := make([]plot.Tick, n)
	for i, ln := range tl.Lanes {
		label := "dev " + strconv.Itoa(int(ln.Device)) + " · stream " + strconv.Itoa(int(ln.Stream))
		if ln.Stream < 0 {
			label = "dev " + strconv.Itoa(int(ln.Device)) + " · stream ?"
		}
		if len(pids) > 1 {
			label = "pid " + strconv.FormatInt(ln.PID, 10) + " · " + label
		}
		ticks[i] = plot.Tick{Value: float64(n - 1 - i), Label: label}
	}
	l := newLayer()
	present := make([]bool, len(classify.Tops()))
	res := trace.Time(max(1, span/timelineResolution))
	ntops := len(classify.Tops())
	// cur is the rectangle being built on lane curLane: its extent and the
	// time of each top category in it (index ntops: unknown tops).
	var cur struct {
		s, e trace.Time
		by   []int64
		ok   bool
	}
	curLane := -1
	// dominant is the category with the most time in cur (the first in
	// Tops order on a tie): the rectangle's colour.
	dominant := func() int {
		best := 0
		for k := range cur.by {
			if cur.by[k] > cur.by[best] {
				best = k
			}
		}
		return best
	}
	flush := func() {
		if !cur.ok {
			return
		}
		best := dominant()
		y := float64(n - 1 - curLane)
		e := max(cur.e, cur.s+res)
		l.addRect(rect{x0: ms(int64(cur.s - tl.Start)), x1: ms(int64(e - tl.Start)), y0: y - 0.4, y1: y + 0.4, fill: topColour(best)})
	}
	for _, sp := range tl.Spans {
		top := classify.TopIndex(sp.Category)
		if top >= 0 {
			present[top] = true
		} else {
			top = ntops
		}
		// Merge into the open rectangle when the gap is below the
		// resolution and either they share a category or one of them is
		// too thin to see on its own.
		if sp.Lane == curLane && cur.ok && sp.Start-cur.e < res &&
			(top == dominant() || cur.e-cur.s < res || sp.End-sp.Start < res) {
			cur.e = max(cur.e, sp.End)
			cur.by[top] += int64(sp.End - sp.Start)
			continue
		}
		flush()
		cur.s, cur.e, cur.ok = sp.Start, sp.End, true
		cur.by = make([]int64, ntops+1)
		cur.by[top] = int64(sp.End - sp.Start)
		curLane = sp.Lane
	}
	flush()
	p.Add(l)
	p.X.Min, p.X.Max = 0, ms(span)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Tick.Label.Font = font.From(sans, 9)
	f := &figure{p: p, width: 10 * vg.Inch, height: vg.Inch*1.3 + vg.Length(n)*0.3*vg.Inch, data: l}
	f.legend = categoryLegend(present)
	return f, nil
}

func topColour(i int) color.RGBA {
	if i < 0 || i >= len(palette) {
		return unknownColour
	}
	return palette[i]
}
