package ops

import (
	"fmt"
	"hash"
	"hash/fnv"
	"runtime"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// opBase carries the Op methods every compbench op shares. desc names the op
// and all its parameters: Gorgonia merges nodes whose ops hash alike and whose
// inputs are the same, so two ops may share a desc only if they compute the
// same thing.
type opBase struct {
	desc  string
	arity int
	// buf is the output of the last run, reused by the next one: the tape
	// machine drops its registers on Reset, so without it every step would
	// allocate (and the GC clear) every activation again. A value from one
	// run is therefore only valid until the next run of the same graph.
	buf *tensor.Dense
}

func base(desc string, arity int) opBase { return opBase{desc: desc, arity: arity} }

func (o opBase) Arity() int            { return o.arity }
func (o opBase) ReturnsPtr() bool      { return false }
func (o opBase) CallsExtern() bool     { return false }
func (o opBase) OverwritesInput() int  { return -1 }
func (o opBase) String() string        { return o.desc }
func (o opBase) WriteHash(h hash.Hash) { fmt.Fprint(h, o.desc) }
func (o opBase) Hashcode() uint32      { h := fnv.New32a(); o.WriteHash(h); return h.Sum32() }
func (o opBase) checkArity(n int) error {
	if n != o.arity {
		return fmt.Errorf("%s: got %d inputs, want %d", o.desc, n, o.arity)
	}
	return nil
}

// tt is the Gorgonia type of a float tensor with dims dimensions (0: scalar).
func tt(dims int) hm.Type {
	if dims == 0 {
		return hm.TypeVariable('a')
	}
	return G.TensorType{Dims: dims, Of: hm.TypeVariable('a')}
}

// intT is the type of an integer tensor input (targets, ids).
func intT(dims int) hm.Type {
	return G.TensorType{Dims: dims, Of: tensor.Int}
}

// f32 returns the backing slice of a float32 tensor value.
func f32(v G.Value, what string) ([]float32, tensor.Shape, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, nil, fmt.Errorf("%s: want a dense tensor, got %T", what, v)
	}
	if d.Dtype() != tensor.Float32 {
		return nil, nil, fmt.Errorf("%s: want float32, got %v", what, d.Dtype())
	}
	if !d.IsNativelyAccessible() || d.RequiresIterator() {
		return nil, nil, fmt.Errorf("%s: tensor is not contiguous", what)
	}
	return d.Float32s(), d.Shape(), nil
}

// scalar32 reads a float32 scalar value (a gradient of a scalar output).
func scalar32(v G.Value) (float32, error) {
	switch s := v.(type) {
	case *G.F32:
		return float32(*s), nil
	case *tensor.Dense:
		if s.Dtype() == tensor.Float32 && s.Size() == 1 {
			return s.Float32s()[0], nil
		}
	}
	return 0, fmt.Errorf("want a float32 scalar, got %T", v)
}

// ints reads an integer tensor value (tensor.Int) as a slice.
func ints(v G.Value, what string) ([]int, error) {
	d, ok := v.(*tensor.Dense)
	if !ok || d.Dtype() != tensor.Int {
		return nil, fmt.Errorf("%s: want an int tensor, got %T %v", what, v, v.Dtype())
	}
	return d.Ints(), nil
}

// out returns a float32 tensor of the given shape for the op's result:
// prealloc when the tape machine offers one that fits, else the op's buffer
// from its last run, else a new tensor. Callers overwrite every element.
func (o *opBase) out(prealloc G.Value, shape ...int) *tensor.Dense {
	fits := func(d *tensor.Dense) bool {
		return d != nil && d.Dtype() == tensor.Float32 && d.Shape().Eq(tensor.Shape(shape)) && d.IsNativelyAccessible() && !d.RequiresIterator()
	}
	if d, ok := prealloc.(*tensor.Dense); ok && fits(d) {
		return d
	}
	if !fits(o.buf) {
		o.buf = tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float32))
	}
	return o.buf
}

// parallelMin is the work (elements touched) below which a loop stays on one
// goroutine: spawning costs more than it saves on small tensors.
const parallelMin = 1 << 15

// parallel runs f over [0,n) split into contiguous chunks, one per CPU, when
// the total work pays for it. Chunks are contiguous rows so each goroutine
// streams its own part of memory.
func parallel(n, work int, f func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if p > n {
		p = n
	}
	if p <= 1 || work < parallelMin {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + p - 1) / p
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
