package train

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"compbench/blas"
	"compbench/models"
	"compbench/models/transformer"
	"compbench/ops"
)

// benchShape is a SCAN-sized batch: 64 rows, 16 source and 48 target
// tokens, vocabularies of SCAN's size; the model is the paper's size
// (3 layers, 4 heads, d 256, MLP 512, dropout 0.1).
const benchB, benchS, benchT, benchV = 64, 16, 48, 24

// benchModel binds the model to the CPU device (with an optimizer when
// opt is set) and returns it with a batch.
func benchModel(b *testing.B, opt *ops.AdamConfig) (models.Runner, *models.Batch) {
	return benchVariant(b, "transformer", opt)
}

// benchVariant is benchModel for the --model name variant at the paper's
// size (the Universal Transformer with its default 6 steps).
func benchVariant(b *testing.B, variant string, opt *ops.AdamConfig) (models.Runner, *models.Batch) {
	blas.Use()
	cfg := models.DefaultConfig()
	if err := cfg.ApplyVariant(variant); err != nil {
		b.Fatal(err)
	}
	cfg.SrcVocab, cfg.TgtVocab = benchV, benchV
	m, err := transformer.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	r, err := m.Bind(defaultBackend(nil), opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(r.Close)
	return r, models.SyntheticBatch(benchB, benchS, benchT, benchV)
}

// peakRSS reports the process's peak resident memory in MB (Linux).
func peakRSS(b *testing.B) {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(s), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			if kb, err := strconv.Atoi(f[1]); err == nil {
				b.ReportMetric(float64(kb)/1024, "MB-peak")
			}
		}
	}
}

// cpuTime is the process's user and system CPU time so far (0 where the
// platform does not report it).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTransformerTrainStep times forward, backward, clipping and the
// Adam update; scripts/bench_transformer.sh compares it with PyTorch.
func BenchmarkTransformerTrainStep(b *testing.B) { benchTrainStep(b, "transformer") }

// BenchmarkUniversalTrainStep is BenchmarkTransformerTrainStep for the
// Universal Transformer (6 steps of one shared layer per stack, d 256);
// scripts/bench_transformer.sh compares it with the same model in PyTorch.
func BenchmarkUniversalTrainStep(b *testing.B) { benchTrainStep(b, models.Universal) }

func benchTrainStep(b *testing.B, variant string) {
	m, bt := benchVariant(b, variant, &ops.AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9})
	step := func(i int) {
		if _, _, err := m.Step(bt, 0.1, i, 1, 1e-4); err != nil {
			b.Fatal(err)
		}
	}
	step(0) // builds the graph
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		step(i + 1)
	}
	el := time.Since(start)
	b.ReportMetric(float64(el.Milliseconds())/float64(b.N), "ms/step")
	// CPU time over all threads: on a busy machine it moves far less than
	// wall time, so one-thread runs stay comparable.
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/step")
	b.ReportMetric(float64(b.N*bt.Tokens)/el.Seconds(), "tokens/s")
	peakRSS(b)
}

// BenchmarkGreedyDecode times greedy decoding of 64 examples to 48 tokens
// (the untrained model rarely stops early, so every step runs).
func BenchmarkGreedyDecode(b *testing.B) {
	m, bt := benchModel(b, nil)
	ex := make([]models.Example, len(bt.Rows))
	for i, r := range bt.Rows {
		ex[i] = *r
	}
	o := DecodeOptions{Beam: 1, MaxLen: benchT, Batch: benchB, Width: 8}
	if _, err := Decode(context.Background(), m, ex[:1], o, nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	toks := 0
	for i := 0; i < b.N; i++ {
		dec, err := Decode(context.Background(), m, ex, o, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range dec {
			toks += len(d.Hyps[0].IDs) + 1
		}
	}
	b.ReportMetric(float64(toks)/time.Since(start).Seconds(), "tokens/s")
	peakRSS(b)
}
