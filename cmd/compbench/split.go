package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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
	in := fs.String("in", "", "pool of records (.jsonl, .tsv, or SCAN .txt)")
	out := fs.String("out", "", "output folder")
	testFrac := optionalFloat(fs, "test-frac", "test `fraction` of the pool (default 0.2; mcd 0.05)")
	devFrac := optionalFloat(fs, "dev-frac", "dev `fraction` of the pool (default 0; mcd 0.05)")
	trainFrac := optionalFloat(fs, "train-frac", "train `fraction` (default: the rest; mcd 0.4)")
	seed := fs.Uint64("seed", 1, "random seed")
	force := fs.Bool("force", false, "replace existing output files")
	skipBad := fs.Bool("skip-bad", false, "drop records whose program does not parse instead of failing")
	treeKind := fs.String("tree", "auto", "where programs come from: "+treeKindList())
	atoms := fs.String("atoms", structure.AtomsPerExample, "how F_A counts atoms: example (once per example using it) or occurrence (once per node)")
	maxSize := fs.Int("max-compound", structure.DefaultCompoundConfig().MaxSize, "largest compound in tree nodes (0: chosen from the data)")
	anon := fs.String("anonymize", "auto", "pattern anonymizer: auto (scan for SCAN commands, else generic), generic, scan, none")
	by := fs.String("by", "output", "length, template and likelihood: input or output")
	threshold := fs.Int("threshold", 0, "length: send examples longer than this to test (0: use --test-frac)")
	tdef := split.DefaultTemplateConfig()
	kTrain := fs.Int("k-train", tdef.KTrain, "template: examples kept per train template (0: all)")
	kTest := fs.Int("k-test", tdef.KTest, "template: examples kept per test template (0: all)")
	maxTries := fs.Int("max-tries", tdef.MaxTries, "template: redraws when a test token is missing from train")
	mdef := split.DefaultMCDConfig()
	maxAtom := fs.Float64("max-atom-div", mdef.MaxAtomDiv, "mcd: largest atom divergence")
	target := fs.Float64("target-div", 0, "mcd: aim at this compound divergence (0: maximize)")
	cands := fs.Int("candidates", mdef.Candidates, "mcd: random candidates scored per step (0: all)")
	evalCands := fs.Int("eval-candidates", mdef.EvalCandidates, "mcd: candidates per addition to dev/test (0: --candidates)")
	removeEvery := fs.Int("remove-every", mdef.RemoveEvery, "mcd: try a removal every this many additions (0: never)")
	restarts := fs.Int("restarts", mdef.Restarts, "mcd: run the greedy this many times from one seed and keep the most divergent end state (0: 3 on pools of up to 3M compound entries, such as SCAN, else 1)")
	polish := fs.Int("polish", mdef.Polish, "mcd: replacement steps after the greedy, each swapping one assigned example for the best of --candidates free ones when that raises D_C within the bounds (0: none)")
	steps := fs.Int("swaps", 0, "tmcd: train/test swaps tried (0: 20 per example)")
	lenRatio := fs.Float64("max-length-ratio", mdef.MaxLengthRatio, "mcd, tmcd: keep mean test output length within [1/R, R] times train's (0: off)")
	minRatio := fs.Float64("min-length-ratio", 0, "mcd: raise the band's lower end from 1/R: mean test output length at least M times train's (Keysers et al.'s SCAN splits: 1.32 with R 1.59)")
	lenBuckets := fs.Int("length-buckets", mdef.LengthBuckets, "mcd, tmcd: also keep each side's output lengths at the pool's over this many length strata (0: off)")
	measure := fs.String("measure", structure.MeasureKeysers, "mcd, tmcd, likelihood: what compounds and atoms are: keysers (Keysers et al.) or nqg (NQG's: parent-child pairs by argument slot, counted per occurrence; atoms once per example); see compbench stats --help")
	keep := fs.Int("keep-compounds", structure.DefaultCompoundConfig().Keep, "compounds kept, those of largest total weight (0: all; -1: chosen from the data; mcd's default: all on pools of up to 50,000 examples, else -1)")
	scores := fs.String("scores", "", "likelihood: JSONL of {\"id\",\"score\"}, higher = more likely")
	buckets := fs.Int("len-buckets", 0, "likelihood: control for length with this many quantile buckets")
	atomC := fs.Bool("atom-constraint", false, "likelihood: swap until every test atom occurs in train")
	reverse := fs.Bool("reverse", false, "likelihood: most likely examples to test")
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
	method := pos[0]
	known := false
	for _, m := range split.Methods {
		known = known || m == method
	}
	if !known {
		return usagef("split: unknown method %q (want one of %s)", method, strings.Join(split.Methods, ", "))
	}
	if *in == "" || *out == "" {
		return usagef("split: --in and --out are required")
	}
	kind, err := split.ParseTreeKind(*treeKind)
	if err != nil {
		return usagef("split: --tree: %v", err)
	}
	an, err := split.ParseAnonymizer(*anon)
	if err != nil {
		return usagef("split: --anonymize: %v", err)
	}
	sizes := split.Sizes{Test: 0.2}
	if method == "mcd" {
		sizes = split.DefaultMCDSizes()
	}
	for _, f := range []struct {
		v   float64
		dst *float64
	}{{*testFrac, &sizes.Test}, {*devFrac, &sizes.Dev}, {*trainFrac, &sizes.Train}} {
		if f.v != -1 { // -1: not given; other negative values fail Validate
			*f.dst = f.v
		}
	}
	if err := sizes.Validate(); err != nil {
		return usagef("split: %v", err)
	}
	comp := structure.CompoundConfig{MaxSize: *maxSize, Keep: *keep, Atoms: *atoms, Measure: *measure}
	if err := checkMeasure("split", fs, *measure); err != nil {
		return err
	}
	if err := comp.Validate(); err != nil {
		return usagef("split: --max-compound, --keep-compounds: %v", err)
	}
	mcd := split.DefaultMCDConfig()
	mcd.MaxAtomDiv, mcd.TargetDiv, mcd.Candidates, mcd.EvalCandidates, mcd.RemoveEvery = *maxAtom, *target, *cands, *evalCands, *removeEvery
	mcd.Polish, mcd.Restarts = *polish, *restarts
	mcd.LengthBuckets, mcd.MaxLengthRatio, mcd.MinLengthRatio = *lenBuckets, *lenRatio, *minRatio
	job := split.Job{Method: method, PoolName: *in, Seed: *seed, Sizes: sizes, Tree: kind, Compounds: comp, SkipBad: *skipBad, Anonymizer: an,
		Length:     split.LengthConfig{By: *by, Threshold: *threshold},
		Template:   split.TemplateConfig{By: *by, Anonymizer: an, KTrain: *kTrain, KTest: *kTest, MaxTries: *maxTries},
		MCD:        mcd,
		TMCD:       split.TMCDConfig{Steps: *steps, LengthBuckets: *lenBuckets, MaxLengthRatio: *lenRatio},
		Likelihood: split.LikelihoodConfig{LenBuckets: *buckets, By: *by, AtomConstraint: *atomC, Reverse: *reverse},
		Progress:   progress.To(stderr)}
	if method == "mcd" {
		if err := mcd.Validate(); err != nil {
			return usagef("split: %v", err)
		}
	}
	if job.NeedsTrees() && kind == split.TreeNone {
		return usagef("split: %s needs program trees; --tree none is not allowed", method)
	}
	if *threshold < 0 {
		return usagef("split: --threshold %d: want 0 (use --test-frac) or a length in tokens", *threshold)
	}
	switch {
	case *by != "input" && *by != "output":
		return usagef("split: --by %q: want input or output", *by)
	case *kTrain < 0 || *kTest < 0 || *maxTries < 1:
		return usagef("split: --k-train %d, --k-test %d, --max-tries %d: want caps >= 0 (0: all) and tries >= 1", *kTrain, *kTest, *maxTries)
	case *steps < 0:
		return usagef("split: --swaps %d: want >= 0 (0: 20 per example)", *steps)
	case *buckets < 0:
		return usagef("split: --len-buckets %d: want >= 0 (0: off)", *buckets)
	}
	if method == "likelihood" && *scores == "" {
		return usagef("split: likelihood needs --scores")
	}
	if err := checkSplitFree(*out, *force, join(files("--in", *in), files("--scores", *scores))); err != nil {
		return err
	}
	if job.Pool, err = split.LoadPool(*in); err != nil {
		return err
	}
	keepGiven := false
	fs.Visit(func(f *flag.Flag) { keepGiven = keepGiven || f.Name == "keep-compounds" })
	if method == "mcd" && !keepGiven && *measure != structure.MeasureNQG {
		job.Compounds.Keep = split.MCDCompoundKeep(len(job.Pool))
	}
	if method == "likelihood" {
		if *buckets > len(job.Pool) {
			return usagef("split: --len-buckets %d: want at most the pool's %d examples", *buckets, len(job.Pool))
		}
		if job.Scores, err = split.LoadScores(*scores); err != nil {
			return err
		}
	}
	res, pool, err := job.Run(ctx)
	if err != nil {
		return fmt.Errorf("split: %w", err)
	}
	if res.Provenance, err = provenanceOf([2]string{"in", *in}, [2]string{"scores", *scores}); err != nil {
		return err
	}
	if err := split.Write(*out, res, pool, *force); err != nil {
		return err
	}
	return res.Stats.Print(stdout, false)
}
