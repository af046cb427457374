package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The emulated-GPU LSTM tests compare the CPU's kernels with the GPU's
// (run by the emulator), whose FP32 arithmetic differs only in summation
// order. Their
// tolerances follow from that arithmetic (see crossTol), for the
// configuration of lstmTrainArgs: batch 4, max_tgt 10, dim 12, mlp 24, at
// most lstmSteps optimizer steps.
const (
	// lstmReduction bounds the length of every sum in a step of those
	// runs: a weight gradient sums batch·max_tgt positions of a dim- or
	// mlp-wide product, 4·10·24 = 960 terms.
	lstmReduction = 1000
	// lstmSteps is the most optimizer steps a compared run takes.
	lstmSteps = 10
)

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

// TestDeviceCPULSTM runs train, resume, predict and finetune of both LSTM
// models on --device cpu: a run stopped and resumed reproduces the
// uninterrupted one bit for bit (the checkpoint carries weights, Adam
// state and the RNG position exactly), and fine-tuning is reproducible.
// The models' gradients are checked by finite differences in package
// models; the GPU's kernels against the CPU's in
// TestDeviceCUDAEmulatedLSTM.
func TestDeviceCPULSTM(t *testing.T) {
	data := filepath.Join("testdata", "train-tiny.jsonl")
	for _, c := range lstmDeviceCases {
		model, x := c.model, c.extra
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cpu := filepath.Join(dir, "cpu")
			if errs := mustRun(t, lstmTrainArgs(data, cpu, "cpu", model, "10", x...)...); !strings.Contains(errs, "engine executor on cpu") {
				t.Errorf("progress does not name the backend:\n%s", errs)
			}
			run := filepath.Join(dir, "resumed")
			mustRun(t, lstmTrainArgs(data, run, "cpu", model, "5", x...)...)
			mustRun(t, lstmTrainArgs(data, run, "cpu", model, "10", append([]string{"--resume"}, x...)...)...)
			for _, f := range []string{"model.safetensors", "best.safetensors", "optim.safetensors"} {
				sameWeights(t, filepath.Join(cpu, f), filepath.Join(run, f), 0)
			}
			p := filepath.Join(run, "metrics.jsonl")
			sameRowsTol(t, p, devLines(readJSONLMaps(t, filepath.Join(cpu, "metrics.jsonl"))), devLines(readJSONLMaps(t, p)), 0)

			for _, beam := range []string{"1", "3"} {
				got := filepath.Join(dir, "p-"+beam)
				mustRun(t, "predict", "--run", cpu, "--in", data, "--out", got, "--beam", beam)
				if len(readJSONLMaps(t, got)) == 0 {
					t.Errorf("beam %s: no predictions", beam)
				}
			}

			a, b := filepath.Join(dir, "ft-a"), filepath.Join(dir, "ft-b")
			mustRun(t, "finetune", "--run", cpu, "--data", data, "--steps", "3", "--out", a)
			mustRun(t, "finetune", "--run", cpu, "--data", data, "--steps", "3", "--out", b)
			sameJSONLTol(t, filepath.Join(a, "metrics.jsonl"), filepath.Join(b, "metrics.jsonl"), 0, "tokens_per_s")
			sameWeights(t, filepath.Join(a, "model.safetensors"), filepath.Join(b, "model.safetensors"), 0)
		})
	}
}
