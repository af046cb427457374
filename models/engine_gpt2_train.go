package models

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"compbench/engine"
	"compbench/ops"
)

// GPT2Trainer fine-tunes GPT-2 on an engine backend with the semantics of
// GPT2.TrainStep (Godbole & Jia App. A.2: AdamW, constant learning rate, no
// clipping): the training graph of each batch shape is compiled once, and
// the weights, gradients and AdamW moments stay in the backend's memory.
// Each step uploads the batch and downloads the loss; Snapshot and Restore
// move the weights only when the caller keeps or takes back a checkpoint.
// Scoring (TokenLogProbs, from the embedded GPT2Engine) reads the same
// weight buffers. The host weights are stale until Download.
type GPT2Trainer struct {
	*GPT2Engine
	opt   *engine.Adam
	train map[any]*gpt2TrainProg
}

// gpt2TrainProg is one batch shape's training program with its gradient
// buffers in parameter order.
type gpt2TrainProg struct {
	mc    *engine.Machine
	grads []engine.Buf
}

// NewGPT2Trainer uploads m's weights to b and makes zero AdamW moments of
// constants c (GPT2AdamW for the paper's settings).
func NewGPT2Trainer(m *GPT2, b engine.Backend, c ops.AdamConfig) (*GPT2Trainer, error) {
	ge, err := NewGPT2Engine(m, b)
	if err != nil {
		return nil, err
	}
	opt, err := engine.NewAdam(b, ge.w.Sizes, c)
	if err != nil {
		ge.Close()
		return nil, err
	}
	return &GPT2Trainer{GPT2Engine: ge, opt: opt, train: map[any]*gpt2TrainProg{}}, nil
}

// Adam returns the optimizer (its T counts the updates applied).
func (t *GPT2Trainer) Adam() *engine.Adam { return t.opt }

// program returns the training machine of v's graph, compiling it on first
// use. GPT2.TrainStep updates exactly the parameters its graph has
// gradients for; every GPT-2 graph uses every parameter, so a graph without
// one is refused rather than silently leaving that weight's moments behind.
func (t *GPT2Trainer) program(v *GraphView) (*gpt2TrainProg, error) {
	if tp, ok := t.train[v.Key]; ok {
		return tp, nil
	}
	prog, err := engine.Compile(append(G.Nodes{v.Out}, v.Grads...), engine.Options{Inputs: v.Inputs})
	if err != nil {
		return nil, fmt.Errorf("engine program: %w", err)
	}
	mc, err := engine.NewSharedMachine(prog, t.b, t.w.Shared())
	if err != nil {
		return nil, err
	}
	tp := &gpt2TrainProg{mc: mc, grads: make([]engine.Buf, len(t.w.Names))}
	for k, g := range v.Grads {
		if tp.grads[v.ParamIdx[k]], err = mc.Buffer(g); err != nil {
			mc.Close()
			return nil, err
		}
	}
	for i, g := range tp.grads {
		if g == nil {
			mc.Close()
			return nil, fmt.Errorf("engine program: weight %s has no gradient", t.w.Names[i])
		}
	}
	t.train[v.Key] = tp
	return tp, nil
}

// TrainStep is GPT2.TrainStep on the backend: forward and backward on the
// batch (loss: mean cross-entropy of every token from first[i] on), then
// one AdamW update with learning rate lr. It returns the loss before the
// update.
func (t *GPT2Trainer) TrainStep(seqs [][]int, first []int, lr float32) (float64, error) {
	if len(seqs) == 0 || len(seqs) != len(first) {
		return 0, fmt.Errorf("train step: %d sequences, %d starts", len(seqs), len(first))
	}
	v, err := t.m.TrainView(seqs, first)
	if err != nil {
		return 0, err
	}
	tp, err := t.program(v)
	if err != nil {
		return 0, err
	}
	for k, n := range v.Inputs {
		if err := tp.mc.Set(n, v.Values[k]); err != nil { // ids are range-checked here
			return 0, err
		}
	}
	if err := tp.mc.Run(); err != nil {
		return 0, fmt.Errorf("GPT-2 train step: %w", err)
	}
	loss, err := tp.mc.Scalar(v.Out)
	if err != nil {
		return 0, err
	}
	// As on the host, the update is applied whatever the loss: the caller
	// sees a NaN and decides.
	if err := t.opt.Step(t.w.Bufs, tp.grads, lr); err != nil {
		return 0, fmt.Errorf("GPT-2 update: %w", err)
	}
	return float64(loss), nil
}

// Snapshot downloads every weight, in GPT2.Snapshot's order.
func (t *GPT2Trainer) Snapshot() ([][]float32, error) {
	out := make([][]float32, len(t.w.Sizes))
	for i, n := range t.w.Sizes {
		out[i] = make([]float32, n)
	}
	if err := t.w.Download(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Restore uploads weights taken by Snapshot (or GPT2.Snapshot).
func (t *GPT2Trainer) Restore(s [][]float32) error {
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
func (t *GPT2Trainer) Download() error {
	s, err := t.Snapshot()
	if err != nil {
		return err
	}
	t.m.Restore(s)
	return nil
}

// Close frees the backend memory: programs, moments and weights.
func (t *GPT2Trainer) Close() {
	for _, tp := range t.train {
		tp.mc.Close()
	}
	t.train = nil
	t.opt.Free()
	t.GPT2Engine.Close()
}
