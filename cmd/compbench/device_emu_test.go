//go:build gpuemu && !gpu

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeviceCUDAEmulated runs train, predict and finetune with --device
// cuda on the kernel emulator (build tag gpuemu): the commands' CUDA wiring
// end to end (device open, weights and Adam state on the device, decoding
// there, checkpoints downloaded), against the CPU run of the same seed.
// FP32 products: the runs differ only by summation order (devTol; the
// attention key biases, deviceNoise, are not compared).
func TestDeviceCUDAEmulated(t *testing.T) {
	t.Setenv("COMPBENCH_GEMM", "fp32")
	tol, noise := devTol, deviceNoise
	dir := t.TempDir()
	data := filepath.Join("testdata", "train-tiny.jsonl")
	cpu, gpu := filepath.Join(dir, "cpu"), filepath.Join(dir, "cuda")
	mustRun(t, trainArgs(data, cpu, "cpu", "6")...)
	out, errs, code := runCLI(t, trainArgs(data, gpu, "cuda", "6")...)
	if code != 0 {
		t.Fatalf("train --device cuda: exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "engine executor on cuda:0") || !strings.Contains(out, "tokens/s") {
		t.Errorf("train does not name the device or report tokens/s:\n%s\n%s", out, errs)
	}
	for _, f := range []string{"model.safetensors", "best.safetensors", "optim.safetensors"} {
		sameWeights(t, filepath.Join(cpu, f), filepath.Join(gpu, f), tol, noise...)
	}

	want, got := filepath.Join(dir, "p-cpu"), filepath.Join(dir, "p-cuda")
	mustRun(t, "predict", "--run", cpu, "--in", data, "--out", want)
	mustRun(t, "predict", "--run", cpu, "--in", data, "--out", got, "--device", "cuda")
	w, g := readJSONLMaps(t, want, "score"), readJSONLMaps(t, got, "score")
	if len(w) != len(g) {
		t.Fatalf("%d predictions on cuda, %d on cpu", len(g), len(w))
	}
	for i := range w {
		if w[i]["prediction"] != g[i]["prediction"] {
			t.Errorf("prediction %d: %v on cuda, %v on cpu", i, g[i]["prediction"], w[i]["prediction"])
		}
	}

	ftCPU, ftGPU := filepath.Join(dir, "ft-cpu"), filepath.Join(dir, "ft-cuda")
	mustRun(t, "finetune", "--run", cpu, "--data", data, "--steps", "2", "--out", ftCPU)
	mustRun(t, "finetune", "--run", cpu, "--data", data, "--steps", "2", "--out", ftGPU, "--device", "cuda")
	sameWeights(t, filepath.Join(ftCPU, "model.safetensors"), filepath.Join(ftGPU, "model.safetensors"), tol, noise...)
}

// TestDeviceCUDAEmulatedLSTM runs the LSTM models' (lstmDeviceCases) train, predict (greedy
// and beam) and finetune with --device cuda on the kernel emulator against
// their CPU runs: the recurrent kernels (kernels/lstm.cu) inside the
// commands, FP32 products.
func TestDeviceCUDAEmulatedLSTM(t *testing.T) {
	t.Setenv("COMPBENCH_GEMM", "fp32")
	data := filepath.Join("testdata", "train-tiny.jsonl")
	for _, c := range lstmDeviceCases {
		model, x := c.model, c.extra
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cpu, gpu := filepath.Join(dir, "cpu"), filepath.Join(dir, "cuda")
			mustRun(t, lstmTrainArgs(data, cpu, "cpu", model, "6", x...)...)
			out, errs, code := runCLI(t, lstmTrainArgs(data, gpu, "cuda", model, "6", x...)...)
			if code != 0 {
				t.Fatalf("train --device cuda: exit %d\n%s", code, errs)
			}
			if !strings.Contains(errs, "engine executor on cuda:0") || !strings.Contains(out, "tokens/s") {
				t.Errorf("train does not name the device or report tokens/s:\n%s\n%s", out, errs)
			}
			sameJSONLTol(t, filepath.Join(cpu, "metrics.jsonl"), filepath.Join(gpu, "metrics.jsonl"), lstmDevTol, "tokens_per_s")
			for _, f := range []string{"model.safetensors", "optim.safetensors"} {
				sameWeights(t, filepath.Join(cpu, f), filepath.Join(gpu, f), lstmWeightTol, lstmNoise...)
			}
			for _, beam := range []string{"1", "3"} {
				want, got := filepath.Join(dir, "p-cpu-"+beam), filepath.Join(dir, "p-cuda-"+beam)
				mustRun(t, "predict", "--run", cpu, "--in", data, "--out", want, "--beam", beam)
				mustRun(t, "predict", "--run", cpu, "--in", data, "--out", got, "--beam", beam, "--device", "cuda")
				sameJSONLTol(t, want, got, lstmDevTol)
			}
			ftCPU, ftGPU := filepath.Join(dir, "ft-cpu"), filepath.Join(dir, "ft-cuda")
			mustRun(t, "finetune", "--run", cpu, "--data", data, "--steps", "2", "--out", ftCPU)
			mustRun(t, "finetune", "--run", cpu, "--data", data, "--steps", "2", "--out", ftGPU, "--device", "cuda")
			sameWeights(t, filepath.Join(ftCPU, "model.safetensors"), filepath.Join(ftGPU, "model.safetensors"), lstmWeightTol, lstmNoise...)
		})
	}
}

// TestDeviceCUDAEmulatedIOEncoder runs the double I/O encoder's train and
// predict with --device cuda on the kernel emulator against the CPU run
// (FP32 products), as TestDeviceCUDAEmulated does for the flat model.
func TestDeviceCUDAEmulatedIOEncoder(t *testing.T) {
	t.Setenv("COMPBENCH_GEMM", "fp32")
	tol, noise := devTol, deviceNoise
	dir := t.TempDir()
	file := ioRecords(t, dir)
	cpu, gpu := filepath.Join(dir, "cpu"), filepath.Join(dir, "cuda")
	short := []string{"--steps", "2", "--max-tgt", "12"} // the emulator runs a kernel thread per GPU thread
	mustRun(t, append(ioTrainArgs(file, cpu, "cpu"), short...)...)
	if _, errs, code := runCLI(t, append(ioTrainArgs(file, gpu, "cuda"), short...)...); code != 0 || !strings.Contains(errs, "engine executor on cuda:0") {
		t.Fatalf("train --device cuda: exit %d\n%s", code, errs)
	}
	sameJSONLTol(t, filepath.Join(cpu, "metrics.jsonl"), filepath.Join(gpu, "metrics.jsonl"), tol, "tokens_per_s")
	for _, f := range []string{"model.safetensors", "optim.safetensors"} {
		sameWeights(t, filepath.Join(cpu, f), filepath.Join(gpu, f), tol, noise...)
	}
	want, got := filepath.Join(dir, "p-cpu"), filepath.Join(dir, "p-cuda")
	mustRun(t, "predict", "--run", cpu, "--in", file, "--out", want, "--beam", "2", "--max-len", "6")
	mustRun(t, "predict", "--run", cpu, "--in", file, "--out", got, "--beam", "2", "--max-len", "6", "--device", "cuda")
	sameJSONLTol(t, want, got, tol)
}

// deviceNoise are the Transformer weights the cross-implementation tests
// do not compare: the attention key biases, whose gradient is zero in
// exact arithmetic (softmax ignores a per-row constant), so Adam moves
// them by rounding noise, which differs between summation orders.
var deviceNoise = []string{".bk"}

// lstmDevTol and lstmWeightTol are the relative tolerances for metrics
// and weights between the two implementations.
var (
	lstmDevTol    = crossTol(lstmReduction, lstmSteps)
	lstmWeightTol = crossTol(lstmReduction, lstmSteps)
)

// lstmNoise are the weights the cross-implementation LSTM tests do not
// compare, because their updates are rounding noise:
//   - the Transformer encoder's attention key biases (.self.bk): their
//     gradient is zero in exact arithmetic (softmax ignores a per-row
//     constant);
//   - the additive attention's bias and query projection (attn.b,
//     attn.wq): both add the same vector to every encoder position's
//     pre-activation, so their gradient is Σ_t dscore_t·(v ⊙ tanh'_t),
//     which cancels exactly when tanh' is equal across positions (the
//     dscore_t sum to zero under softmax). At initialisation the
//     pre-activations are small, so only a second-order remainder of
//     about 1e-10..1e-8 survives, the size of Adam's eps and of the
//     rounding of its cancelling terms; Adam scales it to steps of about
//     lr whose sign is that rounding. Measured differences reach 3e-3 of
//     the tensor's scale on one BLAS and 1e-3 on another, far above the
//     bound that holds for every other weight.
//
// The names match as suffixes, so the Adam moments (m/…, v/…) of these
// weights are skipped with them.
var lstmNoise = []string{".self.bk", "attn.b", "attn.wq"}

// TestDeviceCUDAEmulatedPretrained fine-tunes the tiny T5 and BART
// (train --init hf:DIR, dropout on) with --device cuda on the kernel
// emulator against the CPU run of the same seed, and decodes with the
// key/value cache there (beam 2): RMSNorm, exact GELU, the cache writes
// and reorders inside the commands. FP32 products, devTol as above; BART's
// key biases, whose gradients are zero in exact arithmetic, are noise.
func TestDeviceCUDAEmulatedPretrained(t *testing.T) {
	t.Setenv("COMPBENCH_GEMM", "fp32")
	dir := t.TempDir()
	data := filepath.Join(dir, "d.jsonl")
	if err := os.WriteFile(data, []byte(pretrainedRecords), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"t5-tiny", "bart-tiny"} {
		t.Run(name, func(t *testing.T) {
			args := func(out, dev string) []string {
				return []string{"train", "--init", "hf:" + fixture(name), "--train", data, "--dev", data, "--out", out, "--device", dev,
					"--steps", "4", "--batch", "2", "--lr", "0.003", "--eval-every", "2", "--max-src", "16", "--max-tgt", "16"}
			}
			cpu, gpu := filepath.Join(dir, name+"-cpu"), filepath.Join(dir, name+"-cuda")
			mustRun(t, args(cpu, "cpu")...)
			mustRun(t, args(gpu, "cuda")...)
			sameWeights(t, filepath.Join(cpu, "model.safetensors"), filepath.Join(gpu, "model.safetensors"), devTol, "k_proj.bias")
			want, got := filepath.Join(dir, name+"-p-cpu"), filepath.Join(dir, name+"-p-cuda")
			mustRun(t, "predict", "--run", cpu, "--in", data, "--out", want, "--beam", "2", "--max-len", "12")
			mustRun(t, "predict", "--run", cpu, "--in", data, "--out", got, "--beam", "2", "--max-len", "12", "--device", "cuda")
			w, g := readJSONLMaps(t, want, "score"), readJSONLMaps(t, got, "score")
			if len(w) != len(g) {
				t.Fatalf("%d predictions on cuda, %d on cpu", len(g), len(w))
			}
			for i := range w {
				if fmt.Sprint(w[i]) != fmt.Sprint(g[i]) {
					t.Errorf("prediction %d: %v on cuda, %v on cpu", i, g[i], w[i])
				}
			}
		})
	}
}
