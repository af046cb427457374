package models

import (
	"math"

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
	h, c = make([]float32, n*H), make([]float32, n*H)
	st.tanhC = make([]float32, n*H)
	for r := 0; r < n; r++ {
		zr := z[r*4*H : (r+1)*4*H]
		for k := 0; k < H; k++ {
			zr[k] = sigmoid(zr[k])
			zr[H+k] = sigmoid(zr[H+k])
			zr[2*H+k] = tanh32(zr[2*H+k])
			zr[3*H+k] = sigmoid(zr[3*H+k])
			j := r*H + k
			cn := zr[H+k]*cPrev[j] + zr[k]*zr[2*H+k]
			tc := tanh32(cn)
			st.tanhC[j] = tc
			if mask != nil && mask[r] == 0 {
				h[j], c[j] = hPrev[j], cPrev[j]
				continue
			}
			h[j], c[j] = zr[3*H+k]*tc, cn
		}
	}
	st.gates = z
	return h, c, st
}

// backward takes the gradients dh, dc of the step's outputs, adds the
// weight gradients into dW, dB and returns the gradients of x, h_prev and
// c_prev.
func (st *lstmStep) backward(w, dW, dB []float32, dh, dc []float32) (dx, dhPrev, dcPrev []float32) {
	n, in, H := st.n, st.in, st.h
	dz := make([]float32, n*4*H) // [N, 4H]
	dhPrev, dcPrev = make([]float32, n*H), make([]float32, n*H)
	for r := 0; r < n; r++ {
		g := st.gates[r*4*H : (r+1)*4*H]
		dzr := dz[r*4*H : (r+1)*4*H]
		if st.mask != nil && st.mask[r] == 0 {
			copy(dhPrev[r*H:(r+1)*H], dh[r*H:(r+1)*H])
			copy(dcPrev[r*H:(r+1)*H], dc[r*H:(r+1)*H])
			continue
		}
		for k := 0; k < H; k++ {
			j := r*H + k
			i, f, gg, o, tc := g[k], g[H+k], g[2*H+k], g[3*H+k], st.tanhC[j]
			dcn := dc[j] + dh[j]*o*(1-tc*tc)
			dzr[k] = dcn * gg * i * (1 - i)
			dzr[H+k] = dcn * st.cPrev[j] * f * (1 - f)
			dzr[2*H+k] = dcn * i * (1 - gg*gg)
			dzr[3*H+k] = dh[j] * tc * o * (1 - o)
			dcPrev[j] = dcn * f
		}
	}
	gemm(true, false, in+H, 4*H, n, 1, st.xh, dz, 1, dW) // [In+H, 4H]
	for r := 0; r < n; r++ {
		for k, v := range dz[r*4*H : (r+1)*4*H] {
			dB[k] += v
		}
	}
	dxh := make([]float32, n*(in+H)) // [N, In+H]
	gemm(false, true, n, in+H, 4*H, 1, dz, w, 0, dxh)
	dx = make([]float32, n*in)
	for r := 0; r < n; r++ {
		copy(dx[r*in:(r+1)*in], dxh[r*(in+H):r*(in+H)+in])
		for k := 0; k < H; k++ {
			dhPrev[r*H+k] += dxh[r*(in+H)+in+k]
		}
	}
	return dx, dhPrev, dcPrev
}

// lstmRun is one LSTM layer run over a whole sequence in one direction.
type lstmRun struct {
	steps []*lstmStep
	rev   bool
	lastH []float32 // [N, H] hidden state after the last step
	lastC []float32 // [N, H] cell state after the last step
}

// runLSTM runs a layer over xs[t] [N, In] for t = 0..len-1 (reversed when
// rev) from zero state; masks[t] [N] marks real rows (nil: all real). It
// returns hs[t] [N, H] in time order.
func runLSTM(w, b []float32, in, H int, xs [][]float32, masks [][]float32, rev bool) ([][]float32, *lstmRun) {
	T := len(xs)
	n := len(xs[0]) / in
	h, c := make([]float32, n*H), make([]float32, n*H)
	hs := make([][]float32, T)
	run := &lstmRun{steps: make([]*lstmStep, T), rev: rev}
	for k := 0; k < T; k++ {
		t := k
		if rev {
			t = T - 1 - k
		}
		var m []float32
		if masks != nil {
			m = masks[t]
		}
		var st *lstmStep
		h, c, st = lstmForward(w, b, in, H, xs[t], h, c, m)
		hs[t], run.steps[t] = h, st
	}
	run.lastH, run.lastC = h, c
	return hs, run
}

// backward is backpropagation through time: dhs[t] [N, H] are the
// gradients of the outputs; it returns dxs[t] [N, In].
func (run *lstmRun) backward(w, dW, dB []float32, dhs [][]float32) [][]float32 {
	T := len(run.steps)
	n, H := run.steps[0].n, run.steps[0].h
	dh, dc := make([]float32, n*H), make([]float32, n*H)
	dxs := make([][]float32, T)
	for k := T - 1; k >= 0; k-- {
		t := k
		if run.rev {
			t = T - 1 - k
		}
		g := make([]float32, n*H)
		copy(g, dh)
		for j, v := range dhs[t] {
			g[j] += v
		}
		dxs[t], dh, dc = run.steps[t].backward(w, dW, dB, g, dc)
	}
	return dxs
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

func sigmoid(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }

func tanh32(x float32) float32 { return float32(math.Tanh(float64(x))) }
