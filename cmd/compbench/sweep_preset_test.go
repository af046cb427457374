package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/sweep"
	"compbench/train"
)

// TestSweepPreset: a sweep file's preset reaches each cell's training:
// config.json records it and its values, a model's own preset wins over
// the sweep's, and the sweep's config overrides both; the train stage is
// given --preset.
func TestSweepPreset(t *testing.T) {
	sweepEnv(t)
	dir := t.TempDir()
	d := tinyData(t)
	body := fmt.Sprintf(`{"name":"preset","preset":"cpu-small","seeds":[1],
  "models":["transformer",{"name":"paper","variant":"transformer","preset":"paper"}],
  "datasets":[{"name":"d","train":%q,"dev":%q,"test":%q}],
  "config":{"steps":2,"warmup":1,"bucket_width":4,
    "model":{"layers":1,"heads":2,"dim":16,"mlp_dim":32,"max_src_len":8,"max_tgt_len":10}}}`, d, d, d)
	spec := filepath.Join(dir, "sweep.json")
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	mustRun(t, "sweep", "--file", spec, "--out", out, "--local")
	for _, c := range []struct {
		cell, preset, schedule string
		lr, dropout            float64
		evalEvery              int
	}{
		{"d.transformer.seed1", "cpu-small", train.SchedulePolynomial, 5e-3, 0, 500},
		{"d.paper.seed1", "paper", "", 1e-3, 0.1, 1000},
	} {
		t.Run(c.cell, func(t *testing.T) {
			cd := filepath.Join(out, sweep.CellsDir, c.cell)
			cfg, err := train.LoadConfig(filepath.Join(cd, train.ConfigFile), train.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Preset != c.preset || cfg.Schedule != c.schedule || cfg.LR != c.lr || cfg.Model.Dropout != c.dropout || cfg.EvalEvery != c.evalEvery {
				t.Errorf("preset %q schedule %q lr %g dropout %g eval_every %d; want %q %q %g %g %d",
					cfg.Preset, cfg.Schedule, cfg.LR, cfg.Model.Dropout, cfg.EvalEvery, c.preset, c.schedule, c.lr, c.dropout, c.evalEvery)
			}
			if cfg.Steps != 2 || cfg.Warmup != 1 || cfg.Model.Dim != 16 || cfg.Model.Layers != 1 {
				t.Errorf("steps %d warmup %d dim %d layers %d: the sweep's config does not override the preset", cfg.Steps, cfg.Warmup, cfg.Model.Dim, cfg.Model.Layers)
			}
			log, err := os.ReadFile(filepath.Join(cd, sweep.LogFile))
			if err != nil || !strings.Contains(string(log), "--preset "+c.preset) {
				t.Errorf("the train stage was not given --preset %s (%v):\n%s", c.preset, err, log)
			}
		})
	}
}
