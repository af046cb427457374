package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"strings"

	"gonum.org/v1/plot/font"
)

// pageStyle lays the page out for reading and for screenshots: tables of
// tabular figures, figures in a grid, the headline figure wide.
const pageStyle = `
body { font-family: 'Liberation Sans', Arial, Helvetica, sans-serif; margin: 2em auto; max-width: 1150px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; font-variant-numeric: tabular-nums; font-size: 0.92em; }
th, td { border: 1px solid #bbb; padding: 4px 10px; text-align: right; white-space: nowrap; }
th { background: #eee; } td:first-child, td:nth-child(2) { text-align: left; }
.note, figcaption { color: #555; font-size: 0.88em; max-width: 62em; }
h3 { font-size: 1em; margin: 1.4em 0 0.4em; }
.figs { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 14px 22px; }
figure { margin: 0; } figure.wide { grid-column: 1 / -1; max-width: 760px; }
figure svg { width: 100%; height: auto; display: block; }
figcaption b { color: #222; }
.omitted { border: 1px dashed #bbb; padding: 0.8em; }
`

// WriteHTML writes one self-contained page (no scripts, and no fonts or
// links to fetch): the table, the split statistics, and the figures as
// inline SVG with the figures' typeface embedded once, so that text sits
// where the figures measured it on any machine.
func (r *Report) WriteHTML(w io.Writer, figs []Figure) error {
	var b bytes.Buffer
	t := html.EscapeString(r.Title)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n<style>%s", t, pageStyle)
	if len(figs) > 0 {
		ff, err := fontFace()
		if err != nil {
			return err
		}
		b.WriteString(ff)
	}
	fmt.Fprintf(&b, "</style></head><body>\n<h1>%s</h1>\n", t)
	h, _ := r.header()
	writeTable(&b, "results", h, r.rows())
	fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", html.EscapeString(r.note()))
	if len(r.Unfinished) > 0 {
		fmt.Fprintf(&b, "<p class=\"note\">%d cells are not finished: %s</p>\n", len(r.Unfinished), html.EscapeString(strings.Join(r.Unfinished, ", ")))
	}
	if h, rows, ok := r.categoryTable(); ok {
		b.WriteString("<h2>Exact match by category</h2>\n")
		writeTable(&b, "categories", h, rows)
		fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", html.EscapeString(categoryNote))
	}
	b.WriteString("<h2>Split statistics</h2>\n")
	if rows, ok := r.splitRows(); ok {
		writeTable(&b, "splits", splitHeader, rows)
		fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", html.EscapeString(splitNote))
	} else {
		fmt.Fprintf(&b, "<p class=\"note\">No dataset of this report has a split.json or %s beside its files.</p>\n", StatsFile)
	}
	if len(figs) > 0 {
		b.WriteString("<h2>Figures</h2>\n<p class=\"note\">compbench report --figures DIR writes each figure as SVG, PDF and PNG, named as its id here.</p>\n")
		group := "\x00"
		for i := range figs {
			if g := figs[i].Group; g != group {
				if i > 0 {
					b.WriteString("</div>\n")
				}
				if g != "" {
					fmt.Fprintf(&b, "<h3>%s</h3>\n", html.EscapeString(g))
				}
				b.WriteString("<div class=\"figs\">\n")
				group = g
			}
			if err := writeFigure(&b, &figs[i]); err != nil {
				return err
			}
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("</body></html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

func writeTable(b *bytes.Buffer, id string, header []string, rows [][]string) {
	fmt.Fprintf(b, "<table id=%q>\n<tr>", id)
	for _, c := range header {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(c))
	}
	b.WriteString("</tr>\n")
	for _, row := range rows {
		b.WriteString("<tr>")
		for _, c := range row {
			fmt.Fprintf(b, "<td>%s</td>", html.EscapeString(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// writeFigure writes f as inline SVG with its caption, or, when it was
// not drawn, why not.
func writeFigure(b *bytes.Buffer, f *Figure) error {
	class := ""
	if f.Name == "accuracy-vs-divergence" {
		class = ` class="wide"`
	}
	title := "<b>" + html.EscapeString(f.Title) + ".</b>"
	if f.Omitted != "" {
		fmt.Fprintf(b, "<figure id=%q%s><figcaption class=\"omitted\">%s %s</figcaption></figure>\n", f.Name, class, title, html.EscapeString(f.Omitted))
		return nil
	}
	svg, err := f.Render("svg")
	if err != nil {
		return err
	}
	// The XML prolog and comment belong to a file, not to a page.
	if i := bytes.Index(svg, []byte("<svg")); i > 0 {
		svg = svg[i:]
	}
	fmt.Fprintf(b, "<figure id=%q%s>\n%s<figcaption>%s %s</figcaption></figure>\n", f.Name, class, svg, title, html.EscapeString(f.Caption))
	return nil
}

// fontFace is a CSS @font-face holding the figures' typeface.
func fontFace() (string, error) {
	face := font.DefaultCache.Lookup(sans, tickSize)
	if face.Face == nil {
		return "", fmt.Errorf("report: the figures' font %s is not available", sans.Name())
	}
	var ttf bytes.Buffer
	if _, err := face.Face.WriteSourceTo(nil, &ttf); err != nil {
		return "", fmt.Errorf("report: embedding the figures' font: %w", err)
	}
	return "@font-face { font-family: 'Liberation Sans'; font-style: normal; font-weight: normal; src: url(data:font/ttf;base64," +
		base64.StdEncoding.EncodeToString(ttf.Bytes()) + ") format('truetype'); }\n", nil
}
