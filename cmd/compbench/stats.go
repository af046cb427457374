package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"compbench/data/split"
	"compbench/data/structure"
	"compbench/progress"
)

func runStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("stats", "stats --split DIR | --train A.jsonl --test B.jsonl [--json] [flags]", `
Compare a train and a test file: sizes, atom and compound divergence
(weighted and unweighted; Keysers et al. 2020), output- and input-pattern
coverage, length ratios, and the test atoms never seen in train. Files are
JSONL records, "source<TAB>target" lines when they end in .tsv, or SCAN's
"IN: ... OUT: ..." lines when they end in .txt.

With --split DIR, the statistics of a split made by "compbench split" are
recomputed as the split computed them: compound weights over the pool
named in DIR/split.json (or --pool), with its compound settings, so they
equal split.json's. With --train and --test, the weights are estimated
over the two files together and labelled so, unless --pool names the file
the split was drawn from: then they are estimated over the pool, as
Keysers et al. measure a split ("over the full sample set"), and train and
test records are found in it by input and output. A published split such
as SCAN's MCD1 reads as its authors measured it with
  compbench stats --train tasks_train_mcd1.txt --test tasks_test_mcd1.txt --pool tasks.txt

Original SCAN (.txt files, gen scan-original) carries Keysers et al.'s 38
rule applications as its tree; --tree scan-rules and scan-shi derive the
rule tree or Shi et al.'s derivation from any SCAN command file. Atoms count
once per example that uses them (--atoms example), or once per node
(--atoms occurrence, compbench's earlier reading). Length ratios are mean
train length / mean test length, as in Keysers et al.'s Table 3.

--measure nqg measures as NQG's code measures its GeoQuery splits (Shaw et
al. 2021, TMCD): compounds are a parent with one argument slot filled,
most(_, loc_1, _), unweighted and counted per occurrence; atoms are the
program's symbols, once per example. NQG's published tmcd_1 split reads
  compbench stats --train train.tsv --test test.tsv --tree bracketed --measure nqg
D_C 0.1902, D_A 0.0438, as NQG's code measures it.`, stderr)
	splitDir := fs.String("split", "", "folder written by compbench split: recompute its statistics over its pool")
	poolPath := fs.String("pool", "", "the pool `FILE` the split was drawn from: weigh compounds over it (with --split: when split.json's params.pool has moved)")
	train := fs.String("train", "", "training records")
	test := fs.String("test", "", "test records")
	asJSON := fs.Bool("json", false, "print JSON")
	treeKind := fs.String("tree", "auto", "where programs come from: "+names(structure.TreeKinds, ", ")+", none")
	atoms := fs.String("atoms", structure.AtomsPerExample, "how F_A counts atoms: example (once per example using it) or occurrence (once per node)")
	maxSize := fs.Int("max-compound", structure.DefaultCompoundConfig().MaxSize, "largest compound in tree nodes (0: chosen from the data)")
	anon := fs.String("anonymize", "auto", "pattern anonymizer: auto (scan for SCAN commands, else generic), generic, scan, none")
	keep := fs.Int("keep-compounds", structure.DefaultCompoundConfig().Keep, "compounds kept, those of largest total weight (0: all; -1: chosen from the data)")
	measure := fs.String("measure", structure.MeasureKeysers, "what compounds are: keysers (subtrees up to --max-compound nodes, weighted; Keysers et al.) or nqg (parent-child pairs by argument slot, counted per occurrence; NQG's TMCD splits)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("stats: unexpected argument %q", pos[0])
	}
	if *splitDir != "" {
		if *train != "" || *test != "" {
			return usagef("stats: --split and --train/--test exclude each other")
		}
		return statsOfSplit(stdout, stderr, *splitDir, *poolPath, *asJSON)
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
	opts.Compounds = structure.CompoundConfig{MaxSize: *maxSize, Keep: *keep, Atoms: *atoms, Measure: *measure}
	if err := checkMeasure("stats", fs, *measure); err != nil {
		return err
	}
	if err := opts.Compounds.Validate(); err != nil {
		return usagef("stats: --max-compound, --keep-compounds, --atoms: %v", err)
	}
	opts.Progress = progress.To(stderr)
	return statsOfFiles(stdout, *train, *test, *poolPath, opts, *asJSON)
}

// statsOfFiles computes the statistics of the train and test files, with
// compound weights over the pool file when one is given.
func statsOfFiles(stdout io.Writer, train, test, poolPath string, opts split.StatsOptions, asJSON bool) error {
	a, err := split.LoadPool(train)
	if err != nil {
		return err
	}
	b, err := split.LoadPool(test)
	if err != nil {
		return err
	}
	var s split.Stats
	if poolPath != "" {
		pool, err := split.LoadPool(poolPath)
		if err != nil {
			return err
		}
		if s, err = split.ComputeStatsOver(a, b, pool, opts); err != nil {
			return fmt.Errorf("stats: %w (is --pool the file this split was drawn from?)", err)
		}
	} else if s, err = split.ComputeStats(a, b, opts); err != nil {
		return err
	}
	return s.Print(stdout, asJSON)
}

// checkMeasure refuses an unknown --measure, and the flags that shape
// Keysers et al.'s compounds beside --measure nqg, whose compounds have
// one size and no weights to select by.
func checkMeasure(cmd string, fs *flag.FlagSet, measure string) error {
	if !slices.Contains(structure.Measures, measure) {
		return usagef("%s: --measure %q: want %s", cmd, measure, strings.Join(structure.Measures, " or "))
	}
	if measure != structure.MeasureNQG {
		return nil
	}
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "max-compound" || f.Name == "keep-compounds" {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return usagef("%s: --measure nqg fixes compounds to parent-child pairs, all kept: drop %s", cmd, strings.Join(bad, " and "))
	}
	return nil
}

// statsOfSplit recomputes a split's statistics over its pool and checks
// them against split.json.
func statsOfSplit(stdout, stderr io.Writer, dir, poolPath string, asJSON bool) error {
	f, err := split.ReadSplitFile(dir)
	if err != nil {
		return err
	}
	if poolPath == "" {
		poolPath = f.Params.Pool
	}
	if poolPath == "" {
		return usagef("stats: %s/split.json names no pool: pass --pool FILE", dir)
	}
	pool, err := split.LoadSplitPool(f, poolPath)
	if err != nil {
		return fmt.Errorf("stats: pool of %s: %w (pass --pool FILE if it moved)", dir, err)
	}
	s, err := split.SplitStats(f, pool, progress.To(stderr))
	if err != nil {
		return fmt.Errorf("stats: %s: %w", dir, err)
	}
	if d := s.Diff(f.Stats); d != "" {
		fmt.Fprintf(stderr, "stats: warning: %s differs from split.json (%s): was the pool changed?\n", d, dir)
	}
	return s.Print(stdout, asJSON)
}
