package main

import (
	"context"
	"io"

	"compbench/data/split"
	"compbench/data/structure"
)

func runStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("stats", "stats --train A.jsonl --test B.jsonl [--json] [flags]", `
Compare a train and a test file: sizes, atom and compound divergence
(weighted and unweighted; Keysers et al. 2020), output- and input-pattern
coverage, length ratios, and the test atoms never seen in train. Files are
JSONL records, "source<TAB>target" lines when they end in .tsv, or SCAN's
"IN: ... OUT: ..." lines when they end in .txt.`, stderr)
	train := fs.String("train", "", "training records")
	test := fs.String("test", "", "test records")
	asJSON := fs.Bool("json", false, "print JSON")
	treeKind := fs.String("tree", "auto", "where programs come from: auto, scan, robustfill, bracketed, sexpr, cfq, none")
	maxSize := fs.Int("max-compound", structure.DefaultCompoundConfig().MaxSize, "largest compound in tree nodes (0: chosen from the data)")
	anon := fs.String("anonymize", "generic", "pattern anonymizer: generic, scan, none")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("stats: unexpected argument %q", pos[0])
	}
	if *train == "" || *test == "" {
		return usagef("stats: --train and --test are required")
	}
	opts := split.DefaultStatsOptions()
	if opts.Tree, err = split.ParseTreeKind(*treeKind); err != nil {
		return usagef("stats: --tree: %v", err)
	}
	if opts.Anonymizer, err = split.ParseAnonymizer(*anon); err != nil {
		return usagef("stats: --anonymize: %v", err)
	}
	opts.Compounds = structure.CompoundConfig{MaxSize: *maxSize}
	if err := opts.Compounds.Validate(); err != nil {
		return usagef("stats: --max-compound: %v", err)
	}
	opts.Stderr = stderr
	a, err := split.LoadPool(*train)
	if err != nil {
		return err
	}
	b, err := split.LoadPool(*test)
	if err != nil {
		return err
	}
	s, err := split.ComputeStats(a, b, opts)
	if err != nil {
		return err
	}
	return printStats(stdout, s, *asJSON)
}
