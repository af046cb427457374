package gpt2

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadGPT2Config: any config.json gives an error or a config whose
// sizes are positive and consistent, never a panic, and nothing is
// written beside it.
func FuzzReadGPT2Config(f *testing.F) {
	f.Add([]byte(`{"n_layer":1,"n_head":2,"n_embd":8,"n_positions":16,"vocab_size":50}`))
	f.Add([]byte(`{"n_layer":1,"n_head":3,"n_embd":8,"n_positions":16,"vocab_size":50,"layer_norm_epsilon":0}`))
	f.Add([]byte(`{"model_type":"bert","activation_function":"relu"}`))
	f.Add([]byte(`{"n_layer":-1} {}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "config.json")
		os.WriteFile(p, b, 0o644)
		c, err := ReadConfig(p)
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("reading wrote to the folder: %d entries", len(ents))
		}
		if err != nil {
			return
		}
		if c.NLayer < 1 || c.NHead < 1 || c.NEmbd < 1 || c.NEmbd%c.NHead != 0 || c.NPositions < 1 || c.VocabSize < 1 ||
			!(c.LayerNormEpsilon > 0 && c.LayerNormEpsilon <= 1) {
			t.Fatalf("accepted %+v", c)
		}
	})
}
