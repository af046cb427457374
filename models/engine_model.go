package models

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"compgen/engine"
	"compgen/ops"
)

// EngineTrainer trains a Transformer through package engine: each batch
// shape's training graph is compiled once into a program, and every
// program's machine shares one set of weights, moments and gradients in the
// backend's memory. Per step only the batch goes in and the loss and the
// gradient norm come out. The host weights (Params) are stale until
// Download.
type EngineTrainer struct {
	m     *Transformer
	b     engine.Backend
	w     *engine.Weights
	opt   *engine.Adam
	zero  []engine.Buf // zero gradients for weights a graph does not use
	progs map[any]*engineProg
	clock uint64
}

type engineProg struct {
	mc    *engine.Machine
	grads []engine.Buf // per weight; nil where the graph has no gradient
	last  uint64
}

// NewEngineTrainer uploads m's weights to b, with zero Adam moments of
// constants c.
func NewEngineTrainer(m *Transformer, b engine.Backend, c ops.AdamConfig) (*EngineTrainer, error) {
	p := m.Params()
	vals := make([][]float32, len(p.Names))
	sizes := make([]int, len(p.Names))
	for i := range p.Names {
		vals[i] = p.Data(i)
		sizes[i] = len(vals[i])
	}
	w, err := engine.NewWeights(b, p.Names, vals)
	if err != nil {
		return nil, err
	}
	opt, err := engine.NewAdam(b, sizes, c)
	if err != nil {
		w.Free()
		return nil, err
	}
	return &EngineTrainer{m: m, b: b, w: w, opt: opt, zero: make([]engine.Buf, len(p.Names)), progs: map[any]*engineProg{}}, nil
}

// Adam returns the optimizer, for loading and saving its moments.
func (t *EngineTrainer) Adam() *engine.Adam { return t.opt }

// program returns the machine of v's graph, compiling it on first use.
// Machines of graphs the model has evicted are dropped with them.
func (t *EngineTrainer) program(v *GraphView) (*engineProg, error) {
	t.clock++
	if ep, ok := t.progs[v.Key]; ok {
		ep.last = t.clock
		return ep, nil
	}
	for len(t.progs) >= max(1, t.m.MaxGraphs) {
		var old any
		var oldest uint64
		for k, ep := range t.progs {
			if old == nil || ep.last < oldest {
				old, oldest = k, ep.last
			}
		}
		t.progs[old].mc.Close()
		delete(t.progs, old)
	}
	prog, err := engine.Compile(append(G.Nodes{v.Out}, v.Grads...), engine.Options{Inputs: v.Inputs})
	if err != nil {
		return nil, err
	}
	mc, err := engine.NewSharedMachine(prog, t.b, t.w.Shared())
	if err != nil {
		return nil, err
	}
	ep := &engineProg{mc: mc, grads: make([]engine.Buf, len(t.w.Names)), last: t.clock}
	for k, g := range v.Grads {
		if ep.grads[v.ParamIdx[k]], err = mc.Buffer(g); err != nil {
			return nil, err
		}
	}
	for i, g := range ep.grads {
		if g != nil {
			continue
		}
		if t.zero[i] == nil {
			if t.zero[i], err = t.b.Alloc(t.w.Sizes[i]); err != nil {
				return nil, err
			}
		}
		ep.grads[i] = t.zero[i]
	}
	t.progs[v.Key] = ep
	return ep, nil
}

// Step runs one training step on bt, as train's loop does with Loss,
// ClipGlobalNorm and Adam: the loss with label smoothing eps and the
// dropout masks of step, gradients clipped to global norm clip (0: not
// clipped), then one Adam update with learning rate lr. It returns the loss
// and the gradient norm before clipping; on a non-finite loss or norm the
// weights are not updated.
func (t *EngineTrainer) Step(bt *Batch, eps float64, step int, clip, lr float64) (loss, norm float64, err error) {
	v, err := t.m.TrainView(bt, eps, step)
	if err != nil {
		return 0, 0, err
	}
	ep, err := t.program(v)
	if err != nil {
		return 0, 0, fmt.Errorf("engine program: %w", err)
	}
	for k, n := range v.Inputs {
		if err := ep.mc.Set(n, v.Values[k]); err != nil {
			return 0, 0, err
		}
	}
	if err := ep.mc.Run(); err != nil {
		return 0, 0, err
	}
	l, err := ep.mc.Scalar(v.Out)
	if err != nil {
		return 0, 0, err
	}
	nm, err := t.opt.ClipGlobalNorm(ep.grads, float32(clip))
	if err != nil {
		return 0, 0, err
	}
	loss, norm = float64(l), float64(nm)
	if loss != loss || norm != norm || loss-loss != 0 || norm-norm != 0 {
		return loss, norm, nil // NaN or Inf: the caller stops
	}
	if err := t.opt.Step(t.w.Bufs, ep.grads, float32(lr)); err != nil {
		return 0, 0, err
	}
	return loss, norm, nil
}

// Download copies the trained weights into the model's Params (before
// evaluating with the model, or saving a checkpoint).
func (t *EngineTrainer) Download() error {
	p := t.m.Params()
	vals := make([][]float32, len(p.Names))
	for i := range vals {
		vals[i] = p.Data(i)
	}
	return t.w.Download(vals)
}

// Close frees the backend memory.
func (t *EngineTrainer) Close() {
	for _, ep := range t.progs {
		ep.mc.Close()
	}
	for _, z := range t.zero {
		if z != nil {
			t.b.Free(z)
		}
	}
	t.opt.Free()
	t.w.Free()
}
