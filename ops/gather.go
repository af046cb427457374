package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Embed gathers rows of table [V, D] by ids (an int tensor [N], fed each step
// with gorgonia.Let) into [N, D]; the gradient adds each row's gradient back
// into its table row, repeated ids included. Out-of-range ids are an error at
// run time, not a panic.
func Embed(table, ids *G.Node) (*G.Node, error) {
	if table.Dims() != 2 || ids.Dims() != 1 || ids.Dtype() != tensor.Int {
		return nil, fmt.Errorf("embed: want table [V,D] and int ids [N], got %v and %v %v", table.Shape(), ids.Shape(), ids.Dtype())
	}
	ts := table.Shape()
	return G.ApplyOp(&gatherOp{base(fmt.Sprintf("Embed%v", ts), 2), ts[0], ts[1], false}, table, ids) // [N, D]
}

// RelativeBias looks up a learned bias per (bucket, head) for every
// query/key pair: table is [NB, H], buckets holds Tq*Tk bucket indices
// (row-major, from attention.Buckets), the result is [1, H, Tq, Tk], ready
// to be broadcast over the batch by AttentionSoftmax.
func RelativeBias(table *G.Node, buckets []int, tq, tk int) (*G.Node, error) {
	ts := table.Shape()
	if table.Dims() != 2 || len(buckets) != tq*tk {
		return nil, fmt.Errorf("relative bias: want table [NB,H] and %d buckets, got %v and %d", tq*tk, ts, len(buckets))
	}
	for _, b := range buckets {
		if b < 0 || b >= ts[0] {
			return nil, fmt.Errorf("relative bias: bucket %d outside [0,%d)", b, ts[0])
		}
	}
	op := &relBiasOp{base(fmt.Sprintf("RelBias{%v,%d,%d,%v}", ts, tq, tk, buckets), 1), buckets, ts[0], ts[1], tq, tk, false}
	return G.ApplyOp(op, table) // [1, H, Tq, Tk]
}

// gatherOp is Embed's forward (table, ids) -> [N, D], or with grad set its
// backward (dy [N, D], ids) -> [V, D].
type gatherOp struct {
	opBase
	v, d int
	grad bool
}

func (o *gatherOp) Type() hm.Type { return hm.NewFnType(tt(2), intT(1), tt(2)) }
func (o *gatherOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if o.grad {
		return tensor.Shape{o.v, o.d}, nil
	}
	s := in[1].(tensor.Shape)
	return tensor.Shape{s[0], o.d}, nil
}
func (o *gatherOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *gatherOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, _, err := f32(in[0], o.desc)
	if err != nil {
		return nil, err
	}
	ids, err := ints(in[1], o.desc+" ids")
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		if id < 0 || id >= o.v {
			return nil, fmt.Errorf("embed: id %d at position %d outside vocabulary [0,%d)", id, i, o.v)
		}
	}
	d := o.d
	if !o.grad {
		res := o.out(pre, len(ids), d) // [N, D]
		y := res.Float32s()
		for i, id := range ids {
			copy(y[i*d:(i+1)*d], x[id*d:(id+1)*d])
		}
		return res, nil
	}
	res := o.out(pre, o.v, d) // [V, D]
	y := res.Float32s()
	clear(y)
	for i, id := range ids {
		dst, src := y[id*d:(id+1)*d], x[i*d:(i+1)*d]
		for j, v := range src {
			dst[j] += v
		}
	}
	return res, nil
}

func (o *gatherOp) DiffWRT(n int) []bool { return []bool{true, false} }
func (o *gatherOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.grad {
		return nil, fmt.Errorf("embed: second derivative not implemented")
	}
	g := &gatherOp{base("Grad"+o.desc, 2), o.v, o.d, true}
	dt, err := G.ApplyOp(g, grad, in[1]) // [V, D]
	if err != nil {
		return nil, err
	}
	return G.Nodes{dt, nil}, nil
}

// relBiasOp is RelativeBias's forward table [NB, H] -> [1, H, Tq, Tk], or
// with grad set its backward [1, H, Tq, Tk] -> [NB, H].
type relBiasOp struct {
	opBase
	buckets       []int
	nb, h, tq, tk int
	grad          bool
}

func (o *relBiasOp) Type() hm.Type {
	if o.grad {
		return hm.NewFnType(tt(4), tt(2))
	}
	return hm.NewFnType(tt(2), tt(4))
}
func (o *relBiasOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if o.grad {
		return tensor.Shape{o.nb, o.h}, nil
	}
	return tensor.Shape{1, o.h, o.tq, o.tk}, nil
}
func (o *relBiasOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *relBiasOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, _, err := f32(in[0], o.desc)
	if err != nil {
		return nil, err
	}
	n := o.tq * o.tk
	if !o.grad {
		res := o.out(pre, 1, o.h, o.tq, o.tk) // [1, H, Tq, Tk]
		y := res.Float32s()
		for h := 0; h < o.h; h++ {
			for p, b := range o.buckets {
				y[h*n+p] = x[b*o.h+h]
			}
		}
		return res, nil
	}
	res := o.out(pre, o.nb, o.h) // [NB, H]
	y := res.Float32s()
	clear(y)
	for h := 0; h < o.h; h++ {
		for p, b := range o.buckets {
			y[b*o.h+h] += x[h*n+p]
		}
	}
	return res, nil
}

func (o *relBiasOp) DiffWRT(n int) []bool { return []bool{true} }
func (o *relBiasOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.grad {
		return nil, fmt.Errorf("relative bias: second derivative not implemented")
	}
	g := *o
	g.grad = true
	g.desc = "Grad" + o.desc
	g.buf = nil
	dt, err := G.ApplyOp(&g, grad) // [NB, H]
	if err != nil {
		return nil, err
	}
	return G.Nodes{dt}, nil
}
