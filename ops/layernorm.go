package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LayerNormEps is the variance floor of LayerNorm, defined with the
// kernels that use it.
const LayerNormEps = kernels.LayerNormEps

// LayerNorm normalises each row of x [N, D] to zero mean and unit variance
// (biased variance, as Ba et al. 2016) and applies gamma [D] and beta [D]:
// y = (x - mean) / sqrt(var + eps) * gamma + beta.
func LayerNorm(x, gamma, beta *G.Node, eps float32) (*G.Node, error) {
	if x.Dims() != 2 || gamma.Dims() != 1 || beta.Dims() != 1 {
		return nil, fmt.Errorf("layernorm: want x [N,D], gamma [D], beta [D]; got %v %v %v", x.Shape(), gamma.Shape(), beta.Shape())
	}
	d := x.Shape()[1]
	if gamma.Shape()[0] != d || beta.Shape()[0] != d {
		return nil, fmt.Errorf("layernorm: x %v does not match gamma %v / beta %v", x.Shape(), gamma.Shape(), beta.Shape())
	}
	return G.ApplyOp(&layerNormOp{base(fmt.Sprintf("LayerNorm{%g}", eps), 3), eps}, x, gamma, beta) // [N, D]
}

type layerNormOp struct {
	opBase
	eps float32
}

func (o *layerNormOp) Type() hm.Type { return hm.NewFnType(tt(2), tt(1), tt(1), tt(2)) }
func (o *layerNormOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o *layerNormOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *layerNormOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, s, err := f32(in[0], "layernorm x")
	if err != nil {
		return nil, err
	}
	gamma, _, err := f32(in[1], "layernorm gamma")
	if err != nil {
		return nil, err
	}
	beta, _, err := f32(in[2], "layernorm beta")
	if err != nil {
		return nil, err
	}
	n, d := s[0], s[1]
	y := o.out(pre, n, d) // [N, D]
	yd := y.Float32s()
	parallel(n, n*d, func(lo, hi int) {
		kernels.LayerNormRef(hi-lo, d, o.eps, x[lo*d:hi*d], gamma, beta, yd[lo*d:hi*d])
	})
	return y, nil
}

func (o *layerNormOp) DiffWRT(n int) []bool { return []bool{true, true, true} }

// SymDiff recomputes the row statistics in the backward ops instead of
// keeping them from the forward pass: ops stay stateless and the extra pass
// over x is cheap next to the matrix products around it.
func (o *layerNormOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	x, gamma := in[0], in[1]
	dx, err := G.ApplyOp(&layerNormGradX{base(fmt.Sprintf("LayerNormGradX{%g}", o.eps), 3), o.eps}, x, gamma, grad) // [N, D]
	if err != nil {
		return nil, err
	}
	dg, err := G.ApplyOp(&layerNormGradParams{base(fmt.Sprintf("LayerNormGradGamma{%g}", o.eps), 2), o.eps, true}, x, grad) // [D]
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&layerNormGradParams{base("LayerNormGradBeta", 2), o.eps, false}, x, grad) // [D]
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dg, db}, nil
}

// layerNormGradX computes dx = rstd * (g - mean(g) - xhat * mean(g*xhat))
// with g = dy * gamma.
type layerNormGradX struct {
	opBase
	eps float32
}

func (o *layerNormGradX) Type() hm.Type { return hm.NewFnType(tt(2), tt(1), tt(2), tt(2)) }
func (o *layerNormGradX) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o *layerNormGradX) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *layerNormGradX) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, s, err := f32(in[0], "layernorm grad x")
	if err != nil {
		return nil, err
	}
	gamma, _, err := f32(in[1], "layernorm grad gamma")
	if err != nil {
		return nil, err
	}
	dy, _, err := f32(in[2], "layernorm grad dy")
	if err != nil {
		return nil, err
	}
	n, d := s[0], s[1]
	dx := o.out(pre, n, d) // [N, D]
	dxd := dx.Float32s()
	parallel(n, n*d, func(lo, hi int) {
		kernels.LayerNormGradXRef(hi-lo, d, o.eps, x[lo*d:hi*d], gamma, dy[lo*d:hi*d], dxd[lo*d:hi*d])
	})
	return dx, nil
}

// layerNormGradParams sums dy*xhat (gamma) or dy (beta) over rows.
type layerNormGradParams struct {
	opBase
	eps   float32
	gamma bool
}

func (o *layerNormGradParams) Type() hm.Type { return hm.NewFnType(tt(2), tt(2), tt(1)) }
func (o *layerNormGradParams) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[0].(tensor.Shape)
	return tensor.Shape{s[1]}, nil
}
func (o *layerNormGradParams) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *layerNormGradParams) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, s, err := f32(in[0], "layernorm grad x")
	if err != nil {
		return nil, err
	}
	dy, _, err := f32(in[1], "layernorm grad dy")
	if err != nil {
		return nil, err
	}
	n, d := s[0], s[1]
	// Rows are summed in fixed chunks of kernels.SumChunk rows, in
	// parallel, and the chunk sums added in order (kernels.SumRowsRef's
	// order): the result does not depend on the number of CPUs.
	c := kernels.SumChunk
	chunks := (n + c - 1) / c
	part := make([]float32, chunks*d) // [chunks, D]
	parallel(chunks, n*d, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			r0, r1 := k*c, min((k+1)*c, n)
			acc := part[k*d : (k+1)*d]
			if o.gamma {
				kernels.LayerNormGammaAccRef(r1-r0, d, o.eps, x[r0*d:r1*d], dy[r0*d:r1*d], acc)
			} else {
				kernels.AddRowsRef(r1-r0, d, dy[r0*d:r1*d], acc)
			}
		}
	})
	res := o.out(pre, d) // [D]
	acc := res.Float32s()
	clear(acc)
	kernels.AddRowsRef(chunks, d, part, acc)
	return res, nil
}
