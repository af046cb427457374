//go:build gpu

package engine_test

import (
	"math"
	"os"
	"testing"
	"time"

	"compgen/data"
	"compgen/engine"
	"compgen/models"
	"compgen/train"
)

// GPU checks of the engine (build tag gpu; without a GPU the test binary
// exits 0 in kernels/cudaguard, COMPGEN_REQUIRE_GPU=1 makes that a failure).
// The GPU products run on TF32 tensor cores (10 mantissa bits), so results
// agree with the TapeMachine within 1e-2 of each tensor's (or the largest
// gradient's) magnitude rather than bit for bit.

const gpuTol = 1e-2

func gpu(t testing.TB) engine.Backend {
	t.Helper()
	b, err := engine.Open(engine.Device{CUDA: true})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGPUTrainStepMatchesTapeMachine(t *testing.T) {
	be := gpu(t)
	for _, variant := range variants {
		t.Run(variant, func(t *testing.T) { checkTrainStep(t, variant, be, gpuTol) })
	}
}

// TestGPULossCurve: five steps on the GPU follow train's loop on the CPU.
func TestGPULossCurve(t *testing.T) {
	be := gpu(t)
	ref, _ := tiny(t, "sep-to-last")
	eng, _ := tiny(t, "sep-to-last")
	batches := twoShapes(t, ref)
	opt := train.NewAdam(ref.Params(), 0.9, 0.98, 1e-9)
	tr, err := models.NewEngineTrainer(eng, be, opt.Cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for step := 1; step <= 5; step++ {
		bt := batches[step%2]
		lr := train.LearningRate(1e-2, 3, step)
		want, err := ref.Loss(bt, true, 0.1, step)
		if err != nil {
			t.Fatal(err)
		}
		opt.ClipGlobalNorm(0.5)
		if err := opt.Step(ref.Params(), lr); err != nil {
			t.Fatal(err)
		}
		got, _, err := tr.Step(bt, 0.1, step, 0.5, lr)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-3*math.Abs(want) {
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
	tr, err := models.NewEngineTrainer(m, be, train.NewAdam(m.Params(), 0.9, 0.98, 1e-9).Cfg)
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

// TestGPUGPT2Scores: GPT-2 scoring on the GPU against the CPU model.
func TestGPUGPT2Scores(t *testing.T) {
	be := gpu(t)
	cfg := models.GPT2Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 16, VocabSize: 30, LayerNormEpsilon: 1e-5}
	m, err := models.NewGPT2(cfg, 9)
	if err != nil {
		t.Fatal(err)
	}
	seqs := [][]int{{29, 1, 2, 3, 4, 29}, {29, 5, 6, 29}, {7, 8}}
	first := []int{1, 2, 1}
	want, err := m.TokenLogProbs(seqs, first, 4)
	if err != nil {
		t.Fatal(err)
	}
	e, err := models.NewGPT2Engine(m, be)
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
	var m *models.GPT2
	var err error
	if dir := os.Getenv("GPT2_BENCH_DIR"); dir != "" {
		m, err = models.LoadGPT2(dir)
	} else {
		m, err = models.NewGPT2(models.DefaultGPT2Config(), 1)
	}
	if err != nil {
		b.Fatal(err)
	}
	e, err := models.NewGPT2Engine(m, be)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	const B, T = 32, 32
	rng := data.NewRand(1)
	seqs := make([][]int, B)
	first := make([]int, B)
	for i := range seqs {
		seqs[i] = make([]int, T)
		for t := range seqs[i] {
			seqs[i][t] = rng.IntN(m.Cfg.VocabSize)
		}
		first[i] = 1
	}
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
