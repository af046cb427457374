package models_test

import (
	"testing"

	"compbench/blas"
	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/ops"
)

// Shape of the benchmark step, shared with scripts/bench_torch_lstm.py.
const (
	benchB, benchS, benchT = 64, 16, 24 // rows, source and target length
	benchH, benchLayers    = 256, 2     // hidden size, layers
	benchVs, benchVt       = 24, 12     // vocabulary sizes (SCAN-like)
)

// BenchmarkLSTMTrainStep is one lstm-attention training step (forward,
// backward, Adam) on full-length rows, without dropout; it reports ms/step
// for scripts/bench.sh to compare with the same step in PyTorch.
func BenchmarkLSTMTrainStep(b *testing.B) {
	blas.Use()
	cfg := models.DefaultConfig()
	cfg.Variant, cfg.Dim, cfg.Layers, cfg.Heads, cfg.Dropout = "lstm-attention", benchH, benchLayers, 1, 0
	cfg.SrcVocab, cfg.TgtVocab = benchVs, benchVt
	m, err := models.NewLSTM(cfg, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	rng := data.NewRand(2)
	ex := make([]models.Example, benchB)
	rows := make([]*models.Example, benchB)
	for i := range ex {
		ex[i].Src = make([]int, benchS)
		ex[i].Tgt = make([]int, benchT)
		for k := range ex[i].Src {
			ex[i].Src[k] = models.UnkID + 1 + rng.IntN(benchVs-models.UnkID-1)
		}
		for k := range ex[i].Tgt {
			ex[i].Tgt[k] = models.UnkID + 1 + rng.IntN(benchVt-models.UnkID-1)
		}
		rows[i] = &ex[i]
	}
	bt := models.MakeBatch(rows, benchB, 1)
	r, err := m.Bind(&engine.CPU{BLAS: true}, &ops.AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := r.Step(bt, 0, i+1, 0, 1e-3); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
}
