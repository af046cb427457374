//go:build gpuemu && !gpu

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/engine"
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
			sameJSONLTol(t, filepath.Join(cpu, "metrics.jsonl"), filepath.Join(gpu, "metrics.jsonl"), lstmDevTol, "tokens_per_s", "gemm")
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
	sameJSONLTol(t, filepath.Join(cpu, "metrics.jsonl"), filepath.Join(gpu, "metrics.jsonl"), tol, "tokens_per_s", "gemm")
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

// TestDeviceCUDAEmulatedGemmAuto: with COMPBENCH_GEMM unset the emulator,
// which has no cuBLAS, falls to compbench's TF32 kernel; train says so once
// at start, and provenance.jsonl and every training line of metrics.jsonl
// record it. A resume with COMPBENCH_GEMM=fp32 records its own choice, so
// the two halves of the run can be told apart.
func TestDeviceCUDAEmulatedGemmAuto(t *testing.T) {
	t.Setenv("COMPBENCH_GEMM", "")
	data := filepath.Join("testdata", "train-tiny.jsonl")
	run := filepath.Join(t.TempDir(), "run")
	args := func(steps string, extra ...string) []string {
		return append([]string{"train", "--train", data, "--out", run, "--device", "cuda", "--steps", steps, "--eval-every", "1"},
			append(append([]string(nil), tinyTrain[:len(tinyTrain)-4]...), extra...)...) // tinyTrain without its --steps and --eval-every
	}
	errs := mustRun(t, args("2")...)
	const start = "train: engine executor on cuda:0 emulated GPU on the CPU (build tag gpuemu, sm_80 kernels), GEMM compbench TF32 kernel (auto: no cuBLAS could be loaded)"
	if n := strings.Count(errs, start); n != 1 {
		t.Errorf("the start line %q appears %d times:\n%s", start, n, errs)
	}
	t.Setenv("COMPBENCH_GEMM", "fp32")
	mustRun(t, args("3", "--resume")...)

	prov := jsonLines(t, filepath.Join(run, "provenance.jsonl"))
	if len(prov) != 2 {
		t.Fatalf("%d provenance lines, want 2", len(prov))
	}
	for i, want := range []struct{ device, gemm string }{
		{"GEMM compbench TF32 kernel (auto: no cuBLAS could be loaded)", "tf32"},
		{"GEMM compbench FP32 kernel (COMPBENCH_GEMM=fp32)", "fp32"},
	} {
		dev, _ := prov[i]["device"].(string)
		if !strings.HasPrefix(dev, "cuda:0 ") || !strings.HasSuffix(dev, want.device) || prov[i]["gemm"] != want.gemm {
			t.Errorf("provenance line %d: device %q, gemm %v; want ...%q, %q", i+1, dev, prov[i]["gemm"], want.device, want.gemm)
		}
	}
	var gemms []string
	for _, l := range jsonLines(t, filepath.Join(run, "metrics.jsonl")) {
		if _, ok := l["loss"]; ok {
			g, _ := l["gemm"].(string)
			gemms = append(gemms, g)
		}
	}
	if got := strings.Join(gemms, " "); got != "tf32 fp32" {
		t.Errorf("gemm of the training lines: %q, want \"tf32 fp32\"", got)
	}
}

// TestDeviceCUDAEmulatedMemory: train --device cuda refuses a run whose
// working set exceeds the GPU's free memory (faked here, 1 GiB) before it
// opens the device or writes anything, naming the flag to lower.
func TestDeviceCUDAEmulatedMemory(t *testing.T) {
	oldHost, oldDev := machineMemory, deviceMemory
	defer func() { machineMemory, deviceMemory = oldHost, oldDev }()
	machineMemory = func() (float64, string) { return 1 << 40, "test" }
	asked := 0
	deviceMemory = func(d engine.Device) (float64, float64, error) {
		asked++
		return 1 << 30, 80 << 30, nil
	}
	run := filepath.Join(t.TempDir(), "run")
	data := filepath.Join("testdata", "train-tiny.jsonl")
	_, errs, code := runCLI(t, "train", "--train", data, "--out", run, "--device", "cuda", "--dim", "2048", "--layers", "2", "--steps", "1")
	want := "but cuda:0 has 1.0 GiB free of 80.0 GiB (cuMemGetInfo); lower --dim (dim), --mlp (mlp_dim) or --layers (layers)"
	if code != 2 || !strings.Contains(errs, "of GPU memory, mostly the weights, gradients and Adam moments") || !strings.Contains(errs, want) {
		t.Errorf("exit %d, want 2 and %q:\n%s", code, want, errs)
	}
	if asked != 1 {
		t.Errorf("free memory asked %d times, want 1", asked)
	}
	if _, err := os.Stat(run); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote %s (%v)", run, err)
	}
	// The same run on the CPU does not ask the GPU.
	asked = 0
	mustRun(t, append([]string{"train", "--train", data, "--out", run, "--device", "cpu"}, tinyTrain...)...)
	if asked != 0 {
		t.Errorf("a CPU run asked the GPU's free memory %d times", asked)
	}
}

// jsonLines reads a JSONL file as generic objects.
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}
