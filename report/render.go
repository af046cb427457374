package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"sort"
	"strconv"
	"strings"

	"compbench/eval"
	"compbench/sweep"
)

// header is the table's first columns and the metric columns.
func (r *Report) header() ([]string, []column) {
	cols := r.columns()
	h := []string{"data", "model"}
	h = append(h, r.varyKeys()...)
	h = append(h, "n")
	for _, c := range cols {
		h = append(h, c.name)
	}
	zero, few := r.paperColumns()
	if zero {
		h = append(h, "paper zero-shot")
	}
	if few {
		h = append(h, "paper few-shot")
	}
	return h, cols
}

// rows are the table's cells as text, one row per group.
func (r *Report) rows() [][]string {
	_, cols := r.header()
	keys := r.varyKeys()
	zero, few := r.paperColumns()
	var rows [][]string
	for gi := range r.Groups {
		g := &r.Groups[gi]
		row := []string{g.Cell.Data, g.Cell.Model}
		for _, k := range keys {
			row = append(row, varyValue(g.Cell, k))
		}
		row = append(row, strconv.Itoa(len(g.Runs)))
		for _, c := range cols {
			row = append(row, c.format(c.stat(g)))
		}
		pub, ok := r.published(g)
		if !ok {
			pub = PaperRow{ZeroShot: "-", FewShot: "-"}
		}
		if zero {
			row = append(row, orDash(pub.ZeroShot))
		}
		if few {
			row = append(row, orDash(pub.FewShot))
		}
		rows = append(rows, row)
	}
	return rows
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// note is the line under the table.
func (r *Report) note() string {
	n := "Mean ± sample standard deviation over n seeds; exact match and accuracy in percent."
	for _, g := range r.Groups {
		if g.Pooled {
			n += " Rows whose data ends in * pool every run (seeds and splits) of the datasets it prefixes, as the paper's number is their mean."
			break
		}
	}
	if r.paper != nil {
		n += " Paper: " + r.paper.Source + "."
	}
	return n
}

// WriteMarkdown writes the table: one row per cell group, mean ± sample
// standard deviation over its seeds (accuracies in percent), n the seeds.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## %s\n\n", r.Title)
	h, _ := r.header()
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat("---|", len(h)))
	for _, row := range r.rows() {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	b.WriteString("\n" + r.note() + "\n")
	if len(r.Unfinished) > 0 {
		fmt.Fprintf(&b, "\n%d cells are not finished: %s\n", len(r.Unfinished), strings.Join(r.Unfinished, ", "))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteCSV writes one row per finished run, for pandas or R: the cell's
// axes, then its metrics as plain numbers (accuracies in [0, 1]; empty
// where not measured).
func (r *Report) WriteCSV(w io.Writer) error {
	keys := r.varyKeys()
	cw := csv.NewWriter(w)
	h := []string{"cell", "data", "model"}
	h = append(h, keys...)
	h = append(h, "seed", "steps", "train_loss", "best_step", "dev_em", "test_em", "few_shot_em", "test_exec", "few_shot_exec", "train_seconds", "compound_divergence", "easiness_auc")
	if err := cw.Write(h); err != nil {
		return err
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return num(*v)
	}
	nonNeg := func(v float64) string {
		if v < 0 {
			return ""
		}
		return num(v)
	}
	for _, run := range r.Runs {
		res := run.Result
		row := []string{res.Cell.Name, res.Cell.Data, res.Cell.Model}
		for _, k := range keys {
			row = append(row, varyValue(res.Cell, k))
		}
		row = append(row, strconv.FormatUint(res.Cell.Seed, 10), strconv.Itoa(res.Steps), num(res.TrainLoss), strconv.Itoa(res.BestStep),
			nonNeg(res.DevEM), nonNeg(res.TestEM), opt(res.FewShotEM), opt(res.TestExec), opt(res.FewShotExec), num(res.TrainSeconds), opt(res.CompoundDivergence), opt(res.EasinessAUC))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Figure is one named SVG plot of the report.
type Figure struct {
	// Name is a file name for the SVG (letters, digits, ._-).
	Name string
	SVG  string
}

// Figures draws the report's plots: training loss and dev exact match
// against step, one line per seed, for every cell group; and when the
// cells carry compound divergences, test exact match against divergence,
// one series per model.
func (r *Report) Figures() ([]Figure, error) {
	var figs []Figure
	draw := func(name string, p eval.Plot) error {
		var b strings.Builder
		if err := p.WriteSVG(&b); err != nil {
			return err
		}
		figs = append(figs, Figure{Name: fileName(name) + ".svg", SVG: b.String()})
		return nil
	}
	if err := r.divergencePlot(draw); err != nil {
		return nil, err
	}
	for gi := range r.Groups {
		g := &r.Groups[gi]
		if g.Pooled {
			continue
		}
		loss := eval.Plot{Title: g.Cell.Group() + ": training loss", XLabel: "step", YLabel: "loss", Line: true}
		dev := eval.Plot{Title: g.Cell.Group() + ": dev exact match", XLabel: "step", YLabel: "exact match", Line: true}
		for _, i := range g.Runs {
			run := r.Runs[i]
			name := "seed " + strconv.FormatUint(run.Result.Cell.Seed, 10)
			ls, ds := eval.Series{Name: name}, eval.Series{Name: name}
			for _, l := range run.Curve {
				if l.Loss != nil {
					ls.X, ls.Y = append(ls.X, float64(l.Step)), append(ls.Y, *l.Loss)
				}
				if l.DevEM != nil {
					ds.X, ds.Y = append(ds.X, float64(l.Step)), append(ds.Y, *l.DevEM)
				}
			}
			loss.Series = append(loss.Series, ls)
			if len(ds.X) > 0 {
				dev.Series = append(dev.Series, ds)
			}
		}
		if err := draw("loss-"+g.Cell.Group(), loss); err != nil {
			return nil, err
		}
		if len(dev.Series) > 0 {
			if err := draw("dev-em-"+g.Cell.Group(), dev); err != nil {
				return nil, err
			}
		}
		if err := r.rocPlot(g, draw); err != nil {
			return nil, err
		}
	}
	return figs, nil
}

// rocPlot draws the ROC curves of predicted easiness against zero-shot
// correctness, one per seed, for a group whose cells computed easiness.
func (r *Report) rocPlot(g *Group, draw func(string, eval.Plot) error) error {
	p := eval.Plot{Title: g.Cell.Group() + ": easiness ROC", XLabel: "false positive rate", YLabel: "true positive rate", Line: true, Unit: true}
	for _, i := range g.Runs {
		run := r.Runs[i]
		auc, roc, ok, err := sweep.EasinessROC(run.Dir)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		s := eval.Series{Name: fmt.Sprintf("seed %d (AUC %.3f)", run.Result.Cell.Seed, auc)}
		for _, pt := range roc {
			s.X, s.Y = append(s.X, pt.FPR), append(s.Y, pt.TPR)
		}
		p.Series = append(p.Series, s)
	}
	if len(p.Series) == 0 {
		return nil
	}
	return draw("roc-"+g.Cell.Group(), p)
}

// divergencePlot is Keysers et al.'s Fig. 3 view: each split's mean test
// exact match against its compound divergence, one series per model.
func (r *Report) divergencePlot(draw func(string, eval.Plot) error) error {
	byModel := map[string]*eval.Series{}
	var order []string
	for gi := range r.Groups {
		g := &r.Groups[gi]
		if g.Pooled || g.Divergence.N == 0 || g.TestEM.N == 0 {
			continue
		}
		m := strings.TrimPrefix(g.Cell.Group(), g.Cell.Data+" ")
		s, ok := byModel[m]
		if !ok {
			s = &eval.Series{Name: m}
			byModel[m] = s
			order = append(order, m)
		}
		s.X, s.Y = append(s.X, g.Divergence.Mean), append(s.Y, g.TestEM.Mean)
		s.Labels = append(s.Labels, g.Cell.Data)
	}
	if len(order) == 0 {
		return nil
	}
	sort.Strings(order)
	p := eval.Plot{Title: "test exact match against compound divergence", XLabel: "compound divergence", YLabel: "test exact match (mean over seeds)"}
	for _, m := range order {
		p.Series = append(p.Series, *byModel[m])
	}
	return draw("accuracy-vs-divergence", p)
}

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

// WriteHTML writes one self-contained page (no scripts, fonts or links to
// fetch): the table, then the plots as inline SVG.
func (r *Report) WriteHTML(w io.Writer, figs []Figure) error {
	var b bytes.Buffer
	t := html.EscapeString(r.Title)
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 4px 10px; text-align: right; }
th { background: #eee; } td:first-child, td:nth-child(2) { text-align: left; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
</style></head><body>
<h1>%s</h1>
`, t, t)
	h, _ := r.header()
	b.WriteString("<table id=\"results\">\n<tr>")
	for _, c := range h {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(c))
	}
	b.WriteString("</tr>\n")
	for _, row := range r.rows() {
		b.WriteString("<tr>")
		for _, c := range row {
			fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(c))
		}
		b.WriteString("</tr>\n")
	}
	fmt.Fprintf(&b, "</table>\n<p>%s</p>\n", html.EscapeString(r.note()))
	if len(r.Unfinished) > 0 {
		fmt.Fprintf(&b, "<p>%d cells are not finished: %s</p>\n", len(r.Unfinished), html.EscapeString(strings.Join(r.Unfinished, ", ")))
	}
	if len(figs) > 0 {
		b.WriteString("<h2>Plots</h2>\n<div class=\"plots\">\n")
		for _, f := range figs {
			fmt.Fprintf(&b, "<figure id=%q>\n%s</figure>\n", f.Name, f.SVG)
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("</body></html>\n")
	_, err := w.Write(b.Bytes())
	return err
}
