package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"compbench/data"
)

// The reports of compbench's analysis commands: what they print as a
// table, or as JSON with these fields.

// AgreeReport is per-model exact match and the agreement rates of the
// models beside their random baseline (Bogin et al. Table 2).
type AgreeReport struct {
	Models    []AgreeModel `json:"models"`
	Examples  int          `json:"examples"`
	Agreement []AgreeRate  `json:"agreement"`
}

// AgreeModel is one model's predictions file and summary.
type AgreeModel struct {
	Pred string  `json:"pred"`
	Sum  Summary `json:"summary"`
}

// AgreeRate is the rate at which at least K of the M models agree, and the
// rate expected of independent models with the same accuracies.
type AgreeRate struct {
	K      int     `json:"k"`
	M      int     `json:"m"`
	Rate   float64 `json:"rate"`
	Random float64 `json:"random"`
}

// Agree reports the models of mat (predictions files preds, summaries
// sums): agreement of all of them and of a majority, and of at least k
// when k is neither (0: none).
func Agree(mat *Matrix, preds []string, sums []Summary, k int) AgreeReport {
	m := len(preds)
	rep := AgreeReport{Examples: mat.N}
	for i, p := range preds {
		rep.Models = append(rep.Models, AgreeModel{Pred: p, Sum: sums[i]})
	}
	acc := mat.Accuracies()
	ks := []int{m, m/2 + 1}
	if k != 0 && k != m && k != m/2+1 {
		ks = append(ks, k)
	}
	if m/2+1 == m {
		ks = ks[:1]
		if k != 0 && k != m {
			ks = append(ks, k)
		}
	}
	for _, kk := range ks {
		rep.Agreement = append(rep.Agreement, AgreeRate{K: kk, M: m, Rate: mat.Agreement(kk), Random: RandomAgreement(acc, kk)})
	}
	return rep
}

// WriteTable writes the models' exact match and the agreement rates.
func (r AgreeReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tpredictions\texamples\tcorrect\tEM")
	for i, md := range r.Models {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.4f\n", i+1, md.Pred, md.Sum.N, md.Sum.Correct, md.Sum.Accuracy)
	}
	fmt.Fprintln(tw, "\nagreement\trate\trandom")
	for _, a := range r.Agreement {
		label := fmt.Sprintf("%d+/%d", a.K, a.M)
		if a.K == a.M {
			label = fmt.Sprintf("%d/%d", a.K, a.M)
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\n", label, a.Rate, a.Random)
	}
	return tw.Flush()
}

// WriteMatrix writes mat as JSONL, one {"id","correct","n_correct"} line
// per gold example.
func WriteMatrix(w io.Writer, gold []data.Record, mat *Matrix) error {
	enc := json.NewEncoder(w)
	for i := range mat.N {
		row := struct {
			ID       string `json:"id"`
			Correct  []bool `json:"correct"`
			NCorrect int    `json:"n_correct"`
		}{gold[i].ID, mat.Bits[i*mat.M : (i+1)*mat.M], mat.Correct(i)}
		if err := enc.Encode(&row); err != nil {
			return err
		}
	}
	return nil
}

// AUCReport is the ROC AUC of predicted easiness against gold easiness
// (Bogin et al. §5.1): an example is easy when most models get it right.
type AUCReport struct {
	AUC       float64 `json:"auc"`
	Examples  int     `json:"examples"`
	Easy      int     `json:"easy"`
	Hard      int     `json:"hard"`
	Ties      int     `json:"ties_dropped"`
	NoScore   int     `json:"no_easiness_dropped"`
	Models    int     `json:"models"`
	ROCPoints int     `json:"roc_points"`
}

// EasinessAUC labels each gold example with a score in scores by the
// majority of mat's models, dropping and counting ties and examples
// without a score, and computes the AUC. The report's counts are set even
// when the AUC cannot be computed.
func EasinessAUC(gold []data.Record, scores map[string]float64, mat *Matrix) (AUCReport, []ROCPoint, error) {
	var xs []float64
	var ys []bool
	rep := AUCReport{Models: mat.M}
	for i := range gold {
		s, ok := scores[gold[i].ID]
		if !ok {
			rep.NoScore++
			continue
		}
		switch mat.Majority(i) {
		case -1:
			rep.Ties++
		case 1:
			xs, ys = append(xs, s), append(ys, true)
			rep.Easy++
		default:
			xs, ys = append(xs, s), append(ys, false)
		}
	}
	rep.Examples, rep.Hard = len(ys), len(ys)-rep.Easy
	auc, roc, err := AUC(xs, ys)
	rep.AUC, rep.ROCPoints = auc, len(roc)
	return rep, roc, err
}

// ROCPlot is the ROC curve of an AUC report.
func ROCPlot(auc float64, roc []ROCPoint) Plot {
	p := Plot{Title: fmt.Sprintf("ROC of predicted easiness (AUC %.3f)", auc),
		XLabel: "false positive rate", YLabel: "true positive rate", Line: true, Unit: true}
	for _, pt := range roc {
		p.X, p.Y = append(p.X, pt.FPR), append(p.Y, pt.TPR)
	}
	return p
}

// WriteTable writes the AUC and its counts.
func (r AUCReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AUC\texamples\teasy\thard\tties-dropped\tmodels")
	fmt.Fprintf(tw, "%.4f\t%d\t%d\t%d\t%d\t%d\n", r.AUC, r.Examples, r.Easy, r.Hard, r.Ties, r.Models)
	return tw.Flush()
}
