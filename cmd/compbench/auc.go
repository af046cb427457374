package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

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
	rep, roc, err := eval.EasinessAUC(gold, scores, mat)
	if rep.NoScore > 0 && !ef.allowMissing {
		return fmt.Errorf("%s: %d gold ids have no easiness; pass --allow-missing to drop them", *easy, rep.NoScore)
	}
	if err != nil {
		return fmt.Errorf("auc: %w", err)
	}
	if *plot != "" {
		if err := data.WriteOutput(*plot, ef.force, eval.ROCPlot(rep.AUC, roc).WriteSVG); err != nil {
			return err
		}
	}
	if ef.asJSON {
		return printJSON(stdout, rep)
	}
	return rep.WriteTable(stdout)
}
