package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lstmDevTol is the relative tolerance between the CPU LSTM models and
// their engine path (models.EngineLSTM): the engine's products are GEMMs
// whose sums run in another order than the CPU model's loops, so results
// agree within float rounding, amplified over the training steps, not bit
// for bit.
const lstmDevTol = 1e-4

// lstmWeightTol is the tolerance for weights after training, relative to
// each tensor's largest magnitude: Adam divides by the root of the second
// moment, so a weight whose gradients are nearly zero (the attention's at
// initialisation) moves by about the learning rate whatever their size,
// and rounding differences in those gradients show in its updates.
const lstmWeightTol = 3e-3

// lstmNoise are the weights the LSTM device tests do not compare: the
// Transformer encoder's attention key biases, whose gradient is zero in
// exact arithmetic (softmax ignores a per-row constant), so Adam moves
// them by rounding noise, which differs between summation orders (as in
// TestDeviceCUDAEmulated).
var lstmNoise = []string{".self.bk"}

func lstmTrainArgs(dataPath, out, dev, model, steps string, extra ...string) []string {
	a := []string{"train", "--model", model, "--train", dataPath, "--dev", dataPath, "--out", out, "--steps", steps,
		"--eval-every", "5", "--device", dev, "--layers", "2", "--dim", "12", "--max-src", "8", "--max-tgt", "10",
		"--batch", "4", "--bucket-width", "4", "--lr", "1e-2", "--dropout", "0.1", "--label-smoothing", "0.1", "--clip", "1"}
	return append(a, extra...)
}

// sameJSONLTol is sameJSONL with tolerance tol.
func sameJSONLTol(t *testing.T, want, got string, tol float64, skip ...string) {
	t.Helper()
	sameRowsTol(t, got, readJSONLMaps(t, want, skip...), readJSONLMaps(t, got, skip...), tol)
}

// sameJSONFile compares two JSON objects as sameRowsTol compares lines.
func sameJSONFile(t *testing.T, want, got string, tol float64) {
	t.Helper()
	var rows [2]map[string]any
	for i, p := range []string{want, got} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &rows[i]); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	sameRowsTol(t, got, rows[:1], rows[1:], tol)
}

// lstmDeviceCases are the LSTM models the device tests train: both
// variants with the BiLSTM encoder, and lstm-copy on the Transformer
// encoder (2 layers, 2 heads).
var lstmDeviceCases = []struct {
	name, model string
	extra       []string
}{
	{"lstm-attention", "lstm-attention", nil},
	{"lstm-copy", "lstm-copy", nil},
	{"lstm-copy/transformer encoder", "lstm-copy", []string{"--encoder", "transformer", "--encoder-heads", "2", "--mlp", "24"}},
}

// TestDeviceEngineCPULSTM runs train, resume, predict and finetune of both
// LSTM models on the engine path (the code --device cuda runs) and checks
// they write what the CPU models write: the same files, the same
// predictions, numbers within lstmDevTol.
func TestDeviceEngineCPULSTM(t *testing.T) {
	data := filepath.Join("testdata", "train-tiny.jsonl")
	for _, c := range lstmDeviceCases {
		model, x := c.model, c.extra
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cpu, eng := filepath.Join(dir, "cpu"), filepath.Join(dir, "engine")
			mustRun(t, lstmTrainArgs(data, cpu, "cpu", model, "10", x...)...)
			if errs := mustRun(t, lstmTrainArgs(data, eng, engineCPU, model, "10", x...)...); !strings.Contains(errs, "engine executor on cpu") {
				t.Errorf("progress does not name the backend:\n%s", errs)
			}
			sameJSONLTol(t, filepath.Join(cpu, "metrics.jsonl"), filepath.Join(eng, "metrics.jsonl"), lstmDevTol, "tokens_per_s")
			for _, f := range []string{"model.safetensors", "best.safetensors", "optim.safetensors"} {
				sameWeights(t, filepath.Join(cpu, f), filepath.Join(eng, f), lstmWeightTol, lstmNoise...)
			}
			sameJSONFile(t, filepath.Join(cpu, "state.json"), filepath.Join(eng, "state.json"), lstmDevTol)
			for _, f := range []string{"config.json", "vocab.json"} {
				a, _ := os.ReadFile(filepath.Join(cpu, f))
				b, _ := os.ReadFile(filepath.Join(eng, f))
				if string(a) != string(b) {
					t.Errorf("%s differs:\n%s\n%s", f, a, b)
				}
			}

			// Resumed on the other device, the run reaches the same weights.
			run := filepath.Join(dir, "resumed")
			mustRun(t, lstmTrainArgs(data, run, engineCPU, model, "5", x...)...)
			mustRun(t, lstmTrainArgs(data, run, "cpu", model, "10", append([]string{"--resume"}, x...)...)...)
			sameWeights(t, filepath.Join(cpu, "model.safetensors"), filepath.Join(run, "model.safetensors"), lstmWeightTol, lstmNoise...)

			for _, beam := range []string{"1", "3"} {
				want, got := filepath.Join(dir, "p-cpu-"+beam), filepath.Join(dir, "p-eng-"+beam)
				mustRun(t, "predict", "--run", cpu, "--in", data, "--out", want, "--beam", beam)
				mustRun(t, "predict", "--run", cpu, "--in", data, "--out", got, "--beam", beam, "--device", engineCPU)
				sameJSONLTol(t, want, got, lstmDevTol)
			}

			want, got := filepath.Join(dir, "ft-cpu"), filepath.Join(dir, "ft-eng")
			mustRun(t, "finetune", "--run", cpu, "--data", data, "--steps", "3", "--out", want)
			mustRun(t, "finetune", "--run", cpu, "--data", data, "--steps", "3", "--out", got, "--device", engineCPU)
			sameJSONLTol(t, filepath.Join(want, "metrics.jsonl"), filepath.Join(got, "metrics.jsonl"), lstmDevTol, "tokens_per_s")
			sameWeights(t, filepath.Join(want, "model.safetensors"), filepath.Join(got, "model.safetensors"), lstmWeightTol, lstmNoise...)
		})
	}
}
