package models

import (
	"compbench/kernels"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
)

// The LSTM cell (Hochreiter & Schmidhuber 1997, with forget gate, as in
// Keysers et al. App. E's tensor2tensor baseline) written once, with its
// own forward and backward pass: the recurrent models run it step by step
// outside a Gorgonia graph, since an unrolled graph per batch shape would
// cost more to build than to run.
//
// One step for N rows, input size In, hidden size H:
//
//	z = [x, h_prev]·W + b          W [In+H, 4H], gate order i, f, g, o
//	i, f, o = σ(z_i), σ(z_f), σ(z_o);  g = tanh(z_g)
//	c = f⊙c_prev + i⊙g;  h = o⊙tanh(c)
//
// A row with mask 0 (padding) keeps its previous state unchanged, so a
// reversed pass over right-padded rows starts at each row's last token.
// The first In rows of W are W_ih and the last H rows W_hh, so a sequence
// (lstm_seq.go) splits z into x·W_ih for all steps at once and h_prev·W_hh
// per step.

// lstmStep holds what the backward pass of one step needs.
type lstmStep struct {
	n, in, h int
	xh       []float32 // [N, In+H] input and previous hidden state
	gates    []float32 // [N, 4H] i, f, g, o after their nonlinearities
	cPrev    []float32 // [N, H]
	tanhC    []float32 // [N, H] tanh of the new cell
	mask     []float32 // [N] 1 for real rows, 0 for padding; nil: all real
}

// lstmForward runs one step; it returns the new h and c [N, H] and the
// step's cache.
func lstmForward(w, b []float32, in, H int, x, hPrev, cPrev, mask []float32) (h, c []float32, st *lstmStep) {
	n := len(hPrev) / H
	st = &lstmStep{n: n, in: in, h: H, xh: make([]float32, n*(in+H)), cPrev: cPrev, mask: mask}
	for r := 0; r < n; r++ {
		copy(st.xh[r*(in+H):], x[r*in:(r+1)*in])
		copy(st.xh[r*(in+H)+in:], hPrev[r*H:(r+1)*H])
	}
	z := make([]float32, n*4*H) // [N, 4H]
	for r := 0; r < n; r++ {
		copy(z[r*4*H:], b)
	}
	gemm(false, false, n, 4*H, in+H, 1, st.xh, w, 1, z)
	h, c = make([]float32, n*H), make([]float32, n*H) // [N, H]
	st.tanhC = make([]float32, n*H)                   // [N, H]
	lstmGates(z, hPrev, cPrev, mask, h, c, st.tanhC, H)
	st.gates = z
	return h, c, st
}

// lstmGates turns the pre-activations z [N, 4H] into the gates in place
// and writes the new h, c and tanh(c) [N, H]; rows with mask 0 copy
// h_prev and c_prev (kernels.LSTMGatesRef, which the GPU runs too).
func lstmGates(z, hPrev, cPrev, mask, h, c, tanhC []float32, H int) {
	kernels.LSTMGatesRef(len(hPrev)/H, H, z, hPrev, cPrev, mask, h, c, tanhC)
}

// backward takes the gradients dh, dc of the step's outputs, adds the
// weight gradients into dW, dB and returns the gradients of x, h_prev and
// c_prev.
func (st *lstmStep) backward(w, dW, dB []float32, dh, dc []float32) (dx, dhPrev, dcPrev []float32) {
	n, in, H := st.n, st.in, st.h
	dz := make([]float32, n*4*H)                                // [N, 4H]
	dhPrev, dcPrev = make([]float32, n*H), make([]float32, n*H) // [N, H]
	kernels.LSTMGatesBackRef(n, H, st.gates, st.tanhC, st.cPrev, st.mask, dh, make([]float32, n*H), dc, dz, dhPrev, dcPrev)
	gemm(true, false, in+H, 4*H, n, 1, st.xh, dz, 1, dW) // [In+H, 4H]
	colSums(dz, dB)
	dxh := make([]float32, n*(in+H)) // [N, In+H]
	gemm(false, true, n, in+H, 4*H, 1, dz, w, 0, dxh)
	dx = make([]float32, n*in) // [N, In]
	for r := 0; r < n; r++ {
		copy(dx[r*in:(r+1)*in], dxh[r*(in+H):r*(in+H)+in])
		for k := 0; k < H; k++ {
			dhPrev[r*H+k] += dxh[r*(in+H)+in+k]
		}
	}
	return dx, dhPrev, dcPrev
}

// colSums adds the column sums of x [N, len(out)] into out.
func colSums(x, out []float32) {
	w := len(out)
	for r := 0; r+w <= len(x); r += w {
		row := x[r : r+w]
		for k, v := range row {
			out[k] += v
		}
	}
}

// gemm is C = alpha·op(A)·op(B) + beta·C for row-major A, B, C with op(A)
// [m, k], op(B) [k, n], through the BLAS Gorgonia uses.
func gemm(ta, tb bool, m, n, k int, alpha float32, a, b []float32, beta float32, c []float32) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	tA, tB, lda, ldb := blas.NoTrans, blas.NoTrans, k, n
	if ta {
		tA, lda = blas.Trans, m
	}
	if tb {
		tB, ldb = blas.Trans, k
	}
	G.WhichBLAS().Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, n)
}
