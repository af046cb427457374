package lm

import (
	"context"
	"fmt"
	"math"
	"time"

	"compbench/data"
	"compbench/models/gpt2"
	"compbench/progress"
)

// FoldConfig is the k-fold fine-tuning of Godbole & Jia (§3.2, App. A.2,
// Table 7): each fold is scored by a model fine-tuned on the other folds.
type FoldConfig struct {
	// Folds is k, the number of folds (the paper uses 3).
	Folds int
	// LR is AdamW's constant learning rate (2e-5).
	LR float64
	// Batch is the number of training examples per step (32).
	Batch int
	// MaxSteps is the number of training steps per fold.
	MaxSteps int
	// EvalEvery is the number of steps between validation perplexity
	// checks (64); the best checkpoint scores the held-out fold.
	EvalEvery int
	// ValidFrac is the part of the training folds held out to choose the
	// best step (0.1).
	ValidFrac float64
	// Seed drives the fold assignment, validation choice and batch order.
	Seed uint64
}

// DefaultFoldConfig returns the paper's settings with 3 folds.
func DefaultFoldConfig() FoldConfig {
	return FoldConfig{Folds: 3, LR: 2e-5, Batch: 32, MaxSteps: 2000, EvalEvery: 64, ValidFrac: 0.1, Seed: 1}
}

// Validate checks the settings.
func (c FoldConfig) Validate() error {
	switch {
	case c.Folds < 2:
		return fmt.Errorf("folds %d: need at least 2", c.Folds)
	case !(c.LR > 0):
		return fmt.Errorf("learning rate %g must be positive", c.LR)
	case c.Batch < 1 || c.MaxSteps < 1 || c.EvalEvery < 1:
		return fmt.Errorf("batch %d, max steps %d and eval every %d must be positive", c.Batch, c.MaxSteps, c.EvalEvery)
	case !(c.ValidFrac > 0 && c.ValidFrac < 1):
		return fmt.Errorf("validation fraction %g not in (0, 1)", c.ValidFrac)
	}
	return nil
}

// ScoreFolds partitions ex into random folds; for each it builds a fresh
// model with newModel (weights, gradients and AdamW moments on its
// backend for the whole fold; gpt2.AdamW), fine-tunes it on the
// other folds and scores the fold with it, then closes it. Results are in
// the order of ex. rep receives progress and one line per fold.
func ScoreFolds(ctx context.Context, newModel func() (*gpt2.Trainer, error), ex []Encoded, sc ScoreConfig, fc FoldConfig, rep progress.Reporter) ([]Score, error) {
	rep = progress.Or(rep)
	if err := fc.Validate(); err != nil {
		return nil, err
	}
	if len(ex) < fc.Folds {
		return nil, fmt.Errorf("%d examples cannot make %d folds", len(ex), fc.Folds)
	}
	perm := data.SubRand(fc.Seed, "folds").Perm(len(ex))
	fold := make([]int, len(ex))
	for k, i := range perm {
		fold[i] = k % fc.Folds
	}
	out := make([]Score, len(ex))
	for f := 0; f < fc.Folds; f++ {
		var train, test []int
		for i := range ex {
			if fold[i] == f {
				test = append(test, i)
			} else {
				train = append(train, i)
			}
		}
		m, err := newModel()
		if err != nil {
			return nil, err
		}
		s, err := scoreFold(ctx, m, ex, train, test, sc, fc, f, rep)
		m.Close()
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		for k, i := range test {
			out[i] = s[k]
		}
	}
	return out, nil
}

// scoreFold fine-tunes m on ex[train] and scores ex[test].
func scoreFold(ctx context.Context, m *gpt2.Trainer, ex []Encoded, train, test []int, sc ScoreConfig, fc FoldConfig, f int, rep progress.Reporter) ([]Score, error) {
	if err := fineTune(ctx, m, ex, train, fc, f, rep); err != nil {
		return nil, err
	}
	held := make([]Encoded, len(test))
	for k, i := range test {
		held[k] = ex[i]
	}
	return ScoreAll(ctx, m.Engine, held, sc, nil)
}

// fineTune trains m on ex[train] minus a validation part and leaves it at
// the step with the lowest validation perplexity (step 0 included).
func fineTune(ctx context.Context, m *gpt2.Trainer, ex []Encoded, train []int, fc FoldConfig, f int, rep progress.Reporter) error {
	rng := data.SubRand(fc.Seed, fmt.Sprintf("fold-%d", f))
	rng.Shuffle(len(train), func(a, b int) { train[a], train[b] = train[b], train[a] })
	nValid := max(1, int(math.Round(fc.ValidFrac*float64(len(train)))))
	if nValid >= len(train) {
		return fmt.Errorf("%d training examples leave none after %d for validation", len(train), nValid)
	}
	valid := make([]Encoded, nValid)
	for k, i := range train[:nValid] {
		valid[k] = ex[i]
	}
	train = train[nValid:]
	vcfg := DefaultScoreConfig()
	vcfg.Batch = fc.Batch
	perplexity := func() (float64, error) {
		s, err := ScoreAll(ctx, m.Engine, valid, vcfg, nil)
		if err != nil {
			return 0, err
		}
		var nll float64
		n := 0
		for _, x := range s {
			nll -= x.Score
			n += x.Tokens
		}
		return math.Exp(nll / float64(n)), nil
	}
	best, err := perplexity()
	if err != nil {
		return err
	}
	bestStep := 0
	snap, err := m.Snapshot()
	if err != nil {
		return err
	}
	bar := rep.Bar(fmt.Sprintf("fold %d/%d", f+1, fc.Folds), int64(fc.MaxSteps))
	defer bar.Finish()
	order := append([]int(nil), train...)
	pos := len(order)
	tokens, start := 0, time.Now()
	for step := 1; step <= fc.MaxSteps; step++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		seqs := make([][]int, 0, fc.Batch)
		first := make([]int, 0, fc.Batch)
		for len(seqs) < min(fc.Batch, len(order)) {
			if pos == len(order) {
				rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
				pos = 0
			}
			e := ex[order[pos]]
			pos++
			seqs = append(seqs, e.Ids)
			first = append(first, e.First)
			tokens += len(e.Ids)
		}
		loss, err := m.TrainStep(seqs, first, float32(fc.LR))
		if err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
		bar.Add(1)
		bar.SetExtra(fmt.Sprintf("loss %.3f, best ppl %.2f at step %d, %.0f tokens/s", loss, best, bestStep, float64(tokens)/time.Since(start).Seconds()))
		if step%fc.EvalEvery == 0 || step == fc.MaxSteps {
			ppl, err := perplexity()
			if err != nil {
				return err
			}
			if ppl < best {
				// Only a new best moves the weights to the host.
				if snap, err = m.Snapshot(); err != nil {
					return err
				}
				best, bestStep = ppl, step
			}
		}
	}
	if err := m.Restore(snap); err != nil {
		return err
	}
	rep.Notef("fold %d/%d: best validation perplexity %.3f at step %d of %d (%.0f training tokens/s, evaluations included)",
		f+1, fc.Folds, best, bestStep, fc.MaxSteps, float64(tokens)/time.Since(start).Seconds())
	return nil
}
