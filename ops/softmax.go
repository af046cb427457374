package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AttentionSoftmax returns softmax over the last axis of scores + mask + bias
// for attention logits scores [B, H, Tq, Tk]. mask and bias may be nil; each
// has shape [B or 1, H or 1, Tq, Tk] and is broadcast over the size-1 axes.
// mask is constant input data (0 where attention is allowed, -Inf where not);
// bias is learned (relative-position biases) and receives a gradient summed
// over its broadcast axes. A row with every key masked gives all zeros rather
// than NaN, so padded queries contribute nothing.
func AttentionSoftmax(scores, mask, bias *G.Node) (*G.Node, error) {
	if scores.Dims() != 4 {
		return nil, fmt.Errorf("attention softmax: scores must be [B,H,Tq,Tk], got %v", scores.Shape())
	}
	s := scores.Shape()
	in := G.Nodes{scores}
	op := &attnSoftmaxOp{opBase: base("AttnSoftmax", 1)}
	for k, n := range []*G.Node{mask, bias} {
		if n == nil {
			continue
		}
		ns := n.Shape()
		if n.Dims() != 4 || (ns[0] != 1 && ns[0] != s[0]) || (ns[1] != 1 && ns[1] != s[1]) || ns[2] != s[2] || ns[3] != s[3] {
			return nil, fmt.Errorf("attention softmax: %s %v does not broadcast to scores %v", [2]string{"mask", "bias"}[k], ns, s)
		}
		in = append(in, n)
		op.arity++
		if k == 0 {
			op.hasMask = true
		} else {
			op.hasBias = true
		}
	}
	op.desc = fmt.Sprintf("AttnSoftmax{mask=%v,bias=%v}", op.hasMask, op.hasBias)
	return G.ApplyOp(op, in...) // [B, H, Tq, Tk]
}

type attnSoftmaxOp struct {
	opBase
	hasMask, hasBias bool
}

func (o *attnSoftmaxOp) Type() hm.Type {
	ts := []hm.Type{tt(4)}
	for i := 1; i < o.arity; i++ {
		ts = append(ts, tt(4))
	}
	return hm.NewFnType(append(ts, tt(4))...)
}
func (o *attnSoftmaxOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// addend is a [B|1, H|1, Tq, Tk] tensor broadcast onto [B, H, Tq, Tk].
type addend struct {
	v  []float32
	bc kernels.Bcast // extents of the first two axes
}

func newAddend(v G.Value, what string) (addend, error) {
	d, s, err := f32(v, what)
	if err != nil {
		return addend{}, err
	}
	return addend{v: d, bc: kernels.Bcast{B: s[0], H: s[1]}}, nil
}

// block returns the [Tq, Tk] block of the addend that (b, h) reads.
func (a addend) block(b, h, n int) []float32 {
	if a.bc.B == 1 {
		b = 0
	}
	if a.bc.H == 1 {
		h = 0
	}
	off := (b*a.bc.H + h) * n
	return a.v[off : off+n]
}

func (o *attnSoftmaxOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *attnSoftmaxOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, s, err := f32(in[0], "attention scores")
	if err != nil {
		return nil, err
	}
	var mask, bias *addend
	for k, v := range in[1:] {
		a, err := newAddend(v, fmt.Sprintf("attention addend %d", k))
		if err != nil {
			return nil, err
		}
		if k == 0 && o.hasMask {
			mask = &a
		} else {
			bias = &a
		}
	}
	nb, nh, tq, tk := s[0], s[1], s[2], s[3]
	res := o.out(pre, nb, nh, tq, tk) // [B, H, Tq, Tk]
	y := res.Float32s()
	n := tq * tk
	one := kernels.AttnShape{B: 1, H: 1, Tq: tq, Tk: tk}
	parallel(nb*nh, len(x), func(lo, hi int) {
		for bh := lo; bh < hi; bh++ {
			b, h := bh/nh, bh%nh
			var mv, bv []float32
			if mask != nil {
				mv = mask.block(b, h, n)
			}
			if bias != nil {
				bv = bias.block(b, h, n)
			}
			kernels.AttnSoftmaxRef(one, x[bh*n:(bh+1)*n], mv, kernels.Bcast{B: 1, H: 1}, bv, kernels.Bcast{B: 1, H: 1}, y[bh*n:(bh+1)*n])
		}
	})
	return res, nil
}

func (o *attnSoftmaxOp) DiffWRT(n int) []bool {
	d := []bool{true}
	if o.hasMask {
		d = append(d, false)
	}
	if o.hasBias {
		d = append(d, true)
	}
	return d
}

func (o *attnSoftmaxOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	ds, err := G.ApplyOp(&softmaxGradOp{base("AttnSoftmaxGrad", 2)}, output, grad) // [B, H, Tq, Tk]
	if err != nil {
		return nil, err
	}
	res := G.Nodes{ds}
	if o.hasMask {
		res = append(res, nil)
	}
	if o.hasBias {
		bias := in[len(in)-1]
		db := ds
		if !bias.Shape().Eq(ds.Shape()) {
			bs := bias.Shape()
			op := &sumToOp{base(fmt.Sprintf("SumTo%v", bs), 1), bs.Clone()}
			if db, err = G.ApplyOp(op, ds); err != nil { // [B|1, H|1, Tq, Tk]
				return nil, err
			}
		}
		res = append(res, db)
	}
	return res, nil
}

// softmaxGradOp computes dS = P * (dP - sum_j(dP * P)) per row from the
// probabilities P (the forward output) and dP.
type softmaxGradOp struct{ opBase }

func (o *softmaxGradOp) Type() hm.Type { return hm.NewFnType(tt(4), tt(4), tt(4)) }
func (o *softmaxGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o *softmaxGradOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *softmaxGradOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	p, s, err := f32(in[0], "softmax grad probs")
	if err != nil {
		return nil, err
	}
	dp, _, err := f32(in[1], "softmax grad dP")
	if err != nil {
		return nil, err
	}
	tk := s[len(s)-1]
	rows := len(p) / tk
	res := o.out(pre, s...) // [B, H, Tq, Tk]
	ds := res.Float32s()
	parallel(rows, len(p), func(lo, hi int) {
		kernels.AttnSoftmaxGradRef(hi-lo, tk, p[lo*tk:hi*tk], dp[lo*tk:hi*tk], ds[lo*tk:hi*tk])
	})
	return res, nil
}

// sumToOp sums a [B, H, Tq, Tk] tensor over the axes where shape has size 1.
type sumToOp struct {
	opBase
	shape tensor.Shape
}

func (o *sumToOp) Type() hm.Type { return hm.NewFnType(tt(4), tt(4)) }
func (o *sumToOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return o.shape.Clone(), nil
}
func (o *sumToOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *sumToOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, s, err := f32(in[0], "sum-to input")
	if err != nil {
		return nil, err
	}
	res := o.out(pre, o.shape...) // [B|1, H|1, Tq, Tk]
	sh := kernels.AttnShape{B: s[0], H: s[1], Tq: s[2], Tk: s[3]}
	kernels.SumToRef(sh, kernels.Bcast{B: o.shape[0], H: o.shape[1]}, x, res.Float32s())
	return res, nil
}
