package kernels

import (
	"fmt"
	"math"
	"testing"

	"compbench/data"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// randF returns n uniform values in [-scale, scale) from seed.
func randF(seed uint64, n int, scale float32) []float32 {
	r := data.NewRand(seed)
	x := make([]float32, n)
	for i := range x {
		x[i] = (2*r.Float32() - 1) * scale
	}
	return x
}

func dense(x []float32, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), x...)))
}

// graphResult holds an op's forward value and the gradients of the inputs
// listed in wrt.
type graphResult struct {
	y     []float32
	grads [][]float32
}

// runOp builds f on the inputs, and, when wrt is non-empty, differentiates
// cost = Σ y ⊙ dy (so the op's backward receives exactly dy; a scalar y is
// the cost itself and receives 1).
func runOp(t *testing.T, inputs []*tensor.Dense, wrt []int, dy []float32, f func(in []*G.Node) (*G.Node, error)) graphResult {
	t.Helper()
	g := G.NewGraph()
	var nodes []*G.Node
	for i, v := range inputs {
		// Named: gorgonia merges unnamed inputs of the same type and shape.
		nodes = append(nodes, G.NewTensor(g, v.Dtype(), v.Dims(), G.WithShape(v.Shape()...), G.WithValue(v), G.WithName(fmt.Sprint("in", i))))
	}
	y, err := f(nodes)
	if err != nil {
		t.Fatal(err)
	}
	var gs G.Nodes
	if len(wrt) > 0 {
		cost := y
		if !y.IsScalar() {
			r := G.NewTensor(g, G.Float32, y.Dims(), G.WithShape(y.Shape()...), G.WithValue(dense(dy, y.Shape()...)), G.WithName("dy"))
			cost = G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
		}
		var ws G.Nodes
		for _, i := range wrt {
			ws = append(ws, nodes[i])
		}
		if gs, err = G.Grad(cost, ws...); err != nil {
			t.Fatal(err)
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	res := graphResult{y: f32s(y.Value())}
	for _, n := range gs {
		res.grads = append(res.grads, f32s(n.Value()))
	}
	return res
}

func f32s(v G.Value) []float32 {
	switch x := v.(type) {
	case *tensor.Dense:
		return append([]float32(nil), x.Float32s()...)
	case *G.F32:
		return []float32{float32(*x)}
	}
	panic(fmt.Sprintf("unexpected value %T", v))
}

// same fails unless got and want are bit-identical (NaNs compare by bits).
func same(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d] = %g, want %g (bit-identical)", what, i, got[i], want[i])
		}
	}
}
