package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainPredictFinetune runs the three commands on a tiny model.
func TestTrainPredictFinetune(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join("testdata", "train-tiny.jsonl")
	runDir := filepath.Join(dir, "run")
	tiny := []string{"--layers", "1", "--heads", "2", "--dim", "16", "--mlp", "32", "--max-src", "8", "--max-tgt", "10",
		"--batch", "4", "--bucket-width", "4", "--lr", "1e-2", "--warmup", "10", "--dropout", "0"}
	args := append([]string{"train", "--model", "sep-to-last", "--train", data, "--dev", data, "--out", runDir, "--steps", "150", "--eval-every", "150"}, tiny...)
	out, errs, code := runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "best dev exact match 100.00%") {
		t.Fatalf("train: exit %d\n%s\n%s", code, out, errs)
	}
	if _, errs, code := runCLI(t, args...); code != 1 || !strings.Contains(errs, "--force") {
		t.Errorf("second train into the same folder: exit %d, %s", code, errs)
	}
	preds := filepath.Join(dir, "preds.jsonl")
	out, errs, code = runCLI(t, "predict", "--run", runDir, "--in", data, "--out", preds, "--beam", "2")
	if code != 0 || !strings.Contains(out, "exact match 100.00%") {
		t.Fatalf("predict: exit %d\n%s\n%s", code, out, errs)
	}
	b, _ := os.ReadFile(preds)
	if first := strings.SplitN(string(b), "\n", 2)[0]; !strings.HasPrefix(first, `{"id":"1","prediction":"JUMP","score":`) || !strings.Contains(first, `"beam":["JUMP",`) {
		t.Errorf("first prediction line %s", first)
	}
	out, errs, code = runCLI(t, "finetune", "--run", runDir, "--data", data, "--steps", "3", "--out", filepath.Join(dir, "ft"))
	if code != 0 || !strings.Contains(out, "fine-tuned") {
		t.Fatalf("finetune: exit %d\n%s\n%s", code, out, errs)
	}
}

func TestTrainBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	cfg := filepath.Join(dir, "cfg.json")
	os.WriteFile(cfg, []byte(`{"steps": 5, "stepz": 3}`), 0o644)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no flags", []string{"train"}, 2, "--train and --out are required"},
		{"unknown model", []string{"train", "--model", "gru", "--train", empty, "--out", dir}, 2, `unknown model "gru"`},
		{"bad config", []string{"train", "--dim", "30", "--heads", "4", "--train", empty, "--out", dir}, 2, "multiple of heads"},
		{"unknown config key", []string{"train", "--config", cfg, "--train", empty, "--out", dir}, 1, `unknown field "stepz"`},
		{"empty data", []string{"train", "--train", empty, "--out", filepath.Join(dir, "r")}, 1, "empty"},
		{"predict without run", []string{"predict", "--run", filepath.Join(dir, "none"), "--in", empty, "--out", filepath.Join(dir, "p")}, 1, "config.json"},
		{"finetune steps", []string{"finetune", "--run", dir, "--data", empty, "--out", dir, "--steps", "0"}, 2, "--steps"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, c.code, c.want)
			}
		})
	}
}
