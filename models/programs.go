package models

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"compbench/engine"
	"compbench/ops"
)

// Programs runs a graph-defined model's GraphViews on package engine: each
// graph is compiled once into a program, every program's machine shares
// one set of weights in the backend's memory, and a training step keeps
// gradients and Adam moments there too. The Transformer's and the
// pretrained encoder-decoders' Runners are built on it.
type Programs struct {
	// B is the backend; W the weights on it, in the order of the model's
	// Params; Opt the optimizer (nil for evaluation only).
	B   engine.Backend
	W   *engine.Weights
	Opt *engine.Adam
	// Max bounds the programs kept, and Budget their bytes (GraphBudget
	// when made; < 0: no bound); the least recently used go first, and a
	// program larger than Budget on its own is still kept.
	Max    int
	Budget int64
	zero   []engine.Buf // zero gradients for weights a graph does not use
	progs  map[any]*Program
	bytes  int64 // of the programs kept
	clock  uint64
}

// Program is one compiled graph on its machine.
type Program struct {
	Mc *engine.Machine
	// Grads are per weight; a zero buffer where the graph has no gradient.
	Grads []engine.Buf
	last  uint64
	bytes int64 // the machine's own buffers, weights not counted
}

// NewPrograms uploads p's weights to b; with opt it also makes zero Adam
// moments of those constants, for TrainStep.
func NewPrograms(b engine.Backend, p *Params, opt *ops.AdamConfig, maxProgs int) (*Programs, error) {
	vals := p.AllData()
	w, err := engine.NewWeights(b, p.Names, vals)
	if err != nil {
		return nil, err
	}
	ps := &Programs{B: b, W: w, Max: maxProgs, Budget: GraphBudget(), zero: make([]engine.Buf, len(p.Names)), progs: map[any]*Program{}}
	if opt != nil {
		sizes := make([]int, len(p.Names))
		for i := range p.Names {
			sizes[i] = len(vals[i])
		}
		if ps.Opt, err = engine.NewAdam(b, sizes, *opt); err != nil {
			w.Free()
			return nil, err
		}
	}
	return ps, nil
}

// Adam returns the optimizer (nil without one), for loading and saving its
// moments.
func (ps *Programs) Adam() *engine.Adam { return ps.Opt }

// Has reports whether the program of key is still compiled.
func (ps *Programs) Has(key any, p *Program) bool { return ps.progs[key] == p }

// Program returns the machine of v's graph, compiling it on first use.
func (ps *Programs) Program(v *GraphView) (*Program, error) {
	ps.clock++
	if p, ok := ps.progs[v.Key]; ok {
		p.last = ps.clock
		return p, nil
	}
	prog, err := engine.Compile(append(G.Nodes{v.Out}, v.Grads...), engine.Options{Inputs: v.Inputs})
	if err != nil {
		return nil, err
	}
	size := int64(prog.ArenaSize)
	for i := range prog.Bufs {
		if c := prog.Bufs[i].Class; c != engine.Activation && c != engine.Param {
			size += int64(prog.Bufs[i].Size)
		}
	}
	size *= 4 // float32 and int32 elements
	for len(ps.progs) > 0 && (len(ps.progs) >= max(1, ps.Max) || (ps.Budget > 0 && ps.bytes+size > ps.Budget)) {
		old := Oldest(ps.progs, func(p *Program) uint64 { return p.last })
		ps.progs[old].Mc.Close()
		ps.bytes -= ps.progs[old].bytes
		delete(ps.progs, old)
	}
	mc, err := engine.NewSharedMachine(prog, ps.B, ps.W.Shared())
	if err != nil {
		return nil, err
	}
	p := &Program{Mc: mc, Grads: make([]engine.Buf, len(ps.W.Names)), last: ps.clock, bytes: size}
	for k, g := range v.Grads {
		if p.Grads[v.ParamIdx[k]], err = mc.Buffer(g); err != nil {
			mc.Close()
			return nil, err
		}
	}
	for i, g := range p.Grads {
		if g != nil || len(v.Grads) == 0 {
			continue
		}
		if ps.zero[i] == nil {
			if ps.zero[i], err = ps.B.Alloc(ps.W.Sizes[i]); err != nil {
				mc.Close()
				return nil, err
			}
		}
		p.Grads[i] = ps.zero[i]
	}
	ps.progs[v.Key] = p
	ps.bytes += size
	return p, nil
}

// Run uploads v's inputs to its program's machine and runs it.
func (ps *Programs) Run(v *GraphView) (*Program, error) {
	p, err := ps.Program(v)
	if err != nil {
		return nil, fmt.Errorf("engine program: %w", err)
	}
	for k, n := range v.Inputs {
		if err := p.Mc.Set(n, v.Values[k]); err != nil {
			return nil, err
		}
	}
	if err := p.Mc.Run(); err != nil {
		return nil, err
	}
	return p, nil
}

// TrainStep runs the training graph v (Out the loss), clips the gradients
// to global norm clip (0: not clipped) and takes one Adam step with
// learning rate lr. It returns the loss and the gradient norm before
// clipping; on a non-finite loss or norm the weights are not updated.
func (ps *Programs) TrainStep(v *GraphView, clip, lr float64) (loss, norm float64, err error) {
	if ps.Opt == nil {
		return 0, 0, fmt.Errorf("engine model: bound without an optimizer")
	}
	p, err := ps.Run(v)
	if err != nil {
		return 0, 0, err
	}
	l, err := p.Mc.Scalar(v.Out)
	if err != nil {
		return 0, 0, err
	}
	nm, err := ps.Opt.ClipGlobalNorm(p.Grads, float32(clip))
	if err != nil {
		return 0, 0, err
	}
	loss, norm = float64(l), float64(nm)
	if loss != loss || norm != norm || loss-loss != 0 || norm-norm != 0 {
		return loss, norm, nil // NaN or Inf: the caller stops
	}
	if err := ps.Opt.Step(ps.W.Bufs, p.Grads, float32(lr)); err != nil {
		return 0, 0, err
	}
	return loss, norm, nil
}

// Loss runs the graph v whose Out is a loss. With grads (a training graph
// run outside TrainStep) its gradients are downloaded into grads, aligned
// with the weights.
func (ps *Programs) Loss(v *GraphView, grads [][]float32) (float64, error) {
	p, err := ps.Run(v)
	if err != nil {
		return 0, err
	}
	l, err := p.Mc.Scalar(v.Out)
	if err != nil {
		return 0, err
	}
	if grads != nil {
		for i := range grads {
			clear(grads[i])
		}
		for k, g := range v.Grads {
			if err := p.Mc.Read(g, grads[v.ParamIdx[k]]); err != nil {
				return 0, err
			}
		}
	}
	return float64(l), nil
}

// Output runs v and downloads its Out.
func (ps *Programs) Output(v *GraphView) ([]float32, *Program, error) {
	p, err := ps.Run(v)
	if err != nil {
		return nil, nil, err
	}
	out := make([]float32, v.Out.Shape().TotalSize())
	if err := p.Mc.Read(v.Out, out); err != nil {
		return nil, nil, err
	}
	return out, p, nil
}

// Download copies the backend's weights into p.
func (ps *Programs) Download(p *Params) error { return ps.W.Download(p.AllData()) }

// Close frees the backend memory.
func (ps *Programs) Close() {
	for _, p := range ps.progs {
		p.Mc.Close()
	}
	ps.progs, ps.bytes = map[any]*Program{}, 0
	for i, z := range ps.zero {
		if z != nil {
			ps.B.Free(z)
			ps.zero[i] = nil
		}
	}
	if ps.Opt != nil {
		ps.Opt.Free()
	}
	ps.W.Free()
}

// Oldest is the key of the least recently used entry of the non-empty
// cache m, by each entry's last use (distinct clock values).
func Oldest[K comparable, V any](m map[K]V, last func(V) uint64) K {
	var old K
	var oldest uint64
	first := true
	for k, v := range m {
		if l := last(v); first || l < oldest {
			old, oldest, first = k, l, false
		}
	}
	return old
}
