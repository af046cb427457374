package main

import (
	"context"
	"io"

	"compbench/data"
	"compbench/eval"
)

func runAgree(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("agree", "agree --gold test.jsonl --pred A --pred B [--pred C ...] [flags]",
		`Per-model exact match, the rate at which all models agree (all right or all
wrong) and at which a majority agrees, beside the rate expected from
independent models with the same accuracies (Bogin et al. Table 2).`, stderr)
	var ef evalFlags
	ef.register(fs)
	var preds listFlag
	fs.Var(&preds, "pred", "predictions `FILE` of one model (repeat, at least two)")
	k := fs.Int("k", 0, "also report agreement of at least `K` models (default: all and majority only)")
	matrix := fs.String("matrix", "", "write the per-example correctness matrix to `FILE` (JSONL)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	opt, err := ef.options()
	if err != nil {
		return err
	}
	if len(preds) < 2 {
		return usagef("agree needs at least two --pred files (got %d)", len(preds))
	}
	m := len(preds)
	// --k 0 is the flag's "not given"; given, it is a mistake.
	if (*k != 0 || isSet(fs, "k")) && (*k < 1 || *k > m) {
		return usagef("--k %d: want between 1 and the number of models (%d)", *k, m)
	}
	if *matrix != "" {
		if err := checkNotInput(files("--matrix", *matrix), join(files("--gold", ef.gold), files("--pred", preds...))); err != nil {
			return err
		}
		if err := data.CheckFree(*matrix, ef.force); err != nil {
			return err
		}
	}
	gold, err := data.ReadRecords(ef.gold)
	if err != nil {
		return err
	}
	mat, sums, err := eval.Models(gold, preds, ef.allowMissing, opt)
	if err != nil {
		return err
	}
	rep := eval.Agree(mat, preds, sums, *k)
	if *matrix != "" {
		if err := data.WriteOutput(*matrix, ef.force, func(w io.Writer) error { return eval.WriteMatrix(w, gold, mat) }); err != nil {
			return err
		}
	}
	if ef.asJSON {
		return printJSON(stdout, rep)
	}
	return rep.WriteTable(stdout)
}
