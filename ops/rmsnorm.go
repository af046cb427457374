package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RMSNorm is T5's layer norm (Zhang & Sennrich 2019, as Raffel et al.
// 2020 use it): each row of x [N, D] divided by its root mean square and
// scaled by gamma [D], y = x / sqrt(mean(x²) + eps) * gamma, with no mean
// subtracted and no bias (kernels.RMSNormRef).
func RMSNorm(x, gamma *G.Node, eps float32) (*G.Node, error) {
	if x.Dims() != 2 || gamma.Dims() != 1 || gamma.Shape()[0] != x.Shape()[1] {
		return nil, fmt.Errorf("rmsnorm: want x [N,D] and gamma [D]; got %v %v", x.Shape(), gamma.Shape())
	}
	return G.ApplyOp(&rmsNormOp{base(fmt.Sprintf("RMSNorm{%g}", eps), 2), eps, 0}, x, gamma) // [N, D]
}

// rmsNormOp is the forward op (part 0: (x, gamma) -> y), the input
// gradient (part 1: (x, gamma, dy) -> dx) or the gain's (part 2: (x, dy)
// -> dgamma).
type rmsNormOp struct {
	opBase
	eps  float32
	part int
}

func (o *rmsNormOp) Type() hm.Type {
	switch o.part {
	case 1:
		return hm.NewFnType(tt(2), tt(1), tt(2), tt(2))
	case 2:
		return hm.NewFnType(tt(2), tt(2), tt(1))
	}
	return hm.NewFnType(tt(2), tt(1), tt(2))
}
func (o *rmsNormOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[0].(tensor.Shape)
	if o.part == 2 {
		return tensor.Shape{s[1]}, nil
	}
	return s.Clone(), nil
}
func (o *rmsNormOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *rmsNormOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	vals := make([][]float32, len(in))
	var s tensor.Shape
	for k := range in {
		v, sk, err := f32(in[k], fmt.Sprintf("rmsnorm input %d", k))
		if err != nil {
			return nil, err
		}
		if k == 0 {
			s = sk
		}
		vals[k] = v
	}
	n, d, x := s[0], s[1], vals[0]
	switch o.part {
	case 0:
		y := o.out(pre, n, d) // [N, D]
		yd := y.Float32s()
		parallel(n, n*d, func(lo, hi int) {
			kernels.RMSNormRef(hi-lo, d, o.eps, x[lo*d:hi*d], vals[1], yd[lo*d:hi*d])
		})
		return y, nil
	case 1:
		dy := vals[2]
		dx := o.out(pre, n, d) // [N, D]
		dxd := dx.Float32s()
		parallel(n, n*d, func(lo, hi int) {
			kernels.RMSNormGradXRef(hi-lo, d, o.eps, x[lo*d:hi*d], vals[1], dy[lo*d:hi*d], dxd[lo*d:hi*d])
		})
		return dx, nil
	}
	dy := vals[1]
	// Chunks of kernels.SumChunk rows summed in parallel and added in
	// order (kernels.SumRowsRef's order), as LayerNorm's gain gradient.
	c := kernels.SumChunk
	chunks := (n + c - 1) / c
	part := make([]float32, chunks*d) // [chunks, D]
	parallel(chunks, n*d, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			r0, r1 := k*c, min((k+1)*c, n)
			kernels.RMSNormGammaAccRef(r1-r0, d, o.eps, x[r0*d:r1*d], dy[r0*d:r1*d], part[k*d:(k+1)*d])
		}
	})
	res := o.out(pre, d) // [D]
	acc := res.Float32s()
	clear(acc)
	kernels.AddRowsRef(chunks, d, part, acc)
	return res, nil
}

func (o *rmsNormOp) DiffWRT(n int) []bool {
	if o.part != 0 {
		return make([]bool, n)
	}
	return []bool{true, true}
}

// SymDiff recomputes the row statistic in the backward ops, as LayerNorm.
func (o *rmsNormOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.part != 0 {
		return nil, fmt.Errorf("rmsnorm: second derivative not implemented")
	}
	x, gamma := in[0], in[1]
	dx, err := G.ApplyOp(&rmsNormOp{base(fmt.Sprintf("RMSNormGradX{%g}", o.eps), 3), o.eps, 1}, x, gamma, grad) // [N, D]
	if err != nil {
		return nil, err
	}
	dg, err := G.ApplyOp(&rmsNormOp{base(fmt.Sprintf("RMSNormGradGamma{%g}", o.eps), 2), o.eps, 2}, x, grad) // [D]
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dg}, nil
}
