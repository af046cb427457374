package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// Params are a model's weights: float32 tensors shared by every compiled
// graph (each graph binds its parameter nodes to these same tensors, so an
// update in place is seen by all of them), with one gradient buffer each.
type Params struct {
	// Names are unique, in creation order (the checkpoint order).
	Names []string
	// Values hold the weights.
	Values []*tensor.Dense
	// Grads hold the gradients of the last backward pass, same shapes; nil
	// for a weight taken with Adopt.
	Grads [][]float32

	index map[string]int
}

// Add creates a parameter filled by init.
func (p *Params) Add(name string, shape tensor.Shape, init func(w []float32)) int {
	if p.index == nil {
		p.index = map[string]int{}
	}
	if _, dup := p.index[name]; dup {
		panic("models: duplicate parameter " + name) // programmer bug
	}
	w := make([]float32, shape.TotalSize())
	init(w)
	p.index[name] = len(p.Names)
	p.Names = append(p.Names, name)
	p.Values = append(p.Values, tensor.New(tensor.WithShape(shape...), tensor.WithBacking(w)))
	p.Grads = append(p.Grads, make([]float32, len(w)))
	return len(p.Names) - 1
}

// Adopt makes w, unchanged and uncopied, the weight name of shape, with no
// host gradient buffer (Grads[i] stays nil). It is for models whose
// gradients live only on the backend (GPT-2's engine trainer) and whose
// weights are large enough that a second host copy would matter: GPT-2
// medium's 1.4 GB.
func (p *Params) Adopt(name string, shape tensor.Shape, w []float32) int {
	if p.index == nil {
		p.index = map[string]int{}
	}
	if _, dup := p.index[name]; dup {
		panic("models: duplicate parameter " + name) // programmer bug
	}
	if len(w) != shape.TotalSize() {
		panic(fmt.Sprintf("models: parameter %s: %d values for shape %v", name, len(w), shape)) // programmer bug
	}
	p.index[name] = len(p.Names)
	p.Names = append(p.Names, name)
	p.Values = append(p.Values, tensor.New(tensor.WithShape(shape...), tensor.WithBacking(w)))
	p.Grads = append(p.Grads, nil)
	return len(p.Names) - 1
}

// Data is the backing slice of parameter i.
func (p *Params) Data(i int) []float32 { return p.Values[i].Data().([]float32) }

// AllData is every parameter's backing slice, in order (uploading to a
// backend and downloading from it).
func (p *Params) AllData() [][]float32 {
	vals := make([][]float32, len(p.Names))
	for i := range vals {
		vals[i] = p.Data(i)
	}
	return vals
}

// Index finds a parameter by name.
func (p *Params) Index(name string) (int, bool) {
	i, ok := p.index[name]
	return i, ok
}

// Count is the number of scalar weights.
func (p *Params) Count() int {
	n := 0
	for i := range p.Values {
		n += len(p.Data(i))
	}
	return n
}

// ZeroGrads clears every gradient buffer.
func (p *Params) ZeroGrads() {
	for _, g := range p.Grads {
		clear(g)
	}
}

// Load copies named tensors into the parameters; names and shapes must
// match exactly, so a checkpoint of another model is refused.
func (p *Params) Load(names []string, shapes [][]int, vals [][]float32) error {
	if len(names) != len(p.Names) {
		return fmt.Errorf("checkpoint has %d tensors, the model %d", len(names), len(p.Names))
	}
	for k, n := range names {
		i, ok := p.index[n]
		if !ok {
			return fmt.Errorf("checkpoint tensor %q is not a parameter of this model", n)
		}
		want := p.Values[i].Shape()
		if !SameShape(want, shapes[k]) {
			return fmt.Errorf("checkpoint tensor %q has shape %v, the model %v", n, shapes[k], want)
		}
		copy(p.Data(i), vals[k])
	}
	return nil
}

// SameShape reports whether the tensor shape a equals the dimensions b.
func SameShape(a tensor.Shape, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Xavier fills a [fanIn, fanOut] matrix uniformly in +-sqrt(6/(in+out))
// (Glorot & Bengio 2010), from compbench's seeded generator.
func Xavier(rng *rand.Rand, fanIn, fanOut int) func([]float32) {
	lim := math.Sqrt(6 / float64(fanIn+fanOut))
	return func(w []float32) {
		for i := range w {
			w[i] = float32((2*rng.Float64() - 1) * lim)
		}
	}
}

// Normal fills with N(0, std^2).
func Normal(rng *rand.Rand, std float64) func([]float32) {
	return func(w []float32) {
		for i := range w {
			w[i] = float32(rng.NormFloat64() * std)
		}
	}
}

// Constant fills with c.
func Constant(c float32) func([]float32) {
	return func(w []float32) {
		for i := range w {
			w[i] = c
		}
	}
}
