package chart

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/labels"
	"github.com/traceq/traceq/trace"
)

// timelineResolution is the number of positions across the timeline's
// width, about one per point.
const timelineResolution = 800

// maxExactRects is the most rectangles a timeline draws one per activity
// (about 100 bytes of SVG each); beyond it the timeline switches to
// coverage columns, so a whole trace stays a small file.
const maxExactRects = 1500

// Timeline draws tl: one lane per (process, device, stream), each activity
// a rectangle from its start to its end coloured by its category's top
// level, time in ms since tl.Origin (the step's first kernel start, also
// in a window of the step: Track.Between). White between
// rectangles is time the stream ran nothing. The longest kernels
// (Options.Longest) are numbered on their rectangle and named, with their
// duration, under the axis: a step of a thousand kernels is otherwise a
// barcode.
func Timeline(w io.Writer, tl *Track, opt Options) error {
	f, err := timelineFigure(tl, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

func timelineFigure(tl *Track, opt Options) (*figure, error) {
	if tl == nil || len(tl.Spans) == 0 {
		return nil, fmt.Errorf("timeline chart: no activities")
	}
	what := "the whole trace"
	if s := tl.Step; s != nil {
		what = fmt.Sprintf("step %d (%s, %s)", s.Index, s.Kind, clip(s.Marker, 48))
	}
	title := "Timeline of " + what
	from, to := ms(int64(tl.Start-tl.Origin)), ms(int64(tl.End-tl.Origin))
	if tl.Window != nil {
		title += ", " + fmtMS(from) + "–" + fmtMS(to) + " ms"
	}
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	span := int64(tl.End - tl.Start)
	first := "the step's first kernel"
	if tl.Step == nil {
		first = "the first kernel"
	}
	p.X.Label.Text = fmt.Sprintf("time since %s (ms); GPU span %s ms", first, fmtMS(ms(span)))
	if tl.Window != nil {
		p.X.Label.Text = fmt.Sprintf("time since %s (ms); window %s to %s ms", first, fmtMS(from), fmtMS(to))
	}
	p.X.Tick.Marker = niceTicks{}
	tl, note := busiestLanes(tl, MaxLanes)
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
	var present presentTops
	rects, coverage := timelineRects(tl, n)
	for _, r := range rects {
		l.addRect(r)
	}
	for _, sp := range tl.Spans {
		present[sp.Category.Top] = true
	}
	if coverage {
		// Too many activities to draw one by one: say how to read columns.
		p.X.Label.Text = fmt.Sprintf("time (ms); GPU span %s ms; %d columns: height = busy fraction, colour = main category", fmtMS(ms(span)), timelineResolution)
	}
	key := longestKernels(tl, n, opt.longest(), coverage, l)
	p.X.Label.Text = withNote(p.X.Label.Text, note)
	p.Add(l)
	p.X.Min, p.X.Max = from, to
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Tick.Label.Font = font.From(sans, 9)
	height := vg.Inch*1.3 + vg.Length(n)*0.3*vg.Inch + vg.Length(len(key))*captionLine
	f := &figure{p: p, width: 10 * vg.Inch, height: height, data: l, caption: key}
	f.legend = categoryLegend(&present)
	return f, nil
}

// longestKernels numbers the longest instance of each of the k kernel
// names whose longest instances are longest (ties: the earlier, then the
// name) on its rectangle in l, and returns the key that names them, a
// heading and one line each: "1   0.312 ms   label".
func longestKernels(tl *Track, n, k int, coverage bool, l *layer) []string {
	if k <= 0 {
		return nil
	}
	idx := make([]int, len(tl.Spans))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		sa, sb := &tl.Spans[a], &tl.Spans[b]
		if c := cmp.Compare(sb.End-sb.Start, sa.End-sa.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(sa.Start, sb.Start); c != 0 {
			return c
		}
		return cmp.Compare(sa.Name, sb.Name)
	})
	taken := map[string]bool{}
	var key []string
	for _, i := range idx {
		if len(key) == k {
			break
		}
		sp := &tl.Spans[i]
		if taken[sp.Name] {
			continue
		}
		taken[sp.Name] = true
		num := strconv.Itoa(len(key) + 1)
		colour := color.Color(color.Black)
		if !coverage && (sp.End-sp.Start)*wideKernel >= tl.End-tl.Start {
			// The number sits inside a rectangle wider than itself.
			colour = textOn(Colour(sp.Category.Top))
		}
		mid := tl.Start + (sp.End-sp.Start)/2 + (sp.Start - tl.Start)
		l.texts = append(l.texts, textMark{x: ms(int64(mid - tl.Origin)), y: float64(n - 1 - sp.Lane), text: num, colour: colour})
		label := sp.Label
		if label == "" {
			label = labels.Clip(labels.Short(sp.Name), labels.Width)
		}
		key = append(key, num+"   "+fmtMS(ms(int64(sp.End-sp.Start)))+" ms   "+label)
	}
	if len(key) > 0 {
		key = append([]string{"longest GPU activities (numbered on the chart, each name once):"}, key...)
	}
	return key
}

// wideKernel: a kernel of at least 1/wideKernel of the span drawn is wider
// than a number printed on it (10 in of figure, about 600 pt of axis).
const wideKernel = 40

// timelineRects lays out tl's spans on n lanes. Exact mode: one rectangle
// per activity from its start to its end, neighbours of the same category
// less than a quarter position apart merged, none thinner than a quarter
// position (a hairline: an idle GPU must look idle, so short kernels are
// not widened further). Coverage mode, when exact mode would draw more than
// maxExactRects: timelineResolution columns per lane, each as tall as the
// fraction of its time the lane was busy (rounded up to eighths, so any
// work shows) and coloured by the category with the most time in it;
// equal neighbours merge.
func timelineRects(tl *Track, n int) (rects []rect, coverage bool) {
	span := int64(tl.End - tl.Start)
	q := trace.Time(max(1, span/(4*timelineResolution)))
	laneY := func(lane int) float64 { return float64(n - 1 - lane) }
	x := func(t trace.Time) float64 { return ms(int64(t - tl.Origin)) }
	var cur Span
	var curTop classify.Top
	open := false
	flush := func() {
		if open {
			y := laneY(cur.Lane)
			rects = append(rects, rect{x0: x(cur.Start), x1: x(max(cur.End, cur.Start+q)), y0: y - 0.4, y1: y + 0.4, fill: Colour(curTop)})
		}
	}
	for _, sp := range tl.Spans {
		top := sp.Category.Top
		if open && sp.Lane == cur.Lane && top == curTop && sp.Start-max(cur.End, cur.Start+q) < q {
			cur.End = max(cur.End, sp.End)
			continue
		}
		flush()
		cur, curTop, open = sp, top, true
	}
	flush()
	if len(rects) <= maxExactRects {
		return rects, false
	}

	// Coverage mode. Column i of a lane covers [bound(i), bound(i+1)).
	const cols = timelineResolution
	bound := func(i int) trace.Time { return tl.Start + trace.Time(span*int64(i)/cols) }
	by := make([][]*TopSums, n) // lane, column → ns per top
	for _, sp := range tl.Spans {
		if by[sp.Lane] == nil {
			by[sp.Lane] = make([]*TopSums, cols)
		}
		top := sp.Category.Top
		i := int(int64(sp.Start-tl.Start) * cols / max(span, 1))
		for i = min(i, cols-1); i < cols && bound(i) < max(sp.End, sp.Start+1); i++ {
			lo, hi := max(sp.Start, bound(i)), min(sp.End, bound(i+1))
			if hi <= lo {
				continue
			}
			if by[sp.Lane][i] == nil {
				by[sp.Lane][i] = &TopSums{}
			}
			by[sp.Lane][i][top] += int64(hi - lo)
		}
	}
	rects = rects[:0]
	for lane := range by {
		y := laneY(lane)
		last, lastQ := -1, -1 // index in rects of the open column run
		var lastTop classify.Top
		for i, col := range by[lane] {
			if col == nil {
				last = -1
				continue
			}
			var busy int64
			var best classify.Top
			for k, ns := range col {
				busy += ns
				if ns > col[best] {
					best = classify.Top(k)
				}
			}
			w := int64(bound(i+1) - bound(i))
			// Eighths of the lane, rounded up; overlapping work on one lane
			// counts once at most (a full column).
			eighths := int(min(8, (busy*8+w-1)/max(w, 1)))
			if last >= 0 && best == lastTop && eighths == lastQ {
				rects[last].x1 = x(bound(i + 1))
				continue
			}
			rects = append(rects, rect{x0: x(bound(i)), x1: x(bound(i + 1)), y0: y - 0.4, y1: y - 0.4 + 0.8*float64(eighths)/8, fill: Colour(best)})
			last, lastTop, lastQ = len(rects)-1, best, eighths
		}
	}
	return rects, true
}

// busiestLanes keeps the n lanes of tl with the most GPU time (ties: the
// earlier), in their order, and says what it left out. The time axis
// stays the whole of tl.
func busiestLanes(tl *Track, n int) (*Track, string) {
	if len(tl.Lanes) <= n {
		return tl, ""
	}
	busy := make([]int64, len(tl.Lanes))
	for _, sp := range tl.Spans {
		busy[sp.Lane] += int64(sp.End - sp.Start)
	}
	idx := make([]int, len(tl.Lanes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(busy[b], busy[a]) })
	keep := idx[:n]
	slices.Sort(keep)
	newIdx := make([]int, len(tl.Lanes))
	for i := range newIdx {
		newIdx[i] = -1
	}
	out := &Track{Path: tl.Path, Step: tl.Step, Start: tl.Start, End: tl.End, Origin: tl.Origin, Window: tl.Window,
		Lanes: make([]Lane, n)}
	for i, j := range keep {
		out.Lanes[i] = tl.Lanes[j]
		newIdx[j] = i
	}
	var restNS int64
	var restN int
	for _, sp := range tl.Spans {
		if k := newIdx[sp.Lane]; k >= 0 {
			sp.Lane = k
			out.Spans = append(out.Spans, sp)
			continue
		}
		restNS += int64(sp.End - sp.Start)
		restN++
	}
	return out, fmt.Sprintf("showing the %d busiest of %d streams; the other %d: %d activities, %s ms of GPU time",
		n, len(tl.Lanes), len(tl.Lanes)-n, restN, fmtMS(ms(restNS)))
}
