package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ReLU returns max(x, 0) elementwise for x of any shape. Its backward pass
// reads the output (dy where y > 0) in one loop; gorgonia's Rectify builds a
// comparison tensor and a product for the same gradient.
func ReLU(x *G.Node) (*G.Node, error) {
	return G.ApplyOp(&reluOp{base("ReLU", 1), false}, x) // same shape as x
}

// reluOp is the forward op, or with grad set the backward op taking (y, dy).
type reluOp struct {
	opBase
	grad bool
}

func (o *reluOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	if o.grad {
		return hm.NewFnType(a, a, a)
	}
	return hm.NewFnType(a, a)
}
func (o *reluOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o *reluOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *reluOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, s, err := f32(in[0], o.desc)
	if err != nil {
		return nil, err
	}
	res := o.out(pre, s...) // same shape as x
	y := res.Float32s()
	if !o.grad {
		parallel(len(x), len(x), func(lo, hi int) {
			kernels.ReLURef(hi-lo, x[lo:hi], y[lo:hi])
		})
		return res, nil
	}
	dy, _, err := f32(in[1], o.desc)
	if err != nil {
		return nil, err
	}
	dy = dy[:len(x)]
	// x here is the forward output, >= 0: the gradient passes where it is
	// not +0 (kernels.ReLUGradRef tests its bits, branch-free).
	parallel(len(x), len(x), func(lo, hi int) {
		kernels.ReLUGradRef(hi-lo, x[lo:hi], dy[lo:hi], y[lo:hi])
	})
	return res, nil
}

func (o *reluOp) DiffWRT(n int) []bool { return []bool{true} }
func (o *reluOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.grad {
		return nil, fmt.Errorf("relu: second derivative not implemented")
	}
	dx, err := G.ApplyOp(&reluOp{base("ReLUGrad", 2), true}, output, grad) // same shape as x
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}
