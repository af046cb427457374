package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"compbench/data"
	"compbench/eval"
)

func runAUC(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("auc", "auc --easiness easiness.jsonl --gold test.jsonl --pred A --pred B ... [flags]",
		`ROC AUC of predicted easiness against gold easiness (Bogin et al. §5.1): an
example is easy when most models get it right; examples on which the models
tie are dropped and counted. Tied scores are handled by the trapezoid rule.`, stderr)
	var ef evalFlags
	ef.register(fs)
	easy := fs.String("easiness", "", "easiness `FILE` from compbench easiness (required)")
	var preds listFlag
	fs.Var(&preds, "pred", "predictions `FILE` of one model (repeat)")
	plot := fs.String("plot", "", "draw the ROC curve to `FILE` (.svg)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	opt, err := ef.options()
	if err != nil {
		return err
	}
	if *easy == "" || len(preds) == 0 {
		return usagef("--easiness and at least one --pred are required")
	}
	if *plot != "" {
		if ext := strings.ToLower(filepath.Ext(*plot)); ext != ".svg" {
			return usagef("--plot: only .svg is supported, not %q", ext)
		}
		if err := checkNotInput(files("--plot", *plot), join(files("--gold", ef.gold), files("--easiness", *easy), files("--pred", preds...))); err != nil {
			return err
		}
		if err := data.CheckFree(*plot, ef.force); err != nil {
			return err
		}
	}
	gold, err := data.ReadRecords(ef.gold)
	if err != nil {
		return err
	}
	scores, err := eval.ReadEasiness(*easy)
	if err != nil {
		return err
	}
	mat, _, err := eval.Models(gold, preds, ef.allowMissing, opt)
	if err != nil {
		return err
	}
	var xs []float64
	var ys []bool
	ties, noScore := 0, 0
	for i := range gold {
		s, ok := scores[gold[i].ID]
		if !ok {
			noScore++
			continue
		}
		switch mat.Majority(i) {
		case -1:
			ties++
		case 1:
			xs, ys = append(xs, s), append(ys, true)
		default:
			xs, ys = append(xs, s), append(ys, false)
		}
	}
	if noScore > 0 && !ef.allowMissing {
		return fmt.Errorf("%s: %d gold ids have no easiness; pass --allow-missing to drop them", *easy, noScore)
	}
	auc, roc, err := eval.AUC(xs, ys)
	if err != nil {
		return fmt.Errorf("auc: %w", err)
	}
	if *plot != "" {
		p := eval.Plot{Title: fmt.Sprintf("ROC of predicted easiness (AUC %.3f)", auc),
			XLabel: "false positive rate", YLabel: "true positive rate", Line: true, Unit: true}
		for _, pt := range roc {
			p.X, p.Y = append(p.X, pt.FPR), append(p.Y, pt.TPR)
		}
		set := data.NewOutputSet(ef.force)
		defer set.Abort()
		w, err := set.Create(*plot)
		if err != nil {
			return err
		}
		if err := p.WriteSVG(w); err != nil {
			return err
		}
		if err := set.Commit(); err != nil {
			return err
		}
	}
	pos := 0
	for _, y := range ys {
		if y {
			pos++
		}
	}
	rep := struct {
		AUC       float64 `json:"auc"`
		Examples  int     `json:"examples"`
		Easy      int     `json:"easy"`
		Hard      int     `json:"hard"`
		Ties      int     `json:"ties_dropped"`
		NoScore   int     `json:"no_easiness_dropped"`
		Models    int     `json:"models"`
		ROCPoints int     `json:"roc_points"`
	}{auc, len(ys), pos, len(ys) - pos, ties, noScore, len(preds), len(roc)}
	if ef.asJSON {
		return printJSON(stdout, rep)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AUC\texamples\teasy\thard\tties-dropped\tmodels")
	fmt.Fprintf(tw, "%.4f\t%d\t%d\t%d\t%d\t%d\n", auc, rep.Examples, rep.Easy, rep.Hard, ties, len(preds))
	return tw.Flush()
}
