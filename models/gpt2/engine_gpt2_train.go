package gpt2

import (
	"fmt"

	"compbench/engine"
	"compbench/ops"
)

// AdamW returns the optimiser constants of Hugging Face's AdamW as used
// by Godbole & Jia (App. A.2, Table 7): beta (0.9, 0.999), eps 1e-8 and the
// Trainer's default weight decay of 0.
func AdamW() ops.AdamConfig {
	return ops.AdamConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// Trainer fine-tunes GPT-2 on an engine backend (Godbole & Jia App.
// A.2: AdamW, constant learning rate, no clipping): the training graph of
// each batch shape is compiled once, and the weights, gradients and AdamW
// moments stay in the backend's memory. Each step uploads the batch and
// downloads the loss; Snapshot and Restore move the weights only when the
// caller keeps or takes back a checkpoint. Scoring (TokenLogProbs, from the
// embedded Engine) reads the same weight buffers. The host weights are
// current only after Download (on the CPU backend they are the weight
// buffers themselves).
type Trainer struct {
	*Engine
	opt *engine.Adam
}

// NewTrainer puts m's weights on b and makes zero AdamW moments of
// constants c (AdamW for the paper's settings).
func NewTrainer(m *Model, b engine.Backend, c ops.AdamConfig) (*Trainer, error) {
	ge, err := NewEngine(m, b)
	if err != nil {
		return nil, err
	}
	opt, err := engine.NewAdam(b, ge.w.Sizes, c)
	if err != nil {
		ge.Close()
		return nil, err
	}
	return &Trainer{Engine: ge, opt: opt}, nil
}

// Adam returns the optimizer (its T counts the updates applied).
func (t *Trainer) Adam() *engine.Adam { return t.opt }

// TrainStep runs forward and backward on a batch of sequences: the loss is
// the mean cross-entropy of every token from first[i] on given the tokens
// before it (the others, prefix and padding, do not count), then one AdamW
// update with learning rate lr, whatever the loss (the caller sees a NaN
// and decides). It returns the loss before the update.
func (t *Trainer) TrainStep(seqs [][]int, first []int, lr float32) (float64, error) {
	T, err := t.m.checkBatch(seqs, first)
	if err != nil {
		return 0, fmt.Errorf("train step: %w", err)
	}
	p, err := t.program(gpt2Key{b: len(seqs), t: T, train: true}, seqs, first)
	if err != nil {
		return 0, err
	}
	if err := p.mc.Run(); err != nil {
		return 0, fmt.Errorf("GPT-2 train step: %w", err)
	}
	loss, err := p.mc.Scalar(p.g.loss)
	if err != nil {
		return 0, err
	}
	if err := t.opt.Step(t.w.Bufs, p.grads, lr); err != nil {
		return 0, fmt.Errorf("GPT-2 update: %w", err)
	}
	return float64(loss), nil
}

// Snapshot downloads every weight, in the model's parameter order.
func (t *Trainer) Snapshot() ([][]float32, error) {
	out := make([][]float32, len(t.w.Sizes))
	for i, n := range t.w.Sizes {
		out[i] = make([]float32, n)
	}
	if err := t.w.Download(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Restore uploads weights taken by Snapshot.
func (t *Trainer) Restore(s [][]float32) error {
	if len(s) != len(t.w.Bufs) {
		return fmt.Errorf("restore: %d tensors for %d weights", len(s), len(t.w.Bufs))
	}
	for i, b := range t.w.Bufs {
		if len(s[i]) != t.w.Sizes[i] {
			return fmt.Errorf("restore %s: %d values, want %d", t.w.Names[i], len(s[i]), t.w.Sizes[i])
		}
		if err := t.b.Upload(b, s[i]); err != nil {
			return fmt.Errorf("restore %s: %w", t.w.Names[i], err)
		}
	}
	return nil
}

// Download copies the backend's weights into the host model.
func (t *Trainer) Download() error {
	return t.w.Download(t.m.p.AllData())
}

// Close frees the backend memory: programs, moments and weights.
func (t *Trainer) Close() {
	t.opt.Free()
	t.Engine.Close()
}
