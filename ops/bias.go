package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AddBias returns x [N, D] + b [D] broadcast over rows; b's gradient is the
// column sum of the output gradient.
func AddBias(x, b *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || b.Dims() != 1 || b.Shape()[0] != x.Shape()[1] {
		return nil, fmt.Errorf("add bias: want x [N,D] and b [D], got %v and %v", x.Shape(), b.Shape())
	}
	return G.ApplyOp(&addBiasOp{base("AddBias", 2)}, x, b) // [N, D]
}

type addBiasOp struct{ opBase }

func (o *addBiasOp) Type() hm.Type { return hm.NewFnType(tt(2), tt(1), tt(2)) }
func (o *addBiasOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o *addBiasOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *addBiasOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, s, err := f32(in[0], "add bias x")
	if err != nil {
		return nil, err
	}
	b, _, err := f32(in[1], "add bias b")
	if err != nil {
		return nil, err
	}
	n, d := s[0], s[1]
	res := o.out(pre, n, d) // [N, D]
	y := res.Float32s()
	parallel(n, n*d, func(lo, hi int) {
		kernels.AddBiasRef(hi-lo, d, x[lo*d:hi*d], b, y[lo*d:hi*d])
	})
	return res, nil
}

func (o *addBiasOp) DiffWRT(n int) []bool { return []bool{true, true} }
func (o *addBiasOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	db, err := G.ApplyOp(&layerNormGradParams{base("LayerNormGradBeta", 2), 0, false}, in[0], grad) // [D]
	if err != nil {
		return nil, err
	}
	return G.Nodes{grad, db}, nil
}
