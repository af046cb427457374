package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/models/pretrained"
)

// fixture is a tiny random Hugging Face folder of models/pretrained.
func fixture(name string) string {
	return filepath.Join("..", "..", "models", "pretrained", "testdata", name)
}

// pretrainedRecords are SCAN-like commands the tiny T5's tokenizer spells
// without unknown pieces.
const pretrainedRecords = `{"id":"a","input":"jump twice","output":"JUMP JUMP"}
{"id":"b","input":"walk","output":"WALK"}
{"id":"c","input":"walk left twice","output":"LTURN WALK LTURN WALK"}
{"id":"d","input":"run right","output":"RTURN RUN"}
{"id":"e","input":"look thrice","output":"LOOK LOOK LOOK"}
`

// TestTrainPretrained fine-tunes the tiny T5 and BART folders through
// the command line (train --init hf:DIR), resumes to the weights of an
// uninterrupted run, decodes with beam search and exports the result as a
// Hugging Face folder that loads again.
func TestTrainPretrained(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "d.jsonl")
	if err := os.WriteFile(file, []byte(pretrainedRecords), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"t5-tiny", "bart-tiny"} {
		t.Run(name, func(t *testing.T) {
			base := []string{"train", "--init", "hf:" + fixture(name), "--train", file, "--dev", file,
				"--batch", "2", "--lr", "0.003", "--eval-every", "2", "--max-src", "16", "--max-tgt", "16"}
			run := filepath.Join(dir, name)
			if out, errs, code := runCLI(t, append(base, "--steps", "6", "--out", run)...); code != 0 {
				t.Fatalf("train: exit %d\n%s\n%s", code, out, errs)
			}
			b, err := os.ReadFile(filepath.Join(run, "config.json"))
			if err != nil || !strings.Contains(string(b), `"schedule": "polynomial"`) || !strings.Contains(string(b), `"pretrained": "/`) {
				t.Errorf("config.json lacks the polynomial schedule or the absolute folder (%v):\n%s", err, b)
			}
			// 3 steps, then a resume to 6: the same weights. (A constant
			// rate: the polynomial decay's depends on --steps.)
			full, half := filepath.Join(dir, name+"-full"), filepath.Join(dir, name+"-half")
			constant := append(append([]string(nil), base...), "--schedule", "rsqrt", "--warmup", "0")
			if out, errs, code := runCLI(t, append(constant, "--steps", "6", "--out", full)...); code != 0 {
				t.Fatalf("train: exit %d\n%s\n%s", code, out, errs)
			}
			if out, errs, code := runCLI(t, append(constant, "--steps", "3", "--out", half)...); code != 0 {
				t.Fatalf("train: exit %d\n%s\n%s", code, out, errs)
			}
			if out, errs, code := runCLI(t, "train", "--resume", "--steps", "6", "--train", file, "--dev", file, "--out", half); code != 0 {
				t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
			}
			a, _ := os.ReadFile(filepath.Join(full, "model.safetensors"))
			c, _ := os.ReadFile(filepath.Join(half, "model.safetensors"))
			if len(a) == 0 || !bytes.Equal(a, c) {
				t.Errorf("3 steps resumed to 6 differ from 6 steps")
			}
			preds := filepath.Join(dir, name+"-preds.jsonl")
			if out, errs, code := runCLI(t, "predict", "--run", run, "--in", file, "--out", preds, "--beam", "2", "--max-len", "12"); code != 0 {
				t.Fatalf("predict: exit %d\n%s\n%s", code, out, errs)
			}
			if p, _ := os.ReadFile(preds); bytes.Count(p, []byte("\n")) != 5 || !bytes.Contains(p, []byte(`"beam":[`)) {
				t.Errorf("predictions:\n%s", p)
			}
			hf := filepath.Join(dir, name+"-hf")
			if out, errs, code := runCLI(t, "export", "--run", run, "--out", hf); code != 0 {
				t.Fatalf("export: exit %d\n%s\n%s", code, out, errs)
			}
			if _, err := pretrained.Open(hf); err != nil {
				t.Errorf("the exported folder does not open: %v", err)
			}
			if _, errs, code := runCLI(t, "export", "--run", run, "--out", hf); code != 1 || !strings.Contains(errs, "already exists") {
				t.Errorf("export over an existing folder: exit %d, %q", code, errs)
			}
		})
	}
}

// TestTrainPretrainedErrors: each misuse of --init is one line and the
// right exit status, and leaves no run folder behind.
func TestTrainPretrainedErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "d.jsonl")
	if err := os.WriteFile(file, []byte(pretrainedRecords), 0o644); err != nil {
		t.Fatal(err)
	}
	trun := filepath.Join(dir, "tr")
	if out, errs, code := runCLI(t, "train", "--train", file, "--steps", "1", "--dim", "8", "--heads", "2", "--mlp", "8", "--out", trun); code != 0 {
		t.Fatalf("train: exit %d\n%s\n%s", code, out, errs)
	}
	t5 := "hf:" + fixture("t5-tiny")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no hf prefix", []string{"train", "--init", fixture("t5-tiny")}, 2, "want hf:DIR"},
		{"missing folder", []string{"train", "--init", "hf:" + filepath.Join(dir, "none")}, 1, "no config.json"},
		{"other model", []string{"train", "--init", t5, "--model", "bart"}, 2, "holds a t5 model"},
		{"architecture flag", []string{"train", "--init", t5, "--layers", "3"}, 2, "--layers does not apply to t5"},
		{"preset", []string{"train", "--init", t5, "--preset", "cpu-small"}, 2, "--preset sizes a model"},
		{"t5 without a folder", []string{"train", "--model", "t5"}, 2, "train --init hf:DIR"},
		{"export a transformer", []string{"export", "--run", trun}, 2, "export writes the pretrained models"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "bad")
			args := append(append([]string(nil), tc.args...), "--out", out)
			if tc.args[0] == "train" {
				args = append(args, "--train", file, "--steps", "1")
			}
			_, errs, code := runCLI(t, args...)
			if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
				t.Errorf("exit %d, %q; want %d and one line with %q", code, errs, tc.code, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused command left %s", out)
			}
		})
	}
}

// TestTrainPretrainedTaskPrefix: --prefix task:NAME takes the prefix the
// folder's config.json gives the task, and config.json records the text.
func TestTrainPretrainedTaskPrefix(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "d.jsonl")
	if err := os.WriteFile(file, []byte(pretrainedRecords), 0o644); err != nil {
		t.Fatal(err)
	}
	hf := filepath.Join(dir, "t5")
	if err := os.Mkdir(hf, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json"} {
		b, err := os.ReadFile(filepath.Join(fixture("t5-tiny"), name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "config.json" {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m["task_specific_params"] = map[string]any{"walk_it": map[string]any{"prefix": "walk left "}, "none": map[string]any{}}
			if b, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(hf, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"train", "--init", "hf:" + hf, "--train", file, "--steps", "1", "--batch", "2"}
	run := filepath.Join(dir, "run")
	if out, errs, code := runCLI(t, append(base, "--prefix", "task:walk_it", "--out", run)...); code != 0 {
		t.Fatalf("train: exit %d\n%s\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(run, "config.json")); err != nil || !strings.Contains(string(b), `"prefix": "walk left "`) {
		t.Errorf("config.json does not record the task's prefix (%v):\n%s", err, b)
	}
	for _, tc := range []struct {
		name, prefix, want string
		code               int
		init               bool
	}{
		{"unknown task", "task:summarize", "no prefix for task \"summarize\" (tasks with one: [walk_it])", 1, true},
		{"no folder", "task:walk_it", "give --init hf:DIR", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"train", "--train", file, "--steps", "1", "--prefix", tc.prefix, "--out", filepath.Join(dir, "bad")}
			if tc.init {
				args = append(args, "--init", "hf:"+hf)
			}
			if _, errs, code := runCLI(t, args...); code != tc.code || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, %q; want %d and %q", code, errs, tc.code, tc.want)
			}
		})
	}
}
