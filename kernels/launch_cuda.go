//go:build gpu || gpuemu

package kernels

import (
	"fmt"
	"math"
)

// kernelNames are the entry points of kernels/ptx, checked by the tests.
var kernelNames = map[string]bool{
	"binary_f32": true, "add_bias": true, "repeat_rows": true, "sum_rows": true,
	"relu_fwd": true, "relu_grad": true, "gelu_fwd": true, "gelu_grad": true, "gelu_erf_fwd": true, "gelu_erf_grad": true,
	"dropout_fwd": true, "dropout_grad": true, "transpose2d": true,
	"adam_step": true, "sum_squares": true, "sum_parts": true, "clip_by_norm": true,
	"adam_step_multi": true, "sum_squares_multi": true, "clip_by_norm_multi": true,
	"layernorm_stats": true, "layernorm_fwd": true, "layernorm_grad_x": true, "layernorm_grad_gamma": true,
	"rmsnorm_stats": true, "rmsnorm_fwd": true, "rmsnorm_grad_x": true, "rmsnorm_grad_gamma": true,
	"attn_softmax": true, "attn_softmax_grad": true, "sum_to": true,
	"embed_fwd": true, "embed_grad": true, "relbias_fwd": true, "relbias_grad": true,
	"ce_rows": true, "ce_reduce": true, "ce_count": true, "ce_grad": true,
	"log_softmax": true, "logprob_at": true, "argmax_rows": true, "topk_rows": true,
	"gemm_tf32": true, "gemm_f32": true,
	"lstm_gates": true, "lstm_gates_back": true, "add_attn": true, "add_attn_back_q": true,
	"add_attn_back_k": true, "copy_loss": true, "copy2d": true, "fill_f32": true,
}

// need reports a buffer shorter than n 4-byte elements.
func need(what string, b Buf, n int) error {
	if b.IsZero() && n > 0 {
		return fmt.Errorf("cuda: %s: missing buffer", what)
	}
	if b.Len() < n {
		return fmt.Errorf("cuda: %s: buffer of %d elements, need %d", what, b.Len(), n)
	}
	return nil
}

func needAll(what string, n int, bs ...Buf) error {
	for _, b := range bs {
		if err := need(what, b, n); err != nil {
			return err
		}
	}
	return nil
}

const (
	elemBlock = 256 // threads per block of elementwise kernels
	rowBlock  = 256 // threads per block of one-block-per-row kernels
)

func (d *Device) elementwise(name string, n int, args ...any) error {
	return d.launch(name, dim3{blocks(n, elemBlock), 1, 1}, dim3{elemBlock, 1, 1}, 0, args...)
}

// Gemm runs GemmRef's product on the tensor cores (TF32 inputs, FP32
// accumulation) or, per d.Gemm and the device, the FP32 SIMT kernel.
func (d *Device) Gemm(p GemmParams, a, b, c Buf) error {
	if err := p.Validate(a.Len(), b.Len(), c.Len()); err != nil {
		return err
	}
	if d.GemmKind == GemmCublas {
		return d.gemmCublas(p, a, b, c) // cublas_cuda.go; never falls back
	}
	b0, b1 := p.Batches()
	if b0*b1 > 65535 {
		return fmt.Errorf("cuda: gemm batch %d x %d exceeds 65535", b0, b1)
	}
	if p.M == 0 || p.N == 0 {
		return nil
	}
	tf32 := d.GemmKind == GemmTF32 || (d.GemmKind == GemmAuto && d.TensorCores())
	if d.GemmKind == GemmTF32 && !d.TensorCores() {
		return fmt.Errorf("cuda: TF32 GEMM needs sm_80 or later, device is %v", d)
	}
	args := []any{a.At(p.OffA), b.At(p.OffB), c.At(p.OffC), p.M, p.N, p.K, p.LdA, p.LdB, p.LdC,
		b2i(p.TransA), b2i(p.TransB), p.Alpha, p.Beta, b1,
		int64(p.StrideA[0]), int64(p.StrideA[1]), int64(p.StrideB[0]), int64(p.StrideB[1]),
		int64(p.StrideC[0]), int64(p.StrideC[1])}
	if tf32 {
		g := dim3{(p.N + 63) / 64, (p.M + 63) / 64, b0 * b1}
		if g[1] > 65535 {
			return fmt.Errorf("cuda: gemm M %d too large", p.M)
		}
		return d.launch("gemm_tf32", g, dim3{128, 1, 1}, 0, args...)
	}
	g := dim3{(p.N + 15) / 16, (p.M + 15) / 16, b0 * b1}
	if g[1] > 65535 {
		return fmt.Errorf("cuda: gemm M %d too large", p.M)
	}
	return d.launch("gemm_f32", g, dim3{16, 16, 1}, 0, args...)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Transpose2D is Transpose2DRef.
func (d *Device) Transpose2D(rows, cols int, x, y Buf) error {
	if err := needAll("transpose", rows*cols, x, y); err != nil {
		return err
	}
	return d.launch("transpose2d", dim3{(cols + 31) / 32, (rows + 31) / 32, 1}, dim3{32, 8, 1}, 0, rows, cols, x, y)
}

// Binary is BinaryRef.
func (d *Device) Binary(op BinOp, n int, a Buf, aStride int, b Buf, bStride int, y Buf) error {
	if !op.Valid() {
		return fmt.Errorf("cuda: %v", op)
	}
	if aStride < 0 || aStride > 1 || bStride < 0 || bStride > 1 {
		return fmt.Errorf("cuda: binary strides %d, %d not 0 or 1", aStride, bStride)
	}
	if err := need("binary a", a, max(1, (n-1)*aStride+1)); err != nil {
		return err
	}
	if err := need("binary b", b, max(1, (n-1)*bStride+1)); err != nil {
		return err
	}
	if err := need("binary y", y, n); err != nil {
		return err
	}
	return d.elementwise("binary_f32", n, int(op), n, a, aStride, b, bStride, y)
}

// AddBias is AddBiasRef.
func (d *Device) AddBias(n, dd int, x, b, y Buf) error {
	if err := needAll("add bias", n*dd, x, y); err != nil {
		return err
	}
	if err := need("add bias b", b, dd); err != nil {
		return err
	}
	return d.elementwise("add_bias", n*dd, n, dd, x, b, y)
}

// RepeatRows is RepeatRowsRef.
func (d *Device) RepeatRows(n, dd int, b, y Buf) error {
	if err := need("repeat b", b, dd); err != nil {
		return err
	}
	if err := need("repeat y", y, n*dd); err != nil {
		return err
	}
	return d.elementwise("repeat_rows", n*dd, n, dd, b, y)
}

// SumRows is SumRowsRef (bit-identical).
func (d *Device) SumRows(n, dd int, x, y Buf) error {
	if err := need("sum rows x", x, n*dd); err != nil {
		return err
	}
	if err := need("sum rows y", y, dd); err != nil {
		return err
	}
	return d.launch("sum_rows", dim3{(dd + 127) / 128, 1, 1}, dim3{128, 1, 1}, 0, n, dd, x, y)
}

// ReLU is ReLURef.
func (d *Device) ReLU(n int, x, y Buf) error {
	if err := needAll("relu", n, x, y); err != nil {
		return err
	}
	return d.elementwise("relu_fwd", n, n, x, y)
}

// ReLUGrad is ReLUGradRef.
func (d *Device) ReLUGrad(n int, y, dy, dx Buf) error {
	if err := needAll("relu grad", n, y, dy, dx); err != nil {
		return err
	}
	return d.elementwise("relu_grad", n, n, y, dy, dx)
}

// GELU is GELURef.
func (d *Device) GELU(n int, x, y Buf) error {
	if err := needAll("gelu", n, x, y); err != nil {
		return err
	}
	return d.elementwise("gelu_fwd", n, n, x, y)
}

// GELUErf is GELUErfRef.
func (d *Device) GELUErf(n int, x, y Buf) error {
	if err := needAll("gelu erf", n, x, y); err != nil {
		return err
	}
	return d.elementwise("gelu_erf_fwd", n, n, x, y)
}

// GELUErfGrad is GELUErfGradRef.
func (d *Device) GELUErfGrad(n int, x, dy, dx Buf) error {
	if err := needAll("gelu erf grad", n, x, dy, dx); err != nil {
		return err
	}
	return d.elementwise("gelu_erf_grad", n, n, x, dy, dx)
}

// GELUGrad is GELUGradRef.
func (d *Device) GELUGrad(n int, x, dy, dx Buf) error {
	if err := needAll("gelu grad", n, x, dy, dx); err != nil {
		return err
	}
	return d.elementwise("gelu_grad", n, n, x, dy, dx)
}

// dropPairs is DROP_PAIRS in elem.cu: draws per thread.
const dropPairs = 16

// Dropout is DropoutRef (bit-identical masks).
func (d *Device) Dropout(n int, p DropoutParams, x, y, mask Buf) error {
	if p.P < 0 || p.P >= 1 {
		return fmt.Errorf("cuda: dropout probability %g not in [0,1)", p.P)
	}
	if err := needAll("dropout", n, x, y, mask); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if p.P == 0 {
		if err := d.Copy(y, x, n); err != nil {
			return err
		}
		return d.fill(mask, n, 1)
	}
	keep := 1 / (1 - p.P)
	chunks := (n + DropChunk - 1) / DropChunk
	threads := chunks * (DropChunk / 2 / dropPairs)
	return d.launch("dropout_fwd", dim3{(threads + elemBlock - 1) / elemBlock, 1, 1}, dim3{elemBlock, 1, 1}, 0,
		n, DropThreshold(p.P), keep, p.Seed, p.ID, p.Step, x, y, mask)
}

// DropoutGrad is DropoutGradRef.
func (d *Device) DropoutGrad(n int, dy, mask, dx Buf) error {
	if err := needAll("dropout grad", n, dy, mask, dx); err != nil {
		return err
	}
	return d.elementwise("dropout_grad", n, n, dy, mask, dx)
}

// layerNormStats computes row mean and rstd into scratch [N, 2].
func (d *Device) layerNormStats(n, dd int, eps float32, x Buf) (Buf, error) {
	st, err := d.scratchBuf(int64(n) * 8)
	if err != nil {
		return Buf{}, err
	}
	return st, d.launch("layernorm_stats", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, dd, eps, x, st)
}

// LayerNorm is LayerNormRef.
func (d *Device) LayerNorm(n, dd int, eps float32, x, gamma, beta, y Buf) error {
	if err := needAll("layernorm", n*dd, x, y); err != nil {
		return err
	}
	if err := needAll("layernorm params", dd, gamma, beta); err != nil {
		return err
	}
	return d.launch("layernorm_fwd", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, dd, eps, x, gamma, beta, y)
}

// LayerNormGradX is LayerNormGradXRef.
func (d *Device) LayerNormGradX(n, dd int, eps float32, x, gamma, dy, dx Buf) error {
	if err := needAll("layernorm grad x", n*dd, x, dy, dx); err != nil {
		return err
	}
	if err := need("layernorm grad gamma", gamma, dd); err != nil {
		return err
	}
	return d.launch("layernorm_grad_x", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, dd, eps, x, gamma, dy, dx)
}

// RMSNorm is RMSNormRef.
func (d *Device) RMSNorm(n, dd int, eps float32, x, gamma, y Buf) error {
	if err := needAll("rmsnorm", n*dd, x, y); err != nil {
		return err
	}
	if err := need("rmsnorm gamma", gamma, dd); err != nil {
		return err
	}
	return d.launch("rmsnorm_fwd", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, dd, eps, x, gamma, y)
}

// RMSNormGradX is RMSNormGradXRef.
func (d *Device) RMSNormGradX(n, dd int, eps float32, x, gamma, dy, dx Buf) error {
	if err := needAll("rmsnorm grad x", n*dd, x, dy, dx); err != nil {
		return err
	}
	if err := need("rmsnorm grad gamma", gamma, dd); err != nil {
		return err
	}
	return d.launch("rmsnorm_grad_x", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, dd, eps, x, gamma, dy, dx)
}

// RMSNormGradGamma is RMSNormGradGammaRef.
func (d *Device) RMSNormGradGamma(n, dd int, eps float32, x, dy, dgamma Buf) error {
	if err := needAll("rmsnorm grad gamma", n*dd, x, dy); err != nil {
		return err
	}
	if err := need("rmsnorm dgamma", dgamma, dd); err != nil {
		return err
	}
	st, err := d.scratchBuf(int64(n) * 4)
	if err != nil {
		return err
	}
	if err := d.launch("rmsnorm_stats", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, dd, eps, x, st); err != nil {
		return err
	}
	return d.launch("rmsnorm_grad_gamma", dim3{(dd + 127) / 128, 1, 1}, dim3{128, 1, 1}, 0, n, dd, st, x, dy, dgamma)
}

// LayerNormGradGamma is LayerNormGradGammaRef.
func (d *Device) LayerNormGradGamma(n, dd int, eps float32, x, dy, dgamma Buf) error {
	if err := needAll("layernorm grad gamma", n*dd, x, dy); err != nil {
		return err
	}
	if err := need("layernorm dgamma", dgamma, dd); err != nil {
		return err
	}
	st, err := d.layerNormStats(n, dd, eps, x)
	if err != nil {
		return err
	}
	return d.launch("layernorm_grad_gamma", dim3{(dd + 127) / 128, 1, 1}, dim3{128, 1, 1}, 0, n, dd, st, x, dy, dgamma)
}

// LayerNormGradBeta is LayerNormGradBetaRef.
func (d *Device) LayerNormGradBeta(n, dd int, dy, dbeta Buf) error {
	return d.SumRows(n, dd, dy, dbeta)
}

func checkBcast(what string, s AttnShape, a Bcast, b Buf) error {
	if b.IsZero() {
		return nil
	}
	if (a.B != 1 && a.B != s.B) || (a.H != 1 && a.H != s.H) {
		return fmt.Errorf("cuda: %s extents %+v do not broadcast to %+v", what, a, s)
	}
	return need(what, b, a.B*a.H*s.Tq*s.Tk)
}

// AttnSoftmax is AttnSoftmaxRef; a zero mask or bias Buf is absent.
func (d *Device) AttnSoftmax(s AttnShape, x, mask Buf, mb Bcast, bias Buf, bb Bcast, y Buf) error {
	if err := needAll("attention softmax", s.Len(), x, y); err != nil {
		return err
	}
	if err := checkBcast("mask", s, mb, mask); err != nil {
		return err
	}
	if err := checkBcast("bias", s, bb, bias); err != nil {
		return err
	}
	rows := s.B * s.H * s.Tq
	return d.launch("attn_softmax", dim3{(rows + 3) / 4, 1, 1}, dim3{128, 1, 1}, 0,
		s.B, s.H, s.Tq, s.Tk, x, mask, mb.B, mb.H, bias, bb.B, bb.H, y)
}

// AttnSoftmaxGrad is AttnSoftmaxGradRef.
func (d *Device) AttnSoftmaxGrad(rows, tk int, p, dp, ds Buf) error {
	if err := needAll("attention softmax grad", rows*tk, p, dp, ds); err != nil {
		return err
	}
	return d.launch("attn_softmax_grad", dim3{(rows + 3) / 4, 1, 1}, dim3{128, 1, 1}, 0, rows, tk, p, dp, ds)
}

// SumTo is SumToRef (bit-identical).
func (d *Device) SumTo(s AttnShape, to Bcast, x, y Buf) error {
	if err := need("sum-to x", x, s.Len()); err != nil {
		return err
	}
	if err := checkBcast("sum-to y", s, to, y); err != nil {
		return err
	}
	n := to.B * to.H * s.Tq * s.Tk
	return d.launch("sum_to", dim3{(n + elemBlock - 1) / elemBlock, 1, 1}, dim3{elemBlock, 1, 1}, 0,
		s.B, s.H, s.Tq, s.Tk, to.B, to.H, x, y)
}

// Embed is EmbedRef; ids must be valid (CheckIDs on the host).
func (d *Device) Embed(n, dd int, table, ids, y Buf) error {
	if err := need("embed ids", ids, n); err != nil {
		return err
	}
	if err := need("embed y", y, n*dd); err != nil {
		return err
	}
	return d.elementwise("embed_fwd", n*dd, n, dd, table, ids, y)
}

// EmbedGrad is EmbedGradRef (bit-identical).
func (d *Device) EmbedGrad(v, dd, n int, dy, ids, dtable Buf) error {
	if err := need("embed grad dy", dy, n*dd); err != nil {
		return err
	}
	if err := need("embed grad ids", ids, n); err != nil {
		return err
	}
	if err := need("embed grad dtable", dtable, v*dd); err != nil {
		return err
	}
	if err := d.Zero(dtable, v*dd); err != nil {
		return err
	}
	return d.launch("embed_grad", dim3{(dd + 63) / 64, 1, 1}, dim3{64, 1, 1}, 0, v, dd, n, dy, ids, dtable)
}

// RelBias is RelBiasRef.
func (d *Device) RelBias(nb, h, tq, tk int, table, buckets, y Buf) error {
	if err := need("relbias table", table, nb*h); err != nil {
		return err
	}
	if err := need("relbias buckets", buckets, tq*tk); err != nil {
		return err
	}
	if err := need("relbias y", y, h*tq*tk); err != nil {
		return err
	}
	n := h * tq * tk
	return d.launch("relbias_fwd", dim3{(n + elemBlock - 1) / elemBlock, 1, 1}, dim3{elemBlock, 1, 1}, 0, nb, h, tq, tk, table, buckets, y)
}

// RelBiasGrad is RelBiasGradRef (bit-identical).
func (d *Device) RelBiasGrad(nb, h, tq, tk int, dy, buckets, dtable Buf) error {
	if err := need("relbias grad dy", dy, h*tq*tk); err != nil {
		return err
	}
	if err := need("relbias grad buckets", buckets, tq*tk); err != nil {
		return err
	}
	if err := need("relbias grad dtable", dtable, nb*h); err != nil {
		return err
	}
	return d.launch("relbias_grad", dim3{(nb*h + 127) / 128, 1, 1}, dim3{128, 1, 1}, 0, nb, h, tq, tk, dy, buckets, dtable)
}

// SoftmaxCE is SoftmaxCERef: loss[0] on the device.
func (d *Device) SoftmaxCE(n, v int, p CEParams, x, t, loss Buf) error {
	if err := need("cross-entropy x", x, n*v); err != nil {
		return err
	}
	if err := need("cross-entropy targets", t, n); err != nil {
		return err
	}
	if err := need("cross-entropy loss", loss, 1); err != nil {
		return err
	}
	sc, err := d.scratchBuf(int64(n)*8 + 8)
	if err != nil {
		return err
	}
	rows, count := sc, sc.At(2*n)
	if err := d.launch("ce_rows", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, v, int(p.Ignore), p.Smoothing, x, t, rows); err != nil {
		return err
	}
	return d.launch("ce_reduce", dim3{1, 1, 1}, dim3{1024, 1, 1}, 0, n, int(p.Ignore), t, rows, loss, count)
}

// SoftmaxCEGrad is SoftmaxCEGradRef; dl[0] is read on the device.
func (d *Device) SoftmaxCEGrad(n, v int, p CEParams, x, t, dl, dx Buf) error {
	if err := needAll("cross-entropy grad", n*v, x, dx); err != nil {
		return err
	}
	if err := need("cross-entropy grad targets", t, n); err != nil {
		return err
	}
	if err := need("cross-entropy grad dl", dl, 1); err != nil {
		return err
	}
	count, err := d.scratchBuf(8)
	if err != nil {
		return err
	}
	if err := d.launch("ce_count", dim3{1, 1, 1}, dim3{1024, 1, 1}, 0, n, int(p.Ignore), t, count); err != nil {
		return err
	}
	return d.launch("ce_grad", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, v, int(p.Ignore), p.Smoothing, x, t, count, dl, dx)
}

// LogSoftmax is LogSoftmaxRef.
func (d *Device) LogSoftmax(n, v int, x, y Buf) error {
	if err := needAll("log-softmax", n*v, x, y); err != nil {
		return err
	}
	return d.launch("log_softmax", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, v, x, y)
}

// LogProbAt is LogProbAtRef; out holds N float64 values.
func (d *Device) LogProbAt(n, v int, x, t, out Buf) error {
	if err := need("logprob x", x, n*v); err != nil {
		return err
	}
	if err := need("logprob targets", t, n); err != nil {
		return err
	}
	if err := need("logprob out", out, 2*n); err != nil {
		return err
	}
	return d.launch("logprob_at", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, v, x, t, out)
}

// Argmax is ArgmaxRef.
func (d *Device) Argmax(n, v int, x Buf, init int32, skip Skip, out Buf) error {
	if err := need("argmax x", x, n*v); err != nil {
		return err
	}
	if err := need("argmax out", out, n); err != nil {
		return err
	}
	if init < 0 || int(init) >= v {
		return fmt.Errorf("cuda: argmax init %d outside [0,%d)", init, v)
	}
	return d.launch("argmax_rows", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, v, x, init, skip[0], skip[1], out)
}

// TopK is TopKRef.
func (d *Device) TopK(n, v, k int, x Buf, skip Skip, vals, idx Buf) error {
	if err := need("top-k x", x, n*v); err != nil {
		return err
	}
	if err := needAll("top-k out", n*k, vals, idx); err != nil {
		return err
	}
	return d.launch("topk_rows", dim3{n, 1, 1}, dim3{rowBlock, 1, 1}, 0, n, v, k, x, skip[0], skip[1], vals, idx)
}

// Adam is AdamRef (bit-identical): the bias corrections are folded on the
// host, as ops.AdamStep does.
func (d *Device) Adam(n int, p AdamParams, lr float32, step int, param, grad, m, v Buf) error {
	if step < 1 {
		return fmt.Errorf("cuda: adam step %d, want >= 1", step)
	}
	if err := needAll("adam", n, param, grad, m, v); err != nil {
		return err
	}
	s := AdamStepScalars(p, lr, step)
	return d.elementwise("adam_step", n, n, p.Beta1, p.Beta2, s.Alpha, s.Eps, s.Decay, param, grad, m, v)
}

// SumSquares is SumSquaresRef: acc holds one float64 (two elements).
func (d *Device) SumSquares(n int, x, acc Buf) error {
	if err := need("sum squares x", x, n); err != nil {
		return err
	}
	if err := need("sum squares acc", acc, 2); err != nil {
		return err
	}
	nb := max(min(blocks(n, elemBlock), 1024), 1)
	part, err := d.scratchBuf(int64(nb) * 8) // [nb] float64 block sums
	if err != nil {
		return err
	}
	if err := d.launch("sum_squares", dim3{nb, 1, 1}, dim3{elemBlock, 1, 1}, 0, n, x, part); err != nil {
		return err
	}
	return d.launch("sum_parts", dim3{1, 1, 1}, dim3{elemBlock, 1, 1}, 0, nb, part, acc)
}

// ClipByNorm is ClipByNormRef.
func (d *Device) ClipByNorm(n int, sq Buf, limit float32, x Buf) error {
	if err := need("clip sq", sq, 2); err != nil {
		return err
	}
	if err := need("clip x", x, n); err != nil {
		return err
	}
	if math.IsNaN(float64(limit)) {
		return fmt.Errorf("cuda: clip limit NaN")
	}
	return d.elementwise("clip_by_norm", n, n, sq, limit, x)
}
