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

func runSplit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// grammar has flags of its own (split_grammar.go).
	if len(args) > 0 && args[0] == "grammar" {
		return runSplitGrammar(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "nls" { // n-LS splits have flags of their own (split_nls.go)
		return runSplitNLS(ctx, args[1:], stdout, stderr)
	}
	fs := newFlags("split", "split METHOD --in data.jsonl --out DIR [flags]", `
Re-split a pool of records into DIR/train.jsonl, DIR/dev.jsonl, DIR/test.jsonl
and DIR/split.json (ids, parameters and statistics). METHOD is one of
`+strings.Join(split.Methods, ", ")+`. Input is JSONL records, "source<TAB>target"
lines when the file ends in .tsv, or SCAN's "IN: ... OUT: ..." lines when it
ends in .txt. The same --seed gives the same bytes.
The grammar and nls methods take flags of their own: see
"compbench split grammar --help" and "compbench split nls --help".`, stderr)
	job := split.Job{Compounds: structure.DefaultCompoundConfig(), Template: split.DefaultTemplateConfig(), MCD: split.DefaultMCDConfig()}
	fs.StringVar(&job.PoolName, "in", "", "pool of records (.jsonl, .tsv, or SCAN .txt)")
	out := fs.String("out", "", "output folder")
	testFrac := optionalFloat(fs, "test-frac", "test `fraction` of the pool (default 0.2; mcd 0.05)")
	devFrac := optionalFloat(fs, "dev-frac", "dev `fraction` of the pool (default 0; mcd 0.05)")
	trainFrac := optionalFloat(fs, "train-frac", "train `fraction` (default: the rest; mcd 0.4)")
	fs.Uint64Var(&job.Seed, "seed", 1, "random seed")
	force := fs.Bool("force", false, "replace existing output files")
	fs.BoolVar(&job.SkipBad, "skip-bad", false, "drop records whose program does not parse instead of failing")
	treeKind := fs.String("tree", "auto", "where programs come from: "+names(structure.TreeKinds, ", ")+", none")
	fs.StringVar(&job.Compounds.Atoms, "atoms", structure.AtomsPerExample, "how F_A counts atoms: example (once per example using it) or occurrence (once per node)")
	fs.IntVar(&job.Compounds.MaxSize, "max-compound", job.Compounds.MaxSize, "largest compound in tree nodes (0: chosen from the data)")
	anon := fs.String("anonymize", "auto", "pattern anonymizer: auto (scan for SCAN commands, else generic), generic, scan, none")
	by := fs.String("by", "output", "length, template and likelihood: input or output")
	fs.IntVar(&job.Length.Threshold, "threshold", 0, "length: send examples longer than this to test (0: use --test-frac)")
	t, m := &job.Template, &job.MCD
	fs.IntVar(&t.KTrain, "k-train", t.KTrain, "template: examples kept per train template (0: all)")
	fs.IntVar(&t.KTest, "k-test", t.KTest, "template: examples kept per test template (0: all)")
	fs.IntVar(&t.MaxTries, "max-tries", t.MaxTries, "template: redraws when a test token is missing from train")
	fs.Float64Var(&m.MaxAtomDiv, "max-atom-div", m.MaxAtomDiv, "mcd: largest atom divergence")
	fs.Float64Var(&m.TargetDiv, "target-div", 0, "mcd: aim at this compound divergence (0: maximize)")
	fs.IntVar(&m.Candidates, "candidates", m.Candidates, "mcd: random candidates scored per step (0: all)")
	fs.IntVar(&m.EvalCandidates, "eval-candidates", m.EvalCandidates, "mcd: candidates per addition to dev/test (0: --candidates)")
	fs.IntVar(&m.RemoveEvery, "remove-every", m.RemoveEvery, "mcd: try a removal every this many additions (0: never)")
	fs.IntVar(&m.Restarts, "restarts", m.Restarts, "mcd: run the greedy this many times from one seed and keep the most divergent end state (0: 3 on pools of up to 3M compound entries, such as SCAN, else 1)")
	fs.IntVar(&m.Polish, "polish", m.Polish, "mcd: replacement steps after the greedy, each swapping one assigned example for the best of --candidates free ones when that raises D_C within the bounds (0: none)")
	fs.IntVar(&job.TMCD.Steps, "swaps", 0, "tmcd: train/test swaps tried (0: 20 per example)")
	fs.Float64Var(&m.MaxLengthRatio, "max-length-ratio", m.MaxLengthRatio, "mcd, tmcd: keep mean test output length within [1/R, R] times train's (0: off)")
	fs.Float64Var(&m.MinLengthRatio, "min-length-ratio", 0, "mcd: raise the band's lower end from 1/R: mean test output length at least M times train's (Keysers et al.'s SCAN splits: 1.32 with R 1.59)")
	fs.IntVar(&m.LengthBuckets, "length-buckets", m.LengthBuckets, "mcd, tmcd: also keep each side's output lengths at the pool's over this many length strata (0: off)")
	fs.StringVar(&job.Compounds.Measure, "measure", structure.MeasureKeysers, "mcd, tmcd, likelihood: what compounds and atoms are: keysers (Keysers et al.) or nqg (NQG's: parent-child pairs by argument slot, counted per occurrence; atoms once per example); see compbench stats --help")
	fs.IntVar(&job.Compounds.Keep, "keep-compounds", job.Compounds.Keep, "compounds kept, those of largest total weight (0: all; -1: chosen from the data; mcd's default: all on pools of up to 50,000 examples, else -1)")
	scores := fs.String("scores", "", "likelihood: JSONL of {\"id\",\"score\"}, higher = more likely")
	fs.IntVar(&job.Likelihood.LenBuckets, "len-buckets", 0, "likelihood: control for length with this many quantile buckets")
	fs.BoolVar(&job.Likelihood.AtomConstraint, "atom-constraint", false, "likelihood: swap until every test atom occurs in train")
	fs.BoolVar(&job.Likelihood.Reverse, "reverse", false, "likelihood: most likely examples to test")
	if err := checkRenamed("split", args, []renamedFlag{{"steps", "swaps", "tmcd's swaps are not optimizer steps"}}); err != nil {
		return err
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("split: want one METHOD (%s), got %d arguments", strings.Join(split.Methods, ", "), len(pos))
	}
	job.Method = pos[0]
	if !slices.Contains(split.Methods, job.Method) {
		return usagef("split: unknown method %q (want one of %s)", job.Method, strings.Join(split.Methods, ", "))
	}
	if job.PoolName == "" || *out == "" {
		return usagef("split: --in and --out are required")
	}
	if err := splitSettings(fs, &job, *treeKind, *anon, *by, [3]float64{*testFrac, *devFrac, *trainFrac}); err != nil {
		return err
	}
	if job.Method == "likelihood" && *scores == "" {
		return usagef("split: likelihood needs --scores")
	}
	if err := checkSplitFree(*out, *force, join(files("--in", job.PoolName), files("--scores", *scores))); err != nil {
		return err
	}
	return writeSplit(ctx, fs, &job, *scores, *out, *force, stdout, stderr)
}

// writeSplit loads the pool (and the likelihood scores), runs job and
// writes the split to out.
func writeSplit(ctx context.Context, fs *flag.FlagSet, job *split.Job, scores, out string, force bool, stdout, stderr io.Writer) error {
	var err error
	if job.Pool, err = split.LoadPool(job.PoolName); err != nil {
		return err
	}
	if job.Method == "mcd" && !isSet(fs, "keep-compounds") && job.Compounds.Measure != structure.MeasureNQG {
		job.Compounds.Keep = split.MCDCompoundKeep(len(job.Pool))
	}
	if job.Method == "likelihood" {
		if job.Likelihood.LenBuckets > len(job.Pool) {
			return usagef("split: --len-buckets %d: want at most the pool's %d examples", job.Likelihood.LenBuckets, len(job.Pool))
		}
		if job.Scores, err = split.LoadScores(scores); err != nil {
			return err
		}
	}
	job.Progress = progress.To(stderr)
	res, pool, err := job.Run(ctx)
	if err != nil {
		return fmt.Errorf("split: %w", err)
	}
	if res.Provenance, err = provenanceOf([2]string{"in", job.PoolName}, [2]string{"scores", scores}); err != nil {
		return err
	}
	if err := split.Write(out, res, pool, force); err != nil {
		return err
	}
	return res.Stats.Print(stdout, false)
}

// splitSettings checks the settings the flags gave job and sets those
// read from several flags: the tree kind, the anonymizer, --by, and the
// sizes (fracs: --test-frac, --dev-frac, --train-frac; -1 when not given,
// for the method's default).
func splitSettings(fs *flag.FlagSet, job *split.Job, treeKind, anon, by string, fracs [3]float64) error {
	var err error
	if job.Tree, err = split.ParseTreeKind(treeKind); err != nil {
		return usagef("split: --tree: %v", err)
	}
	if job.Anonymizer, err = split.ParseAnonymizer(anon); err != nil {
		return usagef("split: --anonymize: %v", err)
	}
	job.Sizes = split.Sizes{Test: 0.2}
	if job.Method == "mcd" {
		job.Sizes = split.DefaultMCDSizes()
	}
	for i, dst := range []*float64{&job.Sizes.Test, &job.Sizes.Dev, &job.Sizes.Train} {
		if fracs[i] != -1 { // -1: not given; other negative values fail Validate
			*dst = fracs[i]
		}
	}
	if err := job.Sizes.Validate(); err != nil {
		return usagef("split: %v", err)
	}
	if err := checkMeasure("split", fs, job.Compounds.Measure); err != nil {
		return err
	}
	if err := job.Compounds.Validate(); err != nil {
		return usagef("split: --max-compound, --keep-compounds: %v", err)
	}
	job.Length.By, job.Likelihood.By = by, by
	job.Template.By, job.Template.Anonymizer = by, job.Anonymizer
	job.TMCD.LengthBuckets, job.TMCD.MaxLengthRatio = job.MCD.LengthBuckets, job.MCD.MaxLengthRatio
	if job.Method == "mcd" {
		if err := job.MCD.Validate(); err != nil {
			return usagef("split: %v", err)
		}
	}
	if job.NeedsTrees() && job.Tree == split.TreeNone {
		return usagef("split: %s needs program trees; --tree none is not allowed", job.Method)
	}
	t := job.Template
	switch {
	case job.Length.Threshold < 0:
		return usagef("split: --threshold %d: want 0 (use --test-frac) or a length in tokens", job.Length.Threshold)
	case by != "input" && by != "output":
		return usagef("split: --by %q: want input or output", by)
	case t.KTrain < 0 || t.KTest < 0 || t.MaxTries < 1:
		return usagef("split: --k-train %d, --k-test %d, --max-tries %d: want caps >= 0 (0: all) and tries >= 1", t.KTrain, t.KTest, t.MaxTries)
	case job.TMCD.Steps < 0:
		return usagef("split: --swaps %d: want >= 0 (0: 20 per example)", job.TMCD.Steps)
	case job.Likelihood.LenBuckets < 0:
		return usagef("split: --len-buckets %d: want >= 0 (0: off)", job.Likelihood.LenBuckets)
	}
	return nil
}
