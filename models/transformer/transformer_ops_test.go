package transformer

import (
	"strings"
	"testing"

	"compbench/models"
)

// TestTransformerGraphFusedOps: training graphs, flat and relative, run
// the fused linear, ReLU and add ops: no Gorgonia bias broadcast (Repeat),
// column sum (Σ), materialised transpose or generic product is left, so a
// step allocates nothing and copies no transposes.
func TestTransformerGraphFusedOps(t *testing.T) {
	for _, rel := range []bool{false, true} {
		name := map[bool]string{false: "sinusoidal", true: "relative"}[rel]
		t.Run(name, func(t *testing.T) {
			cfg := models.DefaultConfig()
			cfg.Dim, cfg.Heads, cfg.MLPDim, cfg.Layers = 8, 2, 16, 1
			cfg.SrcVocab, cfg.TgtVocab, cfg.Relative = 8, 8, rel
			m, err := New(cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			c, err := m.build(graphKey{kind: kindTrain, b: 2, s: 3, t: 4, smoothing: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range c.out.Graph().AllNodes() {
				if n.Op() == nil {
					continue
				}
				s := n.Op().String()
				for _, bad := range []string{"Repeat", "Σ", "ᵀ", "× "} {
					if strings.Contains(s, bad) {
						t.Errorf("node %s runs %q (contains %q)", n.Name(), s, bad)
					}
				}
			}
		})
	}
}
