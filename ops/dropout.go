package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DropoutSource drives every dropout op of one graph. gorgonia's own Dropout
// seeds from the clock; here each op's mask is a pure function of (seed, op
// number, step), so a run is reproducible and a resumed run draws the same
// masks as an uninterrupted one. It is not safe for concurrent use: set the
// step and mode between machine runs.
type DropoutSource struct {
	seed     uint64
	step     uint64
	training bool
	n        int
}

// NewDropoutSource returns a source in training mode at step 0.
func NewDropoutSource(seed uint64) *DropoutSource {
	return &DropoutSource{seed: seed, training: true}
}

// SetStep selects the masks of training step step.
func (s *DropoutSource) SetStep(step uint64) { s.step = step }

// SetTraining switches dropout on (training) or off (evaluation, decoding).
func (s *DropoutSource) SetTraining(on bool) { s.training = on }

// Dropout zeroes each element of x with probability p and scales the rest by
// 1/(1-p) (inverted dropout) while src is in training mode; otherwise it
// passes x through. Ops are numbered in the order they are built, so the
// same model code builds the same masks.
func Dropout(x *G.Node, p float32, src *DropoutSource) (*G.Node, error) {
	if p < 0 || p >= 1 {
		return nil, fmt.Errorf("dropout: probability %g not in [0,1)", p)
	}
	if src == nil {
		return nil, fmt.Errorf("dropout: nil source")
	}
	id := src.n
	src.n++
	op := &dropoutOp{opBase: base(fmt.Sprintf("Dropout{%g,#%d}", p, id), 1), p: p, id: id, src: src}
	return G.ApplyOp(op, x) // same shape as x
}

// dropChunk is the number of elements that share one random stream.
const dropChunk = kernels.DropChunk

type dropoutOp struct {
	opBase
	p   float32
	id  int
	src *DropoutSource
	// mask holds 0 or 1/(1-p) per element from the last forward pass; the
	// backward op of the same step reuses it. nil means pass-through.
	mask []float32
}

func (o *dropoutOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (o *dropoutOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o *dropoutOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *dropoutOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, s, err := f32(in[0], "dropout input")
	if err != nil {
		return nil, err
	}
	res := o.out(pre, s...) // same shape as x
	y := res.Float32s()
	if !o.src.training || o.p == 0 {
		o.mask = nil
		copy(y, x)
		return res, nil
	}
	if len(o.mask) != len(x) {
		o.mask = make([]float32, len(x))
	}
	// Each chunk of kernels.DropChunk elements draws from its own stream
	// (data.SubRand's PCG, seeded from the source's seed and
	// "dropout/<op>/<step>/<chunk>"), so chunks fill in parallel and the
	// mask does not depend on the number of CPUs.
	p := kernels.DropoutParams{P: o.p, Seed: o.src.seed, ID: o.id, Step: o.src.step}
	chunks := (len(x) + kernels.DropChunk - 1) / kernels.DropChunk
	parallel(chunks, len(x)*4, func(lo, hi int) {
		kernels.DropoutChunksRef(len(x), p, lo, hi, x, y, o.mask)
	})
	return res, nil
}

func (o *dropoutOp) DiffWRT(n int) []bool { return []bool{true} }
func (o *dropoutOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&dropoutGradOp{base("Grad"+o.desc, 1), o}, grad) // same shape as x
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

// dropoutGradOp multiplies dy by the mask of its forward op's last run.
type dropoutGradOp struct {
	opBase
	fwd *dropoutOp
}

func (o *dropoutGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (o *dropoutGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o *dropoutGradOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *dropoutGradOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	dy, s, err := f32(in[0], "dropout grad")
	if err != nil {
		return nil, err
	}
	res := o.out(pre, s...) // same shape as dy
	dx := res.Float32s()
	m := o.fwd.mask
	if m == nil {
		copy(dx, dy)
		return res, nil
	}
	if len(m) != len(dy) {
		return nil, fmt.Errorf("%s: backward before forward", o.desc)
	}
	kernels.DropoutGradRef(len(dy), dy, m, dx)
	return res, nil
}
