package main

import (
	"context"
	"io"
	"slices"
	"strings"

	"compbench/data"
	"compbench/data/structure"
	"compbench/eval"
)

func runFirstError(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("first-error", "first-error --train train.jsonl --gold test.jsonl --pred A [--pred B ...] [flags]",
		`Token-level analysis of Bogin et al. §5.1: among wrong predictions whose gold
program has an unobserved 2-LS, the fraction whose first wrong symbol would
complete an unobserved 2-LS whose other symbol is in the gold prefix.`, stderr)
	var ef evalFlags
	ef.register(fs)
	train := fs.String("train", "", "training records `FILE` (required)")
	var preds listFlag
	fs.Var(&preds, "pred", "predictions `FILE` (repeat for several models)")
	tree := fs.String("tree", "auto", "where programs come from: "+names(structure.TreeKinds, "|"))
	skipBad := fs.Bool("skip-bad", false, "skip records whose program does not parse (counted)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	opt, err := ef.options()
	if err != nil {
		return err
	}
	if *train == "" || len(preds) == 0 {
		return usagef("--train and at least one --pred are required")
	}
	kind, err := structure.ParseTreeKind(*tree)
	if err != nil {
		return usagef("--tree: %v", err)
	}
	trRecs, err := data.ReadRecords(*train)
	if err != nil {
		return err
	}
	_, trTrees, _, err := recordTrees(*train, trRecs, kind, *skipBad)
	if err != nil {
		return err
	}
	model, err := structure.Train(trTrees, structure.DefaultConfig())
	if err != nil {
		return err
	}
	gold, err := data.ReadRecords(ef.gold)
	if err != nil {
		return err
	}
	gold, goldTrees, _, err := recordTrees(ef.gold, gold, kind, *skipBad)
	if err != nil {
		return err
	}
	// The analysis positions errors by output symbol and looks them up in
	// the tree's structures, so the tree must spell the output. A derivation
	// (the "tree" field of grammar data, which --tree auto reads) does not.
	for i := range gold {
		ts, syms := eval.TreeSymbols(goldTrees[i]), eval.Symbols(gold[i].Output)
		if !slices.Equal(ts, syms) {
			return usagef("%s: record %q: its tree (--tree %s) does not spell its output's symbols (tree %q, output %q); first-error needs trees read from the output: --tree bracketed or --tree sexpr",
				ef.gold, gold[i].ID, *tree, clip(strings.Join(ts, " "), 60), clip(strings.Join(syms, " "), 60))
		}
	}
	rows, err := eval.FirstErrors(model, gold, goldTrees, preds, ef.allowMissing, opt)
	if err != nil {
		return err
	}
	if ef.asJSON {
		return printJSON(stdout, rows)
	}
	return eval.WriteFirstErrors(stdout, rows)
}

// clip shortens s to at most n bytes for display.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
