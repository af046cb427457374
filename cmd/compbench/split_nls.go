package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"compbench/data"
	"compbench/data/split"
	"compbench/data/structure"
	"compbench/progress"
)

// nlsSplitParams is split.json's "params" for an n-LS split.
type nlsSplitParams struct {
	split.NLSConfig
	// Seed drives the half variant's draws.
	Seed uint64 `json:"seed"`
	// Tree says where programs came from.
	Tree string `json:"tree"`
	// Index is the split's rank among all candidates (0 = hardest).
	Index int `json:"index"`
	// Split describes the held-out structures.
	Split split.NLSSplit `json:"split"`
}

// runSplitNLS implements "compbench split nls".
func runSplitNLS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("split nls", "split nls --in data.jsonl (--list | --index K --out DIR | --all --out DIR) [flags]", `
Adversarial n-LS splits (Bogin et al. §6.1, App. B.4): for each local
structure s, the test set is every example holding a structure whose
similarity to s exceeds t, with the lowest t that keeps every test symbol in
train and at most --max-test-templates of the distinct programs in test.
Splits easier than --tau are dropped, identical ones merged; candidates are
ranked hardest first. --list prints them; --index K writes one to DIR
(default: the hardest); --all writes each to DIR/K/.`, stderr)
	in := fs.String("in", "", "pool of records (required)")
	out := fs.String("out", "", "output folder")
	def := split.DefaultNLSConfig()
	n := fs.Int("n", def.N, "local-structure size n (2, 3 or 4)")
	nosib := fs.Bool("nosib", false, "ignore sibling relations (2-LS-NOSIB)")
	half := fs.Bool("half", false, "hold out s and a random half of its similar structures")
	k := fs.Float64("max-test-templates", def.MaxTestTemplates, "largest fraction K of distinct programs in test")
	tau := fs.Float64("tau", def.Tau, "drop splits whose mean predicted easiness exceeds this")
	maxSplits := fs.Int("max-splits", 0, "keep only the hardest this many splits (0: all)")
	list := fs.Bool("list", false, "print every candidate split")
	index := fs.Int("index", 0, "write candidate K (0 = hardest)")
	all := fs.Bool("all", false, "write every candidate under DIR/K/")
	seed := fs.Uint64("seed", 1, "random seed (half variant)")
	treeKind := fs.String("tree", "auto", "where programs come from: "+joinKinds())
	skipBad := fs.Bool("skip-bad", false, "drop records whose program does not parse instead of failing")
	maxSize := fs.Int("max-compound", 3, "largest compound in tree nodes, for the statistics")
	force := fs.Bool("force", false, "replace existing output files")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("split nls: unexpected argument %q", pos[0])
	}
	if *in == "" {
		return usagef("split nls: --in is required")
	}
	if !*list && *out == "" {
		return usagef("split nls: --out is required unless --list")
	}
	cfg := split.NLSConfig{N: *n, NoSib: *nosib, Half: *half, MaxTestTemplates: *k, Tau: *tau, MaxSplits: *maxSplits}
	if err := cfg.Validate(); err != nil {
		return usagef("split %v", err)
	}
	kind, err := structure.ParseTreeKind(*treeKind)
	if err != nil {
		return usagef("split nls: --tree: %v", err)
	}
	pool, err := split.LoadPool(*in)
	if err != nil {
		return err
	}
	var trees []*data.Tree
	if *skipBad {
		var bad []string
		pool, trees, bad = split.SkipBad(pool, kind)
		if len(bad) > 0 {
			fmt.Fprintf(stderr, "split nls: skipped %d records whose program does not parse (first: %q)\n", len(bad), bad[0])
		}
	} else if trees, err = split.Trees(pool, kind); err != nil {
		return fmt.Errorf("%s: %w (use --skip-bad to drop such records)", *in, err)
	}
	splits, err := split.NLS(trees, cfg, data.SubRand(*seed, "split/nls"), progress.To(stderr))
	if err != nil {
		return err
	}
	if *list {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "index\tseed\tthreshold\theld-out\ttrain\ttest\ttest-templates\teasiness")
		for i, sp := range splits {
			fmt.Fprintf(tw, "%d\t%s\t%.3f\t%d\t%d\t%d\t%.3f\t%.4f\n", i, sp.Seed, sp.Threshold, len(sp.HeldOut), len(sp.Train), len(sp.Test), sp.TemplateFrac, sp.Easiness)
		}
		return tw.Flush()
	}
	which := []int{*index}
	if *all {
		which = which[:0]
		for i := range splits {
			which = append(which, i)
		}
	} else if *index < 0 || *index >= len(splits) {
		return usagef("split nls: --index %d out of range (there are %d splits)", *index, len(splits))
	}
	for _, i := range which {
		dir := *out
		if *all {
			dir = filepath.Join(*out, strconv.Itoa(i))
		}
		if err := checkSplitFree(dir, *force, files("--in", *in)); err != nil {
			return err
		}
	}
	ix, err := structure.Build(trees, structure.CompoundConfig{MaxSize: *maxSize}, progress.To(stderr))
	if err != nil {
		return err
	}
	an, _ := split.ParseAnonymizer("generic")
	prov, err := provenanceOf([2]string{"in", *in})
	if err != nil {
		return err
	}
	for _, i := range which {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := *out
		if *all {
			dir = filepath.Join(*out, strconv.Itoa(i))
		}
		sp := splits[i]
		params := nlsSplitParams{NLSConfig: cfg, Seed: *seed, Tree: string(kind), Index: i, Split: sp}
		res := split.NewResult("nls", params, pool, ix, sp.Assignment(), an)
		res.Provenance = prov
		if err := split.Write(dir, res, pool, *force); err != nil {
			return err
		}
		if !*all {
			return printStats(stdout, res.Stats, false)
		}
	}
	fmt.Fprintf(stdout, "wrote %d splits under %s\n", len(which), *out)
	return nil
}
