package engine_test

import (
	"context"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"compbench/blas"
	"compbench/engine"
	"compbench/models"
	"compbench/models/transformer"
	"compbench/train"
)

// benchDecodeModel is predict's benchmark model (2 layers, d 64, 4 heads,
// MLP 128) on 64 SCAN-sized examples (sources of 8 to 36 tokens), with
// EOS made unlikely so that every hypothesis runs the 20 steps.
func benchDecodeModel(b *testing.B) (*transformer.Model, []models.Example) {
	b.Helper()
	blas.Use() // as predict does
	cfg := models.DefaultConfig()
	cfg.Layers, cfg.Heads, cfg.Dim, cfg.MLPDim, cfg.Dropout = 2, 4, 64, 128, 0
	cfg.SrcVocab, cfg.TgtVocab = 20, 12
	m, err := transformer.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	p := m.Params()
	for i, n := range p.Names {
		if n == "out.b" {
			p.Data(i)[models.EOSID] = -100
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	ex := make([]models.Example, 64)
	for i := range ex {
		src := make([]int, 8+r.IntN(29))
		for j := range src {
			src[j] = 4 + r.IntN(cfg.SrcVocab-4)
		}
		ex[i] = models.Example{ID: "x", Src: src, Tgt: []int{models.EOSID}}
	}
	return m, ex
}

func benchDecode(b *testing.B, m models.Seq2Seq, ex []models.Example, beam int) {
	o := train.DecodeOptions{Beam: beam, MaxLen: 20, Batch: 64, Width: 8, Alpha: 0.6}
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		out, err := train.Decode(context.Background(), m, ex, o, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(out[0].Hyps[0].IDs) != 20 {
			b.Fatalf("%d tokens, want 20", len(out[0].Hyps[0].IDs))
		}
	}
	// CPU time of the whole process (BLAS threads included): on a shared
	// machine it moves less than the wall time.
	b.ReportMetric(float64(cpuTime(b)-cpu0)/1e6/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkDecodeEngineCPU(b *testing.B) {
	for _, beam := range []int{1, 4} {
		b.Run(map[int]string{1: "greedy", 4: "beam4"}[beam], func(b *testing.B) {
			m, ex := benchDecodeModel(b)
			em, err := transformer.NewEngine(m, &engine.CPU{BLAS: true})
			if err != nil {
				b.Fatal(err)
			}
			defer em.Close()
			benchDecode(b, em, ex, beam)
		})
	}
}
