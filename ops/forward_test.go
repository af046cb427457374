package ops

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// eval builds f on constant inputs and returns its value.
func eval(t *testing.T, inputs []*tensor.Dense, f func(in []*G.Node) (*G.Node, error)) G.Value {
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
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return y.Value()
}

func near(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.IsNaN(float64(got[i])) || math.Abs(float64(got[i])-want[i]) > tol {
			t.Fatalf("%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

func TestLayerNormValues(t *testing.T) {
	x := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{1, 2, 3, -1, -1, -1}))
	gm := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float32{1, 2, 1}))
	bt := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float32{0, 0, 0.5}))
	y := eval(t, []*tensor.Dense{x, gm, bt}, func(in []*G.Node) (*G.Node, error) { return LayerNorm(in[0], in[1], in[2], LayerNormEps) })
	s := 1 / math.Sqrt(2.0/3+1e-5)
	// A constant row normalises to 0, leaving beta.
	near(t, "layernorm", y.(*tensor.Dense).Float32s(), []float64{-s, 0, s + 0.5, 0, 0, 0.5}, 1e-5)
}

func TestGELUValues(t *testing.T) {
	x := tensor.New(tensor.WithShape(4), tensor.WithBacking([]float32{-3, 0, 1, 3}))
	y := eval(t, []*tensor.Dense{x}, func(in []*G.Node) (*G.Node, error) { return GELU(in[0]) })
	// Values of the tanh approximation.
	near(t, "gelu", y.(*tensor.Dense).Float32s(), []float64{-0.0036373920817729943, 0, 0.8411919906082768, 2.9963626079182272}, 1e-6)
}

func TestGELUExactValues(t *testing.T) {
	x := tensor.New(tensor.WithShape(4), tensor.WithBacking([]float32{-3, 0, 1, 3}))
	y := eval(t, []*tensor.Dense{x}, func(in []*G.Node) (*G.Node, error) { return GELUExact(in[0]) })
	// x Φ(x): Φ(1) = 0.8413447460685429; the tanh form gives 0.8411919906.
	near(t, "gelu exact", y.(*tensor.Dense).Float32s(), []float64{-0.00404969409489031, 0, 0.8413447460685429, 2.99595030590511}, 1e-6)
}

func TestCrossEntropyValues(t *testing.T) {
	logits := tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float32{0, 0, 0, 1, 2, 3, 5, 5, 5}))
	targets := tensor.New(tensor.WithShape(3), tensor.WithBacking([]int{1, 2, -100}))
	lse2 := math.Log(math.Exp(1) + math.Exp(2) + math.Exp(3))
	cases := []struct {
		name   string
		smooth float32
		want   float64
	}{
		// Mean over the two counted rows; the third is ignored.
		{"plain", 0, (math.Log(3) + lse2 - 3) / 2},
		// Smoothed target: 0.8 on the target, 0.2/3 on every class.
		{"smoothed", 0.2, (math.Log(3) + (lse2 - 0.8*3 - 0.2*6/3)) / 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := eval(t, []*tensor.Dense{logits, targets}, func(in []*G.Node) (*G.Node, error) {
				return SoftmaxCrossEntropy(in[0], in[1], -100, c.smooth)
			})
			got, err := scalar32(v)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "loss", []float32{got}, []float64{c.want}, 1e-5)
		})
	}
}

func TestAttentionSoftmaxMaskedRows(t *testing.T) {
	inf := float32(math.Inf(-1))
	s := tensor.New(tensor.WithShape(1, 1, 2, 3), tensor.WithBacking([]float32{1, 2, 3, 1, 2, 3}))
	m := tensor.New(tensor.WithShape(1, 1, 2, 3), tensor.WithBacking([]float32{0, 0, inf, inf, inf, inf}))
	y := eval(t, []*tensor.Dense{s, m}, func(in []*G.Node) (*G.Node, error) { return AttentionSoftmax(in[0], in[1], nil) })
	e := math.E / (1 + math.E)
	near(t, "probs", y.(*tensor.Dense).Float32s(), []float64{1 - e, e, 0, 0, 0, 0}, 1e-6)
}

func TestDropoutDeterminism(t *testing.T) {
	x := tensor.New(tensor.WithShape(64), tensor.WithBacking(make([]float32, 64)))
	for i := range x.Float32s() {
		x.Float32s()[i] = 1
	}
	draw := func(seed, step uint64, training bool) []float32 {
		src := NewDropoutSource(seed)
		src.SetStep(step)
		src.SetTraining(training)
		v := eval(t, []*tensor.Dense{x}, func(in []*G.Node) (*G.Node, error) { return Dropout(in[0], 0.5, src) })
		return append([]float32(nil), v.(*tensor.Dense).Float32s()...)
	}
	a, b, c, d := draw(1, 3, true), draw(1, 3, true), draw(1, 4, true), draw(2, 3, true)
	eq := func(p, q []float32) bool {
		for i := range p {
			if p[i] != q[i] {
				return false
			}
		}
		return true
	}
	if !eq(a, b) {
		t.Error("same seed and step gave different masks")
	}
	if eq(a, c) || eq(a, d) {
		t.Error("different step or seed gave the same mask")
	}
	zeros := 0
	for _, v := range a {
		switch v {
		case 0:
			zeros++
		case 2:
		default:
			t.Fatalf("kept value %g, want 2 (1/(1-p))", v)
		}
	}
	if zeros < 16 || zeros > 48 {
		t.Errorf("%d of 64 dropped at p=0.5", zeros)
	}
	for _, v := range draw(1, 3, false) {
		if v != 1 {
			t.Fatal("evaluation mode changed the input")
		}
	}
}

// TestDropoutGradFollowsForward: the backward pass multiplies by the mask
// of the forward pass it follows, across steps and modes. The
// finite-difference check runs one step in training mode only, so a mask
// kept from a training pass into an evaluation pass went unseen there.
func TestDropoutGradFollowsForward(t *testing.T) {
	type phase struct {
		step     uint64
		training bool
	}
	for _, c := range []struct {
		name   string
		phases []phase
	}{
		{"training", []phase{{1, true}}},
		{"next step", []phase{{1, true}, {2, true}}},
		{"evaluation after training", []phase{{1, true}, {0, false}}},
		{"training after evaluation", []phase{{0, false}, {3, true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, w := randT(50, 1, 8, 16), randT(51, 1, 8, 16)
			src := NewDropoutSource(3)
			g := G.NewGraph()
			xn := G.NewTensor(g, tensor.Float32, 2, G.WithShape(8, 16), G.WithValue(x), G.WithName("x"))
			wn := G.NewTensor(g, tensor.Float32, 2, G.WithShape(8, 16), G.WithValue(w), G.WithName("w"))
			y := G.Must(Dropout(xn, 0.5, src))
			grads, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(y, wn)))), xn)
			if err != nil {
				t.Fatal(err)
			}
			m := G.NewTapeMachine(g)
			defer m.Close()
			for _, p := range c.phases {
				src.SetStep(p.step)
				src.SetTraining(p.training)
				m.Reset()
				if err := m.RunAll(); err != nil {
					t.Fatal(err)
				}
			}
			// The mask of the last forward pass is y/x (0, 2 or 1).
			xs, ys, dx := x.Float32s(), y.Value().(*tensor.Dense).Float32s(), grads[0].Value().(*tensor.Dense).Float32s()
			dropped := 0
			for i := range xs {
				mask := ys[i] / xs[i]
				if mask == 0 {
					dropped++
				}
				if want := w.Float32s()[i] * mask; dx[i] != want {
					t.Fatalf("dx[%d] = %g, want %g (mask %g)", i, dx[i], want, mask)
				}
			}
			if last := c.phases[len(c.phases)-1]; last.training != (dropped > 0) {
				t.Fatalf("training %v, %d of %d dropped", last.training, dropped, len(xs))
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	g := G.NewGraph()
	m := G.NewMatrix(g, tensor.Float32, G.WithShape(2, 3), G.WithName("m"))
	v3 := G.NewVector(g, tensor.Float32, G.WithShape(3), G.WithName("v3"))
	v4 := G.NewVector(g, tensor.Float32, G.WithShape(4), G.WithName("v4"))
	ids := G.NewVector(g, tensor.Int, G.WithShape(2), G.WithName("ids"))
	fids := G.NewVector(g, tensor.Float32, G.WithShape(2), G.WithName("fids"))
	s4 := G.NewTensor(g, tensor.Float32, 4, G.WithShape(2, 2, 3, 3), G.WithName("s4"))
	bad4 := G.NewTensor(g, tensor.Float32, 4, G.WithShape(2, 3, 3, 3), G.WithName("bad4"))
	cases := []struct {
		name string
		f    func() (*G.Node, error)
	}{
		{"layernorm gamma size", func() (*G.Node, error) { return LayerNorm(m, v4, v3, LayerNormEps) }},
		{"cross-entropy float targets", func() (*G.Node, error) { return SoftmaxCrossEntropy(m, fids, 0, 0) }},
		{"cross-entropy smoothing 1", func() (*G.Node, error) { return SoftmaxCrossEntropy(m, ids, 0, 1) }},
		{"softmax mask heads", func() (*G.Node, error) { return AttentionSoftmax(s4, bad4, nil) }},
		{"softmax rank", func() (*G.Node, error) { return AttentionSoftmax(m, nil, nil) }},
		{"scores batch", func() (*G.Node, error) { return AttnScores(m, m, 4, 1, 1) }},
		{"scores heads", func() (*G.Node, error) { return AttnScores(m, m, 1, 2, 1) }},
		{"values heads", func() (*G.Node, error) { return AttnValues(s4, m, 3) }},
		{"embed float ids", func() (*G.Node, error) { return Embed(m, fids) }},
		{"relative bias buckets", func() (*G.Node, error) { return RelativeBias(m, []int{0, 1, 5, 0}, 2, 2) }},
		{"add bias size", func() (*G.Node, error) { return AddBias(m, v4) }},
		{"dropout p", func() (*G.Node, error) { return Dropout(m, 1, NewDropoutSource(0)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.f(); err == nil {
				t.Error("accepted")
			}
		})
	}
}

// Out-of-range ids and targets are run-time errors, not panics.
func TestRunErrors(t *testing.T) {
	table := tensor.New(tensor.WithShape(3, 2), tensor.Of(tensor.Float32))
	for _, c := range []struct {
		name string
		f    func(in []*G.Node) (*G.Node, error)
	}{
		{"embed", func(in []*G.Node) (*G.Node, error) { return Embed(in[0], in[1]) }},
		{"cross-entropy", func(in []*G.Node) (*G.Node, error) { return SoftmaxCrossEntropy(in[0], in[1], -1, 0) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := G.NewGraph()
			x := G.NewMatrix(g, tensor.Float32, G.WithShape(3, 2), G.WithValue(table))
			ids := G.NewVector(g, tensor.Int, G.WithShape(3), G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]int{0, 7, 1}))))
			if _, err := c.f([]*G.Node{x, ids}); err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g)
			defer vm.Close()
			if err := vm.RunAll(); err == nil {
				t.Error("out-of-range id accepted")
			}
		})
	}
}

// TestCacheProducts: CacheScores and CacheValues over keys and values held
// position-major give AttnScores' and AttnValues' results over the same
// keys held batch-major, bit for bit (the same products, only the strides
// differ).
func TestCacheProducts(t *testing.T) {
	const B, H, Tq, Tk, D = 3, 2, 2, 5, 4
	fill := func(n int, seed float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.Sin(float64(seed + float32(i)*0.37)))
		}
		return v
	}
	q := fill(B*Tq*D, 1)
	kb := fill(B*Tk*D, 2) // [B*Tk, D]
	km := make([]float32, len(kb))
	for b := 0; b < B; b++ {
		for j := 0; j < Tk; j++ {
			copy(km[(j*B+b)*D:(j*B+b+1)*D], kb[(b*Tk+j)*D:(b*Tk+j+1)*D]) // [Tk*B, D]
		}
	}
	dense := func(v []float32, shape ...int) *tensor.Dense {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), v...)))
	}
	same := func(what string, got, want G.Value) {
		t.Helper()
		g, w := got.(*tensor.Dense).Float32s(), want.(*tensor.Dense).Float32s()
		for i := range w {
			if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
				t.Fatalf("%s[%d] = %v, want %v", what, i, g[i], w[i])
			}
		}
	}
	in := []*tensor.Dense{dense(q, B*Tq, D), dense(kb, B*Tk, D), dense(km, Tk*B, D)}
	want := eval(t, in, func(n []*G.Node) (*G.Node, error) { return AttnScores(n[0], n[1], B, H, 0.5) })
	got := eval(t, in, func(n []*G.Node) (*G.Node, error) { return CacheScores(n[0], n[2], B, H, 0.5) })
	same("scores", got, want)
	p := fill(B*H*Tq*Tk, 3)
	in = []*tensor.Dense{dense(p, B, H, Tq, Tk), dense(kb, B*Tk, D), dense(km, Tk*B, D)}
	want = eval(t, in, func(n []*G.Node) (*G.Node, error) { return AttnValues(n[0], n[1], H) })
	got = eval(t, in, func(n []*G.Node) (*G.Node, error) { return CacheValues(n[0], n[2], H) })
	same("values", got, want)
}
