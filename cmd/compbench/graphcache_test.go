package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/models"
	"compbench/models/transformer"
)

// TestSetGraphCache: the helper behind --graph-cache-mb sets the byte
// bound of the Transformers made afterwards, 0 restores the default, and
// negative or overflowing sizes are usage errors that change nothing.
func TestSetGraphCache(t *testing.T) {
	t.Cleanup(func() { models.SetGraphBudget(0) })
	cfg := tinyModel()
	for _, c := range []struct {
		name string
		mb   int64
		want int64 // GraphBudget of a new model; -1: a usage error
	}{
		{"size", 512, 512 << 20},
		{"default", 0, models.DefaultGraphBudget},
		{"one", 1, 1 << 20},
		{"negative", -1, -1},
		{"overflow", 1 << 50, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			models.SetGraphBudget(3 << 20)
			err := setGraphCache(c.mb)
			m, merr := transformer.New(cfg, 1)
			if merr != nil {
				t.Fatal(merr)
			}
			if c.want < 0 {
				if exitCode(err, new(strings.Builder)) != 2 || m.GraphBudget != 3<<20 {
					t.Errorf("error %v, budget %d; want a usage error and the budget unchanged", err, m.GraphBudget)
				}
				return
			}
			if err != nil || m.GraphBudget != c.want {
				t.Errorf("error %v, budget %d; want %d", err, m.GraphBudget, c.want)
			}
		})
	}
}

// TestGraphCacheFlag runs train with --graph-cache-mb 1 and checks it
// reaches the models, leaves config.json alone and gives the default run's
// bytes (this model's graphs fit in 1 MB; that eviction keeps results is
// tested in package models); train, predict, finetune and run refuse a
// negative size before writing anything.
func TestGraphCacheFlag(t *testing.T) {
	t.Cleanup(func() { models.SetGraphBudget(0) })
	dir := t.TempDir()
	data := filepath.Join("testdata", "train-tiny.jsonl")
	def, small := filepath.Join(dir, "default"), filepath.Join(dir, "small")
	mustRun(t, trainArgs(data, def, "cpu", "8")...)
	mustRun(t, trainArgs(data, small, "cpu", "8", "--graph-cache-mb", "1")...)
	m, err := transformer.New(tinyModel(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.GraphBudget != 1<<20 {
		t.Errorf("after --graph-cache-mb 1, a new model's budget is %d", m.GraphBudget)
	}
	for _, f := range []string{"config.json", "model.safetensors", "optim.safetensors", "best.safetensors"} {
		a, _ := os.ReadFile(filepath.Join(def, f))
		b, _ := os.ReadFile(filepath.Join(small, f))
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s differs with --graph-cache-mb 1", f)
		}
	}

	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"train", "--train", data, "--out", out},
		{"predict", "--run", def, "--in", data, "--out", out},
		{"finetune", "--run", def, "--data", data, "--out", out},
		{"run", "--out", out},
	} {
		t.Run(args[0]+" negative", func(t *testing.T) {
			_, errs, code := runCLI(t, append(args, "--graph-cache-mb", "-5")...)
			if code != 2 || !strings.Contains(errs, "--graph-cache-mb -5") {
				t.Errorf("exit %d, stderr %q; want 2 and the flag named", code, errs)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused command left %s", out)
			}
		})
	}
}

// tinyModel is a valid Transformer config of the smallest sizes.
func tinyModel() models.Config {
	cfg := models.DefaultConfig()
	cfg.SrcVocab, cfg.TgtVocab, cfg.Layers, cfg.Dim, cfg.MLPDim, cfg.Heads = 8, 8, 1, 8, 8, 2
	return cfg
}
