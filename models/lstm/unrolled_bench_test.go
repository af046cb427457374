package lstm_test

import (
	"fmt"
	"testing"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/blas"
	"compbench/data"
	"compbench/models"
	"compbench/ops"
)

// BenchmarkLSTMUnrolledGraph measures the alternative to the hand-written
// LSTM program that docs/engine.md weighs: the same recurrence as a
// Gorgonia graph unrolled over the batch's lengths, differentiated by
// Gorgonia and run by its TapeMachine (the executor that runs Gorgonia's
// sigmoid, tanh, slice and concat; the engine has no kernels for them). The
// graph is a lower bound on lstm-attention's: BenchmarkLSTMTrainStep's
// shape, bidirectional 2-layer encoder and 2-layer decoder with the input
// projections batched over all time steps, output layer and cross-entropy,
// but no attention, no padding masks and no Adam. It reports the time to
// build and differentiate the graph for one batch shape (paid again for
// every new (S, T)) and ms/step for forward and backward.
func BenchmarkLSTMUnrolledGraph(b *testing.B) {
	blas.Use()
	B, S, T, H, L := benchB, benchS, benchT, benchH, benchLayers
	rng := data.NewRand(3)
	start := time.Now()
	g := G.NewGraph()
	var params G.Nodes
	param := func(name string, shape ...int) *G.Node {
		size := 1
		for _, d := range shape {
			size *= d
		}
		v := make([]float32, size)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 0.05)
		}
		n := G.NewTensor(g, tensor.Float32, len(shape), G.WithShape(shape...), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))))
		params = append(params, n)
		return n
	}
	ids := func(name string, n, vocab int) *G.Node {
		v := make([]int, n)
		for i := range v {
			v[i] = models.UnkID + 1 + rng.IntN(vocab-models.UnkID-1)
		}
		return G.NewTensor(g, tensor.Int, 1, G.WithShape(n), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(n), tensor.WithBacking(v))))
	}
	must := func(n *G.Node, err error) *G.Node {
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	// run is one LSTM layer over x [steps*B, in] (time-major), forward or
	// backward in time, from a zero state; it returns h per step [B, H].
	run := func(name string, x *G.Node, steps int, reverse bool) []*G.Node {
		in := x.Shape()[1]
		xw := must(ops.Linear(x, param(name+".wx", in, 4*H), param(name+".b", 4*H))) // [steps*B, 4H]
		wh := param(name+".wh", H, 4*H)
		out := make([]*G.Node, steps)
		var h, c *G.Node
		for k := 0; k < steps; k++ {
			t := k
			if reverse {
				t = steps - 1 - k
			}
			gates := must(G.Slice(xw, G.S(t*B, (t+1)*B))) // [B, 4H]
			if h != nil {
				gates = must(G.Add(gates, must(G.Mul(h, wh)))) // [B, 4H]
			}
			gate := func(j int) *G.Node { return must(G.Slice(gates, nil, G.S(j*H, (j+1)*H))) } // [B, H]
			i, f := must(G.Sigmoid(gate(0))), must(G.Sigmoid(gate(1)))
			u, o := must(G.Tanh(gate(2))), must(G.Sigmoid(gate(3)))
			if c == nil {
				c = must(G.HadamardProd(i, u)) // [B, H]
			} else {
				c = must(G.Add(must(G.HadamardProd(f, c)), must(G.HadamardProd(i, u)))) // [B, H]
			}
			h = must(G.HadamardProd(o, must(G.Tanh(c)))) // [B, H]
			out[t] = h
		}
		return out
	}
	x := must(ops.Embed(param("src_emb", benchVs, H), ids("src", S*B, benchVs))) // [S*B, H]
	var rows []*G.Node
	for l := 0; l < L; l++ {
		fw, bw := run(fmt.Sprintf("enc%d.f", l), x, S, false), run(fmt.Sprintf("enc%d.b", l), x, S, true)
		rows = make([]*G.Node, S)
		for t := range rows {
			rows[t] = must(G.Concat(1, fw[t], bw[t])) // [B, 2H]
		}
		x = must(G.Concat(0, rows...)) // [S*B, 2H]
	}
	// In place of attention, one context per row for every step: the sum
	// of the memory over positions (cheaper than attention, so the bound
	// holds).
	ctx := rows[0]
	for _, r := range rows[1:] {
		ctx = must(G.Add(ctx, r)) // [B, 2H]
	}
	y := must(ops.Embed(param("tgt_emb", benchVt, H), ids("dec_in", T*B, benchVt))) // [T*B, H]
	var hs []*G.Node
	for l := 0; l < L; l++ {
		hs = run(fmt.Sprintf("dec%d", l), y, T, false)
		y = must(G.Concat(0, hs...)) // [T*B, H]
	}
	for t := range hs {
		hs[t] = must(G.Concat(1, hs[t], ctx)) // [B, 3H]
	}
	y = must(G.Concat(0, hs...))                                                             // [T*B, 3H]
	logits := must(ops.Linear(y, param("out.w", 3*H, benchVt), param("out.b", benchVt)))     // [T*B, V]
	loss := must(ops.SoftmaxCrossEntropy(logits, ids("tgt", T*B, benchVt), models.PadID, 0)) // scalar
	if _, err := G.Grad(loss, params...); err != nil {
		b.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	build := time.Since(start)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
	b.ReportMetric(float64(build.Milliseconds()), "build-ms")
	b.ReportMetric(float64(len(g.AllNodes())), "nodes")
}
