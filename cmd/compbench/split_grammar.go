package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"compbench/data"
	"compbench/data/scfg"
	"compbench/data/split"
	"compbench/data/structure"
	"compbench/progress"
)

// grammarSplitParams is split.json's "params" for a grammar split.
type grammarSplitParams struct {
	// Grammar is the grammar file's name.
	Grammar string `json:"grammar"`
	split.GrammarParams
	// MaxSize is the largest compound used by the statistics.
	MaxSize int `json:"compound_max_size"`
}

// runSplitGrammar implements "compbench split grammar".
func runSplitGrammar(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("split grammar", "split grammar --in data.jsonl --grammar FILE (--list | --index K --out DIR | --all --out DIR) [flags]", `
Grammar splits (Bogin et al. §2.1, App. B.2): for every pair of meaningful
non-terminals, hold out rule pairs (U_comb, each single pair, each per-rule
set); test = the examples whose derivation (the record's tree, labelled with
the grammar's rules, as "compbench gen scfg" writes it) contains both rules of
a held-out pair. Splits where a test program symbol never occurs in train
are invalid. --list prints every candidate; --index K writes one split to
DIR; --all writes every valid split to DIR/K/.`, stderr)
	in := fs.String("in", "", "pool of records with derivation trees (required)")
	grammar := fs.String("grammar", "", "the grammar that generated the pool (required)")
	out := fs.String("out", "", "output folder (--index, --all)")
	list := fs.Bool("list", false, "print every candidate split with its sizes and validity")
	index := fs.Int("index", -1, "write candidate K (see --list)")
	all := fs.Bool("all", false, "write every valid candidate under DIR/K/")
	def := split.DefaultGrammarConfig()
	devFrac := fs.Float64("dev-frac", def.DevFrac, "fraction of the non-test examples moved to dev at random")
	seed := fs.Uint64("seed", 1, "random seed (dev draw)")
	maxSize := fs.Int("max-compound", 3, "largest compound in tree nodes, for the statistics")
	force := fs.Bool("force", false, "replace existing output files")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("split grammar: unexpected argument %q", pos[0])
	}
	if *in == "" || *grammar == "" {
		return usagef("split grammar: --in and --grammar are required")
	}
	modes := 0
	for _, on := range []bool{*list, *index >= 0, *all} {
		if on {
			modes++
		}
	}
	if modes != 1 {
		return usagef("split grammar: give exactly one of --list, --index K, --all")
	}
	if !*list && *out == "" {
		return usagef("split grammar: --out is required with --index and --all")
	}
	cfg := split.GrammarConfig{DevFrac: *devFrac, Seed: *seed}
	if err := cfg.Validate(); err != nil {
		return usagef("split grammar: %v", err)
	}
	comp := structure.CompoundConfig{MaxSize: *maxSize}
	if err := comp.Validate(); err != nil {
		return usagef("split grammar: --max-compound: %v", err)
	}
	ins := join(files("--in", *in), files("--grammar", *grammar))
	if *index >= 0 {
		if err := checkSplitFree(*out, *force, ins); err != nil {
			return err
		}
	}
	g, err := scfg.ParseFile(*grammar)
	if err != nil {
		return fmt.Errorf("grammar %w", err)
	}
	pool, err := split.LoadPool(*in)
	if err != nil {
		return err
	}
	s, err := split.NewGrammarSplitter(g, pool, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	if *list {
		bar := progress.New(stderr, "grammar splits", int64(s.Len()))
		cands := s.Candidates(func() { bar.Add(1) })
		bar.Finish()
		return split.WriteGrammarList(stdout, cands)
	}

	trees, err := split.Trees(pool, structure.TreeAuto)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	ix, err := structure.Build(trees, comp, stderr)
	if err != nil {
		return err
	}
	anon, err := split.ParseAnonymizer("generic")
	if err != nil {
		return err
	}
	prov, err := provenanceOf([2]string{"in", *in}, [2]string{"grammar", *grammar})
	if err != nil {
		return err
	}
	write := func(c *split.GrammarCandidate, dir string) (*split.Result, error) {
		params := grammarSplitParams{Grammar: filepath.Base(*grammar), GrammarParams: s.Params(c), MaxSize: *maxSize}
		a := split.Assignment{Train: c.Train, Dev: c.Dev, Test: c.Test}
		res := split.NewResult("grammar", params, pool, ix, a, anon)
		res.Provenance = prov
		return res, split.Write(dir, res, pool, *force)
	}
	if *index >= 0 {
		c, err := s.Candidate(*index)
		if err != nil {
			return usagef("split grammar: %v", err)
		}
		if err := c.Invalid(); err != nil {
			return err
		}
		res, err := write(&c, *out)
		if err != nil {
			return err
		}
		return printStats(stdout, res.Stats, false)
	}

	// --all: find the valid candidates, refuse if any target exists, then
	// write each folder (each one all-or-nothing).
	bar := progress.New(stderr, "grammar splits", int64(s.Len()))
	cands := s.Candidates(func() { bar.Add(1) })
	bar.Finish()
	var valid []int
	for _, c := range cands {
		if c.Valid {
			valid = append(valid, c.Index)
			if err := checkSplitFree(filepath.Join(*out, strconv.Itoa(c.Index)), *force, ins); err != nil {
				return err
			}
		}
	}
	if len(valid) == 0 {
		return fmt.Errorf("split grammar: none of the %d candidate splits is valid", len(cands))
	}
	bar = progress.New(stderr, "writing splits", int64(len(valid)))
	defer bar.Finish()
	fmt.Fprintln(stdout, "index\ttrain\tdev\ttest\tatom_div\tcompound_div")
	for _, k := range valid {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := s.Candidate(k)
		if err != nil {
			return err
		}
		res, err := write(&c, filepath.Join(*out, strconv.Itoa(k)))
		if err != nil {
			return err
		}
		st := res.Stats
		fmt.Fprintf(stdout, "%d\t%d\t%d\t%d\t%s\t%s\n", k, st.TrainSize, st.DevSize, st.TestSize, fmtDiv(st.AtomDivergence), fmtDiv(st.CompoundDivergence))
		bar.Add(1)
	}
	fmt.Fprintf(stdout, "wrote %d valid splits of %d candidates under %s\n", len(valid), len(cands), *out)
	return nil
}

// checkSplitFree fails if the split folder dir is one of inputs or holds
// one of them under a name the split writes, or, unless force, if any file
// of the split exists.
func checkSplitFree(dir string, force bool, inputs []data.Named) error {
	outs := splitPaths("--out", dir)
	if err := checkNotInput(outs, inputs); err != nil {
		return err
	}
	for _, o := range outs[1:] {
		if err := data.CheckFree(o.Path, force); err != nil {
			return err
		}
	}
	return nil
}

func fmtDiv(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", *p)
}
