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

// dedupeStall bounds the draws in a row without a new example when
// deduplicating, so a grammar with fewer distinct examples than asked fails
// soon instead of drawing for minutes. The allowance grows with the examples
// found: the rarer the ones left, the longer a new one takes to come up.
func dedupeStall(found int) int { return 1000 + 10*found }

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
	made, stalled := 0, 0
	for tries := 0; made < cfg.N; tries++ {
		if tries%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if cfg.Dedupe && stalled >= dedupeStall(made) {
			return fmt.Errorf("found only %d distinct examples (asked for %d): %d draws in a row brought no new one, so the grammar's language at this depth seems to hold no more; lower --n or raise --max-depth",
				made, cfg.N, stalled)
		}
		d, err := s.Sample(rng, start, cfg.MaxDepth)
		if err != nil {
			return err
		}
		if cfg.Dedupe {
			key := d.Utterance + "\x00" + d.Program
			if seen[key] {
				stalled++
				continue
			}
			seen[key] = true
			stalled = 0
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
