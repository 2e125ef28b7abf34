// Package chart draws traceq's charts (SVG, or PNG on request) with
// gonum.org/v1/plot. It lays out data that package analyze computed and
// computes nothing itself beyond layout (bin edges, axis ranges).
//
// Every chart gives each top-level kernel category one fixed colour
// (Colour), in the order of classify.Tops(), so "communication" is the same
// red in every chart of every run; the legend sits in its own strip right of
// the data. Output is byte-identical across runs: nothing is drawn in map
// order and no time or environment reaches the file.
//
// It is the only package that imports gonum/plot.
package chart

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/render"
)

// Formats lists the output formats.
var Formats = []string{"svg", "png"}

// checkFormat reports an error for an unknown chart format.
func checkFormat(f string) error {
	if slices.Contains(Formats, f) {
		return nil
	}
	return fmt.Errorf("unknown chart format %q (want svg or png)", f)
}

// Options tunes a chart.
type Options struct {
	// Format is "svg" (the default when empty) or "png".
	Format string
	// Title names what is drawn (the trace); the chart prefixes what it
	// shows, e.g. "Top kernels — vllm.json.gz".
	Title string
	// Longest is how many kernels the timeline numbers and names under its
	// axis: the longest instance of each of the Longest names whose
	// longest instances are longest. 0 means DefaultLongest; a negative
	// number, none.
	Longest int
}

// DefaultLongest is the number of longest kernels a timeline names.
const DefaultLongest = 5

func (o Options) longest() int {
	switch {
	case o.Longest == 0:
		return DefaultLongest
	case o.Longest < 0:
		return 0
	}
	return o.Longest
}

func (o Options) format() string {
	if o.Format == "" {
		return "svg"
	}
	return o.Format
}

// palette gives each top-level category of classify.Tops() its colour,
// by position. Tableau-like hues; the communication red and gemm blue are
// the ones a reader looks for first.
var palette = [classify.NumTops]color.RGBA{
	{0xd6, 0x27, 0x28, 0xff}, // communication
	{0x1f, 0x77, 0xb4, 0xff}, // gemm
	{0x94, 0x67, 0xbd, 0xff}, // moe
	{0xff, 0x7f, 0x0e, 0xff}, // attention
	{0x8c, 0x56, 0x4b, 0xff}, // kv_cache
	{0xbc, 0xbd, 0x22, 0xff}, // cast
	{0x17, 0xbe, 0xcf, 0xff}, // norm
	{0xe3, 0x77, 0xc2, 0xff}, // activation
	{0x2c, 0xa0, 0x2c, 0xff}, // rotary
	{0xff, 0xbb, 0x78, 0xff}, // sampling
	{0x98, 0xdf, 0x8a, 0xff}, // embedding
	{0xae, 0xc7, 0xe8, 0xff}, // elementwise
	{0xc5, 0xb0, 0xd5, 0xff}, // memcpy
	{0x7f, 0x7f, 0x7f, 0xff}, // other
}

// Colour returns the fixed colour of a top-level category.
func Colour(top classify.Top) color.RGBA { return palette[top] }

// presentTops marks the top-level categories a chart draws, for its legend.
type presentTops [classify.NumTops]bool

// textOn returns black or white, whichever reads better on c.
func textOn(c color.RGBA) color.Color {
	// Rec. 601 luma; 140 splits the palette into dark and light hues.
	if 299*int(c.R)+587*int(c.G)+114*int(c.B) < 140*1000 {
		return color.White
	}
	return color.Black
}

// sans is the one typeface of every chart: Liberation Sans has Arial's
// metrics, so the SVG's fallback to Arial or Helvetica keeps the layout.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot returns a plot with traceq's text styles: sans-serif everywhere,
// set per plot because plot.DefaultFont is a global shared by every test.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 12)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
	}
	p.Legend.TextStyle.Font = font.From(sans, 9)
	p.Legend.Left = true
	p.Legend.Top = true
	p.Legend.ThumbnailWidth = vg.Points(12)
	return p
}

// figure is a plot ready to be written: its size and its legend, which is
// drawn in a strip right of the plot so it never covers data.
type figure struct {
	p             *plot.Plot
	width, height vg.Length
	legend        []legendEntry
	legendTitle   string
	// caption is lines of text under the plot, left-aligned (the
	// timeline's key to its numbered kernels); the figure grows by
	// captionLine for each.
	caption []string
	data    *layer // what the plot draws, for tests
	// below are more plots drawn under p, each with its height, sharing
	// the figure's width and legend (the diff chart's panel per step
	// kind); height includes theirs.
	below []panel
}

// panel is one more plot of a figure, under the first.
type panel struct {
	p      *plot.Plot
	data   *layer
	height vg.Length
}

// captionLine is the height of a caption line.
const captionLine = vg.Length(12)

type legendEntry struct {
	text string
	fill color.Color
	line bool // a line marker rather than a filled box
}

// categoryLegend lists the tops present in canonical order.
func categoryLegend(present *presentTops) []legendEntry {
	var out []legendEntry
	for _, top := range classify.Tops() {
		if present[top] {
			out = append(out, legendEntry{text: top.String(), fill: palette[top]})
		}
	}
	return out
}

type swatch struct {
	c    color.Color
	line bool
}

func (s swatch) Thumbnail(c *draw.Canvas) {
	if s.line {
		y := (c.Min.Y + c.Max.Y) / 2
		c.StrokeLine2(draw.LineStyle{Color: s.c, Width: vg.Points(1.5)}, c.Min.X, y, c.Max.X, y)
		return
	}
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(s.c, pts)
}

// safeText makes s fit for any chart: render.Printable's escapes for
// control characters and invalid UTF-8 (a kernel name holding \x01 made
// an SVG that was not XML), and the same escape for the two
// noncharacters XML also forbids, U+FFFE and U+FFFF.
func safeText(s string) string {
	s = render.Printable(s)
	if strings.ContainsAny(s, "\ufffe\uffff") {
		s = strings.NewReplacer("\ufffe", `\ufffe`, "\uffff", `\uffff`).Replace(s)
	}
	return s
}

// safeTicks makes a tick marker's labels safeText.
type safeTicks struct{ plot.Ticker }

func (s safeTicks) Ticks(min, max float64) []plot.Tick {
	ts := s.Ticker.Ticks(min, max)
	for i := range ts {
		ts[i].Label = safeText(ts[i].Label)
	}
	return ts
}

// sanitize passes every text of f through safeText: titles, axis labels,
// tick labels, legend entries and the texts the data layer draws. It is
// the one gate between trace-controlled strings and the canvas.
func (f *figure) sanitize() {
	for _, pn := range f.below {
		g := &figure{p: pn.p, data: pn.data}
		g.sanitize()
	}
	p := f.p
	p.Title.Text = safeText(p.Title.Text)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		// An axis label may carry a note on a second line (withNote).
		lines := strings.Split(a.Label.Text, "\n")
		for i := range lines {
			lines[i] = safeText(lines[i])
		}
		a.Label.Text = strings.Join(lines, "\n")
		if _, done := a.Tick.Marker.(safeTicks); !done {
			a.Tick.Marker = safeTicks{a.Tick.Marker}
		}
	}
	f.legendTitle = safeText(f.legendTitle)
	for i := range f.caption {
		f.caption[i] = safeText(f.caption[i])
	}
	for i := range f.legend {
		f.legend[i].text = safeText(f.legend[i].text)
	}
	if l := f.data; l != nil {
		for i := range l.rects {
			l.rects[i].text = safeText(l.rects[i].text)
		}
		for i := range l.vlines {
			l.vlines[i].label = safeText(l.vlines[i].label)
		}
		for i := range l.texts {
			l.texts[i].text = safeText(l.texts[i].text)
		}
	}
}

// MaxRows is the most rows a bar chart draws (kernels, groups, diff
// rows) and MaxLanes the most lanes a timeline draws. Past them a figure
// outgrows any screen and a PNG canvas grows with the input (2·10^4
// shares bars asked for a 4.8 GB canvas); what is left out is summed in a
// note under the chart (withNote).
const (
	MaxRows  = 60
	MaxLanes = 40
)

// withNote adds note to an axis label as a second line.
func withNote(label, note string) string {
	if note == "" {
		return label
	}
	return label + "\n" + note
}

// margin surrounds the plot inside the figure.
const margin = vg.Length(8)

// write renders f to w in format.
func (f *figure) write(w io.Writer, format string) error {
	if err := checkFormat(format); err != nil {
		return err
	}
	f.sanitize()
	leg := plot.NewLegend()
	leg.TextStyle.Font = font.From(sans, 9)
	leg.Left, leg.Top = true, true
	leg.ThumbnailWidth = vg.Points(12)
	leg.Padding = vg.Points(2)
	var legW vg.Length
	if f.legendTitle != "" {
		leg.Add(f.legendTitle)
	}
	for _, e := range f.legend {
		leg.Add(e.text, swatch{c: e.fill, line: e.line})
	}
	for _, e := range f.legend {
		legW = max(legW, leg.TextStyle.Width(" "+e.text))
	}
	if f.legendTitle != "" {
		legW = max(legW, leg.TextStyle.Width(f.legendTitle)-leg.ThumbnailWidth)
	}
	if len(f.legend) > 0 {
		legW += leg.ThumbnailWidth + vg.Points(16)
	}
	if len(f.legend) > 0 {
		// The legend strip must fit: grow the figure rather than clip it.
		entries := len(f.legend)
		if f.legendTitle != "" {
			entries++
		}
		eh := leg.TextStyle.Height("Xg") + leg.Padding
		need := vg.Length(entries)*eh + vg.Points(40)
		if f.p.Title.Text != "" {
			need += f.p.Title.TextStyle.Height(f.p.Title.Text) + f.p.Title.Padding
		}
		f.height = max(f.height, need)
	}
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	var svg *vgsvg.Canvas
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(144))}
	default:
		svg = vgsvg.New(f.width, f.height)
		c = svg
	}
	dc := draw.New(c)
	// White background for the whole figure, legend strip included
	// (viewers in dark mode would otherwise show it transparent).
	dc.FillPolygon(color.White, []vg.Point{{X: 0, Y: 0}, {X: 0, Y: f.height}, {X: f.width, Y: f.height}, {X: f.width, Y: 0}})
	// A small margin all round: long tick labels end flush with the left
	// edge otherwise.
	capH := vg.Length(len(f.caption)) * captionLine
	// The panels under the first, bottom up; the first takes the rest.
	bottom := margin/2 + capH
	for i := len(f.below) - 1; i >= 0; i-- {
		pn := f.below[i]
		pn.p.Draw(draw.Crop(dc, margin, -legW, bottom, -(f.height - bottom - pn.height)))
		bottom += pn.height
	}
	f.p.Draw(draw.Crop(dc, margin, -legW, bottom, -margin/2))
	if len(f.caption) > 0 {
		st := draw.TextStyle{Color: color.Black, Font: font.From(sans, 9), Handler: f.p.TextHandler, XAlign: draw.XLeft, YAlign: draw.YTop}
		for i, line := range f.caption {
			dc.FillText(st, vg.Point{X: margin + vg.Points(4), Y: margin/2 + capH - vg.Length(i)*captionLine}, line)
		}
	}
	if len(f.legend) > 0 {
		// Align the legend with the top of the data area: below the title.
		top := vg.Points(6)
		if f.p.Title.Text != "" {
			top += f.p.Title.TextStyle.Height(f.p.Title.Text) + f.p.Title.Padding
		}
		leg.Draw(draw.Crop(dc, f.width-legW+vg.Points(8), 0, 0, -top))
	}
	if svg == nil {
		_, err := c.WriteTo(w)
		return err
	}
	var buf bytes.Buffer
	if _, err := svg.WriteTo(&buf); err != nil {
		return err
	}
	_, err := w.Write(fontFallbacks(buf.Bytes()))
	return err
}

// fontFallbacks adds generic fallbacks to the SVG's font families. vgsvg
// names only "Liberation Sans" and does not embed it (embedding costs
// hundreds of KB per chart); Arial has the same metrics as Liberation
// Sans, so text laid out with Liberation's metrics fits where Liberation
// is not installed (most browsers on Windows and macOS).
func fontFallbacks(svg []byte) []byte {
	svg = bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"), []byte("font-family:Liberation Sans,Arial,Helvetica,sans-serif;"))
	return svg
}

// ms converts integer nanoseconds to float milliseconds for plotting, the
// last step before drawing.
func ms(ns int64) float64 { return float64(ns) / 1e6 }

// clip shortens s to n runes with an ellipsis, deterministically.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// fmtMS formats milliseconds with three decimals (µs resolution).
func fmtMS(v float64) string { return fmt.Sprintf("%.3f", v) }

// niceTicks labels a time axis at 1, 2 or 5 × 10^k, five to ten labels
// across the range, with unlabelled minor ticks between, and never uses
// exponent notation.
type niceTicks struct{}

func (niceTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: trimZeros(strconv.FormatFloat(min, 'f', 6, 64))}}
	}
	raw := (max - min) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []plot.Tick
	minor := step / 5
	if step/mag == 2 {
		minor = step / 4
	}
	for i := math.Ceil(min / minor); i*minor <= max+minor*1e-9; i++ {
		v := i * minor
		t := plot.Tick{Value: v}
		if k := v / step; math.Abs(k-math.Round(k)) < 1e-6 {
			t.Label = trimZeros(strconv.FormatFloat(math.Round(k)*step, 'f', 6, 64))
		}
		ts = append(ts, t)
	}
	return ts
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// rect is a filled rectangle in data coordinates, with optional text
// inside or right of it.
type rect struct {
	x0, x1, y0, y1 float64
	fill           color.Color
	text           string
	textColour     color.Color
	textRight      bool // text right of the rectangle rather than centred in it
	textAbove      bool // text centred above the rectangle
}

// vline is a vertical line in data coordinates with a label at its top;
// labels of close lines go on separate rows (labelRows).
type vline struct {
	x      float64
	colour color.Color
	dashed bool
	label  string
}

// textMark is text centred on a point in data coordinates.
type textMark struct {
	x, y   float64
	text   string
	colour color.Color
}

// hmark is a short horizontal line across [x0, x1] at y.
type hmark struct {
	x0, x1, y float64
	colour    color.Color
}

// layer draws rectangles, marks and lines; it is every chart's plotter, so
// the charts control bar widths in data units and colour each bar itself.
type layer struct {
	rects  []rect
	texts  []textMark
	marks  []hmark
	vlines []vline
	font   font.Font
	// range of the data
	xmin, xmax, ymin, ymax float64
}

func newLayer() *layer {
	return &layer{font: sans, xmin: math.Inf(1), xmax: math.Inf(-1), ymin: math.Inf(1), ymax: math.Inf(-1)}
}

func (l *layer) grow(x, y float64) {
	l.xmin, l.xmax = math.Min(l.xmin, x), math.Max(l.xmax, x)
	l.ymin, l.ymax = math.Min(l.ymin, y), math.Max(l.ymax, y)
}

func (l *layer) addRect(r rect) {
	l.rects = append(l.rects, r)
	l.grow(r.x0, r.y0)
	l.grow(r.x1, r.y1)
}

func (l *layer) DataRange() (xmin, xmax, ymin, ymax float64) {
	return l.xmin, l.xmax, l.ymin, l.ymax
}

func (l *layer) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, r := range l.rects {
		x0, x1, y0, y1 := trX(r.x0), trX(r.x1), trY(r.y0), trY(r.y1)
		pts := []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}}
		if poly := c.ClipPolygonXY(pts); len(poly) > 0 {
			c.FillPolygon(r.fill, poly)
		}
	}
	for _, m := range l.marks {
		c.StrokeLine2(draw.LineStyle{Color: m.colour, Width: vg.Points(1.5)}, trX(m.x0), trY(m.y), trX(m.x1), trY(m.y))
	}
	sty := draw.TextStyle{Color: color.Black, Font: font.From(l.font, 8), Handler: p.TextHandler}
	// Marks close together on one row (numbered kernels a few µs apart)
	// stack: centre, above, below, and on.
	byY := map[float64][]int{}
	var ys []float64
	for i, m := range l.texts {
		if byY[m.y] == nil {
			ys = append(ys, m.y)
		}
		byY[m.y] = append(byY[m.y], i)
	}
	for _, y := range ys {
		idx := byY[y]
		ext := make([][2]vg.Length, len(idx))
		for k, i := range idx {
			x, w := trX(l.texts[i].x), sty.Width(l.texts[i].text)
			ext[k] = [2]vg.Length{x - w/2, x + w/2}
		}
		for k, r := range packRows(ext, labelGap) {
			m := l.texts[idx[k]]
			st := sty
			st.Color = m.colour
			st.XAlign, st.YAlign = draw.XCenter, draw.YCenter
			off := vg.Length((r+1)/2) * labelRow
			if r%2 == 0 {
				off = -off
			}
			c.FillText(st, vg.Point{X: trX(m.x), Y: trY(m.y) + off}, m.text)
		}
	}
	for _, r := range l.rects {
		if r.text == "" {
			continue
		}
		st := sty
		if r.textColour != nil {
			st.Color = r.textColour
		}
		st.YAlign = draw.YCenter
		y := (trY(r.y0) + trY(r.y1)) / 2
		if r.textAbove {
			st.XAlign, st.YAlign = draw.XCenter, draw.YBottom
			c.FillText(st, vg.Point{X: (trX(r.x0) + trX(r.x1)) / 2, Y: trY(r.y1) + vg.Points(2)}, r.text)
			continue
		}
		if r.textRight {
			st.XAlign = draw.XLeft
			c.FillText(st, vg.Point{X: trX(r.x1) + vg.Points(3), Y: y}, r.text)
		} else {
			st.XAlign = draw.XCenter
			c.FillText(st, vg.Point{X: (trX(r.x0) + trX(r.x1)) / 2, Y: y}, r.text)
		}
	}
	xs := make([]vg.Length, len(l.vlines))
	ws := make([]vg.Length, len(l.vlines))
	for i, v := range l.vlines {
		ls := draw.LineStyle{Color: v.colour, Width: vg.Points(1.2)}
		if v.dashed {
			ls.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		xs[i] = trX(v.x)
		c.StrokeLine2(ls, xs[i], c.Min.Y, xs[i], c.Max.Y)
		if v.label != "" {
			ws[i] = sty.Width(v.label)
		}
	}
	rows, left := labelRows(xs, ws, c.Min.X, c.Max.X, labelGap)
	for i, v := range l.vlines {
		if v.label == "" {
			continue
		}
		st := sty
		st.Color = v.colour
		st.XAlign, st.YAlign = draw.XLeft, draw.YTop
		x := xs[i] + labelGap
		if left[i] {
			st.XAlign = draw.XRight
			x = xs[i] - labelGap
		}
		c.FillText(st, vg.Point{X: x, Y: c.Max.Y - labelGap - vg.Length(rows[i])*labelRow}, v.label)
	}
}

// labelGap separates a line's label from the line and from other labels;
// labelRow is the height of a row of line labels.
const (
	labelGap = vg.Length(2)
	labelRow = vg.Length(10)
)

// labelRows places the labels of vertical lines at xs, ws wide, in rows
// from the top of [minX, maxX]: each label right of its line, or left of
// it where it would run past maxX, on the first row where it overlaps no
// label already placed (nearest lines first, in order of x). Zero-width
// labels take no place.
func labelRows(xs, ws []vg.Length, minX, maxX, gap vg.Length) (rows []int, left []bool) {
	rows = make([]int, len(xs))
	left = make([]bool, len(xs))
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	var ext [][2]vg.Length
	var which []int
	for _, i := range order {
		if ws[i] == 0 {
			continue
		}
		x0, x1 := xs[i]+gap, xs[i]+gap+ws[i]
		if x1 > maxX && xs[i]-gap-ws[i] >= minX {
			left[i] = true
			x0, x1 = xs[i]-gap-ws[i], xs[i]-gap
		}
		ext = append(ext, [2]vg.Length{x0, x1})
		which = append(which, i)
	}
	for k, r := range packRows(ext, gap) {
		rows[which[k]] = r
	}
	return rows, left
}

// packRows puts each extent [x0, x1], in order, on the first row where it
// keeps gap from every extent already there, and returns the rows.
func packRows(ext [][2]vg.Length, gap vg.Length) []int {
	rows := make([]int, len(ext))
	var placed [][][2]vg.Length // per row, the extents taken
	for i, e := range ext {
		r := 0
		for ; r < len(placed); r++ {
			if !slices.ContainsFunc(placed[r], func(o [2]vg.Length) bool { return e[0] < o[1]+gap && o[0] < e[1]+gap }) {
				break
			}
		}
		if r == len(placed) {
			placed = append(placed, nil)
		}
		placed[r] = append(placed[r], e)
		rows[i] = r
	}
	return rows
}

// countTicks marks whole numbers only: a count axis has no half steps.
type countTicks struct{}

func (countTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(min, max) {
		if t.Value != math.Trunc(t.Value) {
			continue
		}
		if t.Label != "" {
			t.Label = strconv.FormatInt(int64(t.Value), 10)
		}
		out = append(out, t)
	}
	return out
}
