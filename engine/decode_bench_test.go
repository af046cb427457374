package engine_test

import (
	"context"
	"fmt"
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
	return benchDecodeVariant(b, "transformer", false)
}

// benchDecodeVariant is benchDecodeModel for the --model name variant (the
// Universal Transformer: one layer per stack, its default steps), with
// adaptive computation time when act.
func benchDecodeVariant(b *testing.B, variant string, act bool) (*transformer.Model, []models.Example) {
	b.Helper()
	blas.Use() // as predict does
	cfg := models.DefaultConfig()
	if err := cfg.ApplyVariant(variant); err != nil {
		b.Fatal(err)
	}
	cfg.Layers, cfg.Heads, cfg.Dim, cfg.MLPDim, cfg.Dropout, cfg.ACT = 2, 4, 64, 128, 0, act
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

func benchDecode(b *testing.B, m models.Seq2Seq, ex []models.Example, o train.DecodeOptions) {
	b.ReportAllocs()
	cpu0, start, n := cpuTime(b), time.Now(), 0
	for b.Loop() {
		out, err := train.Decode(context.Background(), m, ex, o, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(out[0].Hyps[0].IDs) != o.MaxLen {
			b.Fatalf("%d tokens, want %d", len(out[0].Hyps[0].IDs), o.MaxLen)
		}
		n++
	}
	// CPU time of the whole process (BLAS threads included): on a shared
	// machine it moves less than the wall time.
	b.ReportMetric(float64(cpuTime(b)-cpu0)/1e6/float64(n), "cpu-ms/op")
	b.ReportMetric(float64(n*len(ex)*o.MaxLen)/time.Since(start).Seconds(), "tokens/s")
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
			benchDecode(b, em, ex, train.DecodeOptions{Beam: beam, MaxLen: 20, Batch: 64, Width: 8, Alpha: 0.6})
		})
	}
}

// BenchmarkDecodeModels times greedy and beam decoding of the Transformer
// and the Universal Transformer (without and with ACT) at benchDecodeModel's
// sizes, at batch 1 (8 examples one by one) and 64, in generated tokens per
// second of wall time: every hypothesis runs the 20 steps, and a first
// decoding outside the timing builds what is built once per shape.
func BenchmarkDecodeModels(b *testing.B) {
	for _, v := range []struct {
		name, variant string
		act           bool
	}{{"transformer", "transformer", false}, {"universal", models.Universal, false}, {"universal+act", models.Universal, true}} {
		for _, batch := range []int{1, 64} {
			for _, beam := range []int{1, 4} {
				name := fmt.Sprintf("%s/batch%d/%s", v.name, batch, map[int]string{1: "greedy", 4: "beam4"}[beam])
				b.Run(name, func(b *testing.B) {
					m, ex := benchDecodeVariant(b, v.variant, v.act)
					if batch == 1 {
						ex = ex[:8]
					}
					em, err := transformer.NewEngine(m, &engine.CPU{BLAS: true})
					if err != nil {
						b.Fatal(err)
					}
					defer em.Close()
					o := train.DecodeOptions{Beam: beam, MaxLen: 20, Batch: batch, Width: 8, Alpha: 0.6}
					if _, err := train.Decode(context.Background(), em, ex, o, nil); err != nil {
						b.Fatal(err)
					}
					benchDecode(b, em, ex, o)
				})
			}
		}
	}
}
