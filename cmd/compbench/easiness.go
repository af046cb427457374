package main

import (
	"context"
	"fmt"
	"io"

	"compbench/data"
	"compbench/data/structure"
	"compbench/eval"
)

// recordTrees parses each record's program (structure.RecordTrees); a
// record that does not parse, without --skip-bad, is an error that says
// how to skip it.
func recordTrees(path string, recs []data.Record, kind structure.TreeKind, skipBad bool) ([]data.Record, []*data.Tree, int, error) {
	keep, trees, bad, err := structure.RecordTrees(path, recs, kind, skipBad)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%w (pass --skip-bad to skip it)", err)
	}
	return keep, trees, bad, nil
}

func runEasiness(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("easiness", "easiness --train train.jsonl --test test.jsonl --out easiness.jsonl [flags]",
		`Predicted easiness of each test example (Bogin et al. §4.3): the minimum,
over its local structures unobserved in training, of the highest similarity
to an observed structure (1 when every structure was observed), with the
list of unobserved structures.`, stderr)
	train := fs.String("train", "", "training records `FILE` (required)")
	test := fs.String("test", "", "test records `FILE` (required)")
	out := fs.String("out", "", "output `FILE` (JSONL {\"id\",\"easiness\",\"unobserved\"}, required)")
	n := fs.Int("n", 2, "structure size n of n-LS (2, 3 or 4); n-gram order for --variant bigram")
	variant := fs.String("variant", "full", "decision rule: "+names(structure.Variants, "|"))
	seed := fs.Uint64("seed", 1, "seed for --variant random")
	tree := fs.String("tree", "auto", "where programs come from: "+names(structure.TreeKinds, "|"))
	skipBad := fs.Bool("skip-bad", false, "skip records whose program does not parse (counted)")
	force := fs.Bool("force", false, "replace an existing output file")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *train == "" || *test == "" || *out == "" {
		return usagef("--train, --test and --out are required")
	}
	cfg := structure.Config{N: *n, Variant: structure.Variant(*variant), Seed: *seed}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	kind, err := structure.ParseTreeKind(*tree)
	if err != nil {
		return usagef("--tree: %v", err)
	}
	if err := checkNotInput(files("--out", *out), join(files("--train", *train), files("--test", *test))); err != nil {
		return err
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	trRecs, err := data.ReadRecords(*train)
	if err != nil {
		return err
	}
	teRecs, err := data.ReadRecords(*test)
	if err != nil {
		return err
	}
	_, trTrees, badTrain, err := recordTrees(*train, trRecs, kind, *skipBad)
	if err != nil {
		return err
	}
	teRecs, teTrees, badTest, err := recordTrees(*test, teRecs, kind, *skipBad)
	if err != nil {
		return err
	}
	model, err := structure.Train(trTrees, cfg)
	if err != nil {
		return err
	}
	lines, rep, err := eval.ScoreEasiness(ctx, model, teRecs, teTrees, stderr)
	if err != nil {
		return err
	}
	if err := data.WriteOutput(*out, *force, func(w io.Writer) error { return eval.WriteEasiness(w, lines) }); err != nil {
		return err
	}
	rep.Variant, rep.N, rep.SkippedTrain, rep.SkippedTest = *variant, *n, badTrain, badTest
	if *asJSON {
		return printJSON(stdout, rep)
	}
	return rep.WriteTable(stdout)
}
