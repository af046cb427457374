package models

import (
	"fmt"

	"gorgonia.org/tensor"

	"compbench/ops"
)

// GPT2AdamW returns the optimiser constants of Hugging Face's AdamW as used
// by Godbole & Jia (App. A.2, Table 7): beta (0.9, 0.999), eps 1e-8 and the
// Trainer's default weight decay of 0.
func GPT2AdamW() ops.AdamConfig {
	return ops.AdamConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// GPT2Optimizer holds AdamW's moment buffers for one model.
type GPT2Optimizer struct {
	// Cfg are the constants.
	Cfg  ops.AdamConfig
	m, v []*tensor.Dense
	step int
}

// NewOptimizer makes zeroed moment buffers for every parameter.
func (m *GPT2) NewOptimizer(c ops.AdamConfig) (*GPT2Optimizer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	o := &GPT2Optimizer{Cfg: c}
	for _, p := range m.params {
		s := p.val.Shape()
		o.m = append(o.m, tensor.New(tensor.WithShape(s...), tensor.WithBacking(make([]float32, s.TotalSize()))))
		o.v = append(o.v, tensor.New(tensor.WithShape(s...), tensor.WithBacking(make([]float32, s.TotalSize()))))
	}
	return o, nil
}

// TrainStep runs forward and backward on a batch of sequences: the loss is
// the mean cross-entropy of every token from first[i] on given the tokens
// before it (the others, prefix and padding, do not count), then one AdamW
// update with learning rate lr. It returns the loss before the update.
func (m *GPT2) TrainStep(o *GPT2Optimizer, seqs [][]int, first []int, lr float32) (float64, error) {
	longest := 0
	for i, s := range seqs {
		if len(s) > m.Cfg.NPositions || first[i] < 1 || first[i] > len(s) {
			return 0, fmt.Errorf("train step: sequence %d of %d tokens, first %d, n_positions %d", i, len(s), first[i], m.Cfg.NPositions)
		}
		longest = max(longest, len(s))
	}
	T := m.Width(longest)
	c, err := m.graph(gpt2Key{b: len(seqs), t: T, train: true})
	if err != nil {
		return 0, err
	}
	c.fill(seqs, m.Cfg.VocabSize-1)
	tgt := c.vals[c.tgt].Data().([]int)
	for i := range tgt {
		tgt[i] = gpt2Ignore
	}
	for i, s := range seqs {
		pad := T - len(s)
		for t := first[i]; t < len(s); t++ {
			tgt[i*T+pad+t-1] = s[t] // row t-1 predicts token t
		}
	}
	if err := c.run(); err != nil {
		return 0, fmt.Errorf("GPT-2 train step: %w", err)
	}
	loss := float64(scalar(c.loss))
	o.step++
	for k, g := range c.grads {
		i := c.params[k]
		gd, ok := g.Value().(*tensor.Dense)
		if !ok {
			return 0, fmt.Errorf("gradient of %s is not a dense tensor", m.params[i].name)
		}
		if err := ops.AdamStep(m.params[i].val, gd, o.m[i], o.v[i], lr, o.step, o.Cfg); err != nil {
			return 0, fmt.Errorf("update %s: %w", m.params[i].name, err)
		}
	}
	return loss, nil
}

// Snapshot copies every weight, for keeping the best checkpoint.
func (m *GPT2) Snapshot() [][]float32 {
	out := make([][]float32, len(m.params))
	for i, p := range m.params {
		out[i] = append([]float32(nil), p.val.Data().([]float32)...)
	}
	return out
}

// Restore writes back weights taken by Snapshot.
func (m *GPT2) Restore(s [][]float32) {
	for i, p := range m.params {
		copy(p.val.Data().([]float32), s[i])
	}
}
