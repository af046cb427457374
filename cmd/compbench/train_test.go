package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/safetensors"
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

// TestTrainDefaultsPerModel checks the config a new run starts from: the
// LSTM models take Keysers et al.'s sizes unless flags or --config say
// otherwise.
func TestTrainDefaultsPerModel(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "cfg.json")
	os.WriteFile(cfgFile, []byte(`{"steps": 7}`), 0o644)
	cases := []struct {
		name                string
		args                []string
		layers, dim, warmup int
		dropout             float64
	}{
		{"transformer", []string{"--model", "transformer"}, 3, 256, 16000, 0.1},
		{"default model", nil, 3, 256, 16000, 0.1},
		{"lstm-attention", []string{"--model", "lstm-attention"}, 2, 512, 0, 0.4},
		{"lstm-copy", []string{"--model", "lstm-copy"}, 2, 512, 0, 0.4},
		{"flags override", []string{"--model", "lstm-copy", "--dim", "64", "--dropout", "0.2", "--warmup", "10"}, 2, 64, 10, 0.2},
		{"config over lstm defaults", []string{"--model", "lstm-attention", "--config", cfgFile}, 2, 512, 0, 0.4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := flagsConfig(t, dir, c.args)
			m := cfg.Model
			if m.Layers != c.layers || m.Dim != c.dim || cfg.Warmup != c.warmup || m.Dropout != c.dropout {
				t.Errorf("layers %d dim %d warmup %d dropout %g; want %d %d %d %g", m.Layers, m.Dim, cfg.Warmup, m.Dropout,
					c.layers, c.dim, c.warmup, c.dropout)
			}
		})
	}
	t.Run("config.json of a run", func(t *testing.T) {
		run := filepath.Join(dir, "run")
		data := filepath.Join("testdata", "train-tiny.jsonl")
		_, errs, code := runCLI(t, "train", "--model", "lstm-attention", "--train", data, "--out", run, "--steps", "1", "--dim", "8", "--batch", "4")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		b, err := os.ReadFile(filepath.Join(run, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"layers": 2`, `"dim": 8`, `"dropout": 0.4`, `"warmup": 0`, `"variant": "lstm-attention"`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("config.json lacks %s:\n%s", want, b)
			}
		}
	})
	t.Run("help", func(t *testing.T) {
		out, errs, code := runCLI(t, "train", "--help")
		if code != 0 || !strings.Contains(out, "LSTM models 512") || !strings.Contains(out, "Keysers") {
			t.Errorf("exit %d, help lacks the LSTM defaults:\n%s%s", code, out, errs)
		}
	})
}

// TestTrainInitEncoder: an LSTM model with the Transformer encoder starts
// from a Transformer run's encoder; mismatched sizes and other models are
// refused before any run file is written.
func TestTrainInitEncoder(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join("testdata", "train-tiny.jsonl")
	base := filepath.Join(dir, "transformer")
	small := []string{"--layers", "1", "--dim", "16", "--mlp", "32", "--batch", "4", "--steps", "1"}
	if _, errs, code := runCLI(t, append([]string{"train", "--model", "transformer", "--heads", "2", "--train", data, "--out", base}, small...)...); code != 0 {
		t.Fatalf("transformer run: exit %d: %s", code, errs)
	}
	lstmRun := filepath.Join(dir, "lstm")
	if _, errs, code := runCLI(t, append([]string{"train", "--model", "lstm-copy", "--train", data, "--out", lstmRun}, small...)...); code != 0 {
		t.Fatalf("lstm run: exit %d: %s", code, errs)
	}
	lstm := append([]string{"train", "--model", "lstm-copy", "--encoder", "transformer", "--train", data, "--lr", "1e-9"}, small...)
	cases := []struct {
		name  string
		extra []string
		code  int
		want  string
	}{
		{"loads", []string{"--encoder-heads", "2", "--init-encoder", base}, 0, "encoder initialised from"},
		{"heads differ", []string{"--encoder-heads", "4", "--init-encoder", base}, 1, "4 heads"},
		{"layers differ", []string{"--encoder-heads", "2", "--encoder-layers", "2", "--init-encoder", base}, 1, "2 layers"},
		{"not a transformer run", []string{"--encoder-heads", "2", "--init-encoder", lstmRun}, 1, "not a Transformer"},
		{"no run", []string{"--encoder-heads", "2", "--init-encoder", filepath.Join(dir, "none")}, 1, "config.json"},
		{"lstm encoder", []string{"--encoder", "lstm", "--init-encoder", base}, 2, "--encoder transformer"},
		{"unknown encoder", []string{"--encoder", "gru"}, 2, `unknown encoder "gru"`},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprint("run", i))
			_, errs, code := runCLI(t, append(append(append([]string(nil), lstm...), "--out", out), c.extra...)...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, c.code, c.want)
			}
			if code != 0 {
				if _, err := os.Stat(filepath.Join(out, "config.json")); err == nil {
					t.Errorf("a failed start left config.json")
				}
				return
			}
			// One step at lr 1e-9 leaves the loaded weights in place.
			got, err := safetensors.ReadFile(filepath.Join(out, "model.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			// Without a dev set the run has no best checkpoint: its
			// latest weights are the ones loaded.
			want, err := safetensors.ReadFile(filepath.Join(base, "model.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"enc0.self.wq", "enc0.ffn.w2", "enc.ln.g"} {
				g, _ := got.Get(name)
				w, _ := want.Get(name)
				if g == nil || w == nil {
					t.Fatalf("tensor %s missing", name)
				}
				gv, _ := g.Float32s()
				wv, _ := w.Float32s()
				for k := range wv {
					if math.Abs(float64(gv[k]-wv[k])) > 1e-6 {
						t.Fatalf("%s[%d] = %v, the Transformer run's %v", name, k, gv[k], wv[k])
					}
				}
			}
			b, _ := os.ReadFile(filepath.Join(out, "config.json"))
			if !strings.Contains(string(b), `"encoder": "transformer"`) {
				t.Errorf("config.json lacks the encoder:\n%s", b)
			}
		})
	}
}
