package main

import (
	"context"
	"fmt"
	"io"

	"compbench/data"
	"compbench/data/scfg"
	"compbench/progress"
)

// runGenSCFG implements "compbench gen scfg": sample utterance/program pairs
// with their derivations from a synchronous grammar in the COVR format.
func runGenSCFG(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	def := scfg.DefaultConfig()
	fs := newFlags("gen scfg", "gen scfg --grammar FILE --out FILE.jsonl [flags]", `
Sample utterance/program pairs from a synchronous grammar in the COVR format
("lhs -> program_rhs & utterance_rhs", "|" between alternatives, quoted
terminals). Each record has input = utterance, output = program tokens and
tree = the derivation (one node per rule applied), ready for grammar splits.`, stderr)
	grammar := fs.String("grammar", "", "synchronous grammar file (required)")
	out := fs.String("out", "", "output JSONL file (required)")
	n := fs.Int("n", def.N, "number of records")
	maxDepth := fs.Int("max-depth", def.MaxDepth, "maximum derivation depth (the root rule is depth 1)")
	start := fs.String("start", "", "start non-terminal (default: left-hand side of the first production)")
	seed := fs.Uint64("seed", def.Seed, "random seed")
	dedupe := fs.Bool("dedupe", false, "drop repeated (utterance, program) pairs")
	prefix := fs.String("id-prefix", def.IDPrefix, "record ids are PREFIX-0, PREFIX-1, ...")
	force := fs.Bool("force", false, "replace an existing output file")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("gen scfg: unexpected argument %q", pos[0])
	}
	if *grammar == "" || *out == "" {
		return usagef("gen scfg: --grammar and --out are required")
	}
	cfg := scfg.GenConfig{N: *n, MaxDepth: *maxDepth, Start: *start, Seed: *seed, Dedupe: *dedupe, IDPrefix: *prefix}
	if err := cfg.Validate(); err != nil {
		return usagef("gen scfg: %v", err)
	}
	if err := checkNotInput(files("--out", *out), files("--grammar", *grammar)); err != nil {
		return err
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	g, err := scfg.ParseFile(*grammar)
	if err != nil {
		return fmt.Errorf("grammar %w", err)
	}
	set := data.NewOutputSet(*force)
	w, err := set.Create(*out)
	if err != nil {
		return err
	}
	enc := data.NewEncoder(w)
	bar := progress.New(stderr, "gen scfg", int64(cfg.N))
	err = scfg.Generate(ctx, g, cfg, enc.Encode, func() { bar.Add(1) })
	bar.Finish()
	if err != nil {
		set.Abort()
		return fmt.Errorf("gen scfg: %w", err)
	}
	if err := set.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d records to %s\n", cfg.N, *out)
	return nil
}
