//go:build gpu || gpuemu

package engine_test

import (
	"math"
	"testing"
	"time"

	"compbench/engine"
	"compbench/models/gpt2"
)

// TestGPUGPT2TrainSteps: three AdamW fine-tuning steps of GPT-2 on the GPU
// (gpt2.Trainer, the path of score --folds --device cuda) follow the
// same trainer on the CPU backend (itself bit-identical to the
// TapeMachine, models' TestGPT2TrainerMatchesTapeMachine) within 1e-3
// relative per loss (TF32 products).
func TestGPUGPT2TrainSteps(t *testing.T) {
	be := gpu(t)
	cfg := gpt2.Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 16, VocabSize: 30, LayerNormEpsilon: 1e-5}
	var trainers []*gpt2.Trainer
	for _, b := range []engine.Backend{&engine.CPU{BLAS: true}, be} {
		m, err := gpt2.New(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := gpt2.NewTrainer(m, b, gpt2.AdamW())
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		trainers = append(trainers, tr)
	}
	batches := [][][]int{
		{{29, 1, 2, 3, 4, 29}, {29, 5, 6, 29}, {29, 7, 29}},
		{{29, 8, 9, 10, 11, 12, 13, 14, 15, 16, 29}, {29, 3, 29}, {29, 4, 4, 29}},
	}
	first := []int{1, 2, 1}
	for step := 1; step <= 3; step++ {
		seqs := batches[step%2]
		want, err := trainers[0].TrainStep(seqs, first, 1e-3)
		if err != nil {
			t.Fatal(err)
		}
		got, err := trainers[1].TrainStep(seqs, first, 1e-3)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-3*math.Abs(want) {
			t.Fatalf("step %d: GPU loss %v, CPU %v", step, got, want)
		}
		t.Logf("step %d: GPU loss %.6f, CPU %.6f", step, got, want)
	}
}

// BenchmarkGPUGPT2TrainStep times one fine-tuning step of GPT-2 small
// (random weights, full vocabulary) on the GPU: 32 sequences of 32 tokens,
// every token after the first scored.
func BenchmarkGPUGPT2TrainStep(b *testing.B) {
	be := gpu(b)
	m, err := gpt2.New(gpt2.DefaultConfig(), 1)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := gpt2.NewTrainer(m, be, gpt2.AdamW())
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	const B, T = 32, 32
	seqs, first := gpt2.SyntheticSequences(B, T, m.Cfg.VocabSize)
	if _, err := tr.TrainStep(seqs, first, 2e-5); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := tr.TrainStep(seqs, first, 2e-5); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(el.Milliseconds())/float64(b.N), "ms/step")
	b.ReportMetric(float64(B*T*b.N)/el.Seconds(), "tokens/s")
}
