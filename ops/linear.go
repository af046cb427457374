package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Linear returns x W + b for x [N, In], w [In, Out] and b [Out] (b may be
// nil). It is one op: the forward pass starts each output row from b and
// accumulates the product into it, and the backward passes call BLAS with
// transpose flags, so no transposed copies and no per-step allocations.
func Linear(x, w, b *G.Node) (*G.Node, error) {
	xs, ws := x.Shape(), w.Shape()
	if x.Dims() != 2 || w.Dims() != 2 || xs[1] != ws[0] {
		return nil, fmt.Errorf("linear: want x [N,In] and w [In,Out], got %v and %v", xs, ws)
	}
	in := G.Nodes{x, w}
	if b != nil {
		if b.Dims() != 1 || b.Shape()[0] != ws[1] {
			return nil, fmt.Errorf("linear: bias %v does not match w %v", b.Shape(), ws)
		}
		in = append(in, b)
	}
	op := &linearOp{base(fmt.Sprintf("Linear{%v}", b != nil), len(in)), linFwd, xs[0], ws[0], ws[1]}
	return G.ApplyOp(op, in...) // [N, Out]
}

type linKind int

const (
	linFwd   linKind = iota // (x, w[, b]) -> x w + b   [N, Out]
	linGradX                // (dy, w) -> dy w^T        [N, In]
	linGradW                // (x, dy) -> x^T dy        [In, Out]
)

type linearOp struct {
	opBase
	kind         linKind
	n, nin, nout int
}

func (o *linearOp) Type() hm.Type {
	if o.kind == linFwd && o.arity == 3 {
		return hm.NewFnType(tt(2), tt(2), tt(1), tt(2))
	}
	return hm.NewFnType(tt(2), tt(2), tt(2))
}

func (o *linearOp) outShape() tensor.Shape {
	switch o.kind {
	case linGradX:
		return tensor.Shape{o.n, o.nin}
	case linGradW:
		return tensor.Shape{o.nin, o.nout}
	}
	return tensor.Shape{o.n, o.nout}
}

func (o *linearOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) { return o.outShape(), nil }
func (o *linearOp) Do(in ...G.Value) (G.Value, error)                 { return o.UsePreallocDo(nil, in...) }
func (o *linearOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	a, _, err := f32(in[0], o.desc)
	if err != nil {
		return nil, err
	}
	b, _, err := f32(in[1], o.desc)
	if err != nil {
		return nil, err
	}
	res := o.out(pre, o.outShape()...)
	c := res.Float32s()
	n, ni, no := o.n, o.nin, o.nout
	impl := G.WhichBLAS()
	switch o.kind {
	case linFwd:
		beta := float32(0)
		if o.arity == 3 {
			bias, _, err := f32(in[2], o.desc)
			if err != nil {
				return nil, err
			}
			kernels.RepeatRowsRef(n, no, bias, c)
			beta = 1
		}
		impl.Sgemm(blas.NoTrans, blas.NoTrans, n, no, ni, 1, a, ni, b, no, beta, c, no)
	case linGradX: // a = dy [N, Out], b = w [In, Out]
		impl.Sgemm(blas.NoTrans, blas.Trans, n, ni, no, 1, a, no, b, no, 0, c, ni)
	case linGradW: // a = x [N, In], b = dy [N, Out]
		impl.Sgemm(blas.Trans, blas.NoTrans, ni, no, n, 1, a, ni, b, no, 0, c, no)
	}
	return res, nil
}

func (o *linearOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

func (o *linearOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.kind != linFwd {
		return nil, fmt.Errorf("%s: second derivative not implemented", o.desc)
	}
	dx, err := G.ApplyOp(&linearOp{base("LinearGradX", 2), linGradX, o.n, o.nin, o.nout}, grad, in[1]) // [N, In]
	if err != nil {
		return nil, err
	}
	dw, err := G.ApplyOp(&linearOp{base("LinearGradW", 2), linGradW, o.n, o.nin, o.nout}, in[0], grad) // [In, Out]
	if err != nil {
		return nil, err
	}
	res := G.Nodes{dx, dw}
	if o.arity == 3 {
		db, err := G.ApplyOp(&layerNormGradParams{base("LayerNormGradBeta", 2), 0, false}, grad, grad) // [Out]
		if err != nil {
			return nil, err
		}
		res = append(res, db)
	}
	return res, nil
}
