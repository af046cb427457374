package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/robustfill"
)

// ioRecords writes six sampled RobustFill tasks (3 I/O examples each) to
// dir and returns the file.
func ioRecords(t *testing.T, dir string) string {
	t.Helper()
	s, err := robustfill.NewSampler(robustfill.Config{NumExamples: 3, MaxInputLen: 8, MaxInputPieces: 3, MaxRepeat: 2, MaxTries: 100})
	if err != nil {
		t.Fatal(err)
	}
	rng := data.NewRand(3)
	var recs []data.Record
	for i := range 6 {
		task, err := s.Sample(rng, robustfill.Spec{Pools: []robustfill.Pool{robustfill.PoolNoCompose}})
		if err != nil {
			t.Fatal(err)
		}
		r := task.Record()
		r.ID = fmt.Sprint(i)
		recs = append(recs, r)
	}
	file := filepath.Join(dir, "rf.jsonl")
	if err := data.WriteRecords(file, recs, false); err != nil {
		t.Fatal(err)
	}
	return file
}

func ioTrainArgs(file, out, dev string) []string {
	return []string{"train", "--model", "relative-sep", "--io-encoder", "double", "--train", file, "--dev", file, "--out", out,
		"--steps", "5", "--layers", "1", "--heads", "2", "--dim", "16", "--mlp", "32", "--max-src", "128", "--max-tgt", "24",
		"--batch", "4", "--warmup", "0", "--dropout", "0", "--device", dev}
}

// TestTrainIOEncoder trains and predicts with --io-encoder double on a few
// sampled RobustFill tasks, and rejects an unknown encoder.
func TestTrainIOEncoder(t *testing.T) {
	dir := t.TempDir()
	file := ioRecords(t, dir)
	runDir := filepath.Join(dir, "run")
	args := ioTrainArgs(file, runDir, "cpu")
	if out, errs, code := runCLI(t, args...); code != 0 {
		t.Fatalf("train: exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(runDir, "config.json"))
	if err != nil || !strings.Contains(string(b), `"io_encoder": "double"`) {
		t.Errorf("config.json does not record the encoder (%v):\n%s", err, b)
	}
	preds := filepath.Join(dir, "preds.jsonl")
	if out, errs, code := runCLI(t, "predict", "--run", runDir, "--in", file, "--out", preds, "--beam", "2"); code != 0 {
		t.Fatalf("predict: exit %d\n%s\n%s", code, out, errs)
	}
	bad := append(append([]string(nil), args...), "--io-encoder", "triple", "--force")
	if _, errs, code := runCLI(t, bad...); code != 2 || !strings.Contains(errs, `unknown io_encoder "triple"`) {
		t.Errorf("unknown encoder: exit %d, %s", code, errs)
	}
}
