package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"compbench/sweep"
)

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		name   string
		lo, hi float64
		ticks  Ticks
		want   string
	}{
		{"accuracy axis", 0, 1, Ticks{Unit: Percent}, "0% 20% 40% 60% 80% 100%"},
		{"small accuracies stay percent", 0.004, 0.031, Ticks{Unit: Percent}, "0% 1% 2% 3% 4%"},
		{"fractions of a percent", 0, 0.004, Ticks{Unit: Percent}, "0.0% 0.1% 0.2% 0.3% 0.4%"},
		{"integers, not 2.6e+02", 0, 260, Ticks{}, "0 100 200 300"},
		{"small decimals, not 0.0037", 0, 0.0037, Ticks{}, "0.000 0.001 0.002 0.003 0.004"},
		{"steps", 0, 2000, Ticks{Intervals: 4}, "0 500 1000 1500 2000"},
		{"thousands separators", 0, 120000, Ticks{}, "0 50,000 100,000 150,000"},
		{"float sums", 0.1, 0.7, Ticks{}, "0.0 0.2 0.4 0.6 0.8"},
		{"unit range", 0, 1, Ticks{}, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{"loss", 0, 3.2, Ticks{}, "0 1 2 3 4"},
		{"negative, no -0", -1, 1, Ticks{}, "-1.0 -0.5 0.0 0.5 1.0"},
		{"one value", 0.3, 0.3, Ticks{}, "0.3 0.4"},
		{"reversed", 1, 0, Ticks{Unit: Percent}, "0% 20% 40% 60% 80% 100%"},
		{"NaN", math.NaN(), 1, Ticks{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, tk := range c.ticks.Ticks(c.lo, c.hi) {
				got = append(got, tk.Label)
			}
			if s := strings.Join(got, " "); s != c.want {
				t.Errorf("Ticks(%v, %v) = %q, want %q", c.lo, c.hi, s, c.want)
			}
		})
	}
}

// TestTicksRound: over many ranges, the ticks are 1, 2 or 5 × 10^k apart,
// enclose the range (so the last is never cut off), are at most
// Intervals+1, and read without exponents.
func TestTicksRound(t *testing.T) {
	for _, c := range []struct {
		name string
		unit Unit
	}{{"plain", Plain}, {"percent", Percent}} {
		t.Run(c.name, func(t *testing.T) {
			for _, lo := range []float64{0, 0.0003, 0.01, 0.37, 3, 250} {
				for _, span := range []float64{0.00071, 0.013, 0.2, 1, 7.3, 260, 98765} {
					hi := lo + span
					ticks := Ticks{Unit: c.unit}.Ticks(lo, hi)
					n := len(ticks)
					if n < 2 || n > 6 || ticks[0].Value > lo+1e-12 || ticks[n-1].Value < hi-1e-12 {
						t.Fatalf("[%v, %v]: %d ticks %v, want 2-6 enclosing the range", lo, hi, n, ticks)
					}
					step := ticks[1].Value - ticks[0].Value
					m := step / math.Pow10(int(math.Floor(math.Log10(step)+1e-9)))
					if math.Abs(m-1) > 1e-6 && math.Abs(m-2) > 1e-6 && math.Abs(m-5) > 1e-6 {
						t.Errorf("[%v, %v]: step %v is not 1, 2 or 5 × 10^k", lo, hi, step)
					}
					for _, tk := range ticks {
						if strings.ContainsAny(tk.Label, "eE") || (c.unit == Percent) != strings.HasSuffix(tk.Label, "%") {
							t.Errorf("[%v, %v]: label %q", lo, hi, tk.Label)
						}
					}
				}
			}
		})
	}
}

// TestFigureFormats: every figure renders as well-formed SVG naming a
// font a reader has, as a PDF, and as a PNG at print resolution.
func TestFigureFormats(t *testing.T) {
	r, err := Load(fakeSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	figs, err := r.Figures()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs[:3] {
		for _, format := range Formats {
			t.Run(f.Name+"."+format, func(t *testing.T) {
				b, err := f.Render(format)
				if err != nil {
					t.Fatal(err)
				}
				// Same report, same bytes (a PDF's dates are fixed).
				if again, err := f.Render(format); err != nil || !bytes.Equal(again, b) {
					t.Errorf("a second rendering differs (%v)", err)
				}
				switch format {
				case "svg":
					dec := xml.NewDecoder(bytes.NewReader(b))
					for {
						if _, err := dec.Token(); errors.Is(err, io.EOF) {
							break
						} else if err != nil {
							t.Fatalf("not well-formed XML: %v", err)
						}
					}
					if !bytes.Contains(b, []byte("font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;")) || bytes.Contains(b, []byte("NaN")) {
						t.Errorf("SVG without the font fallbacks, or with NaN")
					}
				case "pdf":
					if !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b[len(b)-16:], []byte("%%EOF")) {
						t.Errorf("not a PDF: %q...", b[:min(len(b), 16)])
					}
					// Not the clock's date: the bytes would change each second.
					if !bytes.Contains(b, []byte("/CreationDate (D:20000101")) {
						t.Errorf("the PDF's creation date is not the fixed one")
					}
				case "png":
					img, err := png.Decode(bytes.NewReader(b))
					if err != nil {
						t.Fatal(err)
					}
					if w := img.Bounds().Dx(); w != int(math.Round((f.w/vg.Inch).Points()*pngDPI)) {
						t.Errorf("PNG %d pixels wide, want %v inches at %d dpi", w, (f.w / vg.Inch).Points(), pngDPI)
					}
				}
			})
		}
	}
	if _, err := (&Figure{Name: "x", Omitted: "why"}).Render("svg"); err == nil {
		t.Error("an omitted figure rendered")
	}
	if _, err := figs[0].Render("gif"); err == nil {
		t.Error("gif rendered")
	}
}

// TestPointLabels: names are placed where they overlap nothing, and left
// out where every place is taken.
func TestPointLabels(t *testing.T) {
	for _, c := range []struct {
		name   string
		xy     plotter.XYs
		placed int
	}{
		{"apart", plotter.XYs{{X: 0.1, Y: 0.1}, {X: 0.5, Y: 0.5}, {X: 0.9, Y: 0.9}}, 3},
		// One point's places hold six names at most: two at the sides,
		// four at the corners, which block above and below.
		{"on one spot", plotter.XYs{{X: 0.5, Y: 0.5}, {X: 0.5, Y: 0.5}, {X: 0.5, Y: 0.5}, {X: 0.5, Y: 0.5}, {X: 0.5, Y: 0.5}, {X: 0.5, Y: 0.5}, {X: 0.5, Y: 0.5}, {X: 0.5, Y: 0.5}}, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFigure("labels", "labels", "x", "y", Plain, Percent, 4*vg.Inch, 3*vg.Inch)
			e := newErrorPoints(0, 1, c.xy, make([]float64, len(c.xy)))
			f.p.Add(e)
			l := &pointLabels{xy: c.xy, avoid: []*errorPoints{e}, style: f.p.X.Tick.Label}
			for range c.xy {
				l.names = append(l.names, "split")
			}
			f.p.Add(l)
			fixRange(&f.p.X, 0, 1)
			fixRange(&f.p.Y, 0, 1)
			if _, err := f.Render("svg"); err != nil {
				t.Fatal(err)
			}
			if l.placed != c.placed {
				t.Errorf("%d names placed, want %d", l.placed, c.placed)
			}
		})
	}
}

// TestReportHTML: the page holds each figure as inline SVG under its
// name, with the font embedded and nothing to fetch, and says why a ROC
// curve is not drawn; the headline figure's accuracy axis is in percent
// from 0% to 100%.
func TestReportHTML(t *testing.T) {
	r, err := Load(filepath.Join("testdata", "sample", "sweep"))
	if err != nil {
		t.Fatal(err)
	}
	figs, err := r.Figures()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b, figs); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	drawn := 0
	for _, f := range figs {
		if f.Omitted != "" {
			continue
		}
		drawn++
		if !strings.Contains(page, `<figure id="`+f.Name+`"`) {
			t.Errorf("page lacks figure %s", f.Name)
		}
	}
	if n := strings.Count(page, "<svg"); n != drawn || drawn < 20 {
		t.Errorf("%d inline SVGs for %d drawn figures", n, drawn)
	}
	for _, c := range []struct {
		name string
		want string
		in   bool
	}{
		{"headline figure first", `<figure id="accuracy-vs-divergence" class="wide">`, true},
		{"font embedded", "@font-face { font-family: 'Liberation Sans'; font-style: normal; font-weight: normal; src: url(data:font/ttf;base64,", true},
		{"percent axis top", ">100%</text>", true},
		{"percent axis bottom", ">0%</text>", true},
		{"split named", ">random</text>", true},
		{"split named, beside error bars", ">mcd-0.2</text>", true},
		{"last split named", ">mcd1</text>", true},
		{"ROC left out, and why", "No curve for seeds 1, 2 and 3: every test example has predicted easiness 1 (all its local structures occur in training, as on a random split), so the curve is the diagonal by construction", true},
		{"split statistics", "<td>mcd-0.4</td><td>mcd</td><td>8,364</td><td>1,046</td><td>1,046</td><td>0.016</td><td>0.402</td>", true},
		{"split without statistics", "<td>published</td><td>—</td>", true},
		{"no XML prolog inline", "<?xml", false},
		{"no exponents", "e+0", false},
		{"nothing fetched", `src="http`, false},
		{"no scripts", "<script", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(page, c.want) != c.in {
				t.Errorf("page contains %q: %v, want %v", c.want, !c.in, c.in)
			}
		})
	}
}

// TestROCLeftOut: a group's ROC curves are drawn only where they can say
// something; the figure names the seeds left out and why.
func TestROCLeftOut(t *testing.T) {
	cell := func(t *testing.T, easiness []string, correct []bool) string {
		dir := t.TempDir()
		var e, x strings.Builder
		for i := range easiness {
			fmt.Fprintf(&e, `{"id":"%d","easiness":%s}`+"\n", i, easiness[i])
			fmt.Fprintf(&x, `{"id":"%d","correct":%v}`+"\n", i, correct[i])
		}
		writeFiles(t, dir, map[string]string{sweep.EasinessFile: e.String(), sweep.ExamplesFile: x.String()})
		return dir
	}
	for _, c := range []struct {
		name     string
		easiness []string
		correct  []bool
		em       float64
		omitted  string // "": drawn
	}{
		{"informative", []string{"0.9", "0.2", "0.5"}, []bool{true, false, true}, 0.67, ""},
		{"tied at 1", []string{"1", "1", "1"}, []bool{true, false, true}, 0.67, "seed 1: every test example has predicted easiness 1"},
		{"tied below 1", []string{"0.5", "0.5", "0.5"}, []bool{true, false, true}, 0.67, "seed 1: every test example has the same predicted easiness"},
		{"all right", []string{"0.9", "0.2", "0.5"}, []bool{true, true, true}, 1, "seed 1: every test prediction is right"},
		{"all wrong", []string{"0.9", "0.2", "0.5"}, []bool{false, false, false}, 0, "seed 1: every test prediction is wrong"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Report{Runs: []Run{{Dir: cell(t, c.easiness, c.correct), Result: sweep.Result{Cell: sweep.Cell{Data: "d", Model: "m", Seed: 1}, TestEM: c.em}}}}
			r.group()
			f, err := r.rocFigure(&r.Groups[0])
			if err != nil || f == nil {
				t.Fatalf("rocFigure: %v, %v", f, err)
			}
			if c.omitted == "" {
				if f.Omitted != "" || f.p == nil {
					t.Errorf("curve not drawn: %q", f.Omitted)
				}
			} else if f.p != nil || !strings.Contains(f.Omitted, c.omitted) {
				t.Errorf("omitted %q (drawn: %v), want %q", f.Omitted, f.p != nil, c.omitted)
			}
		})
	}
}
