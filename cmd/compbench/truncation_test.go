package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTruncationWarning: train and predict say, before any work, how many
// examples the length limits cut, by how much, and which limits keep them
// whole; data within the limits gives no such line. Sources of
// train-tiny.jsonl have 1-4 tokens and targets (EOS included) 2-4.
func TestTruncationWarning(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join("testdata", "train-tiny.jsonl")
	tiny := []string{"--layers", "1", "--heads", "2", "--dim", "16", "--mlp", "32", "--batch", "4", "--steps", "1", "--warmup", "0",
		"--train", data, "--dev", data}
	cut := "4 of 6 examples truncated; sources: 3 longer than 2 tokens, cut by up to 2 (mean 1.3), --max-src 4 keeps them whole; " +
		"targets: 2 longer than 3 tokens, cut by up to 1 (mean 1.0), --max-tgt 4 keeps them whole"
	cases := []struct {
		name string
		args []string
		code int
		want string // a line of stderr; "" for none about truncation
	}{
		{"cut", []string{"train", "--max-src", "2", "--max-tgt", "3", "--out", filepath.Join(dir, "cut")}, 0,
			"warning: " + data + ": " + cut},
		{"default limits", []string{"train", "--out", filepath.Join(dir, "whole")}, 0, ""},
		{"predict", []string{"predict", "--run", filepath.Join(dir, "cut"), "--in", data, "--out", filepath.Join(dir, "p.jsonl")}, 0,
			"warning: " + data + ", under the run's limits: " + cut},
		{"strict", []string{"train", "--max-src", "2", "--strict", "--out", filepath.Join(dir, "strict")}, 1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if args[0] == "train" {
				args = append(append([]string(nil), args...), tiny...)
			}
			out, errs, code := runCLI(t, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errs)
			}
			if c.want != "" && !strings.Contains(errs, c.want+"\n") {
				t.Errorf("stderr lacks\n%s\n%s", c.want, errs)
			}
			// Once per file (train's --train and --dev are the same file
			// here): not again from the training loop or the summary.
			if n := strings.Count(errs+out, "truncated"); c.want != "" && args[0] == "train" && n != 2 {
				t.Errorf("%d mentions of truncation, want one per file (2):\n%s%s", n, errs, out)
			}
			if c.want == "" && strings.Contains(errs, "examples truncated;") {
				t.Errorf("a truncation note where nothing is cut or --strict refuses:\n%s", errs)
			}
		})
	}
}
