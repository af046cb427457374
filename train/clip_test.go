package train

import (
	"math"
	"path/filepath"
	"testing"
)

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
			m, err := readTensors(filepath.Join(dir, OptimFile), r.Def.Params(), "m/")
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
