package lstm_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"compbench/blas"
	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/models/lstm"
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
	m, err := lstm.New(cfg, 1, nil)
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

// BenchmarkLSTMCopyTransformerEncoderTrainStep is one lstm-copy training
// step (forward, backward, clipping, Adam) with the Transformer encoder
// (2 layers, 4 heads, feed-forward 512) under a 2-layer decoder, dim 256,
// dropout 0.1, on full-length rows of benchB × benchS source and benchT
// target tokens; targets mix vocabulary tokens and copied positions. It
// reports ms/step.
func BenchmarkLSTMCopyTransformerEncoderTrainStep(b *testing.B) {
	blas.Use()
	rng := data.NewRand(2)
	tok := func(p string, n int) string {
		f := make([]string, n)
		for i := range f {
			f[i] = fmt.Sprintf("%s%d", p, rng.IntN(benchVs))
		}
		return strings.Join(f, " ")
	}
	recs := make([]data.Record, benchB)
	for i := range recs {
		recs[i] = data.Record{ID: fmt.Sprint(i), Input: tok("s", benchS), Output: tok("t", benchT)}
	}
	v := models.BuildVocab(recs)
	cfg := lstm.DefaultConfig("lstm-copy")
	cfg.Dim, cfg.Layers, cfg.Dropout, cfg.MLPDim = benchH, benchLayers, 0.1, 512
	cfg.Encoder, cfg.EncoderLayers, cfg.EncoderHeads = models.EncoderTransformer, 2, 4
	cfg.SrcVocab, cfg.TgtVocab = len(v.Source), len(v.Target)
	m, err := lstm.New(cfg, 1, v)
	if err != nil {
		b.Fatal(err)
	}
	ex := make([]models.Example, benchB)
	rows := make([]*models.Example, benchB)
	for i := range ex {
		ex[i].Src = make([]int, benchS)
		ex[i].Tgt = make([]int, benchT)
		for k := range ex[i].Src {
			ex[i].Src[k] = models.UnkID + 1 + rng.IntN(cfg.SrcVocab-models.UnkID-1)
		}
		for k := range ex[i].Tgt {
			if k%4 == 3 {
				ex[i].Tgt[k] = cfg.TgtVocab + rng.IntN(benchS) // a copied position
				continue
			}
			ex[i].Tgt[k] = models.UnkID + 1 + rng.IntN(cfg.TgtVocab-models.UnkID-1)
		}
		rows[i] = &ex[i]
	}
	bt := models.MakeBatch(rows, benchB, 1)
	r, err := m.Bind(&engine.CPU{BLAS: true}, &ops.AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.Step(bt, 0, 0, 1, 1e-3); err != nil { // sets up the step
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := r.Step(bt, 0, i+1, 1, 1e-3); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/step")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
