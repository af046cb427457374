package main

import (
	"context"
	"fmt"
	"io"

	"compbench/data"
	"compbench/data/structure"
	"compbench/eval"
)

func runSelect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("select", "select --pool pool.jsonl --budget B --out train.jsonl [--strategy nls|random] [flags]",
		`Budgeted training-set selection (Bogin et al. §6.2): nls repeatedly adds an
example holding the local structure least similar to those already
selected; random samples without replacement. Records are written in the
order chosen, so the first K lines are the selection for budget K.`, stderr)
	pool := fs.String("pool", "", "pool of records `FILE` (required)")
	out := fs.String("out", "", "output `FILE` for the selected records (required)")
	budget := fs.Int("budget", 0, "number of examples `B` to select (required)")
	strategy := fs.String("strategy", "nls", "nls or random")
	n := fs.Int("n", 2, "local-structure size n (2, 3 or 4)")
	seed := fs.Uint64("seed", 1, "random seed")
	tree := fs.String("tree", "auto", "where programs come from: "+names(structure.TreeKinds, "|"))
	skipBad := fs.Bool("skip-bad", false, "skip records whose program does not parse (counted)")
	force := fs.Bool("force", false, "replace an existing output file")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *pool == "" || *out == "" || *budget == 0 {
		return usagef("--pool, --out and --budget are required")
	}
	kind, err := structure.ParseTreeKind(*tree)
	if err != nil {
		return usagef("--tree: %v", err)
	}
	if err := checkNotInput(files("--out", *out), files("--pool", *pool)); err != nil {
		return err
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	recs, err := data.ReadRecords(*pool)
	if err != nil {
		return err
	}
	recs, trees, bad, err := recordTrees(*pool, recs, kind, *skipBad)
	if err != nil {
		return err
	}
	cfg := eval.SelectConfig{Budget: *budget, Strategy: eval.Strategy(*strategy), N: *n}
	if err := cfg.Validate(len(trees)); err != nil {
		return usagef("%v", err)
	}
	idx, err := eval.Select(trees, cfg, data.SubRand(*seed, "select"))
	if err != nil {
		return err
	}
	sel := make([]data.Record, len(idx))
	for i, k := range idx {
		sel[i] = recs[k]
	}
	if err := data.WriteRecords(*out, sel, *force); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "selected %d of %d examples (%s) into %s", len(sel), len(recs), *strategy, *out)
	if bad > 0 {
		fmt.Fprintf(stdout, "; skipped %d that do not parse", bad)
	}
	fmt.Fprintln(stdout)
	return nil
}
