package attention

import (
	"testing"

	"compbench/blas"
	"compbench/data"
	"compbench/ops"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// blockGraph builds one pre-LayerNorm Transformer block (self-attention with
// a causal mask, then a ReLU MLP, each with a residual and dropout 0.1) and
// the gradient of sum(y * w) with respect to every parameter.
func blockGraph(tb testing.TB, batch, seq, d, heads, ffn int) (*G.ExprGraph, G.Nodes, []*tensor.Dense) {
	r := data.NewRand(1)
	g := G.NewGraph()
	cfg := Config{DModel: d, Heads: heads, Dropout: 0.1, Bidirectional: true, Buckets: 32, MaxDistance: 128}
	att, err := New(cfg, r)
	if err != nil {
		tb.Fatal(err)
	}
	drop := ops.NewDropoutSource(1)
	param := func(name string, t *tensor.Dense) *G.Node {
		return G.NewTensor(g, tensor.Float32, t.Dims(), G.WithShape(t.Shape()...), G.WithValue(t), G.WithName(name))
	}
	ones := func(n int) *tensor.Dense {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return tensor.New(tensor.WithShape(n), tensor.WithBacking(v)) // [n]
	}
	zeros := func(n int) *tensor.Dense { return tensor.New(tensor.WithShape(n), tensor.Of(tensor.Float32)) } // [n]
	x := param("x", Xavier(r, batch*seq, d))                                                                 // [B*T, D]
	g1, b1 := param("ln1.g", ones(d)), param("ln1.b", zeros(d))
	g2, b2 := param("ln2.g", ones(d)), param("ln2.b", zeros(d))
	w1, c1 := param("ff1.w", Xavier(r, d, ffn)), param("ff1.b", zeros(ffn))
	w2, c2 := param("ff2.w", Xavier(r, ffn, d)), param("ff2.b", zeros(d))
	sep, pad := make([]bool, seq), make([]bool, seq)
	causal, err := Allowed(Causal, sep, pad)
	if err != nil {
		tb.Fatal(err)
	}
	maskT, err := Additive([][][]bool{causal})
	if err != nil {
		tb.Fatal(err)
	}
	mask := param("mask", maskT) // [1, 1, T, T]
	bound := att.Bind(g, "att")
	h := G.Must(ops.LayerNorm(x, g1, b1, ops.LayerNormEps))                                 // [B*T, D]
	a := G.Must(bound.Forward(h, h, batch, mask, drop))                                     // [B*T, D]
	x1 := G.Must(ops.Add(x, G.Must(ops.Dropout(a, 0.1, drop))))                             // [B*T, D]
	h2 := G.Must(ops.LayerNorm(x1, g2, b2, ops.LayerNormEps))                               // [B*T, D]
	f := G.Must(ops.ReLU(G.Must(ops.Linear(h2, w1, c1))))                                   // [B*T, FFN]
	y := G.Must(ops.Add(x1, G.Must(ops.Dropout(G.Must(ops.Linear(f, w2, c2)), 0.1, drop)))) // [B*T, D]
	wt := param("w", Xavier(r, batch*seq, d))                                               // [B*T, D]
	loss := G.Must(G.Sum(G.Must(G.HadamardProd(y, wt))))
	params := append(G.Nodes{g1, b1, g2, b2, w1, c1, w2, c2}, bound.Nodes...)
	grads, err := G.Grad(loss, params...)
	if err != nil {
		tb.Fatal(err)
	}
	var vals []*tensor.Dense
	for _, p := range params {
		vals = append(vals, p.Value().(*tensor.Dense))
	}
	return g, grads, vals
}

// BenchmarkTransformerBlock times forward+backward of one Transformer block
// at the sizes the reference measurements use: batch 32, sequence 40, width
// 256, 4 heads, MLP 1024.
func BenchmarkTransformerBlock(b *testing.B) {
	blas.Use()
	g, _, _ := blockGraph(b, 32, 40, 256, 4, 1024)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime()
	for b.Loop() {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
	// CPU time over all threads: on a shared machine it shows the work done
	// when the wall time mostly shows the contention.
	b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
}

// The benchmark graph runs and produces finite gradients (so the benchmark
// measures real work).
func TestBlockGraphRuns(t *testing.T) {
	g, grads, _ := blockGraph(t, 2, 5, 8, 2, 16)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for _, gr := range grads {
		for _, v := range gr.Value().(*tensor.Dense).Float32s() {
			if v != v {
				t.Fatalf("NaN gradient in %v", gr)
			}
		}
	}
}

// BenchmarkAdamBlock times one fused Adam update of a block's parameters.
func BenchmarkAdamBlock(b *testing.B) {
	_, grads, vals := blockGraph(b, 2, 4, 256, 4, 1024)
	var gs, ms, vs []*tensor.Dense
	for _, p := range vals {
		gs = append(gs, tensor.New(tensor.WithShape(p.Shape()...), tensor.Of(tensor.Float32)))
		ms = append(ms, tensor.New(tensor.WithShape(p.Shape()...), tensor.Of(tensor.Float32)))
		vs = append(vs, tensor.New(tensor.WithShape(p.Shape()...), tensor.Of(tensor.Float32)))
	}
	_ = grads
	cfg := ops.DefaultAdamConfig()
	step := 0
	for b.Loop() {
		step++
		for i, p := range vals {
			if err := ops.AdamStep(p, gs[i], ms[i], vs[i], 1e-3, step, cfg); err != nil {
				b.Fatal(err)
			}
		}
	}
}
