package train

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLearningRate(t *testing.T) {
	cases := []struct {
		warmup, step int
		want         float64
	}{
		{16000, 1, 1e-3 / 16000}, {16000, 8000, 5e-4}, {16000, 16000, 1e-3},
		{16000, 64000, 5e-4}, {0, 7, 1e-3}, {100, 400, 5e-4},
	}
	for _, c := range cases {
		if got := LearningRate(1e-3, c.warmup, c.step); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("LearningRate(1e-3, %d, %d) = %g, want %g", c.warmup, c.step, got, c.want)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "c.json")
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	c, err := LoadConfig(write(`{"steps": 7, "model": {"layers": 2}}`), DefaultConfig())
	if err != nil || c.Steps != 7 || c.Model.Layers != 2 || c.Model.Dim != 256 || c.LR != 1e-3 {
		t.Errorf("got %+v, %v", c, err)
	}
	if _, err := LoadConfig(write(`{"model": {"layerz": 2}}`), DefaultConfig()); err == nil || !strings.Contains(err.Error(), "layerz") {
		t.Errorf("unknown nested key: %v", err)
	}
	bad := DefaultConfig()
	bad.Model.Mask = "sep-to-last"
	if err := bad.Validate(); err == nil {
		t.Error("a decompositional mask without separators validated")
	}
}
