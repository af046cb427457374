package train

import (
	"math"
	"path/filepath"
	"testing"

	"gorgonia.org/tensor"

	"compbench/models"
)

// TestAdamClipGlobalNorm: the optimiser clips the model's gradient buffers
// in place, by their norm over all parameters together. Adam's update
// hardly changes when one step's gradients are scaled, so the overfitting
// tests pass with the limit ignored.
func TestAdamClipGlobalNorm(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit float64
		scale float32 // of the gradients after clipping
	}{
		{"clipped", 2.5, 0.5},
		{"below the limit", 10, 1},
		{"no limit", 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p models.Params
			p.Add("a", tensor.Shape{2}, func([]float32) {})
			p.Add("b", tensor.Shape{1, 2}, func([]float32) {})
			opt := NewAdam(&p, 0.9, 0.98, 1e-9)
			copy(p.Grads[0], []float32{3, 0})
			copy(p.Grads[1], []float32{0, -4})
			if norm := opt.ClipGlobalNorm(c.limit); math.Abs(norm-5) > 1e-6 {
				t.Errorf("norm %g, want 5 (before clipping)", norm)
			}
			want := [][]float32{{3 * c.scale, 0}, {0, -4 * c.scale}}
			for i, g := range p.Grads {
				for j := range g {
					if math.Abs(float64(g[j]-want[i][j])) > 1e-6 {
						t.Fatalf("gradient %s = %v, want %v", p.Names[i], g, want[i])
					}
				}
			}
		})
	}
}

// TestTrainClipsGradients: after one training step Adam's first moment is
// (1-beta1) times the clipped gradients, so its norm shows the limit the
// loop applied.
func TestTrainClipsGradients(t *testing.T) {
	for _, c := range []struct {
		name string
		clip float64
	}{{"clipped", 1e-3}, {"no limit", 0}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := tinyConfig("transformer")
			cfg.Steps, cfg.ClipNorm = 1, c.clip
			dir := t.TempDir()
			train(t, cfg, Options{Dir: dir})
			r, err := OpenRun(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			m, err := readTensors(filepath.Join(dir, OptimFile), r.Model.Params(), "m/")
			if err != nil {
				t.Fatal(err)
			}
			var sq float64
			for _, v := range m {
				for _, x := range v {
					sq += float64(x) * float64(x)
				}
			}
			norm := math.Sqrt(sq) / (1 - cfg.Beta1) // of the gradients Adam saw
			if c.clip > 0 && math.Abs(norm-c.clip) > 1e-4*c.clip {
				t.Errorf("gradient norm %g after clipping to %g", norm, c.clip)
			}
			if c.clip == 0 && norm < 0.1 { // a hundred times the limit above
				t.Errorf("gradient norm %g without clipping: too small to tell clipped from not", norm)
			}
		})
	}
}
