package chart

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/gpuspec"
)

// RooflineLabels is how many of the op shapes with the most kernel time
// the roofline chart names.
const RooflineLabels = 6

// Roofline draws the op shapes of r on their device's roofs (log-log):
// arithmetic intensity (FLOP/B) across, achieved TFLOP/s up, one circle
// per op shape with FLOPs, its area proportional to its kernel time and
// its colour its category's; the device's memory roof (bandwidth ×
// intensity) and a compute roof per data type the shapes use, each a
// line to the ridge point and flat past it (docs/definitions.md#roofline).
// The device is the first one with a table row; only shapes on devices of
// that row are drawn, and the axis says what was left out.
func Roofline(w io.Writer, r *efficiency.Result, opt Options) error {
	f, _, err := rooflineFigure(r, opt)
	if err != nil {
		return err
	}
	return f.write(w, opt.format())
}

// point is one op shape on the chart.
type point struct {
	x, y   float64 // intensity, TFLOP/s
	ns     int64
	dtype  gpuspec.DType
	top    classify.Top
	label  string
	radius vg.Length
}

// ErrNoRoofline is the error of Roofline when r has nothing to draw: no
// device of the inputs in the GPU table, or no op shape with FLOPs.
var ErrNoRoofline = errors.New("roofline chart: nothing to draw")

// RooflineDrawable reports whether Roofline has something to draw for r.
func RooflineDrawable(r *efficiency.Result) bool {
	_, _, _, _, err := rooflinePoints(r)
	return err == nil
}

// rooflinePoints picks the device of the chart (the first one with a
// table row) and the points of its op shapes, with the notes on what
// was left out and the data types drawn.
func rooflinePoints(r *efficiency.Result) (*gpuspec.GPU, []point, []string, map[gpuspec.DType]bool, error) {
	var spec *gpuspec.GPU
	devs := map[[2]string]bool{} // (run, device) of that row
	for _, d := range r.Devices {
		if d.Spec != nil && (spec == nil || d.Spec == spec) {
			spec = d.Spec
			devs[[2]string{d.Run, strconv.Itoa(int(d.Device))}] = true
		}
	}
	if spec == nil {
		return nil, nil, nil, nil, fmt.Errorf("%w: no device of the inputs is in the GPU table (give --gpu NAME)", ErrNoRoofline)
	}
	var pts []point
	var leftNS, memNS int64
	left, memOnly := 0, 0
	dtypes := map[gpuspec.DType]bool{}
	for _, o := range r.Ops {
		if !o.Modelled || !devs[[2]string{o.Run, strconv.Itoa(int(o.Device))}] {
			if o.Modelled {
				left++
				leftNS += o.KernelNS
			}
			continue
		}
		if o.FLOPs == 0 || o.Bytes == 0 || o.KernelNS == 0 {
			memOnly++
			memNS += o.KernelNS
			continue
		}
		dtypes[o.DType] = true
		pts = append(pts, point{x: efficiency.Intensity(o.FLOPs, o.Bytes), y: efficiency.Rate(o.FLOPs, o.KernelNS), ns: o.KernelNS,
			dtype: o.DType, top: o.Category.Top, label: safeText(o.Name)})
	}
	if len(pts) == 0 {
		return nil, nil, nil, nil, fmt.Errorf("%w: no op with FLOPs was priced (record shapes, see docs/efficiency.md#recording-shapes)", ErrNoRoofline)
	}
	var notes []string
	if memOnly > 0 {
		notes = append(notes, fmt.Sprintf("%s (%s ms) without FLOPs (memory-only) not drawn", shapes(memOnly), fmtMS(ms(memNS))))
	}
	if left > 0 {
		notes = append(notes, fmt.Sprintf("%s (%s ms) on devices of other rows left out", shapes(left), fmtMS(ms(leftNS))))
	}
	return spec, pts, notes, dtypes, nil
}

func rooflineFigure(r *efficiency.Result, opt Options) (*figure, *rooflineLayer, error) {
	spec, pts, notes, dtypes, err := rooflinePoints(r)
	if err != nil {
		return nil, nil, err
	}
	// Largest first, so that small circles are drawn over large ones.
	slices.SortStableFunc(pts, func(a, b point) int { return cmp.Compare(b.ns, a.ns) })
	title := "Roofline: achieved TFLOP/s by arithmetic intensity, " + safeText(spec.Name)
	if opt.Title != "" {
		title += " — " + opt.Title
	}
	p := newPlot(title)
	// The notes go under the chart: a long axis label narrows the plot.
	p.X.Label.Text = "arithmetic intensity (FLOP/byte)"
	p.Y.Label.Text = "achieved TFLOP/s"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}

	bw := spec.Memory.Tera() // TB/s: TFLOP/s per FLOP/B on the memory roof
	l := &rooflineLayer{}
	var peaks []gpuspec.DType
	for _, d := range gpuspec.DTypes() {
		if dtypes[d] && spec.Peak[d].Known() {
			peaks = append(peaks, d)
		}
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, pt := range pts {
		xmin, xmax = math.Min(xmin, pt.x), math.Max(xmax, pt.x)
		ymin, ymax = math.Min(ymin, pt.y), math.Max(ymax, pt.y)
	}
	for _, d := range peaks {
		peak := spec.Peak[d].Tera()
		xmax = math.Max(xmax, peak/bw)
		ymax = math.Max(ymax, peak)
	}
	xmin, xmax = decadeBelow(xmin), decadeAbove(xmax*1.5)
	ymin, ymax = decadeBelow(math.Min(ymin, bw*xmin)), decadeAbove(ymax*1.5)
	l.xmin, l.xmax, l.ymin, l.ymax = xmin, xmax, ymin, ymax
	roofColour := color.RGBA{0x30, 0x30, 0x30, 0xff}
	for _, d := range peaks {
		peak := spec.Peak[d].Tera()
		ridge := peak / bw
		l.roofs = append(l.roofs, roofLine{x0: ridge, y0: peak, x1: xmax, y1: peak, colour: roofColour,
			label: safeText(fmt.Sprintf("%s peak %s TFLOP/s", d, spec.Peak[d].Text+markText(spec.Peak[d].Marks)))})
	}
	// The memory roof runs to the highest compute roof, or across when
	// the table has no peak for the types drawn.
	x1, y1 := xmax, bw*xmax
	if len(peaks) > 0 {
		topPeak := spec.Peak[peaks[len(peaks)-1]].Tera()
		x1, y1 = topPeak/bw, topPeak
	} else {
		ymax = math.Max(ymax, decadeAbove(y1))
		l.ymax = ymax
	}
	l.roofs = append(l.roofs, roofLine{x0: xmin, y0: bw * xmin, x1: x1, y1: y1, colour: roofColour, dashed: true,
		label: safeText(fmt.Sprintf("memory %s TB/s", spec.Memory.Text+markText(spec.Memory.Marks)))})
	var present presentTops
	maxNS := pts[0].ns
	for i := range pts {
		// Area proportional to kernel time: radius ∝ √time, 3 to 18 points.
		pts[i].radius = vg.Points(3 + 15*math.Sqrt(float64(pts[i].ns)/float64(maxNS)))
		present[pts[i].top] = true
	}
	if len(peaks) > 1 {
		// Name each point's type: it is read against that type's roof.
		for i := range pts {
			pts[i].label += " (" + pts[i].dtype.String() + ")"
		}
	}
	l.points = pts
	l.labels = min(RooflineLabels, len(pts))
	p.Add(l)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	f := &figure{p: p, width: 10 * vg.Inch, height: 6 * vg.Inch}
	f.legend = categoryLegend(&present)
	f.caption = append([]string{fmt.Sprintf("%d op shapes with FLOPs on %s, each circle's area its kernel time; the %d with most are numbered",
		len(pts), safeText(spec.Name), l.labels)}, notes...)
	return f, l, nil
}

func shapes(n int) string {
	if n == 1 {
		return "1 op shape"
	}
	return strconv.Itoa(n) + " op shapes"
}

func markText(m gpuspec.Mark) string {
	if m == 0 {
		return ""
	}
	return " (" + m.String() + ")"
}

func decadeBelow(v float64) float64 {
	if !(v > 0) {
		return 1e-3
	}
	return math.Pow(10, math.Floor(math.Log10(v)))
}

func decadeAbove(v float64) float64 {
	if !(v > 0) {
		return 1
	}
	return math.Pow(10, math.Ceil(math.Log10(v)))
}

// logTicks labels the powers of ten of a log axis (0.01, 0.1, 1, 10, …,
// never exponent notation) with unlabelled minor ticks at 2…9 × 10^k.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		base := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * base
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 {
				t.Label = trimZeros(strconv.FormatFloat(v, 'f', max0(int(-e)), 64))
			}
			ts = append(ts, t)
		}
	}
	return ts
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// roofLine is a straight segment in data coordinates (straight on log-log
// axes too) with a label at its right end.
type roofLine struct {
	x0, y0, x1, y1 float64
	colour         color.Color
	dashed         bool
	label          string
}

// rooflineLayer draws the roofs, then the points, then the names of the
// largest points.
type rooflineLayer struct {
	roofs                  []roofLine
	points                 []point
	labels                 int
	xmin, xmax, ymin, ymax float64
}

func (l *rooflineLayer) DataRange() (xmin, xmax, ymin, ymax float64) {
	return l.xmin, l.xmax, l.ymin, l.ymax
}

func (l *rooflineLayer) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.TextStyle{Color: color.Black, Font: font.From(sans, 8), Handler: p.TextHandler}
	for i, r := range l.roofs {
		ls := draw.LineStyle{Color: r.colour, Width: vg.Points(1.5)}
		if r.dashed {
			ls.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		pts := c.ClipLinesXY([]vg.Point{{X: trX(r.x0), Y: trY(r.y0)}, {X: trX(r.x1), Y: trY(r.y1)}})
		for _, seg := range pts {
			c.StrokeLines(ls, seg)
		}
		st := sty
		st.Color = r.colour
		if r.dashed {
			// The memory roof's label sits along its lower left part.
			st.XAlign, st.YAlign = draw.XLeft, draw.YBottom
			x := r.x0 * math.Pow(r.x1/r.x0, 0.08)
			y := r.y0 * math.Pow(r.y1/r.y0, 0.08)
			st.Rotation = math.Atan2(float64(trY(r.y1)-trY(r.y0)), float64(trX(r.x1)-trX(r.x0)))
			c.FillText(st, vg.Point{X: trX(x), Y: trY(y) + vg.Points(3)}, r.label)
			continue
		}
		st.XAlign, st.YAlign = draw.XRight, draw.YBottom
		c.FillText(st, vg.Point{X: trX(r.x1) - vg.Points(4), Y: trY(r.y1) + vg.Points(2) + vg.Length(i)*0}, r.label)
	}
	for _, pt := range l.points {
		col := Colour(pt.top)
		fill := color.NRGBA{col.R, col.G, col.B, 0xb0}
		ctr := vg.Point{X: trX(pt.x), Y: trY(pt.y)}
		c.FillPolygon(fill, circle(ctr, pt.radius))
		c.StrokeLines(draw.LineStyle{Color: col, Width: vg.Points(0.8)}, append(circle(ctr, pt.radius), circle(ctr, pt.radius)[0]))
	}
	// Labels right of their circle (left where that would run past the
	// plot), moved up or down a line at a time off the labels placed
	// before them.
	var placed [][4]vg.Length // x0, x1, y0, y1
	h := sty.Height("Xg")
	for i := 0; i < l.labels; i++ {
		pt := l.points[i]
		st := sty
		text := strconv.Itoa(i+1) + ". " + clip(pt.label, 48)
		w := st.Width(text)
		st.XAlign, st.YAlign = draw.XLeft, draw.YCenter
		x0 := trX(pt.x) + pt.radius + vg.Points(2)
		if x0+w > c.Max.X {
			x0 = trX(pt.x) - pt.radius - vg.Points(2) - w
		}
		y := trY(pt.y)
		for k := 0; k < 12; k++ {
			dy := vg.Length((k+1)/2) * h
			if k%2 == 1 {
				dy = -dy
			}
			yy := y + dy
			if !slices.ContainsFunc(placed, func(b [4]vg.Length) bool {
				return x0 < b[1] && b[0] < x0+w && yy-h/2 < b[3] && b[2] < yy+h/2
			}) {
				y = yy
				break
			}
		}
		placed = append(placed, [4]vg.Length{x0, x0 + w, y - h/2, y + h/2})
		c.FillText(st, vg.Point{X: x0, Y: y}, text)
	}
}

// circle approximates a circle by a 32-gon (deterministic: no arcs, whose
// SVG rendering differs between writers).
func circle(c vg.Point, r vg.Length) []vg.Point {
	const n = 32
	pts := make([]vg.Point, n)
	for i := range pts {
		a := 2 * math.Pi * float64(i) / n
		pts[i] = vg.Point{X: c.X + r*vg.Length(math.Cos(a)), Y: c.Y + r*vg.Length(math.Sin(a))}
	}
	return pts
}
