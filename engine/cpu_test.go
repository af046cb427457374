package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"compbench/kernels"
)

// TestCPUGemmOuter: products of inner size 1 on the BLAS CPU backend
// (gemmOuter), with either operand transposed, give kernels.GemmRef's
// results bit for bit.
func TestCPUGemmOuter(t *testing.T) {
	const M, N = 5, 7
	r := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float32, M), make([]float32, N)
	for i := range a {
		a[i] = float32(r.NormFloat64())
	}
	for i := range b {
		b[i] = float32(r.NormFloat64())
	}
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		p := kernels.GemmParams{M: M, N: N, K: 1, TransA: tr[0], TransB: tr[1], Alpha: 0.5, LdA: 1, LdB: N, LdC: N}
		if tr[0] {
			p.LdA = M
		}
		if tr[1] {
			p.LdB = 1
		}
		want, got := make([]float32, M*N), make([]float32, M*N)
		if err := kernels.GemmRef(p, a, b, want); err != nil {
			t.Fatal(err)
		}
		if err := (&CPU{BLAS: true}).Gemm(p, a, b, got); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("transposed %v, element %d: %v, GemmRef %v", tr, i, got[i], want[i])
			}
		}
	}
}

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
