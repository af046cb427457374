//go:build gpu || gpuemu

package engine_test

import (
	"context"
	"testing"
	"time"

	"compbench/models"
	"compbench/models/transformer"
	"compbench/train"
)

// TestGPUDecodeStepLogits: incremental decoding steps on the GPU (cache
// writes, beam gathers, separator masks, relative biases) follow the
// decoder graph over each prefix within the TF32 tolerance, and the device
// picks agree with the graph's log-probabilities within it.
func TestGPUDecodeStepLogits(t *testing.T) {
	be := gpu(t)
	for _, variant := range decodeVariants {
		t.Run(variant, func(t *testing.T) { checkStepLogits(t, variant, be, gpuTol) })
	}
}

// TestGPUDecodePicks: the tokens the GPU picks (greedy and beam) are the
// ones the host picks from the same GPU logits: two engine models on one
// GPU, one decoding through Step (logits downloaded), one through the
// device picks.
func TestGPUDecodePicks(t *testing.T) {
	be := gpu(t)
	for _, variant := range decodeVariants {
		t.Run(variant, func(t *testing.T) {
			m, bt := tiny(t, variant)
			favourEnds(m)
			host, err := transformer.NewEngine(m, be)
			if err != nil {
				t.Fatal(err)
			}
			defer host.Close()
			dev, err := transformer.NewEngine(m, be)
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			ex := examples(bt)
			for _, beam := range []int{1, 3} {
				o := train.DecodeOptions{Beam: beam, MaxLen: 9, Batch: 3, Width: 4, Alpha: 0.6}
				want, err := train.Decode(context.Background(), logitsOnly{host}, ex, o, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := train.Decode(context.Background(), dev, ex, o, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					for k, h := range want[i].Hyps {
						g := got[i].Hyps[k]
						if len(g.IDs) != len(h.IDs) || g.Score-h.Score > 1e-4 || h.Score-g.Score > 1e-4 {
							t.Errorf("beam %d, row %d, hypothesis %d: device picks %+v, host picks %+v", beam, i, k, g, h)
						}
					}
				}
			}
		})
	}
}

// logitsOnly hides the Picker of an engine model's decoding state, so that
// train.Decode picks on the host from downloaded logits.
type logitsOnly struct{ *transformer.Engine }

func (l logitsOnly) StartDecode(mem *models.Memory, maxLen int) (models.DecodeState, error) {
	st, err := l.Engine.StartDecode(mem, maxLen)
	return stepOnly{st}, err
}

type stepOnly struct{ models.DecodeState }

// BenchmarkGPUDecode times greedy decoding of the paper-size Transformer
// (random weights, 64 rows of 16 source tokens, 48 steps) on the GPU.
func BenchmarkGPUDecode(b *testing.B) {
	be := gpu(b)
	m, bt := benchModel(b)
	em, err := transformer.NewEngine(m, be)
	if err != nil {
		b.Fatal(err)
	}
	defer em.Close()
	const steps = 48
	run := func() {
		mem, err := em.Encode(bt.Src, bt.B, bt.S)
		if err != nil {
			b.Fatal(err)
		}
		st, err := em.StartDecode(mem, steps)
		if err != nil {
			b.Fatal(err)
		}
		toks := make([]int, bt.B)
		for i := range toks {
			toks[i] = models.StartID
		}
		for t := 0; t < steps; t++ {
			if toks, _, err = st.(models.Picker).StepGreedy(toks); err != nil {
				b.Fatal(err)
			}
		}
	}
	run()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		run()
	}
	b.ReportMetric(float64(b.N*bt.B*steps)/time.Since(start).Seconds(), "tokens/s")
}
