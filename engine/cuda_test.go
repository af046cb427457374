//go:build gpu || gpuemu

package engine_test

import (
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	G "gorgonia.org/gorgonia"

	"compbench/engine"
	"compbench/kernels"
	"compbench/models/gpt2"
	"compbench/models/transformer"
	"compbench/train"
)

// GPU checks of the engine (build tag gpu; without a GPU the test binary
// exits 0 in kernels/cudaguard, COMPBENCH_REQUIRE_GPU=1 makes that a failure).
//
// Products run in two modes. With the FP32 GEMM every kernel is exact up to
// summation order, so results agree with the TapeMachine within 1e-5 of
// each tensor's (or the largest gradient's) magnitude: that checks the
// engine and the kernels. On the TF32 tensor cores (10 mantissa bits, the
// default on sm_80+) a training step of the tiny separator models differs
// from FP32 by up to 7% of a gradient's norm (rounding carried through
// cancelling sums), so the TF32 mode is checked against the CPU backend
// that rounds product operands the same way, and logits (no backward pass)
// within 1e-2 of their magnitude.

const (
	gpuTol  = 1e-2 // TF32 logits, of the largest magnitude
	fp32Tol = 1e-5 // FP32 GEMM, of the largest magnitude
)

// gpu opens the GPU backend for one test and closes it when the test ends,
// failing the test if anything it ran left device memory allocated.
func gpu(t testing.TB) engine.Backend {
	t.Helper()
	b, err := engine.Open(engine.Device{CUDA: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := b.(*engine.CUDA)
		if err := c.Close(); err != nil {
			t.Errorf("closing %s: %v", c.Name(), err)
		}
		if n, bytes := c.Dev.Live(); n != 0 {
			t.Errorf("%d device buffers (%d bytes) still allocated after the test", n, bytes)
		}
	})
	return b
}

// gemmModes are the GPU's two product modes; set switches be to one.
var gemmModes = []struct {
	name string
	mode kernels.GemmMode
}{{"fp32", kernels.GemmFP32}, {"tf32", kernels.GemmTF32}}

func setGemm(t testing.TB, be engine.Backend, mode kernels.GemmMode) {
	t.Helper()
	c, ok := be.(*engine.CUDA)
	if !ok {
		t.Fatalf("backend %s is not CUDA", be.Name())
	}
	if mode == kernels.GemmTF32 && !c.Dev.TensorCores() {
		t.Skipf("%v has no TF32 tensor cores", c.Dev)
	}
	was := c.Dev.GemmKind // the kernel engine.Open chose
	c.Dev.GemmKind = mode
	t.Cleanup(func() { c.Dev.GemmKind = was })
}

// TestGPUTrainStepMatchesTapeMachine checks the engine and kernels with FP32
// products; TestGPUTF32MatchesCPURounding the TF32 mode.
func TestGPUTrainStepMatchesTapeMachine(t *testing.T) {
	be := gpu(t)
	setGemm(t, be, kernels.GemmFP32)
	for _, variant := range variants {
		t.Run(variant, func(t *testing.T) { checkTrainStep(t, variant, be, fp32Tol) })
	}
}

// TestGPUTF32MatchesCPURounding: the GPU's TF32 training step equals the
// CPU backend whose products round their operands to TF32 the same way, up
// to summation order (1e-4 of each tensor's largest magnitude, or of the
// largest gradient for a gradient that cancels to nearly zero): the TF32
// path computes what it should, and the differences from FP32 above are
// rounding, not bugs.
func TestGPUTF32MatchesCPURounding(t *testing.T) {
	be := gpu(t)
	setGemm(t, be, kernels.GemmTF32)
	for _, variant := range variants {
		t.Run(variant, func(t *testing.T) {
			m, bt := tiny(t, variant)
			view, err := m.TrainView(bt, 0.1, 5)
			if err != nil {
				t.Fatal(err)
			}
			p, err := engine.Compile(append(G.Nodes{view.Out}, view.Grads...), engine.Options{Inputs: view.Inputs})
			if err != nil {
				t.Fatal(err)
			}
			var outs [2][][]float32
			for k, b := range []engine.Backend{&engine.CPU{TF32: true}, be} {
				mc, err := engine.NewMachine(p, b)
				if err != nil {
					t.Fatal(err)
				}
				if err := mc.Run(); err != nil {
					mc.Close()
					t.Fatal(err)
				}
				for _, n := range append(G.Nodes{view.Out}, view.Grads...) {
					out := make([]float32, n.Shape().TotalSize())
					if err := mc.Read(n, out); err != nil {
						mc.Close()
						t.Fatal(err)
					}
					outs[k] = append(outs[k], out)
				}
				mc.Close()
			}
			// A gradient's rounding error scales with its terms, not its
			// result: the attention key bias's gradient is zero in exact
			// arithmetic (softmax is shift-invariant), so its entries are
			// rounding residue whose summation order differs between the
			// tensor cores and the CPU. As in checkTrainStep, each tensor
			// is held to 1e-4 of the larger of its own magnitude and the
			// largest gradient of all.
			var floor float64
			for _, g := range outs[0][1:] {
				for _, v := range g {
					floor = max(floor, math.Abs(float64(v)))
				}
			}
			compare(t, "loss", outs[0][0], outs[1][0], 1e-4, 0)
			for i := 1; i < len(outs[0]); i++ {
				compare(t, fmt.Sprintf("output %d", i), outs[0][i], outs[1][i], 1e-4, floor)
			}
		})
	}
}

// TestGPULossCurve: five steps on the GPU follow train's loop on the CPU,
// within 1e-5 relative with FP32 products and 1e-2 on the TF32 tensor cores
// (ours or cuBLAS's; their rounding the updates at learning rate 1e-2 carry
// forward).
func TestGPULossCurve(t *testing.T) {
	be := gpu(t)
	for _, gm := range gemmModes {
		t.Run(gm.name, func(t *testing.T) {
			setGemm(t, be, gm.mode)
			tol := 1e-5
			if gm.mode == kernels.GemmTF32 {
				tol = 1e-2
			}
			checkLossCurve(t, be, tol)
		})
	}
	// cuBLAS (TF32 tensor cores on sm_80+, its own operand rounding) is the
	// fast product kernel on a GPU (BENCHMARKS.md, "CUDA"): held to the
	// TF32 tolerance, skipped where no cuBLAS can be loaded (the emulator).
	t.Run("cublas", func(t *testing.T) {
		if _, err := kernels.LoadCublas(); err != nil {
			t.Skipf("no cuBLAS: %v", err)
		}
		setGemm(t, be, kernels.GemmCublas)
		checkLossCurve(t, be, 1e-2)
	})
}

func checkLossCurve(t *testing.T, be engine.Backend, tol float64) {
	ref, _ := tiny(t, "sep-to-last")
	eng, _ := tiny(t, "sep-to-last")
	batches := twoShapes(t, ref)
	opt := newOracleAdam(ref.Params())
	tr, err := transformer.NewTrainer(eng, be, adamCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for step := 1; step <= 5; step++ {
		bt := batches[step%2]
		lr := train.LearningRate(1e-2, 3, step)
		want, err := tapeModel{ref}.Loss(bt, true, 0.1, step)
		if err != nil {
			t.Fatal(err)
		}
		opt.ClipGlobalNorm(0.5)
		if err := opt.Step(lr); err != nil {
			t.Fatal(err)
		}
		got, _, err := tr.Step(bt, 0.1, step, 0.5, lr)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > tol*math.Abs(want) {
			t.Fatalf("step %d: GPU loss %v, CPU train loop %v", step, got, want)
		}
		t.Logf("step %d: GPU loss %.6f, CPU %.6f", step, got, want)
	}
}

// BenchmarkGPUTrainStep times the paper-size training step on the GPU
// (the batch of BenchmarkTrainStep).
func BenchmarkGPUTrainStep(b *testing.B) {
	be := gpu(b)
	m, bt := benchModel(b)
	tr, err := transformer.NewTrainer(m, be, adamCfg)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	if _, _, err := tr.Step(bt, 0.1, 0, 1, 1e-4); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, _, err := tr.Step(bt, 0.1, i+1, 1, 1e-4); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(el.Milliseconds())/float64(b.N), "ms/step")
	b.ReportMetric(float64(b.N*bt.Tokens)/el.Seconds(), "tokens/s")
}

// TestGPUGPT2Scores: GPT-2 scoring on the GPU against the CPU backend.
func TestGPUGPT2Scores(t *testing.T) {
	be := gpu(t)
	cfg := gpt2.Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 16, VocabSize: 30, LayerNormEpsilon: 1e-5}
	m, err := gpt2.New(cfg, 9)
	if err != nil {
		t.Fatal(err)
	}
	seqs := [][]int{{29, 1, 2, 3, 4, 29}, {29, 5, 6, 29}, {7, 8}}
	first := []int{1, 2, 1}
	cpu, err := gpt2.NewEngine(m, &engine.CPU{BLAS: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := cpu.TokenLogProbs(seqs, first, 4)
	if err != nil {
		t.Fatal(err)
	}
	e, err := gpt2.NewEngine(m, be)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got, err := e.TokenLogProbs(seqs, first, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		for k := range want[i] {
			if math.Abs(got[i][k]-want[i][k]) > 1e-3*max(1, math.Abs(want[i][k])) {
				t.Fatalf("sequence %d token %d: GPU %v, CPU %v", i, k, got[i][k], want[i][k])
			}
		}
	}
}

// BenchmarkGPUGPT2Score is models' BenchmarkGPT2Score on the GPU: GPT-2
// small (random weights, or GPT2_BENCH_DIR), 32 sequences of 32 tokens.
func BenchmarkGPUGPT2Score(b *testing.B) {
	be := gpu(b)
	var m *gpt2.Model
	var err error
	if dir := os.Getenv("GPT2_BENCH_DIR"); dir != "" {
		m, err = gpt2.Load(dir)
	} else {
		m, err = gpt2.New(gpt2.DefaultConfig(), 1)
	}
	if err != nil {
		b.Fatal(err)
	}
	e, err := gpt2.NewEngine(m, be)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	const B, T = 32, 32
	seqs, first := gpt2.SyntheticSequences(B, T, m.Cfg.VocabSize)
	if _, err := e.TokenLogProbs(seqs, first, B); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.TokenLogProbs(seqs, first, B); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(B*T*b.N)/b.Elapsed().Seconds(), "tokens/s")
}
