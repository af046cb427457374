package engine

import (
	"fmt"
	"slices"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"

	"compbench/kernels"
)

// CPU runs the kernels' pure-Go references (package kernels): the same
// program the GPU runs, checked on any machine.
type CPU struct {
	// BLAS sends matrix products to Gorgonia's BLAS (gonum, or OpenBLAS
	// after blas.Use) with the calls ops makes, instead of GemmRef: the
	// results are then bit-identical to Gorgonia's TapeMachine, and much
	// faster.
	BLAS bool
	// TF32 rounds both operands of every product to TF32 (RoundTF32) and
	// multiplies them with GemmRef: the products the GPU's tensor cores
	// compute, up to summation order, for checking the GPU's TF32 mode.
	// It overrides BLAS for products.
	TF32 bool

	live atomic.Int64 // buffers allocated and not freed (Live)
}

// Live returns the number of buffers allocated and not yet freed: what a
// GPU would still hold. Tests check that closing a model brings it back
// to zero; freeing a view (which a GPU refuses) makes it negative.
func (c *CPU) Live() int { return int(c.live.Load()) }

// Name implements Backend.
func (c *CPU) Name() string { return "cpu" }

func f32(b Buf) []float32 {
	if b == nil {
		return nil
	}
	return b.([]float32)
}
func i32(b Buf) []int32   { return b.([]int32) }
func f64(b Buf) []float64 { return b.([]float64) }

func (c *CPU) Alloc(n int) (Buf, error)    { c.live.Add(1); return make([]float32, n), nil }
func (c *CPU) AllocInt(n int) (Buf, error) { c.live.Add(1); return make([]int32, n), nil }
func (c *CPU) AllocF64(n int) (Buf, error) { c.live.Add(1); return make([]float64, n), nil }
func (c *CPU) View(b Buf, off, n int) Buf  { return f32(b)[off : off+n : off+n] }

func (c *CPU) Free(b Buf) {
	if b != nil {
		c.live.Add(-1)
	}
}
func (c *CPU) Sync() error { return nil }

func (c *CPU) Upload(dst Buf, src []float32) error {
	if d := f32(dst); len(d) < len(src) {
		return fmt.Errorf("upload: %d elements into a buffer of %d", len(src), len(d))
	}
	copy(f32(dst), src)
	return nil
}

func (c *CPU) UploadInt(dst Buf, src []int32) error {
	if d := i32(dst); len(d) < len(src) {
		return fmt.Errorf("upload: %d elements into a buffer of %d", len(src), len(d))
	}
	copy(i32(dst), src)
	return nil
}

func (c *CPU) UploadF64(dst Buf, src []float64) error {
	if d := f64(dst); len(d) < len(src) {
		return fmt.Errorf("upload: %d elements into a buffer of %d", len(src), len(d))
	}
	copy(f64(dst), src)
	return nil
}

func (c *CPU) Download(dst []float32, src Buf) error {
	if s := f32(src); len(s) < len(dst) {
		return fmt.Errorf("download: buffer of %d elements into %d", len(s), len(dst))
	}
	copy(dst, f32(src))
	return nil
}

func (c *CPU) DownloadF64(dst []float64, src Buf) error {
	if s := f64(src); len(s) < len(dst) {
		return fmt.Errorf("download: buffer of %d elements into %d", len(s), len(dst))
	}
	copy(dst, f64(src))
	return nil
}

// Gemm implements Backend.
func (c *CPU) Gemm(p kernels.GemmParams, a, b, cc Buf) error {
	if c.TF32 {
		ra, rb := slices.Clone(f32(a)), slices.Clone(f32(b))
		for i := range ra {
			ra[i] = kernels.RoundTF32(ra[i])
		}
		for i := range rb {
			rb[i] = kernels.RoundTF32(rb[i])
		}
		return kernels.GemmRef(p, ra, rb, f32(cc))
	}
	if !c.BLAS {
		return kernels.GemmRef(p, f32(a), f32(b), f32(cc))
	}
	A, B, C := f32(a), f32(b), f32(cc)
	if err := p.Validate(len(A), len(B), len(C)); err != nil {
		return err
	}
	if b0, b1 := p.Batches(); p.M == 1 && p.Beta == 0 && b0*b1 > 1 {
		gemmRows(p, A, B, C)
		return nil
	}
	if p.K == 1 && p.Beta == 0 {
		gemmOuter(p, A, B, C)
		return nil
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	if p.TransA {
		ta = blas.Trans
	}
	if p.TransB {
		tb = blas.Trans
	}
	impl := G.WhichBLAS()
	b0, b1 := p.Batches()
	for i := 0; i < b0; i++ {
		for j := 0; j < b1; j++ {
			oa, ob, oc := p.Offsets(i, j)
			impl.Sgemm(ta, tb, p.M, p.N, p.K, p.Alpha, A[oa:], p.LdA, B[ob:], p.LdB, p.Beta, C[oc:], p.LdC)
		}
	}
	return nil
}

// gemmRows runs a batch of products of one output row each (a decoding
// step's attention: one query row per batch row and head) in loops that
// sum in kernels.GemmRef's order: each is too small for a BLAS call, whose
// fixed cost exceeds its work. p is validated, M 1 and Beta 0.
func gemmRows(p kernels.GemmParams, a, b, c []float32) {
	b0, b1 := p.Batches()
	var row []float32 // A's one row, gathered when strided
	if p.TransA {
		row = make([]float32, p.K)
	}
	for i := 0; i < b0; i++ {
		for j := 0; j < b1; j++ {
			oa, ob, oc := p.Offsets(i, j)
			out := c[oc:][:p.N]
			ar := a[oa:][:p.K:p.K]
			if p.TransA {
				for k := range row {
					row[k] = a[oa+k*p.LdA]
				}
				ar = row
			}
			gemmRow(p, ar, b[ob:], out)
		}
	}
}

// gemmOuter runs products of inner size 1 (outer products: a decoding
// step's one-hot rows, ACT's halting weights spread over a row), which
// are exact, so the loops give BLAS's results without a call's fixed cost;
// each element is kernels.GemmRef's Alpha · (0 + a·b). p is validated, K 1
// and Beta 0.
func gemmOuter(p kernels.GemmParams, a, b, c []float32) {
	sa, sb := p.LdA, 1 // strides of A's column and B's row
	if p.TransA {
		sa = 1
	}
	if p.TransB {
		sb = p.LdB
	}
	b0, b1 := p.Batches()
	for i := 0; i < b0; i++ {
		for j := 0; j < b1; j++ {
			oa, ob, oc := p.Offsets(i, j)
			for m := 0; m < p.M; m++ {
				x, out := a[oa+m*sa], c[oc+m*p.LdC:][:p.N]
				for n := range out {
					var s float32
					s += x * b[ob+n*sb]
					out[n] = p.Alpha * s
				}
			}
		}
	}
}

// gemmRow is one product of gemmRows: out = Alpha · ar · op(B).
func gemmRow(p kernels.GemmParams, ar, b, out []float32) {
	if p.TransB { // out[n] = Σ_k ar[k] b[n, k]: one dot per column
		dots(p.Alpha, ar, b, p.LdB, out)
		return
	}
	// out[n] = Σ_k ar[k] b[k, n]: rows of B accumulated in k order, which
	// is each output's order too. A zero weight's row (a masked key's
	// value) is skipped: it adds ±0, which changes nothing but the sign of
	// a zero sum, unless the row holds an infinity or NaN.
	clear(out)
	for k, a := range ar {
		if a != 0 {
			axpy(a, b[k*p.LdB:][:len(out)], out)
		}
	}
	if p.Alpha != 1 {
		for n := range out {
			out[n] *= p.Alpha
		}
	}
}

// dots sets out[n] = alpha · Σ_k x[k] b[n*ld + k], each sum accumulated in
// increasing k (unrolled, the order kept).
func dots(alpha float32, x, b []float32, ld int, out []float32) {
	K := len(x)
	for n := range out {
		y := b[n*ld:][:K]
		var s float32
		k := 0
		for ; k+4 <= K; k += 4 {
			xs, ys := x[k:k+4:k+4], y[k:k+4:k+4]
			s += xs[0] * ys[0]
			s += xs[1] * ys[1]
			s += xs[2] * ys[2]
			s += xs[3] * ys[3]
		}
		for ; k < K; k++ {
			s += x[k] * y[k]
		}
		out[n] = alpha * s
	}
}

// axpy adds a·x to y, len(y) >= len(x).
func axpy(a float32, x, y []float32) {
	k := 0
	for ; k+4 <= len(x); k += 4 {
		xs, ys := x[k:k+4:k+4], y[k:k+4:k+4]
		ys[0] += a * xs[0]
		ys[1] += a * xs[1]
		ys[2] += a * xs[2]
		ys[3] += a * xs[3]
	}
	for ; k < len(x); k++ {
		y[k] += a * x[k]
	}
}

func (c *CPU) Binary(op kernels.BinOp, n int, a Buf, as int, b Buf, bs int, y Buf) error {
	kernels.BinaryRef(op, n, f32(a), as, f32(b), bs, f32(y))
	return nil
}
func (c *CPU) AddBias(n, d int, x, b, y Buf) error {
	kernels.AddBiasRef(n, d, f32(x), f32(b), f32(y))
	return nil
}
func (c *CPU) RepeatRows(n, d int, b, y Buf) error {
	kernels.RepeatRowsRef(n, d, f32(b), f32(y))
	return nil
}
func (c *CPU) SumRows(n, d int, x, y Buf) error {
	kernels.SumRowsRef(n, d, f32(x), f32(y))
	return nil
}
func (c *CPU) ReLU(n int, x, y Buf) error { kernels.ReLURef(n, f32(x), f32(y)); return nil }
func (c *CPU) ReLUGrad(n int, y, dy, dx Buf) error {
	kernels.ReLUGradRef(n, f32(y), f32(dy), f32(dx))
	return nil
}
func (c *CPU) GELU(n int, x, y Buf) error { kernels.GELURef(n, f32(x), f32(y)); return nil }
func (c *CPU) GELUErf(n int, x, y Buf) error {
	kernels.GELUErfRef(n, f32(x), f32(y))
	return nil
}
func (c *CPU) GELUErfGrad(n int, x, dy, dx Buf) error {
	kernels.GELUErfGradRef(n, f32(x), f32(dy), f32(dx))
	return nil
}
func (c *CPU) GELUGrad(n int, x, dy, dx Buf) error {
	kernels.GELUGradRef(n, f32(x), f32(dy), f32(dx))
	return nil
}
func (c *CPU) Transpose2D(rows, cols int, x, y Buf) error {
	kernels.Transpose2DRef(rows, cols, f32(x), f32(y))
	return nil
}
func (c *CPU) Embed(n, d int, table, ids, y Buf) error {
	kernels.EmbedRef(n, d, f32(table), i32(ids), f32(y))
	return nil
}
func (c *CPU) EmbedGrad(v, d, n int, dy, ids, dtable Buf) error {
	kernels.EmbedGradRef(v, d, n, f32(dy), i32(ids), f32(dtable))
	return nil
}
func (c *CPU) RelBias(nb, h, tq, tk int, table, buckets, y Buf) error {
	kernels.RelBiasRef(nb, h, tq, tk, f32(table), i32(buckets), f32(y))
	return nil
}
func (c *CPU) RelBiasGrad(nb, h, tq, tk int, dy, buckets, dtable Buf) error {
	kernels.RelBiasGradRef(nb, h, tq, tk, f32(dy), i32(buckets), f32(dtable))
	return nil
}
func (c *CPU) LayerNorm(n, d int, eps float32, x, gamma, beta, y Buf) error {
	kernels.LayerNormRef(n, d, eps, f32(x), f32(gamma), f32(beta), f32(y))
	return nil
}
func (c *CPU) LayerNormGradX(n, d int, eps float32, x, gamma, dy, dx Buf) error {
	kernels.LayerNormGradXRef(n, d, eps, f32(x), f32(gamma), f32(dy), f32(dx))
	return nil
}
func (c *CPU) LayerNormGradGamma(n, d int, eps float32, x, dy, dgamma Buf) error {
	kernels.LayerNormGradGammaRef(n, d, eps, f32(x), f32(dy), f32(dgamma))
	return nil
}
func (c *CPU) RMSNorm(n, d int, eps float32, x, gamma, y Buf) error {
	kernels.RMSNormRef(n, d, eps, f32(x), f32(gamma), f32(y))
	return nil
}
func (c *CPU) RMSNormGradX(n, d int, eps float32, x, gamma, dy, dx Buf) error {
	kernels.RMSNormGradXRef(n, d, eps, f32(x), f32(gamma), f32(dy), f32(dx))
	return nil
}
func (c *CPU) RMSNormGradGamma(n, d int, eps float32, x, dy, dgamma Buf) error {
	kernels.RMSNormGradGammaRef(n, d, eps, f32(x), f32(dy), f32(dgamma))
	return nil
}
func (c *CPU) LayerNormGradBeta(n, d int, dy, dbeta Buf) error {
	kernels.LayerNormGradBetaRef(n, d, f32(dy), f32(dbeta))
	return nil
}
func (c *CPU) AttnSoftmax(s kernels.AttnShape, x, mask Buf, mb kernels.Bcast, bias Buf, bb kernels.Bcast, y Buf) error {
	kernels.AttnSoftmaxRef(s, f32(x), f32(mask), mb, f32(bias), bb, f32(y))
	return nil
}
func (c *CPU) AttnSoftmaxGrad(rows, tk int, p, dp, ds Buf) error {
	kernels.AttnSoftmaxGradRef(rows, tk, f32(p), f32(dp), f32(ds))
	return nil
}
func (c *CPU) SumTo(s kernels.AttnShape, to kernels.Bcast, x, y Buf) error {
	kernels.SumToRef(s, to, f32(x), f32(y))
	return nil
}
func (c *CPU) SoftmaxCE(n, v int, p kernels.CEParams, x, t, loss Buf) error {
	kernels.SoftmaxCERef(n, v, p, f32(x), i32(t), f32(loss))
	return nil
}
func (c *CPU) SoftmaxCEGrad(n, v int, p kernels.CEParams, x, t, dl, dx Buf) error {
	kernels.SoftmaxCEGradRef(n, v, p, f32(x), i32(t), f32(dl), f32(dx))
	return nil
}
func (c *CPU) Dropout(n int, p kernels.DropoutParams, x, y, mask Buf) error {
	kernels.DropoutRef(n, p, f32(x), f32(y), f32(mask))
	return nil
}
func (c *CPU) DropoutGrad(n int, dy, mask, dx Buf) error {
	kernels.DropoutGradRef(n, f32(dy), f32(mask), f32(dx))
	return nil
}
func (c *CPU) LogProbAt(n, v int, x, t, out Buf) error {
	kernels.LogProbAtRef(n, v, f32(x), i32(t), f64(out))
	return nil
}
func (c *CPU) Adam(n int, p kernels.AdamParams, lr float32, step int, param, grad, m, v Buf) error {
	kernels.AdamRef(n, p, lr, step, f32(param), f32(grad), f32(m), f32(v))
	return nil
}
func (c *CPU) SumSquares(n int, x, acc Buf) error {
	kernels.SumSquaresRef(n, f32(x), f64(acc))
	return nil
}
func (c *CPU) ClipByNorm(n int, sq Buf, limit float32, x Buf) error {
	kernels.ClipByNormRef(n, f64(sq), limit, f32(x))
	return nil
}
