package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"compbench/data"
	"compbench/data/scfg"
	"compbench/data/split"
	"compbench/data/structure"
	"compbench/progress"
	"compbench/provenance"
)

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
	if countTrue(*list, *index >= 0, *all) != 1 {
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
	job := split.Job{Method: "grammar", PoolName: *in, Compounds: comp, Progress: progress.To(stderr),
		Grammar: split.GrammarJob{Grammar: g, GrammarName: *grammar, Config: cfg, MaxBytes: int64(maxBytes)}}
	if job.Pool, err = split.LoadPool(*in); err != nil {
		return err
	}
	pick := split.Pick{List: *list, Index: *index, All: *all}
	w, err := job.RunGrammar(ctx, pick, split.Out{
		Dir: *out, Force: *force, Table: stdout,
		Check: func(dir string) error { return checkSplitFree(dir, *force, ins) },
		Provenance: func() (*provenance.Record, error) {
			return provenanceOf([2]string{"in", *in}, [2]string{"grammar", *grammar})
		},
	})
	return grammarOutcome(stdout, w, err, pick, *out, int64(maxBytes))
}

// grammarOutcome reports what split grammar did (pick: --list, --index or
// --all), or why not.
func grammarOutcome(stdout io.Writer, w split.Written, err error, pick split.Pick, out string, maxBytes int64) error {
	var ie *split.IndexError
	var se *split.SizeError
	switch {
	case errors.As(err, &ie):
		return usagef("split grammar: %v", ie)
	case errors.As(err, &se):
		return fmt.Errorf("split grammar: --all would write %d splits of about %s each, about %s in all, under %s: over --max-bytes %s; raise --max-bytes, or write the splits you need with --index K (see --list)",
			se.Splits, fmtBytes(se.Total/float64(se.Splits)), fmtBytes(se.Total), out, fmtBytes(float64(maxBytes)))
	case err != nil || pick.List:
		return err
	case pick.All:
		fmt.Fprintf(stdout, "wrote %d valid splits of %d candidates under %s\n", w.Splits, w.Candidates, out)
		return nil
	}
	return w.Result.Stats.Print(stdout, false)
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

// defaultMaxBytes bounds what split grammar --all writes unless told more.
const defaultMaxBytes = 4 << 30

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
