package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Formats are the file formats of a figure, in the order --figures
// writes them: SVG for the web, PDF for LaTeX, PNG for slides.
var Formats = []string{"svg", "pdf", "png"}

// pngDPI is a print resolution: a 4-inch figure is 1200 pixels wide.
const pngDPI = 300

func init() {
	// A PDF records its creation and modification dates; fixed, the same
	// report writes the same bytes (as SVG and PNG do).
	t := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	fpdf.SetDefaultCreationDate(t)
	fpdf.SetDefaultModificationDate(t)
}

// Figure is one plot of the report, drawn on demand in each format.
type Figure struct {
	// Name is the file name without extension (letters, digits, ._=-).
	Name string
	// Title and Caption are shown around the figure in the HTML page.
	Title, Caption string
	// Omitted, when set, says why there is no plot; the page shows it
	// in the figure's place and no file is written.
	Omitted string
	// Group is the cell group the figure shows, "" for one over groups.
	Group string

	p      *plot.Plot
	legend *plot.Legend
	w, h   vg.Length
}

// sans is the figures' typeface: Liberation Sans has Arial's metrics, so
// text measured here fits where a reader's Arial or Helvetica draws it.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// The text sizes, in points, chosen for a figure printed at its size.
const (
	labelSize  = 10
	tickSize   = 9
	legendSize = 9
)

// palette is matplotlib's default (tab10), familiar from papers; markers
// and dashes vary with it so that series differ in grey print too.
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff},
	{0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}, {0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

// glyphs are filled first: an error bar runs through a hollow one.
var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}}

var dashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(2)}, {vg.Points(1.5), vg.Points(1.5)}, {vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}}

func colorOf(i int) color.Color { return palette[i%len(palette)] }

// newFigure sets up a plot with labelled axes, a light grid and round
// ticks; xUnit and yUnit say how each axis is labelled.
func newFigure(name, title, xLabel, yLabel string, xUnit, yUnit Unit, w, h vg.Length) *Figure {
	p := plot.New()
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, labelSize)
		ax.Tick.Label.Font = font.From(sans, tickSize)
		ax.Tick.Length = vg.Points(4)
		ax.Padding = 0 // the axes meet at the origin
		ax.AutoRescale = true
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.X.Label.Padding, p.Y.Label.Padding = vg.Points(3), vg.Points(3)
	p.X.Tick.Marker = Ticks{Unit: xUnit}
	p.Y.Tick.Marker = Ticks{Unit: yUnit}
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{0xe4}, color.Gray{0xe4}
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	p.Add(g)
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(sans, legendSize)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(18)
	l.Padding = vg.Points(2)
	return &Figure{Name: fileName(name), Title: title, p: p, legend: &l, w: w, h: h}
}

// fixRange sets an axis to [lo, hi], after the plotters widened it.
func fixRange(ax *plot.Axis, lo, hi float64) { ax.Min, ax.Max = lo, hi }

// fromZero starts an axis at 0 and ends it at the data's maximum (1
// when there is none); the ticker rounds the end up to a tick.
func fromZero(ax *plot.Axis) {
	hi := ax.Max
	if math.IsInf(hi, 0) || math.IsNaN(hi) || hi <= 0 {
		hi = 1
	}
	fixRange(ax, 0, hi)
}

// Render draws the figure as format ("svg", "pdf" or "png").
func (f *Figure) Render(format string) ([]byte, error) {
	if f.p == nil {
		return nil, fmt.Errorf("figure %s: not drawn: %s", f.Name, f.Omitted)
	}
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(f.w, f.h)
	case "pdf":
		c = vgpdf.New(f.w, f.h)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(pngDPI))}
	default:
		return nil, fmt.Errorf("figure %s: unknown format %q", f.Name, format)
	}
	f.draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("figure %s (%s): %w", f.Name, format, err)
	}
	if format == "svg" {
		// vgsvg names the face alone; a reader without Liberation Sans
		// would fall back to a serif font of other widths.
		return bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;")), nil
	}
	return b.Bytes(), nil
}

// draw puts the legend to the right of the plot, or below it when that
// would take more than a third of the width, never over the data.
func (f *Figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	const gap = 8
	// A margin keeps markers and tick labels at the plot's edge whole.
	c = draw.Crop(c, 2, -6, 2, -6)
	lr := f.legend.Rectangle(c).Size()
	switch {
	case lr.X == 0:
		f.p.Draw(c)
	case lr.X <= c.Size().X/3:
		pc := draw.Crop(c, 0, -(lr.X + 2*gap), 0, 0)
		f.p.Draw(pc)
		dc := f.p.DataCanvas(pc)
		f.legend.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: pc.Max.X + gap, Y: dc.Min.Y},
			Max: vg.Point{X: c.Max.X, Y: dc.Max.Y},
		}})
	default:
		pc := draw.Crop(c, 0, 0, lr.Y+gap, 0)
		f.p.Draw(pc)
		dc := f.p.DataCanvas(pc)
		f.legend.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: dc.Min.X, Y: c.Min.Y},
			Max: vg.Point{X: c.Max.X, Y: c.Min.Y + lr.Y},
		}})
	}
}

// addLine draws one series as a line, with markers at its points when
// marks is set (or it has one), styled by its index, with a legend entry
// when named.
func (f *Figure) addLine(i int, name string, xy plotter.XYs, marks bool) error {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return fmt.Errorf("figure %s: %s: %w", f.Name, name, err)
	}
	l.Color = colorOf(i)
	l.Width = vg.Points(1.5)
	l.Dashes = dashes[(i/len(palette))%len(dashes)]
	f.p.Add(l)
	thumbs := []plot.Thumbnailer{l}
	if marks || len(xy) == 1 {
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return fmt.Errorf("figure %s: %s: %w", f.Name, name, err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: colorOf(i), Radius: vg.Points(2), Shape: glyphs[i%len(glyphs)]}
		f.p.Add(s)
		thumbs = append(thumbs, s)
	}
	if name != "" {
		f.legend.Add(name, thumbs...)
	}
	return nil
}

// errorPoints are a series' means with ± one standard deviation, drawn as
// markers and error bars, nudged sideways by Dodge so that series at the
// same x stay apart.
type errorPoints struct {
	xy    plotter.XYs
	sd    []float64
	style draw.GlyphStyle
	bar   draw.LineStyle
	dodge vg.Length
}

func newErrorPoints(i, of int, xy plotter.XYs, sd []float64) *errorPoints {
	c := colorOf(i)
	return &errorPoints{
		xy: xy, sd: sd,
		style: draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: glyphs[i%len(glyphs)]},
		bar:   draw.LineStyle{Color: c, Width: vg.Points(1)},
		dodge: vg.Points(5) * vg.Length(float64(i)-float64(of-1)/2),
	}
}

// Plot implements plot.Plotter.
func (e *errorPoints) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, pt := range e.xy {
		x, y := trX(pt.X)+e.dodge, trY(pt.Y)
		if sd := e.sd[i]; sd > 0 {
			lo, hi := trY(pt.Y-sd), trY(pt.Y+sd)
			bar := c.ClipLinesY([]vg.Point{{X: x, Y: lo}, {X: x, Y: hi}})
			c.StrokeLines(e.bar, bar...)
			for _, yy := range []vg.Length{lo, hi} {
				if c.ContainsY(yy) {
					c.StrokeLine2(e.bar, x-vg.Points(3), yy, x+vg.Points(3), yy)
				}
			}
		}
		c.DrawGlyph(e.style, vg.Point{X: x, Y: y})
	}
}

// DataRange implements plot.DataRanger.
func (e *errorPoints) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = plotter.XYRange(e.xy)
	for i, pt := range e.xy {
		ymin, ymax = math.Min(ymin, pt.Y-e.sd[i]), math.Max(ymax, pt.Y+e.sd[i])
	}
	return xmin, xmax, ymin, ymax
}

// Thumbnail implements plot.Thumbnailer.
func (e *errorPoints) Thumbnail(c *draw.Canvas) {
	mid := c.Center()
	c.StrokeLine2(e.bar, mid.X, c.Min.Y, mid.X, c.Max.Y)
	c.DrawGlyph(e.style, mid)
}

// obstacles are the canvas rectangles of e's markers and bars.
func (e *errorPoints) obstacles(c draw.Canvas, p *plot.Plot) []vg.Rectangle {
	trX, trY := p.Transforms(&c)
	var rs []vg.Rectangle
	r := e.style.Radius + vg.Points(1)
	for i, pt := range e.xy {
		x, y := trX(pt.X)+e.dodge, trY(pt.Y)
		rs = append(rs, vg.Rectangle{Min: vg.Point{X: x - r, Y: y - r}, Max: vg.Point{X: x + r, Y: y + r}})
		if sd := e.sd[i]; sd > 0 {
			rs = append(rs, vg.Rectangle{Min: vg.Point{X: x - vg.Points(3), Y: trY(pt.Y - sd)}, Max: vg.Point{X: x + vg.Points(3), Y: trY(pt.Y + sd)}})
		}
	}
	return rs
}

// pointLabels name points beside them where the name overlaps no other
// name, marker or bar, trying the sides, the corners, above and below in
// turn; a
// name with no free place is left out rather than drawn over another.
type pointLabels struct {
	xy    plotter.XYs
	names []string
	// dodge is each point's sideways nudge (its errorPoints' dodge).
	dodge  []vg.Length
	avoid  []*errorPoints
	style  text.Style
	placed int // how many were drawn, for tests
}

// Plot implements plot.Plotter.
func (l *pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	var taken []vg.Rectangle
	for _, e := range l.avoid {
		taken = append(taken, e.obstacles(c, p)...)
	}
	trX, trY := p.Transforms(&c)
	l.placed = 0
	const off = 5
	for i, pt := range l.xy {
		x, y := trX(pt.X), trY(pt.Y)
		if i < len(l.dodge) {
			x += l.dodge[i]
		}
		w, h := l.style.Width(l.names[i]), l.style.Height(l.names[i])
		// The places above, below and at the corners clear those at the
		// sides, so that one point can hold four names.
		v := max(off, h/2+1)
		for _, at := range []vg.Point{
			{X: x + off, Y: y - h/2}, {X: x - off - w, Y: y - h/2},
			{X: x + off, Y: y + h/2 + 1}, {X: x + off, Y: y - h/2 - 1 - h},
			{X: x - off - w, Y: y + h/2 + 1}, {X: x - off - w, Y: y - h/2 - 1 - h},
			{X: x - w/2, Y: y + v}, {X: x - w/2, Y: y - v - h},
		} {
			r := vg.Rectangle{Min: at, Max: vg.Point{X: at.X + w, Y: at.Y + h}}
			if !inside(r, c.Rectangle) || overlapsAny(r, taken) {
				continue
			}
			sty := l.style
			sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
			c.FillText(sty, at, l.names[i])
			taken = append(taken, r)
			l.placed++
			break
		}
	}
}

func inside(r, in vg.Rectangle) bool {
	return r.Min.X >= in.Min.X && r.Min.Y >= in.Min.Y && r.Max.X <= in.Max.X && r.Max.Y <= in.Max.Y
}

func overlapsAny(r vg.Rectangle, rs []vg.Rectangle) bool {
	for _, o := range rs {
		if r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y {
			return true
		}
	}
	return false
}

// fileName keeps letters, digits and ._=- of s, the rest turned into _.
func fileName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_', r == '=':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
