package ops

import (
	"fmt"

	"compbench/kernels"

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
	return G.ApplyOp(&gatherOp{opBase: base(fmt.Sprintf("Embed%v", ts), 2), v: ts[0], d: ts[1]}, table, ids) // [N, D]
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
	b32 := make([]int32, len(buckets))
	for i, b := range buckets {
		b32[i] = int32(b)
	}
	op := &relBiasOp{base(fmt.Sprintf("RelBias{%v,%d,%d,%v}", ts, tq, tk, buckets), 1), buckets, b32, ts[0], ts[1], tq, tk, false}
	return G.ApplyOp(op, table) // [1, H, Tq, Tk]
}

// gatherOp is Embed's forward (table, ids) -> [N, D], or with grad set its
// backward (dy [N, D], ids) -> [V, D].
type gatherOp struct {
	opBase
	v, d int
	grad bool
	ids  []int32 // the ids of the last run, as the kernels take them
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
	if cap(o.ids) < len(ids) {
		o.ids = make([]int32, len(ids))
	}
	o.ids = o.ids[:len(ids)]
	for i, id := range ids {
		if id < 0 || id >= o.v {
			return nil, fmt.Errorf("embed: id %d at position %d outside vocabulary [0,%d)", id, i, o.v)
		}
		o.ids[i] = int32(id)
	}
	if !o.grad {
		res := o.out(pre, len(ids), o.d) // [N, D]
		kernels.EmbedRef(len(ids), o.d, x, o.ids, res.Float32s())
		return res, nil
	}
	res := o.out(pre, o.v, o.d) // [V, D]
	kernels.EmbedGradRef(o.v, o.d, len(ids), x, o.ids, res.Float32s())
	return res, nil
}

func (o *gatherOp) DiffWRT(n int) []bool { return []bool{true, false} }
func (o *gatherOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.grad {
		return nil, fmt.Errorf("embed: second derivative not implemented")
	}
	g := &gatherOp{opBase: base("Grad"+o.desc, 2), v: o.v, d: o.d, grad: true}
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
	b32           []int32 // buckets as the kernels take them
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
	if !o.grad {
		res := o.out(pre, 1, o.h, o.tq, o.tk) // [1, H, Tq, Tk]
		kernels.RelBiasRef(o.nb, o.h, o.tq, o.tk, x, o.b32, res.Float32s())
		return res, nil
	}
	res := o.out(pre, o.nb, o.h) // [NB, H]
	kernels.RelBiasGradRef(o.nb, o.h, o.tq, o.tk, x, o.b32, res.Float32s())
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
