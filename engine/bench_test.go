package engine_test

import (
	"testing"
	"time"

	G "gorgonia.org/gorgonia"

	"compbench/blas"
	"compbench/engine"
	"compbench/models"
	"compbench/models/transformer"
	"compbench/ops"
)

// The benchmark batch is train's (train/bench_test.go): the paper-size
// Transformer (3 layers, 4 heads, d 256, MLP 512, dropout 0.1) on 64 rows
// of 16 source and 48 target tokens, SCAN-sized vocabularies.
const benchB, benchS, benchT, benchV = 64, 16, 48, 24

func benchModel(b *testing.B) (*transformer.Model, *models.Batch) {
	blas.Use()
	cfg := models.DefaultConfig()
	cfg.SrcVocab, cfg.TgtVocab = benchV, benchV
	m, err := transformer.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	return m, models.SyntheticBatch(benchB, benchS, benchT, benchV)
}

// BenchmarkTrainStep times one training step (forward, backward, clipping,
// Adam) with the engine on the CPU backend, BLAS products (--device cpu)
// and GEMM reference.
func BenchmarkTrainStep(b *testing.B) {
	run := func(b *testing.B, step func(i int) error, tokens int) {
		if err := step(0); err != nil { // builds and compiles
			b.Fatal(err)
		}
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if err := step(i + 1); err != nil {
				b.Fatal(err)
			}
		}
		el := time.Since(start)
		b.ReportMetric(float64(el.Milliseconds())/float64(b.N), "ms/step")
		b.ReportMetric(float64(b.N*tokens)/el.Seconds(), "tokens/s")
	}
	for _, bk := range []struct {
		name string
		be   *engine.CPU
	}{{"engine-blas", &engine.CPU{BLAS: true}}, {"engine-ref", &engine.CPU{}}} {
		b.Run(bk.name, func(b *testing.B) {
			m, bt := benchModel(b)
			tr, err := transformer.NewTrainer(m, bk.be, ops.AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9})
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			run(b, func(i int) error {
				_, _, err := tr.Step(bt, 0.1, i, 1, 1e-4)
				return err
			}, bt.Tokens)
		})
	}
}

// BenchmarkPlanPaperSize compiles the paper-size training graph and
// reports the planned arena against the sum of all activation sizes.
func BenchmarkPlanPaperSize(b *testing.B) {
	m, bt := benchModel(b)
	view, err := m.TrainView(bt, 0.1, 1)
	if err != nil {
		b.Fatal(err)
	}
	var p *engine.Program
	for i := 0; i < b.N; i++ {
		if p, err = engine.Compile(append(G.Nodes{view.Out}, view.Grads...), engine.Options{Inputs: view.Inputs}); err != nil {
			b.Fatal(err)
		}
	}
	const mb = 4.0 / (1 << 20)
	b.ReportMetric(float64(p.ArenaSize)*mb, "arena-MB")
	b.ReportMetric(float64(p.ActivationTotal())*mb, "activations-MB")
	b.ReportMetric(float64(p.PersistentSize())*mb, "persistent-MB")
	b.ReportMetric(float64(len(p.Steps)), "steps")
}
