package ops

import (
	"fmt"
	"math"
	"testing"

	"compbench/data"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gradCase is one finite-difference check: inputs (float32 or int tensors),
// which of them to differentiate, and the graph to build on them.
type gradCase struct {
	name   string
	inputs []*tensor.Dense
	diff   []bool
	build  func(in []*G.Node) (*G.Node, error)
	// tol overrides the default tolerance (absolute and relative).
	tol float64
}

func randT(seed uint64, scale float32, shape ...int) *tensor.Dense {
	r := data.NewRand(seed)
	n := tensor.Shape(shape).TotalSize()
	v := make([]float32, n)
	for i := range v {
		v[i] = (r.Float32()*2 - 1) * scale
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}

func intT1(v ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v))
}

// weightedSum returns sum(out * w) in float64 (w fixed random weights), the
// scalar whose gradient the check compares; a scalar out is used as is.
func weightedSum(out G.Value, w []float32) float64 {
	if s, err := scalar32(out); err == nil && w == nil {
		return float64(s)
	}
	var t float64
	for i, v := range out.(*tensor.Dense).Float32s() {
		t += float64(v) * float64(w[i])
	}
	return t
}

// checkGrads compares the symbolic gradients of sum(out * w) with central
// differences of step h, evaluated by re-running the same tape machine.
func checkGrads(t *testing.T, c gradCase) {
	t.Helper()
	g := G.NewGraph()
	nodes := make([]*G.Node, len(c.inputs))
	for i, v := range c.inputs {
		v = v.Clone().(*tensor.Dense)
		nodes[i] = G.NewTensor(g, v.Dtype(), v.Dims(), G.WithShape(v.Shape()...), G.WithValue(v), G.WithName(fmt.Sprintf("in%d", i)))
		if v.Dims() == 0 {
			t.Fatal("scalar inputs unsupported")
		}
	}
	y, err := c.build(nodes)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	var w []float32
	loss := y
	if !y.IsScalar() {
		wt := randT(99, 1, y.Shape()...)
		w = wt.Float32s()
		wn := G.NewTensor(g, tensor.Float32, y.Dims(), G.WithShape(y.Shape()...), G.WithValue(wt), G.WithName("w"))
		if loss, err = G.Sum(G.Must(G.HadamardProd(y, wn))); err != nil {
			t.Fatal(err)
		}
	}
	var wrt G.Nodes
	for i, d := range c.diff {
		if d {
			wrt = append(wrt, nodes[i])
		}
	}
	grads, err := G.Grad(loss, wrt...)
	if err != nil {
		t.Fatalf("grad: %v", err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	run := func() float64 {
		m.Reset()
		if err := m.RunAll(); err != nil {
			t.Fatalf("run: %v", err)
		}
		return weightedSum(y.Value(), w)
	}
	run()
	analytic := make([][]float32, len(grads))
	for i, gn := range grads {
		analytic[i] = append([]float32(nil), gn.Value().(*tensor.Dense).Float32s()...)
	}
	tol := c.tol
	if tol == 0 {
		tol = 2e-2
	}
	const h = 1e-2
	for gi, n := range wrt {
		x := n.Value().(*tensor.Dense).Float32s()
		bad := 0
		for j := range x {
			orig := x[j]
			x[j] = orig + h
			lp := run()
			x[j] = orig - h
			lm := run()
			x[j] = orig
			num := (lp - lm) / (2 * h)
			a := float64(analytic[gi][j])
			if math.IsNaN(a) || math.Abs(a-num) > tol*(1+math.Max(math.Abs(a), math.Abs(num))) {
				if bad++; bad <= 5 {
					t.Errorf("%s[%d]: analytic %.6g, numeric %.6g", n.Name(), j, a, num)
				}
			}
		}
	}
	// Ops reuse their output buffers from run to run: a backward op that
	// accumulated into its buffer instead of overwriting it would be right
	// on the first run, checked above, and wrong on every later one.
	run()
	for gi, gn := range grads {
		for j, v := range gn.Value().(*tensor.Dense).Float32s() {
			if v != analytic[gi][j] {
				t.Errorf("%s[%d]: gradient %.6g on a later run, %.6g on the first", wrt[gi].Name(), j, v, analytic[gi][j])
				break
			}
		}
	}
}

func TestGradients(t *testing.T) {
	negInf := float32(math.Inf(-1))
	mask := tensor.New(tensor.WithShape(2, 1, 3, 4), tensor.WithBacking([]float32{
		0, 0, 0, 0, 0, negInf, 0, negInf, negInf, negInf, negInf, negInf, // batch 0: row 2 fully masked
		0, negInf, negInf, negInf, 0, 0, negInf, negInf, 0, 0, 0, negInf,
	}))
	geluIn := tensor.New(tensor.WithShape(2, 4), tensor.WithBacking([]float32{-4, -1.5, -0.3, 0, 0.2, 0.9, 2.5, 5}))
	src := NewDropoutSource(7)
	cases := []gradCase{
		{name: "layernorm", inputs: []*tensor.Dense{randT(1, 2, 3, 5), randT(2, 1, 5), randT(3, 1, 5)}, diff: []bool{true, true, true},
			build: func(in []*G.Node) (*G.Node, error) { return LayerNorm(in[0], in[1], in[2], LayerNormEps) }},
		{name: "layernorm one row", inputs: []*tensor.Dense{randT(4, 3, 1, 4), randT(5, 1, 4), randT(6, 1, 4)}, diff: []bool{true, true, true},
			build: func(in []*G.Node) (*G.Node, error) { return LayerNorm(in[0], in[1], in[2], LayerNormEps) }},
		{name: "gelu", inputs: []*tensor.Dense{geluIn}, diff: []bool{true},
			build: func(in []*G.Node) (*G.Node, error) { return GELU(in[0]) }},
		{name: "rmsnorm", inputs: []*tensor.Dense{randT(31, 1, 3, 5), randT(32, 1, 5)}, diff: []bool{true, true},
			build: func(in []*G.Node) (*G.Node, error) { return RMSNorm(in[0], in[1], 1e-6) }},
		{name: "gelu exact", inputs: []*tensor.Dense{geluIn}, diff: []bool{true},
			build: func(in []*G.Node) (*G.Node, error) { return GELUExact(in[0]) }},
		{name: "cross-entropy", inputs: []*tensor.Dense{randT(7, 3, 4, 6), intT1(2, 0, 5, 2)}, diff: []bool{true, false},
			build: func(in []*G.Node) (*G.Node, error) { return SoftmaxCrossEntropy(in[0], in[1], 0, 0) }},
		{name: "cross-entropy smoothed", inputs: []*tensor.Dense{randT(8, 3, 4, 6), intT1(2, 0, 5, 1)}, diff: []bool{true, false},
			build: func(in []*G.Node) (*G.Node, error) { return SoftmaxCrossEntropy(in[0], in[1], 0, 0.1) }},
		{name: "cross-entropy all ignored", inputs: []*tensor.Dense{randT(9, 3, 2, 6), intT1(0, 0)}, diff: []bool{true, false},
			build: func(in []*G.Node) (*G.Node, error) { return SoftmaxCrossEntropy(in[0], in[1], 0, 0.1) }},
		// A loss scaled by 2.5 downstream: the backward op must scale by
		// its incoming gradient, which is 1 when the loss is the output.
		{name: "cross-entropy scaled", inputs: []*tensor.Dense{randT(36, 3, 4, 6), intT1(2, 0, 5, 1)}, diff: []bool{true, false},
			build: func(in []*G.Node) (*G.Node, error) {
				l, err := SoftmaxCrossEntropy(in[0], in[1], 0, 0.1)
				if err != nil {
					return nil, err
				}
				return G.Mul(l, G.NewConstant(float32(2.5)))
			}},
		{name: "cross-entropy one row", inputs: []*tensor.Dense{randT(10, 3, 1, 3), intT1(1)}, diff: []bool{true, false},
			build: func(in []*G.Node) (*G.Node, error) { return SoftmaxCrossEntropy(in[0], in[1], -1, 0) }},
		{name: "attention softmax mask and bias", inputs: []*tensor.Dense{randT(11, 2, 2, 2, 3, 4), mask, randT(12, 1, 1, 2, 3, 4)}, diff: []bool{true, false, true},
			build: func(in []*G.Node) (*G.Node, error) { return AttentionSoftmax(in[0], in[1], in[2]) }},
		{name: "attention softmax full bias", inputs: []*tensor.Dense{randT(13, 2, 2, 2, 3, 4), randT(14, 1, 2, 2, 3, 4)}, diff: []bool{true, true},
			build: func(in []*G.Node) (*G.Node, error) { return AttentionSoftmax(in[0], nil, in[1]) }},
		{name: "attention softmax bias per batch", inputs: []*tensor.Dense{randT(31, 2, 2, 2, 3, 4), randT(32, 1, 2, 1, 3, 4)}, diff: []bool{true, true},
			build: func(in []*G.Node) (*G.Node, error) { return AttentionSoftmax(in[0], nil, in[1]) }},
		{name: "attention softmax one key", inputs: []*tensor.Dense{randT(15, 2, 1, 2, 1, 1)}, diff: []bool{true},
			build: func(in []*G.Node) (*G.Node, error) { return AttentionSoftmax(in[0], nil, nil) }},
		{name: "attention scores", inputs: []*tensor.Dense{randT(16, 1, 6, 4), randT(17, 1, 10, 4)}, diff: []bool{true, true},
			build: func(in []*G.Node) (*G.Node, error) { return AttnScores(in[0], in[1], 2, 2, 0.5) }},
		{name: "attention values", inputs: []*tensor.Dense{randT(18, 1, 2, 2, 3, 5), randT(19, 1, 10, 4)}, diff: []bool{true, true},
			build: func(in []*G.Node) (*G.Node, error) { return AttnValues(in[0], in[1], 2) }},
		{name: "embed repeated ids", inputs: []*tensor.Dense{randT(20, 1, 5, 3), intT1(1, 3, 1, 4)}, diff: []bool{true, false},
			build: func(in []*G.Node) (*G.Node, error) { return Embed(in[0], in[1]) }},
		{name: "relative bias", inputs: []*tensor.Dense{randT(21, 1, 4, 2)}, diff: []bool{true},
			build: func(in []*G.Node) (*G.Node, error) {
				return RelativeBias(in[0], []int{0, 1, 2, 3, 0, 1, 3, 3, 0}, 3, 3)
			}},
		{name: "add bias", inputs: []*tensor.Dense{randT(23, 1, 3, 4), randT(24, 1, 4)}, diff: []bool{true, true},
			build: func(in []*G.Node) (*G.Node, error) { return AddBias(in[0], in[1]) }},
		{name: "linear", inputs: []*tensor.Dense{randT(25, 1, 3, 4), randT(26, 1, 4, 2), randT(27, 1, 2)}, diff: []bool{true, true, true},
			build: func(in []*G.Node) (*G.Node, error) { return Linear(in[0], in[1], in[2]) }},
		{name: "linear without bias", inputs: []*tensor.Dense{randT(29, 1, 5, 3), randT(30, 1, 3, 4)}, diff: []bool{true, true},
			build: func(in []*G.Node) (*G.Node, error) { return Linear(in[0], in[1], nil) }},
		{name: "add", inputs: []*tensor.Dense{randT(33, 1, 3, 4), randT(34, 1, 3, 4)}, diff: []bool{true, true},
			build: func(in []*G.Node) (*G.Node, error) { return Add(in[0], in[1]) }},
		{name: "add same input twice", inputs: []*tensor.Dense{randT(35, 1, 2, 3)}, diff: []bool{true},
			build: func(in []*G.Node) (*G.Node, error) { return Add(in[0], in[0]) }},
		{name: "relu", inputs: []*tensor.Dense{tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{-2, -0.5, 0.3, 0.05, 1, -0.05}))}, diff: []bool{true},
			build: func(in []*G.Node) (*G.Node, error) { return ReLU(in[0]) }},
		{name: "dropout", inputs: []*tensor.Dense{randT(22, 1, 4, 6)}, diff: []bool{true},
			build: func(in []*G.Node) (*G.Node, error) { return Dropout(in[0], 0.3, src) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkGrads(t, c) })
	}
}

// TestRowSumGradsManyRows checks the gradients summed over rows (LayerNorm's
// gamma and beta, AddBias's bias) against float64 sums on more rows than
// one kernels.SumChunk: the finite-difference cases above fit in the first
// chunk, so rows lost at a chunk boundary went unseen. The largest case has
// enough work to split the chunks across goroutines.
func TestRowSumGradsManyRows(t *testing.T) {
	for _, c := range []struct {
		name string
		n, d int
	}{{"one chunk", 64, 7}, {"chunk and a row", 65, 7}, {"odd tail", 130, 37}, {"parallel", 300, 128}} {
		t.Run(c.name, func(t *testing.T) {
			n, d := c.n, c.d
			in := []*tensor.Dense{randT(40, 3, n, d), randT(41, 1, d), randT(42, 1, d), randT(43, 1, d), randT(44, 1, n, d)}
			g := G.NewGraph()
			nodes := make([]*G.Node, len(in))
			for i, v := range in {
				nodes[i] = G.NewTensor(g, tensor.Float32, v.Dims(), G.WithShape(v.Shape()...), G.WithValue(v), G.WithName(fmt.Sprint("in", i)))
			}
			y := G.Must(LayerNorm(nodes[0], nodes[1], nodes[2], LayerNormEps))
			y = G.Must(AddBias(y, nodes[3]))
			loss := G.Must(G.Sum(G.Must(G.HadamardProd(y, nodes[4])))) // dy = in[4]
			grads, err := G.Grad(loss, nodes[:4]...)
			if err != nil {
				t.Fatal(err)
			}
			m := G.NewTapeMachine(g)
			defer m.Close()
			if err := m.RunAll(); err != nil {
				t.Fatal(err)
			}
			x, gm, dy := in[0].Float32s(), in[1].Float32s(), in[4].Float32s()
			dx, dg, db := make([]float64, n*d), make([]float64, d), make([]float64, d)
			for r := 0; r < n; r++ {
				var mean, vr float64
				for j := 0; j < d; j++ {
					mean += float64(x[r*d+j]) / float64(d)
				}
				for j := 0; j < d; j++ {
					vr += (float64(x[r*d+j]) - mean) * (float64(x[r*d+j]) - mean) / float64(d)
				}
				rstd := 1 / math.Sqrt(vr+LayerNormEps)
				var mg, mgx float64
				for j := 0; j < d; j++ {
					xh, gy := (float64(x[r*d+j])-mean)*rstd, float64(dy[r*d+j])
					dg[j] += gy * xh
					db[j] += gy
					mg += gy * float64(gm[j]) / float64(d)
					mgx += gy * float64(gm[j]) * xh / float64(d)
				}
				for j := 0; j < d; j++ {
					xh := (float64(x[r*d+j]) - mean) * rstd
					dx[r*d+j] = rstd * (float64(dy[r*d+j])*float64(gm[j]) - mg - xh*mgx)
				}
			}
			// float32 sums of n rows, errors growing about like sqrt(n):
			// measured under a tenth of this tolerance.
			for i, want := range [][]float64{dx, dg, db, db} {
				what := [...]string{"x", "gamma", "beta", "bias"}[i]
				near(t, what, grads[i].Value().(*tensor.Dense).Float32s(), want, 1e-5*math.Sqrt(float64(n)))
			}
		})
	}
}
