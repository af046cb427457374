package models

import (
	"os"
	"testing"

	"compbench/blas"
)

// BenchmarkGPT2Score measures scoring throughput (tokens/s) of GPT-2 small
// on batches of 32 sequences of 32 tokens. GPT2_BENCH_DIR names a Hugging
// Face folder to load (scripts/bench.sh writes one with random weights and
// scores the same weights with PyTorch); otherwise weights are random.
func BenchmarkGPT2Score(b *testing.B) {
	blas.Use()
	var m *GPT2
	var err error
	if dir := os.Getenv("GPT2_BENCH_DIR"); dir != "" {
		m, err = LoadGPT2(dir)
	} else {
		m, err = NewGPT2(DefaultGPT2Config(), 1)
	}
	if err != nil {
		b.Fatal(err)
	}
	const B, T = 32, 32
	seqs, first := SyntheticSequences(B, T, m.Cfg.VocabSize)
	if _, err := m.TokenLogProbs(seqs, first, B); err != nil { // builds the graph
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.TokenLogProbs(seqs, first, B); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(B*T*b.N)/b.Elapsed().Seconds(), "tokens/s")
}
