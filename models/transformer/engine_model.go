package transformer

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"compbench/engine"
	"compbench/models"
	"compbench/ops"
)

// Engine runs a Transformer's graphs through package engine: each
// graph (one per purpose and batch shape) is compiled once into a program,
// and every program's machine shares one set of weights in the backend's
// memory. It implements models.Seq2Seq, so evaluation and decoding run on the
// backend too; Step trains, with the Adam moments on the backend as well,
// and per step only the batch goes in and the loss and gradient norm come
// out. The host weights (Params) are stale until Download.
type Engine struct {
	m     *Model
	b     engine.Backend
	w     *engine.Weights
	opt   *engine.Adam
	zero  []engine.Buf // zero gradients for weights a graph does not use
	progs map[any]*engineProg
	clock uint64
	enc   *engineEncoded // the last Encode's output (engine_decode.go)
	dec   *engineDecoder // the decoding state's buffers, freed by the next
}

type engineProg struct {
	mc    *engine.Machine
	grads []engine.Buf // per weight; nil where the graph has no gradient
	last  uint64
}

// NewEngine uploads m's weights to b, for evaluation and decoding.
func NewEngine(m *Model, b engine.Backend) (*Engine, error) {
	p := m.Params()
	w, err := engine.NewWeights(b, p.Names, p.AllData())
	if err != nil {
		return nil, err
	}
	return &Engine{m: m, b: b, w: w, zero: make([]engine.Buf, len(p.Names)), progs: map[any]*engineProg{}}, nil
}

// NewTrainer is NewEngine with zero Adam moments of constants c,
// for Step.
func NewTrainer(m *Model, b engine.Backend, c ops.AdamConfig) (*Engine, error) {
	p := m.Params()
	vals := p.AllData()
	sizes := make([]int, len(p.Names))
	for i := range p.Names {
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
	return &Engine{m: m, b: b, w: w, opt: opt, zero: make([]engine.Buf, len(p.Names)), progs: map[any]*engineProg{}}, nil
}

// Adam returns the optimizer (nil from NewEngine), for loading and
// saving its moments.
func (t *Engine) Adam() *engine.Adam { return t.opt }

// program returns the machine of v's graph, compiling it on first use.
// Machines of graphs the model has evicted are dropped with them.
func (t *Engine) program(v *models.GraphView) (*engineProg, error) {
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
		if g != nil || len(v.Grads) == 0 {
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
func (t *Engine) Step(bt *models.Batch, eps float64, step int, clip, lr float64) (loss, norm float64, err error) {
	if t.opt == nil {
		return 0, 0, fmt.Errorf("engine model: no optimizer (made by NewEngine)")
	}
	v, err := t.m.TrainView(bt, eps, step)
	if err != nil {
		return 0, 0, err
	}
	ep, err := t.run(v)
	if err != nil {
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

// run uploads v's inputs to its program's machine and runs it.
func (t *Engine) run(v *models.GraphView) (*engineProg, error) {
	ep, err := t.program(v)
	if err != nil {
		return nil, fmt.Errorf("engine program: %w", err)
	}
	for k, n := range v.Inputs {
		if err := ep.mc.Set(n, v.Values[k]); err != nil {
			return nil, err
		}
	}
	if err := ep.mc.Run(); err != nil {
		return nil, err
	}
	return ep, nil
}

// Params implements models.Seq2Seq: the host weights, current after Download.
func (t *Engine) Params() *models.Params { return t.m.Params() }

// Loss implements models.Seq2Seq on the backend. With train the gradients are
// downloaded into Params().Grads (Step keeps them on the backend instead).
func (t *Engine) Loss(bt *models.Batch, train bool, eps float64, step int) (float64, error) {
	var v *models.GraphView
	var err error
	if train {
		v, err = t.m.TrainView(bt, eps, step)
	} else {
		v, err = t.m.LossView(bt, eps)
	}
	if err != nil {
		return 0, err
	}
	ep, err := t.run(v)
	if err != nil {
		return 0, err
	}
	l, err := ep.mc.Scalar(v.Out)
	if err != nil {
		return 0, err
	}
	if train {
		p := t.m.Params()
		p.ZeroGrads()
		for k, g := range v.Grads {
			if err := ep.mc.Read(g, p.Grads[v.ParamIdx[k]]); err != nil {
				return 0, err
			}
		}
	}
	return float64(l), nil
}

// Encode implements models.Seq2Seq on the backend.
func (t *Engine) Encode(src []int, B, S int) (*models.Memory, error) {
	if t.m.Cfg.DoubleIO() {
		return t.encodeIO(src, B, S)
	}
	v, srcLen, err := t.m.EncodeView(src, B, S)
	if err != nil {
		return nil, err
	}
	ep, err := t.run(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	out := make([]float32, v.Out.Shape().TotalSize())
	if err := ep.mc.Read(v.Out, out); err != nil {
		return nil, err
	}
	mem := &models.Memory{B: B, S: S, Data: out, SrcLen: srcLen}
	// Decoding starts from the output still on the backend.
	t.enc = nil
	if buf, err := ep.mc.Buffer(v.Out); err == nil {
		t.enc = &engineEncoded{mem: mem, buf: buf, key: v.Key, ep: ep}
	}
	return mem, nil
}

// encodeIO is Encode for the double I/O encoder. Its memory is assembled
// on the host from the examples' encoded outputs (ioMemory), so decoding
// uploads it rather than reusing the program's output buffer.
func (t *Engine) encodeIO(src []int, B, S int) (*models.Memory, error) {
	t.enc = nil
	v, ib, err := t.m.encodeIOView(src, B, S)
	if err != nil {
		return nil, err
	}
	ep, err := t.run(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	out := make([]float32, v.Out.Shape().TotalSize()) // [B*E*So, D]
	if err := ep.mc.Read(v.Out, out); err != nil {
		return nil, err
	}
	return t.m.ioMemory(ib, out), nil
}

// Logits implements models.Seq2Seq on the backend.
func (t *Engine) Logits(mem *models.Memory, decIn []int, T, pos int) ([]float32, error) {
	v, err := t.m.DecodeView(mem, decIn, T, pos)
	if err != nil {
		return nil, err
	}
	ep, err := t.run(v)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	all := make([]float32, v.Out.Shape().TotalSize()) // [B*T, V]
	if err := ep.mc.Read(v.Out, all); err != nil {
		return nil, err
	}
	V := t.m.Cfg.TgtVocab
	out := make([]float32, mem.B*V)
	for b := 0; b < mem.B; b++ {
		copy(out[b*V:(b+1)*V], all[(b*T+pos)*V:(b*T+pos+1)*V])
	}
	return out, nil
}

// Download copies the trained weights into the model's Params (before
// evaluating with the model, or saving a checkpoint).
func (t *Engine) Download() error { return t.w.Download(t.m.Params().AllData()) }

// Close frees the backend memory.
func (t *Engine) Close() {
	if t.dec != nil {
		t.dec.free()
		t.dec = nil
	}
	for _, ep := range t.progs {
		ep.mc.Close()
	}
	for _, z := range t.zero {
		if z != nil {
			t.b.Free(z)
		}
	}
	if t.opt != nil {
		t.opt.Free()
	}
	t.w.Free()
}
