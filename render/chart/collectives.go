package chart

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/render"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// waitColour is time a rank's collective kernels spent waiting for the
// last rank: grey, time lost rather than work.
var waitColour = color.RGBA{0xbd, 0xbd, 0xbd, 0xff}

// Collectives draws, per run and class (collectives.Table.PerClass),
// one horizontal bar per rank: its collective kernel time split into
// transfer (communication red, from 0) and waiting for the last rank
// (grey, after it). The straggler, the rank the others wait for, is named
// in its label and its bar says how often it arrived last (when it stands
// out: collectives.Straggler.Distinct); every other bar prints its waiting
// share.
func Collectives(w io.Writer, ct *collectives.Table, opt Options) error {
	f, err := collectivesFigure(ct, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

func collectivesFigure(ct *collectives.Table, opt Options) (*figure, error) {
	kinds := ct.PerClass()
	if len(kinds) == 0 {
		return nil, fmt.Errorf("collectives chart: no collective kernels (category communication/*) in the inputs")
	}
	title := "Collective kernel time per rank: transfer vs waiting"
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	p.X.Label.Text = "collective kernel time per step (ms): transfer, then waiting for the last rank to arrive"
	stepped := false
	for _, k := range kinds {
		stepped = stepped || k.Class.Scope == step.InStep
	}
	if !stepped {
		p.X.Label.Text = "collective kernel time over the whole trace (ms): transfer, then waiting for the last rank"
	}
	p.X.Tick.Marker = niceTicks{}
	labels := map[window.RankID]string{}
	for _, run := range ct.Runs {
		for k, v := range render.RankLabels(run.Ranks) {
			labels[k] = v
		}
	}
	// Rows from the top; a half-row gap between step kinds.
	const gap = 0.5
	var n int
	for _, k := range kinds {
		n += len(k.Ranks)
	}
	top := float64(n-1) + gap*float64(len(kinds)-1)
	l := newLayer()
	var ticks []plot.Tick
	var xmax float64
	y := top
	for ki, k := range kinds {
		if ki > 0 {
			y -= gap
		}
		prefix := ""
		if len(kinds) > 1 {
			prefix = k.Class.String() + " · "
			if len(ct.Runs) > 1 && k.Run != "" {
				prefix = k.Run + " " + prefix
			}
		}
		for _, r := range k.Ranks {
			label := prefix + labels[r.ID]
			strag := k.Straggler != nil && k.Straggler.Distinct && k.Straggler.Index == r.Index
			text := ""
			switch {
			case k.UpperBound:
				text = "one rank: waiting not separable"
			case strag:
				label += " (straggler)"
				text = fmt.Sprintf("straggler: last in %.0f%% of %d", 100*k.Straggler.Share(), k.Straggler.Instances)
			default:
				text = fmt.Sprintf("waits %.0f%%", 100*stats.Ratio(r.WaitNS, r.KernelNS))
			}
			ticks = append(ticks, plot.Tick{Value: y, Label: label})
			steps := int64(1)
			if k.Class.Scope == step.InStep {
				steps = int64(max(k.Steps, 1))
			}
			xt, xw := ms(stats.PerStep(r.TransferNS, int(steps))), ms(stats.PerStep(r.TransferNS+r.WaitNS, int(steps)))
			xmax = max(xmax, xw)
			l.addRect(rect{x0: 0, x1: xt, y0: y - 0.36, y1: y + 0.36, fill: palette[0]})
			l.addRect(rect{x0: xt, x1: xw, y0: y - 0.36, y1: y + 0.36, fill: waitColour, text: text, textRight: true})
			y--
		}
	}
	p.Add(l)
	// Room right of the longest bar for its label.
	p.X.Min, p.X.Max = 0, xmax*1.35
	p.Y.Min, p.Y.Max = -0.6, top+0.6
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Tick.Label.Font = font.From(sans, 9)
	f := &figure{p: p, width: 9 * vg.Inch, height: vg.Inch*1.3 + vg.Length(top+1)*0.3*vg.Inch, data: l}
	f.legend = []legendEntry{{text: "transfer", fill: palette[0]}, {text: "waiting", fill: waitColour}}
	return f, nil
}
