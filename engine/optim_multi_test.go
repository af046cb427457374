package engine

import (
	"slices"
	"testing"

	"compbench/kernels"
)

// fakeMulti records the lists made and freed; its handles are serial
// numbers.
type fakeMulti struct {
	made  int
	freed []Tensors
}

func (f *fakeMulti) NewTensors(bufs []Buf, sizes []int) (Tensors, error) {
	f.made++
	return f.made, nil
}
func (f *fakeMulti) FreeTensors(t Tensors)                                  { f.freed = append(f.freed, t) }
func (f *fakeMulti) SumSquaresMulti(t Tensors, acc Buf) error               { return nil }
func (f *fakeMulti) ClipByNormMulti(t Tensors, sq Buf, limit float32) error { return nil }
func (f *fakeMulti) AdamMulti(p kernels.AdamParams, lr float32, step int, param, grad, m, v Tensors) error {
	return nil
}

// TestGradTensors: a gradient list is reused while the same buffers come
// back, in any order of programs, rebuilt for other buffers (even in a
// slice at the same address), and the least recently used list is freed
// beyond maxGradLists.
func TestGradTensors(t *testing.T) {
	f := &fakeMulti{}
	l := &multiLists{mt: f}
	sizes := []int{3, 4}
	get := func(bufs []Buf) Tensors {
		t.Helper()
		g, err := l.gradTensors(bufs, sizes)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, b := []Buf{1, 2}, []Buf{3, 4}
	ta, tb := get(a), get(b)
	if ta == tb || f.made != 2 {
		t.Fatalf("two programs: lists %v %v, %d made", ta, tb, f.made)
	}
	if get(a) != ta || get(b) != tb || get(slices.Clone(a)) != ta || f.made != 2 {
		t.Fatalf("the same buffers made a new list (%d made)", f.made)
	}
	a[1] = 5 // the same slice, other buffers: a program freed and replaced
	if tc := get(a); tc == ta || f.made != 3 {
		t.Fatalf("changed buffers reused list %v (%d made)", tc, f.made)
	}
	for i := 0; i < maxGradLists; i++ {
		get([]Buf{100 + i, 0})
	}
	if len(l.grads) != maxGradLists || len(f.freed) != f.made-maxGradLists {
		t.Fatalf("%d lists kept, %d freed", len(l.grads), len(f.freed))
	}
	if f.freed[0] != tb {
		t.Errorf("freed %v first, want the least recently used %v", f.freed[0], tb)
	}
	l.free()
	if len(f.freed) != f.made {
		t.Errorf("after free: %d of %d lists freed", len(f.freed), f.made)
	}
}
