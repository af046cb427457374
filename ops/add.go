package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Add returns a + b for two tensors of the same shape (residual
// connections). Unlike gorgonia's Add it reuses its output buffer across
// runs, and its gradient passes the incoming gradient to both inputs
// without a copy.
func Add(a, b *G.Node) (*G.Node, error) {
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("add: shapes %v and %v differ", a.Shape(), b.Shape())
	}
	return G.ApplyOp(&addOp{base("Add", 2)}, a, b) // same shape as a
}

type addOp struct{ opBase }

func (o *addOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a, a)
}
func (o *addOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o *addOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *addOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	if x, ok := in[0].(*G.F32); ok { // scalars: a loss and a penalty
		y, err := scalar32(in[1])
		if err != nil {
			return nil, fmt.Errorf("add b: %w", err)
		}
		return G.NewF32(float32(*x) + y), nil
	}
	a, s, err := f32(in[0], "add a")
	if err != nil {
		return nil, err
	}
	b, _, err := f32(in[1], "add b")
	if err != nil {
		return nil, err
	}
	if len(b) != len(a) {
		return nil, fmt.Errorf("add: sizes %d and %d differ", len(a), len(b))
	}
	res := o.out(pre, s...) // same shape as a
	y := res.Float32s()
	parallel(len(a), len(a), func(lo, hi int) {
		kernels.BinaryRef(kernels.OpAdd, hi-lo, a[lo:hi], 1, b[lo:hi], 1, y[lo:hi])
	})
	return res, nil
}

func (o *addOp) DiffWRT(n int) []bool { return []bool{true, true} }
func (o *addOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad, grad}, nil
}
