package attention

import (
	"math"
	"testing"

	"compbench/data"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// naive computes multi-head attention in float64 with plain loops: the
// reference the graph must reproduce.
func naive(m *MultiHead, x, kv []float32, batch, tq, tk int, allowed [][][]bool) []float64 {
	c := m.Config
	d, h := c.DModel, c.Heads
	dk := d / h
	proj := func(in []float32, rows int, w, b *tensor.Dense) []float64 {
		wv, bv := w.Float32s(), b.Float32s()
		o := make([]float64, rows*d)
		for r := 0; r < rows; r++ {
			for j := 0; j < d; j++ {
				s := float64(bv[j])
				for i := 0; i < d; i++ {
					s += float64(in[r*d+i]) * float64(wv[i*d+j])
				}
				o[r*d+j] = s
			}
		}
		return o
	}
	q := proj(x, batch*tq, m.Wq, m.Bq)
	k := proj(kv, batch*tk, m.Wk, m.Bk)
	v := proj(kv, batch*tk, m.Wv, m.Bv)
	att := make([]float32, batch*tq*d)
	for b := 0; b < batch; b++ {
		for hh := 0; hh < h; hh++ {
			for i := 0; i < tq; i++ {
				logits := make([]float64, tk)
				mx := math.Inf(-1)
				for j := 0; j < tk; j++ {
					logits[j] = math.Inf(-1)
					if !allowed[b][i][j] {
						continue
					}
					var s float64
					for e := 0; e < dk; e++ {
						s += q[(b*tq+i)*d+hh*dk+e] * k[(b*tk+j)*d+hh*dk+e]
					}
					s /= math.Sqrt(float64(dk))
					if m.Rel != nil {
						s += float64(m.Rel.Float32s()[Bucket(i-j, c.Bidirectional, c.Buckets, c.MaxDistance)*h+hh])
					}
					logits[j] = s
					mx = math.Max(mx, s)
				}
				var z float64
				for j := range logits {
					if allowed[b][i][j] {
						logits[j] = math.Exp(logits[j] - mx)
						z += logits[j]
					} else {
						logits[j] = 0
					}
				}
				for e := 0; e < dk; e++ {
					var s float64
					for j := range logits {
						if z > 0 {
							s += logits[j] / z * v[(b*tk+j)*d+hh*dk+e]
						}
					}
					att[(b*tq+i)*d+hh*dk+e] = float32(s)
				}
			}
		}
	}
	return proj(att, batch*tq, m.Wo, m.Bo)
}

func TestMultiHeadForward(t *testing.T) {
	const batch, tq, d = 2, 5, 8
	sep := [][]bool{{true, false, true, false, true}, {true, false, false, false, false}}
	pad := [][]bool{{false, false, false, false, false}, {false, false, false, true, true}}
	for _, rel := range []bool{false, true} {
		t.Run(map[bool]string{false: "absolute", true: "relative"}[rel], func(t *testing.T) {
			cfg := Config{DModel: d, Heads: 2, Relative: rel, Bidirectional: false, Buckets: 8, MaxDistance: 16}
			r := data.NewRand(3)
			m, err := New(cfg, r)
			if err != nil {
				t.Fatal(err)
			}
			if rel {
				for i := range m.Rel.Float32s() {
					m.Rel.Float32s()[i] = r.Float32() - 0.5
				}
			}
			for _, b := range []*tensor.Dense{m.Bq, m.Bk, m.Bv, m.Bo} {
				for i := range b.Float32s() {
					b.Float32s()[i] = r.Float32() - 0.5
				}
			}
			var allowed [][][]bool
			for b := range batch {
				a, err := Allowed(SepToLast, sep[b], pad[b])
				if err != nil {
					t.Fatal(err)
				}
				allowed = append(allowed, a)
			}
			maskT, err := Additive(allowed)
			if err != nil {
				t.Fatal(err)
			}
			xv := make([]float32, batch*tq*d)
			for i := range xv {
				xv[i] = r.Float32()*2 - 1
			}
			g := G.NewGraph()
			x := G.NewMatrix(g, tensor.Float32, G.WithShape(batch*tq, d), G.WithValue(tensor.New(tensor.WithShape(batch*tq, d), tensor.WithBacking(xv))), G.WithName("x"))
			mask := G.NewTensor(g, tensor.Float32, 4, G.WithShape(maskT.Shape()...), G.WithValue(maskT), G.WithName("mask"))
			y, err := m.Bind(g, "att").Forward(x, x, batch, mask, nil)
			if err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g)
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			got := y.Value().(*tensor.Dense).Float32s()
			want := naive(m, xv, xv, batch, tq, tq, allowed)
			for i := range want {
				if math.Abs(float64(got[i])-want[i]) > 1e-4 {
					t.Fatalf("element %d: got %g, want %g", i, got[i], want[i])
				}
			}
		})
	}
}

// The block is differentiable end to end: a gradient reaches every
// parameter, including the relative table, and matches finite differences.
func TestMultiHeadGradients(t *testing.T) {
	const batch, tq, tk, d = 2, 3, 4, 4
	cfg := Config{DModel: d, Heads: 2, Relative: true, Bidirectional: true, Buckets: 8, MaxDistance: 16}
	r := data.NewRand(5)
	m, err := New(cfg, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Rel.Float32s() {
		m.Rel.Float32s()[i] = r.Float32() - 0.5
	}
	g := G.NewGraph()
	rnd := func(rows int, name string) *G.Node {
		v := make([]float32, rows*d)
		for i := range v {
			v[i] = r.Float32()*2 - 1
		}
		return G.NewMatrix(g, tensor.Float32, G.WithShape(rows, d), G.WithValue(tensor.New(tensor.WithShape(rows, d), tensor.WithBacking(v))), G.WithName(name))
	}
	x, kv := rnd(batch*tq, "x"), rnd(batch*tk, "kv")
	bound := m.Bind(g, "att")
	y, err := bound.Forward(x, kv, batch, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := rnd(batch*tq, "w")
	loss := G.Must(G.Sum(G.Must(G.HadamardProd(y, w))))
	wrt := append(G.Nodes{x, kv}, bound.Nodes...)
	grads, err := G.Grad(loss, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	run := func() float64 {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		var s float64
		yv, wv := y.Value().(*tensor.Dense).Float32s(), w.Value().(*tensor.Dense).Float32s()
		for i := range yv {
			s += float64(yv[i]) * float64(wv[i])
		}
		return s
	}
	run()
	for gi, n := range wrt {
		an := append([]float32(nil), grads[gi].Value().(*tensor.Dense).Float32s()...)
		xs := n.Value().(*tensor.Dense).Float32s()
		for j := range xs {
			const h = 1e-2
			orig := xs[j]
			xs[j] = orig + h
			lp := run()
			xs[j] = orig - h
			lm := run()
			xs[j] = orig
			num := (lp - lm) / (2 * h)
			if math.Abs(float64(an[j])-num) > 2e-2*(1+math.Abs(num)) {
				t.Fatalf("%s[%d]: analytic %g, numeric %g", n.Name(), j, an[j], num)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{DModel: 10, Heads: 4},
		{DModel: 8, Heads: 2, Dropout: 1},
		{DModel: 8, Heads: 2, Relative: true, Bidirectional: true, Buckets: 3, MaxDistance: 128},
	}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Error(err)
	}
}
