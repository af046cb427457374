package eval

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Plot is a simple x/y chart written as SVG: a line for a curve, dots for
// scatter points (auc and correlate --svg; report draws its figures with
// gonum's plot).
type Plot struct {
	// Title is shown above the chart.
	Title string
	// XLabel and YLabel name the axes.
	XLabel, YLabel string
	// X and Y are the points.
	X, Y []float64
	// Labels, when set, name each point (scatter).
	Labels []string
	// Line joins the points in order instead of drawing dots.
	Line bool
	// Unit fixes both axes to [0, 1] and draws the diagonal (ROC curves).
	Unit bool
}

// colour draws the points.
const colour = "#1f77b4"

// WriteSVG draws p on w.
func (p Plot) WriteSVG(w io.Writer) error {
	const W, H, L, R, T, B = 480.0, 420.0, 60.0, 20.0, 40.0, 50.0
	x0, x1, y0, y1 := 0.0, 1.0, 0.0, 1.0
	if !p.Unit {
		x0, x1 = bounds(p.X)
		y0, y1 = bounds(p.Y)
	}
	px := func(x float64) float64 { return L + (x-x0)/(x1-x0)*(W-L-R) }
	py := func(y float64) float64 { return H - B - (y-y0)/(y1-y0)*(H-T-B) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="white"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%g" y="24" text-anchor="middle" font-size="14">%s</text>`+"\n", W/2, html.EscapeString(p.Title))
	// axes and ticks
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#444"/>`+"\n", L, T, W-L-R, H-T-B)
	for i := 0; i <= 4; i++ {
		fx := x0 + float64(i)/4*(x1-x0)
		fy := y0 + float64(i)/4*(y1-y0)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#ddd"/>`, px(fx), T, px(fx), H-B)
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", L, py(fy), W-R, py(fy))
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`, px(fx), H-B+16, tick(fx))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", L-6, py(fy)+4, tick(fy))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", L+(W-L-R)/2, H-12, html.EscapeString(p.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(16 %g) rotate(-90)" text-anchor="middle">%s</text>`+"\n", T+(H-T-B)/2, html.EscapeString(p.YLabel))
	if p.Unit {
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#aaa" stroke-dasharray="4 4"/>`+"\n", px(0), py(0), px(1), py(1))
	}
	if p.Line {
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="`, colour)
		for i := range p.X {
			fmt.Fprintf(&b, "%.2f,%.2f ", px(p.X[i]), py(p.Y[i]))
		}
		b.WriteString(`"/>` + "\n")
		if len(p.X) == 1 { // a one-point line draws nothing
			fmt.Fprintf(&b, `<circle cx="%.2f" cy="%.2f" r="3" fill="%s"/>`+"\n", px(p.X[0]), py(p.Y[0]), colour)
		}
	} else {
		for i := range p.X {
			fmt.Fprintf(&b, `<circle cx="%.2f" cy="%.2f" r="4" fill="%s"/>`, px(p.X[i]), py(p.Y[i]), colour)
			if i < len(p.Labels) {
				fmt.Fprintf(&b, `<text x="%.2f" y="%.2f" font-size="10">%s</text>`, px(p.X[i])+6, py(p.Y[i])-6, html.EscapeString(p.Labels[i]))
			}
			b.WriteByte('\n')
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// bounds pads the range of v by 5% (and widens a single value).
func bounds(v []float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	if len(v) == 0 {
		return 0, 1
	}
	if hi == lo {
		return lo - 0.5, hi + 0.5
	}
	pad := (hi - lo) * 0.05
	return lo - pad, hi + pad
}

func tick(v float64) string { return fmt.Sprintf("%.2g", v) }
