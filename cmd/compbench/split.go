package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"compbench/data"
	"compbench/data/split"
	"compbench/data/structure"
	"compbench/progress"
)

// splitMethods are the methods "compbench split" knows, in help order.
var splitMethods = []string{"random", "length", "template", "mcd", "tmcd", "likelihood"}

// splitParams is what split.json records under "params".
type splitParams struct {
	Seed       uint64           `json:"seed"`
	Sizes      split.Sizes      `json:"sizes"`
	Tree       string           `json:"tree"`
	MaxSize    int              `json:"compound_max_size"`
	Keep       int              `json:"compound_keep"`
	Supers     string           `json:"compound_supergraphs"`
	Pool       string           `json:"pool"`
	Anonymizer split.Anonymizer `json:"anonymizer"`
	SkippedBad int              `json:"skipped_bad"`
	Method     any              `json:"method,omitempty"`
}

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
`+strings.Join(splitMethods, ", ")+`. Input is JSONL records, "source<TAB>target"
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
	treeKind := fs.String("tree", "auto", "where programs come from: auto, scan, robustfill, bracketed, sexpr, cfq, none")
	maxSize := fs.Int("max-compound", structure.DefaultCompoundConfig().MaxSize, "largest compound in tree nodes (0: chosen from the data)")
	anon := fs.String("anonymize", "generic", "template anonymizer: generic, scan, none")
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
	steps := fs.Int("swaps", 0, "tmcd: train/test swaps tried (0: 20 per example)")
	lenRatio := fs.Float64("max-length-ratio", mdef.MaxLengthRatio, "mcd, tmcd: keep mean test output length within [1/R, R] times train's (0: off)")
	lenBuckets := fs.Int("length-buckets", mdef.LengthBuckets, "mcd, tmcd: also keep each side's output lengths at the pool's over this many length strata (0: off)")
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
		return usagef("split: want one METHOD (%s), got %d arguments", strings.Join(splitMethods, ", "), len(pos))
	}
	method := pos[0]
	known := false
	for _, m := range splitMethods {
		known = known || m == method
	}
	if !known {
		return usagef("split: unknown method %q (want one of %s)", method, strings.Join(splitMethods, ", "))
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
	comp := structure.CompoundConfig{MaxSize: *maxSize, Keep: *keep}
	if err := comp.Validate(); err != nil {
		return usagef("split: --max-compound, --keep-compounds: %v", err)
	}
	needTrees := method == "mcd" || method == "tmcd" || (method == "likelihood" && *atomC)
	if needTrees && kind == split.TreeNone {
		return usagef("split: %s needs program trees; --tree none is not allowed", method)
	}
	if *threshold < 0 {
		return usagef("split: --threshold %d: want 0 (use --test-frac) or a length in tokens", *threshold)
	}
	if method == "likelihood" && *scores == "" {
		return usagef("split: likelihood needs --scores")
	}
	if err := checkSplitFree(*out, *force, join(files("--in", *in), files("--scores", *scores))); err != nil {
		return err
	}

	pool, err := split.LoadPool(*in)
	if err != nil {
		return err
	}
	params := splitParams{Seed: *seed, Sizes: sizes, Tree: string(kind), MaxSize: *maxSize, Anonymizer: an, Pool: *in}
	var ix *structure.Index
	if kind != split.TreeNone {
		var trees []*data.Tree
		if *skipBad {
			var bad []string
			pool, trees, bad = split.SkipBad(pool, kind)
			params.SkippedBad = len(bad)
			if len(bad) > 0 {
				fmt.Fprintf(stderr, "split: skipped %d records whose program does not parse (first: %q)\n", len(bad), bad[0])
			}
			if len(pool) == 0 {
				return fmt.Errorf("split: no record has a program that parses")
			}
		} else if trees, err = split.Trees(pool, kind); err != nil {
			return fmt.Errorf("%s: %w (use --skip-bad to drop such records, or --tree none)", *in, err)
		}
		keepGiven := false
		fs.Visit(func(f *flag.Flag) { keepGiven = keepGiven || f.Name == "keep-compounds" })
		if method == "mcd" && !keepGiven {
			comp.Keep = split.MCDCompoundKeep(len(trees))
		}
		if ix, err = structure.Build(trees, comp, progress.To(stderr)); err != nil {
			return err
		}
		params.MaxSize, params.Keep, params.Supers = ix.MaxSize, ix.Keep, ix.Supergraphs
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rng := data.SubRand(*seed, "split/"+method)
	var a split.Assignment
	switch method {
	case "random":
		a, err = split.Random(len(pool), sizes, rng)
	case "length":
		cfg := split.LengthConfig{By: *by, Threshold: *threshold}
		params.Method = cfg
		a, err = split.Length(pool, cfg, sizes, rng)
	case "template":
		cfg := split.TemplateConfig{By: *by, Anonymizer: an, KTrain: *kTrain, KTest: *kTest, MaxTries: *maxTries}
		params.Method = cfg
		a, err = split.Template(pool, cfg, sizes, rng)
	case "mcd":
		cfg := mdef
		cfg.MaxAtomDiv, cfg.TargetDiv, cfg.Candidates, cfg.EvalCandidates, cfg.RemoveEvery = *maxAtom, *target, *cands, *evalCands, *removeEvery
		cfg.LengthBuckets, cfg.MaxLengthRatio = *lenBuckets, *lenRatio
		if err := cfg.Validate(); err != nil {
			return usagef("split: %v", err)
		}
		params.Method = cfg
		a, err = split.MCD(ix, split.OutputLengths(pool), cfg, sizes, rng, progress.To(stderr))
	case "tmcd":
		cfg := split.TMCDConfig{Steps: *steps, LengthBuckets: *lenBuckets, MaxLengthRatio: *lenRatio}
		params.Method = cfg
		a, err = split.TMCD(ix, split.OutputLengths(pool), cfg, sizes, rng, progress.To(stderr))
	case "likelihood":
		cfg := split.LikelihoodConfig{LenBuckets: *buckets, By: *by, AtomConstraint: *atomC, Reverse: *reverse}
		params.Method = cfg
		var sc map[string]float64
		if sc, err = split.LoadScores(*scores); err == nil {
			a, err = split.Likelihood(pool, sc, ix, cfg, sizes, rng)
		}
	}
	if err != nil {
		return err
	}
	if w := discardWarning(method, len(pool), sizes, a); w != "" {
		fmt.Fprintln(stderr, w)
	}
	res := split.NewResult(method, params, pool, ix, a, an)
	if res.Provenance, err = provenanceOf([2]string{"in", *in}, [2]string{"scores", *scores}); err != nil {
		return err
	}
	if err := split.Write(*out, res, pool, *force); err != nil {
		return err
	}
	return printStats(stdout, res.Stats, false)
}

// discardWarning returns a one-line warning when a split keeps less than
// half of what its fractions ask for, or leaves train smaller than test
// although the fractions do not: template's per-template caps can drop most
// of a pool (all of SCAN under --anonymize scan keeps 32 train and 2,874
// test records of 20,910) and nothing else would say so. "" when neither.
func discardWarning(method string, pool int, sizes split.Sizes, a split.Assignment) string {
	train, kept := len(a.Train), len(a.Train)+len(a.Dev)+len(a.Test)
	wantTrain := sizes.Train
	if wantTrain == 0 {
		wantTrain = 1 - sizes.Dev - sizes.Test
	}
	want := (wantTrain + sizes.Dev + sizes.Test) * float64(pool)
	var why []string
	if float64(kept) < want/2 {
		why = append(why, fmt.Sprintf("dropped %d", pool-kept))
	}
	if train < len(a.Test) && wantTrain >= sizes.Test {
		why = append(why, "train is smaller than test")
	}
	if len(why) == 0 {
		return ""
	}
	hint := "check the fractions"
	if method == "template" {
		hint = "--k-test 0 keeps every example of a test template, --k-train 0 of a train one; --test-frac sets how many templates are held out"
	}
	return fmt.Sprintf("split: warning: %s kept %d of %d records (train %d, dev %d, test %d): %s; %s",
		method, kept, pool, train, len(a.Dev), len(a.Test), strings.Join(why, ", "), hint)
}

// printStats writes stats as indented JSON or as aligned lines.
func printStats(w io.Writer, s split.Stats, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	f := func(p *float64) string {
		if p == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.4f", *p)
	}
	fmt.Fprintf(w, "sizes              train %d  dev %d  test %d\n", s.TrainSize, s.DevSize, s.TestSize)
	fmt.Fprintf(w, "atom divergence    %s\n", f(s.AtomDivergence))
	over := ""
	if s.WeightsOver != "" {
		over = ", weights over " + s.WeightsOver
	}
	fmt.Fprintf(w, "compound div.      %s (unweighted %s%s)\n", f(s.CompoundDivergence), f(s.CompoundDivergenceUnweighted), over)
	fmt.Fprintf(w, "pattern coverage   output %.4f  input %.4f\n", s.OutputPatternCoverage, s.InputPatternCoverage)
	fmt.Fprintf(w, "length ratio       output %.4f  input %.4f\n", s.OutputLengthRatio, s.InputLengthRatio)
	_, err := fmt.Fprintf(w, "missing atoms      %d %s\n", len(s.MissingAtoms), strings.Join(s.MissingAtoms, " | "))
	return err
}
