package train

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
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

// TestConfigSetKey: one key set as a --config file holding only it would
// set it; unknown keys and wrong types are errors that leave the config
// alone.
func TestConfigSetKey(t *testing.T) {
	for _, c := range []struct {
		name, key string
		value     any
		check     func(Config) bool
		err       string
	}{
		{"top level", "steps", 7, func(c Config) bool { return c.Steps == 7 }, ""},
		{"float", "label_smoothing", 0.1, func(c Config) bool { return c.LabelSmoothing == 0.1 }, ""},
		{"nested", "model.dim", 32, func(c Config) bool { return c.Model.Dim == 32 && c.Model.Layers == DefaultConfig().Model.Layers }, ""},
		{"omitempty field", "model.encoder", "transformer", func(c Config) bool { return c.Model.Encoder == "transformer" }, ""},
		{"bool", "strict", true, func(c Config) bool { return c.Strict }, ""},
		{"unknown key", "model.width", 3, nil, `unknown field "width"`},
		{"wrong type", "steps", "many", nil, "cannot unmarshal string"},
		{"negative into unsigned", "seed", -1, nil, "cannot unmarshal number -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			err := cfg.SetKey(c.key, c.value)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), c.key) {
					t.Fatalf("error %v, want one naming %s and %q", err, c.key, c.err)
				}
				if !reflect.DeepEqual(cfg, DefaultConfig()) {
					t.Errorf("a refused key changed the config: %+v", cfg)
				}
				return
			}
			if err != nil || !c.check(cfg) {
				t.Errorf("SetKey(%s, %v): %v, config %+v", c.key, c.value, err, cfg)
			}
		})
	}
}
