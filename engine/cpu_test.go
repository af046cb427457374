package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"compbench/kernels"
)

// TestCPUGemmRows: batched one-row products on the BLAS CPU backend
// (gemmRows: attention scores and values of a decoding step, keys held
// batch- or position-major) give kernels.GemmRef's results bit for bit.
func TestCPUGemmRows(t *testing.T) {
	const B, H, Tk, D = 3, 2, 5, 8
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	for _, c := range []struct {
		name  string
		kind  kernels.AttnKind
		cache bool
		a, b  int // operand sizes
	}{
		{"scores", kernels.AttnScores, false, B * D, B * Tk * D},
		{"scores over a cache", kernels.AttnScores, true, B * D, B * Tk * D},
		{"values", kernels.AttnValues, false, B * H * Tk, B * Tk * D},
		{"values over a cache", kernels.AttnValues, true, B * H * Tk, B * Tk * D},
		{"key gradient of one key", kernels.AttnScoresGradK, false, B * H * Tk, B * Tk * D}, // A transposed
	} {
		t.Run(c.name, func(t *testing.T) {
			tq, tk := 1, Tk
			if c.kind == kernels.AttnScoresGradK {
				tq, tk = Tk, 1
			}
			p := kernels.AttnGemm(c.kind, B, H, tq, tk, D, 0.25)
			if c.cache {
				p = kernels.CacheGemm(p, B, D)
			}
			a, b := fill(c.a), fill(c.b)
			n := B * H * Tk
			if c.kind != kernels.AttnScores {
				n = B * D
			}
			want, got := make([]float32, n), make([]float32, n)
			if err := kernels.GemmRef(p, a, b, want); err != nil {
				t.Fatal(err)
			}
			if err := (&CPU{BLAS: true}).Gemm(p, a, b, got); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("element %d: %v, GemmRef %v", i, got[i], want[i])
				}
			}
		})
	}
}
