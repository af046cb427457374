package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"compbench/engine"
	"compbench/train"
)

// runTiny is a compbench run small enough for a unit test: a 1-layer model,
// a few steps, a handful of examples.
var runTiny = []string{"--task", "length", "--models", "transformer,relative", "--layers", "1", "--heads", "2", "--dim", "16",
	"--mlp", "32", "--steps", "6", "--batch", "8", "--warmup", "3", "--eval-every", "3", "--eval-limit", "8",
	"--train-size", "40", "--dev-size", "8", "--test-size", "8", "--finetune-steps", "2", "--seed", "3"}

// timeCol is the last column of results.md, the only one that may differ.
var timeCol = regexp.MustCompile(`\| [0-9hms.]+ \|\n`)

// TestRunDevice runs a whole experiment twice on --device cpu: every
// command names the backend, and one seed gives the same results table,
// metrics, predictions and weights.
func TestRunDevice(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	mustRun(t, append([]string{"run", "--out", a}, runTiny...)...)
	errs := mustRun(t, append([]string{"run", "--out", b, "--device", "cpu"}, runTiny...)...)
	if !strings.Contains(errs, "engine executor on cpu") {
		t.Errorf("progress does not name the backend:\n%s", errs)
	}
	read := func(root string) string {
		b, err := os.ReadFile(filepath.Join(root, "results.md"))
		if err != nil {
			t.Fatal(err)
		}
		return timeCol.ReplaceAllString(string(b), "|\n")
	}
	if x, y := read(a), read(b); x != y {
		t.Errorf("results.md differs:\n%s\n%s", x, y)
	}
	for _, run := range []string{"transformer", "transformer-ft", "relative", "relative-ft"} {
		t.Run(run, func(t *testing.T) {
			sameJSONL(t, filepath.Join(a, run, "metrics.jsonl"), filepath.Join(b, run, "metrics.jsonl"), "tokens_per_s")
			sameJSONL(t, filepath.Join(a, run, "test.preds.jsonl"), filepath.Join(b, run, "test.preds.jsonl"))
			sameWeights(t, filepath.Join(a, run, "model.safetensors"), filepath.Join(b, run, "model.safetensors"), 0)
		})
	}
}

// TestRunDeviceRefused: a bad --device and cuda in a binary without GPU
// support are usage errors (exit 2, as
// in train) that leave no experiment folder behind.
func TestRunDeviceRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "exp")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad device", []string{"--device", "tpu"}, "want cpu, cuda or cuda:N"},
		{"bad ordinal", []string{"--device", "cuda:x"}, "cuda:N"},
	}
	if !engine.CUDABuilt {
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"cuda without gpu build", []string{"--device", "cuda"}, "-tags gpu"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCLI(t, append([]string{"run", "--out", out}, c.args...)...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused run left %s", out)
			}
		})
	}
}

// TestRunDefaults: compbench run's defaults are the ones measured to learn
// part of the default task's training distribution (RESULTS.md), and its
// help and docs/run.md state them.
func TestRunDefaults(t *testing.T) {
	c := train.RunConfig()
	cases := []struct {
		name      string
		got, want any
	}{
		{"layers", c.Model.Layers, 2},
		{"dim", c.Model.Dim, 64},
		{"mlp", c.Model.MLPDim, 128},
		{"heads", c.Model.Heads, 4},
		{"dropout", c.Model.Dropout, 0.0},
		{"steps", c.Steps, 600},
		{"batch", c.Batch, 32},
		{"lr", c.LR, 2e-3},
		{"warmup", c.Warmup, 100},
	}
	for _, k := range cases {
		t.Run(k.name, func(t *testing.T) {
			if k.got != k.want {
				t.Errorf("%s %v; the measured default is %v", k.name, k.got, k.want)
			}
		})
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	out, _, code := runCLI(t, "run", "--help")
	if code != 0 || !strings.Contains(flat(out), train.RunDefaults()) {
		t.Errorf("run --help does not state %q:\n%s", train.RunDefaults(), out)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "run.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flat(string(doc)), train.RunDefaults()) {
		t.Errorf("docs/run.md does not state %q", train.RunDefaults())
	}
}

// TestRunData: run --data reads a split folder instead of generating one,
// fine-tunes only when the folder has finetune.jsonl, starts each model
// from --preset when one is named, and refuses generation flags beside it.
func TestRunData(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen")
	mustRun(t, "gen", "scan", "--task", "length", "--train-size", "40", "--dev-size", "8", "--test-size", "8", "--seed", "3", "--out", gen)
	bare := filepath.Join(dir, "bare")
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"train.jsonl", "dev.jsonl", "test.jsonl"} {
		b, err := os.ReadFile(filepath.Join(gen, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bare, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tiny := []string{"--models", "transformer,lstm-attention", "--layers", "1", "--dim", "16", "--steps", "4", "--batch", "8",
		"--warmup", "0", "--eval-every", "2", "--eval-limit", "4", "--finetune-steps", "2", "--seed", "3"}
	cases := []struct {
		name, data string
		preset     bool
		ftRuns     bool
	}{
		{"with finetune.jsonl", gen, false, true},
		{"without finetune.jsonl", bare, false, false},
		{"preset cpu-small", bare, true, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out", strconv.Itoa(i))
			args := append([]string{"run", "--data", c.data, "--out", out}, tiny...)
			if c.preset {
				args = append(args, "--preset", "cpu-small")
			}
			mustRun(t, args...)
			if _, err := os.Stat(filepath.Join(out, "data")); err == nil {
				t.Errorf("--data generated %s/data", out)
			}
			res, err := os.ReadFile(filepath.Join(out, "results.md"))
			if err != nil || !strings.Contains(string(res), "split "+c.data) {
				t.Errorf("results.md does not name the split (%v):\n%s", err, res)
			}
			_, err = os.Stat(filepath.Join(out, "lstm-attention-ft", "test.preds.jsonl"))
			if (err == nil) != c.ftRuns {
				t.Errorf("fine-tuned predictions present %v, want %v", err == nil, c.ftRuns)
			}
			cfg, err := os.ReadFile(filepath.Join(out, "lstm-attention", "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(cfg), `"preset": "cpu-small"`); got != c.preset {
				t.Errorf("config.json records the preset %v, want %v:\n%s", got, c.preset, cfg)
			}
		})
	}
	for _, c := range []struct {
		name, data, out, want string
		code                  int
	}{
		{"missing folder", filepath.Join(dir, "nope"), filepath.Join(dir, "r1"), "not a folder", 1},
		{"a file", filepath.Join(gen, "train.jsonl"), filepath.Join(dir, "r2"), "not a folder", 1},
		{"no test.jsonl", filepath.Join(dir, "out"), filepath.Join(dir, "r3"), "has no train.jsonl", 1},
		{"out is the data", bare, bare, "is the --data folder", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "run", "--data", c.data, "--out", c.out, "--models", "transformer")
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, c.code, c.want)
			}
			if c.out != c.data {
				if _, err := os.Stat(c.out); err == nil {
					t.Errorf("a refused run left %s", c.out)
				}
			}
		})
	}
	t.Run("refused beside --task", func(t *testing.T) {
		out := filepath.Join(dir, "refused")
		_, errs, code := runCLI(t, "run", "--data", gen, "--task", "length", "--out", out)
		if code != 2 || !strings.Contains(errs, "give one of them") {
			t.Errorf("exit %d, stderr %q; want 2 and a choice between --task and --data", code, errs)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("a refused run left %s", out)
		}
	})
}
