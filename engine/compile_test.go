package engine

import (
	"fmt"
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/data"
	"compbench/ops"
)

// smallGraph builds a training graph touching the Gorgonia built-ins and
// compbench ops of a Transformer outside attention: embedding, matrix product
// with broadcast bias, ReLU by Rectify, dropout, LayerNorm, ops.Linear,
// GELU, ops.Add, ops.AddBias, ops.ReLU and the fused cross-entropy.
func smallGraph(t *testing.T, n, d, v int) (loss *G.Node, grads G.Nodes, inputs []*G.Node, vm G.VM, src *ops.DropoutSource) {
	t.Helper()
	g := G.NewGraph()
	rng := data.SubRand(3, "small")
	param := func(name string, shape ...int) *G.Node {
		w := make([]float32, tensor.Shape(shape).TotalSize())
		for i := range w {
			w[i] = float32(rng.NormFloat64() * 0.5)
		}
		return G.NewTensor(g, tensor.Float32, len(shape), G.WithShape(shape...), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(w))))
	}
	ids := G.NewTensor(g, tensor.Int, 1, G.WithShape(n), G.WithName("ids"))
	tgt := G.NewTensor(g, tensor.Int, 1, G.WithShape(n), G.WithName("tgt"))
	idv, tv := make([]int, n), make([]int, n)
	for i := range idv {
		idv[i], tv[i] = rng.IntN(v), rng.IntN(v)
	}
	tv[1] = 0 // an ignored row
	must := func(x *G.Node, err error) *G.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	table, w, b := param("table", v, d), param("w", d, d), param("b", d)
	gain, bias, wo, bo := param("gain", d), param("bias", d), param("wo", d, v), param("bo", v)
	src = ops.NewDropoutSource(11)
	e := must(ops.Embed(table, ids))                                // [N, D]
	h := must(G.BroadcastAdd(must(G.Mul(e, w)), b, nil, []byte{0})) // [N, D]
	h = must(ops.Dropout(must(G.Rectify(h)), 0.25, src))            // [N, D]
	h = must(ops.Add(must(ops.LayerNorm(h, gain, bias, 1e-5)), e))  // [N, D]
	h = must(ops.GELU(h))                                           // [N, D]
	h = must(G.Add(h, e))                                           // [N, D]
	logits := must(ops.Linear(h, wo, bo))                           // [N, V]
	loss = must(ops.SoftmaxCrossEntropy(logits, tgt, 0, 0.1))       // scalar
	ps := G.Nodes{table, w, b, gain, bias, wo, bo}
	grads, err := G.Grad(loss, ps...)
	if err != nil {
		t.Fatal(err)
	}
	if err := G.Let(ids, tensor.New(tensor.WithShape(n), tensor.WithBacking(idv))); err != nil {
		t.Fatal(err)
	}
	if err := G.Let(tgt, tensor.New(tensor.WithShape(n), tensor.WithBacking(tv))); err != nil {
		t.Fatal(err)
	}
	return loss, grads, []*G.Node{ids, tgt}, G.NewTapeMachine(g), src
}

// compare checks got against want: bit for bit when tol is 0, else within
// tol relative to the largest magnitude of want.
func compare(t *testing.T, what string, want, got []float32, tol float64) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var scale float64
	for _, v := range want {
		scale = max(scale, math.Abs(float64(v)))
	}
	for i := range want {
		if tol == 0 {
			if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
				t.Fatalf("%s[%d]: engine %v, Gorgonia %v (bit-identical expected)", what, i, got[i], want[i])
			}
			continue
		}
		if d := math.Abs(float64(want[i] - got[i])); d > tol*max(scale, 1e-30) || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s[%d]: engine %v, Gorgonia %v (tolerance %g of %g)", what, i, got[i], want[i], tol, scale)
		}
	}
}

func TestSmallGraphMatchesTapeMachine(t *testing.T) {
	for _, tc := range []struct {
		name string
		be   *CPU
		tol  float64
	}{{"blas", &CPU{BLAS: true}, 0}, {"ref", &CPU{}, 1e-5}} {
		t.Run(tc.name, func(t *testing.T) {
			loss, grads, inputs, vm, src := smallGraph(t, 12, 8, 10)
			defer vm.Close()
			p, err := Compile(append(G.Nodes{loss}, grads...), Options{Inputs: inputs})
			if err != nil {
				t.Fatal(err)
			}
			m, err := NewMachine(p, tc.be)
			if err != nil {
				t.Fatal(err)
			}
			// Two steps draw different dropout masks; the engine reads
			// the source's step at run time, as the ops do.
			var losses []float32
			for _, step := range []uint64{3, 4} {
				src.SetStep(step)
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				if err := m.Run(); err != nil {
					t.Fatal(err)
				}
				got, _ := m.Scalar(loss)
				want := loss.Value().Data().(float32)
				compare(t, "loss", []float32{want}, []float32{got}, tc.tol)
				losses = append(losses, got)
				for _, gn := range grads {
					want := gn.Value().Data().([]float32)
					out := make([]float32, len(want))
					if err := m.Read(gn, out); err != nil {
						t.Fatal(err)
					}
					compare(t, gn.Name(), want, out, tc.tol)
				}
				vm.Reset()
			}
			if losses[0] == losses[1] {
				t.Errorf("steps 3 and 4 give the same loss %v: dropout masks did not change", losses[0])
			}
		})
	}
}

func TestCompileRejectsUnknownOp(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float32, G.WithShape(2, 3), G.WithName("x"))
	y, err := G.Exp(x)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(G.Nodes{y}, Options{Inputs: []*G.Node{x}})
	if err == nil || !strings.Contains(err.Error(), "no engine kernel") || !strings.Contains(err.Error(), "exp") {
		t.Fatalf("compiling exp: err %v, want a no-kernel error naming the op", err)
	}
}

// TestSetRejectsBadIDs: ids outside the embedding table or targets outside
// the vocabulary are an error at upload, not an out-of-range read.
func TestSetRejectsBadIDs(t *testing.T) {
	loss, grads, inputs, vm, _ := smallGraph(t, 6, 4, 5)
	vm.Close()
	p, err := Compile(append(G.Nodes{loss}, grads...), Options{Inputs: inputs})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMachine(p, &CPU{})
	if err != nil {
		t.Fatal(err)
	}
	ids, tgt := inputs[0], inputs[1]
	for _, tc := range []struct {
		name string
		n    *G.Node
		v    []int
		ok   bool
	}{
		{"ids in range", ids, []int{0, 4, 1, 2, 3, 0}, true},
		{"id past table", ids, []int{0, 5, 1, 2, 3, 0}, false},
		{"negative id", ids, []int{0, -1, 1, 2, 3, 0}, false},
		{"targets with ignored", tgt, []int{0, 0, 4, 2, 3, 1}, true},
		{"target past vocabulary", tgt, []int{0, 0, 9, 2, 3, 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := m.SetInts(tc.n, tc.v)
			if (err == nil) != tc.ok {
				t.Fatalf("SetInts(%v): err %v, want ok %v", tc.v, err, tc.ok)
			}
		})
	}
}

// TestRunSteps: running a program in two parts is running it whole, bit
// for bit; a range outside the program is an error.
func TestRunSteps(t *testing.T) {
	loss, grads, inputs, vm, src := smallGraph(t, 12, 8, 10)
	defer vm.Close()
	p, err := Compile(append(G.Nodes{loss}, grads...), Options{Inputs: inputs})
	if err != nil {
		t.Fatal(err)
	}
	src.SetStep(3)
	read := func(m *Machine) []float32 {
		l, _ := m.Scalar(loss)
		out := []float32{l}
		for _, gn := range grads {
			g := make([]float32, gn.Shape().TotalSize())
			if err := m.Read(gn, g); err != nil {
				t.Fatal(err)
			}
			out = append(out, g...)
		}
		return out
	}
	whole, err := NewMachine(p, &CPU{BLAS: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := whole.Run(); err != nil {
		t.Fatal(err)
	}
	want := read(whole)
	n := len(p.Steps)
	for _, k := range []int{0, 1, n / 2, n} {
		parts, err := NewMachine(p, &CPU{BLAS: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := parts.RunSteps(0, k); err != nil {
			t.Fatal(err)
		}
		if err := parts.RunSteps(k, n); err != nil {
			t.Fatal(err)
		}
		compare(t, fmt.Sprintf("split at %d of %d", k, n), want, read(parts), 0)
	}
	for _, r := range [][2]int{{-1, 2}, {0, n + 1}, {3, 2}} {
		if err := whole.RunSteps(r[0], r[1]); err == nil {
			t.Errorf("RunSteps(%d, %d) of %d steps: no error", r[0], r[1], n)
		}
	}
}
