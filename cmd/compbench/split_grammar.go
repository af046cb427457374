package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

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
DIR; --all writes every valid split to DIR/K/, each a full copy of its
records: it first estimates the total and refuses above --max-bytes.`, stderr)
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
	maxBytes := byteSize(defaultMaxBytes)
	fs.Var(&maxBytes, "max-bytes", "--all: refuse when the splits would take more than this `size` on disk (K, M, G, T: powers of 1024)")
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

	// --all: find the valid candidates, estimate what they take on disk and
	// refuse if that is over --max-bytes or any target exists, all before
	// the compound index is built, so a refusal costs seconds. Every split
	// folder copies its records: 1,000 splits of a 5,000-record COVR pool
	// are over 10 GB.
	var valid []int
	var nCands int
	if *all {
		bar := progress.New(stderr, "grammar splits", int64(s.Len()))
		cands := s.Candidates(func() { bar.Add(1) })
		bar.Finish()
		nCands = len(cands)
		perRecord, err := recordBytes(pool)
		if err != nil {
			return err
		}
		var total float64
		for _, c := range cands {
			if c.Valid {
				valid = append(valid, c.Index)
				total += splitBytes(perRecord, c.NTrain+c.NDev+c.NTest)
			}
		}
		if len(valid) == 0 {
			return fmt.Errorf("split grammar: none of the %d candidate splits is valid", len(cands))
		}
		if total > float64(maxBytes) {
			return fmt.Errorf("split grammar: --all would write %d splits of about %s each, about %s in all, under %s: over --max-bytes %s; raise --max-bytes, or write the splits you need with --index K (see --list)",
				len(valid), fmtBytes(total/float64(len(valid))), fmtBytes(total), *out, fmtBytes(float64(maxBytes)))
		}
		for _, k := range valid {
			if err := checkSplitFree(filepath.Join(*out, strconv.Itoa(k)), *force, ins); err != nil {
				return err
			}
		}
	}

	trees, err := split.Trees(pool, structure.TreeAuto)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	ix, err := structure.Build(trees, comp, progress.To(stderr))
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

	// --all: write each valid folder (each one all-or-nothing).
	bar := progress.New(stderr, "writing splits", int64(len(valid)))
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
	fmt.Fprintf(stdout, "wrote %d valid splits of %d candidates under %s\n", len(valid), nCands, *out)
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

// defaultMaxBytes bounds what split grammar --all writes unless told more.
const defaultMaxBytes = 4 << 30

// recordBytes returns the mean bytes of one record as a split writes it: its
// JSONL line in a part file plus its id in split.json.
func recordBytes(pool []data.Record) (float64, error) {
	var n countWriter
	enc := data.NewEncoder(&n)
	for i := range pool {
		if err := enc.Encode(&pool[i]); err != nil {
			return 0, err
		}
		n += countWriter(len(pool[i].ID) + 8) // "id",\n and indentation in split.json
	}
	return float64(n) / float64(max(len(pool), 1)), nil
}

// splitBytes estimates one split folder: its records, and split.json's
// parameters and statistics (a few KiB).
func splitBytes(perRecord float64, records int) float64 {
	return perRecord*float64(records) + 4<<10
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// byteSize is a flag value in bytes: a number with an optional K, M, G or
// T suffix (powers of 1024; a trailing B or iB is allowed).
type byteSize int64

func (b *byteSize) String() string {
	if b == nil {
		return ""
	}
	for _, u := range []struct {
		s string
		n int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if *b != 0 && int64(*b)%u.n == 0 {
			return strconv.FormatInt(int64(*b)/u.n, 10) + u.s
		}
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *byteSize) Set(s string) error {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if k := strings.IndexAny(t, "KMGT"); k >= 0 && k == len(t)-1 {
		mult = map[byte]int64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}[t[k]]
		t = t[:k]
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || v*float64(mult) > math.MaxInt64 {
		return fmt.Errorf("want a positive size such as 500M or 4G, got %q", s)
	}
	*b = byteSize(v * float64(mult))
	return nil
}
