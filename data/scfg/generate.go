package scfg

import (
	"context"
	"fmt"

	"compbench/data"
)

// GenConfig controls Generate.
type GenConfig struct {
	// N is the number of records to produce.
	N int
	// MaxDepth bounds the depth of every derivation tree (root = 1).
	MaxDepth int
	// Start is the start non-terminal; empty means the grammar's first LHS.
	Start string
	// Seed drives every random choice.
	Seed uint64
	// Dedupe drops samples whose (utterance, program) pair was already drawn.
	Dedupe bool
	// IDPrefix starts every record id ("scfg" gives scfg-0, scfg-1, ...).
	IDPrefix string
}

// DefaultConfig returns 1000 records of depth at most 10, seed 0.
func DefaultConfig() GenConfig {
	return GenConfig{N: 1000, MaxDepth: 10, IDPrefix: "scfg"}
}

// Validate checks the numbers.
func (c GenConfig) Validate() error {
	if c.N < 1 {
		return fmt.Errorf("n must be at least 1, got %d", c.N)
	}
	if c.MaxDepth < 1 {
		return fmt.Errorf("max depth must be at least 1, got %d", c.MaxDepth)
	}
	if c.IDPrefix == "" {
		return fmt.Errorf("empty id prefix")
	}
	return nil
}

// dedupeTries bounds the draws per wanted record when deduplicating, so a
// grammar with fewer distinct examples than asked fails instead of looping.
const dedupeTries = 100

// Generate samples cfg.N records: input = utterance, output = program,
// tree = derivation. emit is called once per record, in order; step is
// called after each record (for progress) and may be nil.
func Generate(ctx context.Context, g *Grammar, cfg GenConfig, emit func(*data.Record) error, step func()) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	start := cfg.Start
	if start == "" {
		start = g.Start
	}
	s := NewSampler(g)
	if _, err := s.MinDepth(start); err != nil {
		return err
	}
	rng := data.SubRand(cfg.Seed, "scfg")
	seen := map[string]bool{}
	made := 0
	for tries := 0; made < cfg.N; tries++ {
		if tries%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if cfg.Dedupe && tries >= dedupeTries*cfg.N+1000 {
			return fmt.Errorf("found only %d distinct examples in %d draws (asked for %d); the grammar may be too small for --n at this depth",
				made, tries, cfg.N)
		}
		d, err := s.Sample(rng, start, cfg.MaxDepth)
		if err != nil {
			return err
		}
		if cfg.Dedupe {
			key := d.Utterance + "\x00" + d.Program
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		rec := data.Record{
			ID:     fmt.Sprintf("%s-%d", cfg.IDPrefix, made),
			Input:  d.Utterance,
			Output: d.Program,
			Tree:   d.Tree,
		}
		if err := emit(&rec); err != nil {
			return err
		}
		made++
		if step != nil {
			step()
		}
	}
	return nil
}
