package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
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
	if h, rows, ok := r.categoryTable(); ok {
		fmt.Fprintf(&b, "\n### Exact match by category\n\n| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat("---|", len(h)))
		for _, row := range rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
		b.WriteString("\n" + categoryNote + "\n")
	}
	if rows, ok := r.splitRows(); ok {
		fmt.Fprintf(&b, "\n### Split statistics\n\n| %s |\n|%s\n", strings.Join(splitHeader, " | "), strings.Repeat("---|", len(splitHeader)))
		for _, row := range rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
		b.WriteString("\n" + splitNote + "\n")
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
