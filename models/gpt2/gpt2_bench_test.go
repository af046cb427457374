package gpt2

import (
	"os"
	"testing"

	"compbench/blas"
	"compbench/engine"
)

// BenchmarkGPT2Score measures scoring throughput (tokens/s) of GPT-2 small
// on the engine's CPU backend, on batches of 32 sequences of 32 tokens.
// GPT2_BENCH_DIR names a Hugging Face folder to load (scripts/bench.sh
// writes one with random weights and scores the same weights with
// PyTorch); otherwise weights are random.
func BenchmarkGPT2Score(b *testing.B) {
	blas.Use()
	var m *Model
	var err error
	if dir := os.Getenv("GPT2_BENCH_DIR"); dir != "" {
		m, err = Load(dir)
	} else {
		m, err = New(DefaultConfig(), 1)
	}
	if err != nil {
		b.Fatal(err)
	}
	e, err := NewEngine(m, &engine.CPU{BLAS: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	const B, T = 32, 32
	seqs, first := SyntheticSequences(B, T, m.Cfg.VocabSize)
	if _, err := e.TokenLogProbs(seqs, first, B); err != nil { // compiles the program
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
