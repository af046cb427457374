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
	c := AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9, WeightDecay: 0.01}
	p, m, v := vec(1, -2, 0.5), vec(0, 0, 0), vec(0, 0, 0)
	ref := []float64{1, -2, 0.5}
	rm, rv := make([]float64, 3), make([]float64, 3)
	grads := [][]float32{{0.1, -0.3, 0}, {0.2, 0.1, -1}, {-0.5, 0, 2}}
	const lr = 0.01
	for step, gv := range grads {
		if err := AdamStep(p, vec(gv...), m, v, lr, step+1, c); err != nil {
			t.Fatal(err)
		}
		for i, g := range gv {
			rm[i] = 0.9*rm[i] + 0.1*float64(g)
			rv[i] = 0.98*rv[i] + 0.02*float64(g)*float64(g)
			mh := rm[i] / (1 - math.Pow(0.9, float64(step+1)))
			vh := rv[i] / (1 - math.Pow(0.98, float64(step+1)))
			ref[i] = ref[i]*(1-lr*0.01) - lr*mh/(math.Sqrt(vh)+1e-9)
		}
	}
	near(t, "adam", p.Float32s(), ref, 1e-6)
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
