package engine

import (
	"slices"

	"compbench/kernels"
)

// MultiTensor is a backend that runs the optimizer over a list of tensors
// in one launch per operation (the GPU). A training step of the paper-size
// Transformer updates about 140 weight tensors; one launch per tensor for
// each of the norm, the clip and Adam made the optimizer about 40% of the
// step's launches. Adam uses these methods when its backend has them; their
// results are the per-tensor calls' (the sum of squares up to the order of
// its float64 additions). Its buffers must be comparable with ==: Adam
// recognises a gradient list it has seen by its buffers.
type MultiTensor interface {
	// NewTensors lists bufs of sizes elements; FreeTensors frees the list.
	NewTensors(bufs []Buf, sizes []int) (Tensors, error)
	FreeTensors(t Tensors)
	SumSquaresMulti(t Tensors, acc Buf) error
	ClipByNormMulti(t Tensors, sq Buf, limit float32) error
	AdamMulti(p kernels.AdamParams, lr float32, step int, param, grad, m, v Tensors) error
}

// Tensors is a backend's handle to a tensor list.
type Tensors any

// maxGradLists bounds the gradient lists Adam keeps: one per compiled
// program (batch shape) in use, most recently used first. The models keep
// at most 8 compiled graphs (MaxGraphs), so training never rebuilds a list
// (two small allocations and a synchronous upload) while its program lives.
const maxGradLists = 16

// multiLists are Adam's tensor lists on a MultiTensor backend.
type multiLists struct {
	mt           MultiTensor
	params, m, v Tensors
	paramBufs    []Buf // what params lists
	grads        []gradList
}

type gradList struct {
	bufs []Buf
	t    Tensors
}

// multi returns the lists, or nil when the backend runs tensors one by one.
func (a *Adam) multi() *multiLists {
	if a.lists == nil {
		mt, ok := a.B.(MultiTensor)
		if !ok {
			return nil
		}
		a.lists = &multiLists{mt: mt}
	}
	return a.lists
}

// gradTensors returns the list of grads, kept for as long as the same
// buffers come back (one program's gradients): a list is matched by its
// buffers, never by the slice's address, which a freed program's
// successor may reuse.
func (l *multiLists) gradTensors(grads []Buf, sizes []int) (Tensors, error) {
	for i, g := range l.grads {
		if slices.Equal(g.bufs, grads) {
			copy(l.grads[1:i+1], l.grads[:i])
			l.grads[0] = g
			return g.t, nil
		}
	}
	t, err := l.mt.NewTensors(grads, sizes)
	if err != nil {
		return nil, err
	}
	l.grads = slices.Insert(l.grads, 0, gradList{bufs: slices.Clone(grads), t: t})
	if len(l.grads) > maxGradLists {
		l.mt.FreeTensors(l.grads[maxGradLists].t)
		l.grads = l.grads[:maxGradLists]
	}
	return t, nil
}

// paramTensors returns the lists of params and the moments.
func (l *multiLists) paramTensors(a *Adam, params []Buf) (p, m, v Tensors, err error) {
	if l.params == nil || !slices.Equal(l.paramBufs, params) {
		l.freeParams()
		if l.params, err = l.mt.NewTensors(params, a.sizes); err != nil {
			return nil, nil, nil, err
		}
		l.paramBufs = slices.Clone(params)
		if l.m, err = l.mt.NewTensors(a.M, a.sizes); err != nil {
			return nil, nil, nil, err
		}
		if l.v, err = l.mt.NewTensors(a.V, a.sizes); err != nil {
			return nil, nil, nil, err
		}
	}
	return l.params, l.m, l.v, nil
}

func (l *multiLists) freeParams() {
	for _, t := range []*Tensors{&l.params, &l.m, &l.v} {
		if *t != nil {
			l.mt.FreeTensors(*t)
			*t = nil
		}
	}
}

func (l *multiLists) free() {
	l.freeParams()
	for _, g := range l.grads {
		l.mt.FreeTensors(g.t)
	}
	l.grads = nil
}
