package train

import (
	"strings"
	"testing"
)

// TestPresetConfig: each preset sizes the model family it is asked for
// and records its name; an unknown name lists the known ones.
func TestPresetConfig(t *testing.T) {
	for _, c := range []struct {
		name, preset, variant string
		layers, dim, steps    int
		want                  string
	}{
		{"paper transformer", "paper", "transformer", 3, 256, 10000, ""},
		{"cpu-small transformer", "cpu-small", "transformer", 2, 64, 2000, ""},
		{"cpu-small lstm", "cpu-small", "lstm-attention", 1, 64, 3500, ""},
		{"unknown", "gpu-huge", "transformer", 0, 0, 0, `unknown preset "gpu-huge" (known: cpu-small, paper)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := PresetConfig(c.preset, c.variant)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Preset != c.preset || cfg.Model.Layers != c.layers || cfg.Model.Dim != c.dim || cfg.Steps != c.steps {
				t.Errorf("preset %q layers %d dim %d steps %d; want %q %d %d %d", cfg.Preset, cfg.Model.Layers, cfg.Model.Dim, cfg.Steps, c.preset, c.layers, c.dim, c.steps)
			}
		})
	}
}
