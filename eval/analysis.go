package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"compbench/data"
	"compbench/data/structure"
	"compbench/progress"
)

// FirstErrorRow is the first-error analysis (Bogin et al. §5.1) of one
// predictions file, or of all together: of the wrong predictions whose
// gold program has an unobserved 2-LS, how many make their first error
// on a symbol that completes one.
type FirstErrorRow struct {
	Pred       string  `json:"pred"`
	Wrong      int     `json:"wrong"`
	Applicable int     `json:"wrong_with_unobserved_2ls"`
	Hits       int     `json:"first_error_completes_unobserved"`
	Fraction   float64 `json:"fraction"`
}

// FirstErrors analyses each predictions file against gold (whose trees
// spell their outputs) under the structures model of training, with a
// row "all" after them when there are several.
func FirstErrors(model *structure.Model, gold []data.Record, goldTrees []*data.Tree, preds []string, allowMissing bool, opt Options) ([]FirstErrorRow, error) {
	var rows []FirstErrorRow
	tot := FirstErrorRow{Pred: "all"}
	for _, p := range preds {
		ps, err := ReadPredictions(p)
		if err != nil {
			return nil, err
		}
		j, err := Join(gold, ps, allowMissing)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		exs, _, err := Score(j, opt)
		if err != nil {
			return nil, err
		}
		r := FirstErrorRow{Pred: p}
		for i, ex := range exs {
			if ex.Correct {
				continue
			}
			r.Wrong++
			pred := ""
			if j.Pairs[i].Pred != nil {
				pred = j.Pairs[i].Pred.Text
			}
			app, hit := FirstError(model, goldTrees[i], Symbols(gold[i].Output), Symbols(pred))
			if app {
				r.Applicable++
				if hit {
					r.Hits++
				}
			}
		}
		if r.Applicable > 0 {
			r.Fraction = float64(r.Hits) / float64(r.Applicable)
		}
		tot.Wrong += r.Wrong
		tot.Applicable += r.Applicable
		tot.Hits += r.Hits
		rows = append(rows, r)
	}
	if tot.Applicable > 0 {
		tot.Fraction = float64(tot.Hits) / float64(tot.Applicable)
	}
	if len(preds) > 1 {
		rows = append(rows, tot)
	}
	return rows, nil
}

// WriteFirstErrors writes one table row per first-error row.
func WriteFirstErrors(w io.Writer, rows []FirstErrorRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "predictions\twrong\twrong-with-unobserved-2LS\tfirst-error-completes-one\tfraction")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.4f\n", r.Pred, r.Wrong, r.Applicable, r.Hits, r.Fraction)
	}
	return tw.Flush()
}

// EasinessReport summarises the predicted easiness of a test set (Bogin
// et al. §4.3).
type EasinessReport struct {
	Variant      string  `json:"variant"`
	N            int     `json:"n"`
	Examples     int     `json:"examples"`
	Mean         float64 `json:"mean_easiness"`
	WithUnobs    int     `json:"with_unobserved"`
	SkippedTrain int     `json:"skipped_train"`
	SkippedTest  int     `json:"skipped_test"`
}

// ScoreEasiness predicts the easiness of each test record (trees: their
// programs) under model, in chunks between which a cancelled ctx stops
// it, with a progress bar on status. The report's variant, n and skipped
// counts are the caller's to fill.
func ScoreEasiness(ctx context.Context, model *structure.Model, recs []data.Record, trees []*data.Tree, status io.Writer) ([]EasinessLine, EasinessReport, error) {
	bar := progress.New(status, "easiness", int64(len(trees)))
	lines := make([]EasinessLine, len(trees))
	sum, withUnobs := 0.0, 0
	const chunk = 1024
	for lo := 0; lo < len(trees); lo += chunk {
		if err := ctx.Err(); err != nil {
			return nil, EasinessReport{}, err
		}
		hi := min(lo+chunk, len(trees))
		for i, r := range model.Score(trees[lo:hi]) {
			k := lo + i
			lines[k] = EasinessLine{ID: recs[k].ID, Easiness: r.Easiness, Unobserved: r.Unobserved}
			sum += r.Easiness
			if len(r.Unobserved) > 0 {
				withUnobs++
			}
		}
		bar.Add(int64(hi - lo))
	}
	bar.Finish()
	return lines, EasinessReport{Examples: len(lines), Mean: sum / float64(max(len(lines), 1)), WithUnobs: withUnobs}, nil
}

// WriteTable writes the easiness summary.
func (r EasinessReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tn\texamples\tmean-easiness\twith-unobserved\tskipped(train/test)")
	fmt.Fprintf(tw, "%s\t%d\t%d\t%.4f\t%d\t%d/%d\n", r.Variant, r.N, r.Examples, r.Mean, r.WithUnobs, r.SkippedTrain, r.SkippedTest)
	return tw.Flush()
}

// WriteExamples writes one JSON line per judged example.
func WriteExamples(w io.Writer, exs []Example) error {
	enc := json.NewEncoder(w)
	for i := range exs {
		if err := enc.Encode(&exs[i]); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable writes exact match and, when scored, token accuracy and the
// breakdown by category and group.
func (s Summary) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "examples\tcorrect\taccuracy\tmissing\tunknown\tparse-failures")
	fmt.Fprintf(tw, "%d\t%d\t%.4f\t%d\t%d\t%d\n", s.N, s.Correct, s.Accuracy, s.Missing, s.Unknown, s.ParseFailures)
	if s.TokenAccuracy != nil {
		fmt.Fprintln(tw, "\ntoken-accuracy\tmean-correct-prefix")
		fmt.Fprintf(tw, "%.4f\t%.2f\n", *s.TokenAccuracy, *s.MeanPrefix)
	}
	if b := s.ByCategory; b != nil {
		writeGroups(tw, "category", b.Categories, s)
		if len(b.Groups) > 0 {
			writeGroups(tw, "group", b.Groups, s)
		}
	}
	return tw.Flush()
}

// writeGroups writes one table row per category or group and one for all
// examples together.
func writeGroups(w io.Writer, what string, gs []GroupScore, all Summary) {
	fmt.Fprintf(w, "\n%s\texamples\tcorrect\taccuracy\n", what)
	for _, g := range gs {
		fmt.Fprintf(w, "%s\t%d\t%d\t%.4f\n", g.Name, g.N, g.Correct, g.Accuracy)
	}
	fmt.Fprintf(w, "(all)\t%d\t%d\t%.4f\n", all.N, all.Correct, all.Accuracy)
}
