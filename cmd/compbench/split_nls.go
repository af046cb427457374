package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"compbench/data/split"
	"compbench/data/structure"
	"compbench/progress"
	"compbench/provenance"
)

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
	treeKind := fs.String("tree", "auto", "where programs come from: "+names(structure.TreeKinds, "|"))
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
	job := split.Job{Method: "nls", PoolName: *in, Seed: *seed, Tree: kind, SkipBad: *skipBad,
		Compounds: structure.CompoundConfig{MaxSize: *maxSize}, NLS: cfg, Progress: progress.To(stderr)}
	if job.Pool, err = split.LoadPool(*in); err != nil {
		return err
	}
	w, err := job.RunNLS(ctx, split.Pick{List: *list, Index: *index, All: *all}, split.Out{
		Dir: *out, Force: *force, Table: stdout,
		Check:      func(dir string) error { return checkSplitFree(dir, *force, files("--in", *in)) },
		Provenance: func() (*provenance.Record, error) { return provenanceOf([2]string{"in", *in}) },
	})
	var ie *split.IndexError
	switch {
	case errors.As(err, &ie):
		return usagef("split nls: %v", ie)
	case err != nil || *list:
		return err
	case *all:
		fmt.Fprintf(stdout, "wrote %d splits under %s\n", w.Splits, *out)
		return nil
	}
	return w.Result.Stats.Print(stdout, false)
}
