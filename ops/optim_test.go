package ops

import (
	"math"
	"testing"

	"gorgonia.org/tensor"
)

func vec(v ...float32) *tensor.Dense {
	return tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v))
}

func TestClipGlobalNorm(t *testing.T) {
	cases := []struct {
		name     string
		max      float32
		wantNorm float32
		want     [][]float32
	}{
		{"clipped", 2.5, 5, [][]float32{{1.5, 0}, {0, 2}}},
		{"below max", 10, 5, [][]float32{{3, 0}, {0, 4}}},
		{"measure only", 0, 5, [][]float32{{3, 0}, {0, 4}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gs := []*tensor.Dense{vec(3, 0), vec(0, 4)}
			if n := ClipGlobalNorm(gs, c.max); n != c.wantNorm {
				t.Errorf("norm %g, want %g", n, c.wantNorm)
			}
			for i, g := range gs {
				for j, v := range g.Float32s() {
					if math.Abs(float64(v-c.want[i][j])) > 1e-6 {
						t.Errorf("grad %d = %v, want %v", i, g.Float32s(), c.want[i])
					}
				}
			}
		})
	}
	gs := []*tensor.Dense{vec(float32(math.NaN()), 1)}
	if n := ClipGlobalNorm(gs, 1); !math.IsNaN(float64(n)) || gs[0].Float32s()[1] != 1 {
		t.Errorf("NaN norm: got %g and %v", n, gs[0].Float32s())
	}
}

// AdamStep matches the textbook update computed in float64.
func TestAdamStep(t *testing.T) {
	grads := [][]float32{{0.1, -0.3, 0}, {0.2, 0.1, -1}, {-0.5, 0, 2}}
	for _, tc := range []struct {
		name string
		c    AdamConfig
		lr   float32
	}{
		{"weight decay", AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9, WeightDecay: 0.01}, 0.01},
		// eps of the gradients' size: the kernel folds the bias
		// corrections into the step and into eps (eps·sqrt(1-b2^t)), and
		// with eps 1e-9 an eps left unscaled passes.
		{"large eps", AdamConfig{Beta1: 0.8, Beta2: 0.999, Eps: 0.1}, 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, lr := tc.c, float64(tc.lr)
			b1, b2, eps, wd := float64(c.Beta1), float64(c.Beta2), float64(c.Eps), float64(c.WeightDecay)
			p, m, v := vec(1, -2, 0.5), vec(0, 0, 0), vec(0, 0, 0)
			ref := []float64{1, -2, 0.5}
			rm, rv := make([]float64, 3), make([]float64, 3)
			for step, gv := range grads {
				if err := AdamStep(p, vec(gv...), m, v, tc.lr, step+1, c); err != nil {
					t.Fatal(err)
				}
				for i, g := range gv {
					rm[i] = b1*rm[i] + (1-b1)*float64(g)
					rv[i] = b2*rv[i] + (1-b2)*float64(g)*float64(g)
					mh := rm[i] / (1 - math.Pow(b1, float64(step+1)))
					vh := rv[i] / (1 - math.Pow(b2, float64(step+1)))
					ref[i] = ref[i]*(1-lr*wd) - lr*mh/(math.Sqrt(vh)+eps)
				}
			}
			near(t, "adam", p.Float32s(), ref, 1e-6)
		})
	}
	c := AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9}
	p, m, v := vec(1, -2, 0.5), vec(0, 0, 0), vec(0, 0, 0)
	const lr = 0.01
	if err := AdamStep(p, vec(1), m, v, lr, 4, c); err == nil {
		t.Error("size mismatch accepted")
	}
	if err := AdamStep(p, vec(1, 2, 3), m, v, lr, 0, c); err == nil {
		t.Error("step 0 accepted")
	}
	if err := (AdamConfig{Beta1: 1}).Validate(); err == nil {
		t.Error("beta1 = 1 accepted")
	}
	if err := DefaultAdamConfig().Validate(); err != nil {
		t.Error(err)
	}
}
