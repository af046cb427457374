//go:build gpu || gpuemu

package kernels

import "testing"

// benchGemm reports TFLOP/s of one GEMM shape, timed with device events.
func benchGemm(b *testing.B, mode GemmMode, p GemmParams) {
	if mode == GemmTF32 && !dev.TensorCores() {
		b.Skip("no tensor cores")
	}
	if mode == GemmCublas {
		if _, err := LoadCublas(); err != nil {
			b.Skip(err)
		}
	}
	b0, b1 := p.Batches()
	a := up(b, make([]float32, b0*b1*p.M*p.K))
	bb := up(b, make([]float32, b0*b1*p.K*p.N))
	c := up(b, make([]float32, b0*b1*p.M*p.N))
	dev.GemmKind = mode
	defer func() { dev.GemmKind = GemmAuto }()
	ok(b, dev.Gemm(p, a, bb, c))
	start, err := dev.Record()
	ok(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ok(b, dev.Gemm(p, a, bb, c))
	}
	end, err := dev.Record()
	ok(b, err)
	ms, err := dev.Elapsed(start, end)
	ok(b, err)
	b.ReportMetric(p.Flops()*float64(b.N)/(ms*1e-3)/1e12, "TFLOP/s")
}

func square(n int) GemmParams {
	return GemmParams{M: n, N: n, K: n, Alpha: 1, LdA: n, LdB: n, LdC: n}
}

func BenchmarkGemmTF32_4096(b *testing.B)   { benchGemm(b, GemmTF32, square(4096)) }
func BenchmarkGemmFP32_4096(b *testing.B)   { benchGemm(b, GemmFP32, square(4096)) }
func BenchmarkGemmCublas_4096(b *testing.B) { benchGemm(b, GemmCublas, square(4096)) }

// The paper-size Transformer's FFN product: 128x40 tokens, 256 -> 1024.
func BenchmarkGemmTF32_FFN(b *testing.B) {
	benchGemm(b, GemmTF32, GemmParams{M: 5120, N: 1024, K: 256, Alpha: 1, LdA: 256, LdB: 1024, LdC: 1024})
}

func BenchmarkGemmCublas_FFN(b *testing.B) {
	benchGemm(b, GemmCublas, GemmParams{M: 5120, N: 1024, K: 256, Alpha: 1, LdA: 256, LdB: 1024, LdC: 1024})
}

// Per-head attention scores: batch 128, 8 heads, 40x40, head width 32.
func BenchmarkGemmTF32_AttnScores(b *testing.B) {
	benchGemm(b, GemmTF32, AttnGemm(AttnScores, 128, 8, 40, 40, 256, 0.17))
}

// cuBLAS takes the attention products as one strided batch per head.
func BenchmarkGemmCublas_AttnScores(b *testing.B) {
	benchGemm(b, GemmCublas, AttnGemm(AttnScores, 128, 8, 40, 40, 256, 0.17))
}

// benchKernel times f with device events, per call.
func benchKernel(b *testing.B, f func() error) {
	ok(b, f())
	start, err := dev.Record()
	ok(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ok(b, f())
	}
	end, err := dev.Record()
	ok(b, err)
	ms, err := dev.Elapsed(start, end)
	ok(b, err)
	b.ReportMetric(ms*1e3/float64(b.N), "us/call")
}

func BenchmarkLayerNorm(b *testing.B) {
	n, d := 5120, 256
	x, g, y := up(b, randF(1, n*d, 1)), up(b, randF(2, d, 1)), up(b, make([]float32, n*d))
	benchKernel(b, func() error { return dev.LayerNorm(n, d, LayerNormEps, x, g, g, y) })
}

func BenchmarkAttnSoftmax(b *testing.B) {
	s := AttnShape{128, 8, 40, 40}
	x, y := up(b, randF(1, s.Len(), 1)), up(b, make([]float32, s.Len()))
	benchKernel(b, func() error { return dev.AttnSoftmax(s, x, Buf{}, Bcast{}, Buf{}, Bcast{}, y) })
}

func BenchmarkSoftmaxCE(b *testing.B) {
	n, v := 5120, 64
	x, l := up(b, randF(1, n*v, 1)), up(b, []float32{0})
	t := upInt(b, make([]int32, n))
	benchKernel(b, func() error { return dev.SoftmaxCE(n, v, CEParams{Ignore: -1, Smoothing: 0.1}, x, t, l) })
}

func BenchmarkDropout(b *testing.B) {
	n := 5120 * 1024
	x, y, m := up(b, randF(1, n, 1)), up(b, make([]float32, n)), up(b, make([]float32, n))
	benchKernel(b, func() error { return dev.Dropout(n, DropoutParams{P: 0.1, Seed: 1}, x, y, m) })
}

func BenchmarkAdam(b *testing.B) {
	n := 10_000_000
	p, g, m, v := up(b, randF(1, n, 1)), up(b, randF(2, n, 1)), up(b, make([]float32, n)), up(b, make([]float32, n))
	benchKernel(b, func() error { return dev.Adam(n, AdamParams{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9}, 1e-3, 1, p, g, m, v) })
}
