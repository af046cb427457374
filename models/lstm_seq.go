package models

import "compbench/kernels"

// lstmRun is one LSTM layer run over a whole sequence in one direction.
// Everything is stored time-major in one buffer per quantity (row t*N+r),
// so the input projection, the weight gradients and the input gradients
// are one GEMM each over all T·N rows; only h_prev·W_hh and its transpose
// run per step.
type lstmRun struct {
	T, n, in, h int
	rev         bool
	masks       [][]float32 // [T][N] 1 for real rows; nil: all real
	x           []float32   // [T*N, In] inputs
	gates       []float32   // [T*N, 4H] i, f, g, o after their nonlinearities
	hs, cs      []float32   // [T*N, H] states after each step
	tanhC       []float32   // [T*N, H]
	zero        []float32   // [N, H] the initial state
	lastH       []float32   // [N, H] hidden state after the last step
	lastC       []float32   // [N, H] cell state after the last step
}

// at is row block t of a time-major [T*N, w] buffer.
func (run *lstmRun) at(buf []float32, t, w int) []float32 {
	return buf[t*run.n*w : (t+1)*run.n*w]
}

// prev is the time index of the step before t in the run's order, or -1.
func (run *lstmRun) prev(t int) int {
	if run.rev {
		if t+1 < run.T {
			return t + 1
		}
		return -1
	}
	return t - 1
}

// state is h (or c from cs) entering step t.
func (run *lstmRun) state(buf []float32, t int) []float32 {
	p := run.prev(t)
	if p < 0 {
		return run.zero
	}
	return run.at(buf, p, run.h)
}

// runLSTM runs a layer over xs[t] [N, In] for t = 0..len-1 (reversed when
// rev) from zero state; masks[t] [N] marks real rows (nil: all real). It
// returns hs[t] [N, H] in time order (views of the run's buffer: callers
// copy before writing).
func runLSTM(w, b []float32, in, H int, xs [][]float32, masks [][]float32, rev bool) ([][]float32, *lstmRun) {
	T := len(xs)
	n := len(xs[0]) / in
	N := T * n
	run := &lstmRun{T: T, n: n, in: in, h: H, rev: rev, masks: masks,
		x:     make([]float32, N*in),  // [T*N, In]
		gates: make([]float32, N*4*H), // [T*N, 4H]
		hs:    make([]float32, N*H),   // [T*N, H]
		cs:    make([]float32, N*H),   // [T*N, H]
		tanhC: make([]float32, N*H),   // [T*N, H]
		zero:  make([]float32, n*H),   // [N, H]
	}
	for t, x := range xs {
		copy(run.at(run.x, t, in), x)
	}
	for r := 0; r < N; r++ {
		copy(run.gates[r*4*H:(r+1)*4*H], b)
	}
	wih, whh := w[:in*4*H], w[in*4*H:]
	gemm(false, false, N, 4*H, in, 1, run.x, wih, 1, run.gates) // [T*N, 4H] x·W_ih + b
	last := 0
	for k := 0; k < T; k++ {
		t := k
		if rev {
			t = T - 1 - k
		}
		var m []float32
		if masks != nil {
			m = masks[t]
		}
		z := run.at(run.gates, t, 4*H)
		hp, cp := run.state(run.hs, t), run.state(run.cs, t)
		if k > 0 {
			gemm(false, false, n, 4*H, H, 1, hp, whh, 1, z) // [N, 4H] += h_prev·W_hh
		}
		lstmGates(z, hp, cp, m, run.at(run.hs, t, H), run.at(run.cs, t, H), run.at(run.tanhC, t, H), H)
		last = t
	}
	run.lastH, run.lastC = run.at(run.hs, last, H), run.at(run.cs, last, H)
	hs := make([][]float32, T)
	for t := range hs {
		hs[t] = run.at(run.hs, t, H)
	}
	return hs, run
}

// backward is backpropagation through time: dhs[t] [N, H] are the
// gradients of the outputs; it adds the weight gradients into dW, dB and
// returns dxs[t] [N, In].
func (run *lstmRun) backward(w, dW, dB []float32, dhs [][]float32) [][]float32 {
	T, n, in, H := run.T, run.n, run.in, run.h
	N := T * n
	wih, whh := w[:in*4*H], w[in*4*H:]
	dwih, dwhh := dW[:in*4*H], dW[in*4*H:]
	dz := make([]float32, N*4*H)                           // [T*N, 4H]
	dh, dc := make([]float32, n*H), make([]float32, n*H)   // [N, H] from the later step
	dhP, dcP := make([]float32, n*H), make([]float32, n*H) // [N, H] to the earlier step
	for k := T - 1; k >= 0; k-- {
		t := k
		if run.rev {
			t = T - 1 - k
		}
		var m []float32
		if run.masks != nil {
			m = run.masks[t]
		}
		dzt := run.at(dz, t, 4*H)
		kernels.LSTMGatesBackRef(n, H, run.at(run.gates, t, 4*H), run.at(run.tanhC, t, H), run.state(run.cs, t), m, dhs[t], dh, dc, dzt, dhP, dcP)
		if k > 0 {
			gemm(false, true, n, H, 4*H, 1, dzt, whh, 1, dhP) // [N, H] += dz·W_hhᵀ
		}
		dh, dhP = dhP, dh
		dc, dcP = dcP, dc
	}
	// h_prev of step t is hs of its previous step: for the forward order
	// rows 0..T-2 of hs against dz rows 1..T-1, for the reverse order hs
	// rows 1..T-1 against dz rows 0..T-2; the first step's h_prev is 0.
	if T > 1 {
		hPrev, dzRec := run.hs[:(T-1)*n*H], dz[n*4*H:]
		if run.rev {
			hPrev, dzRec = run.hs[n*H:], dz[:(T-1)*n*4*H]
		}
		gemm(true, false, H, 4*H, (T-1)*n, 1, hPrev, dzRec, 1, dwhh) // [H, 4H]
	}
	gemm(true, false, in, 4*H, N, 1, run.x, dz, 1, dwih) // [In, 4H]
	colSums(dz, dB)
	dx := make([]float32, N*in) // [T*N, In]
	gemm(false, true, N, in, 4*H, 1, dz, wih, 0, dx)
	dxs := make([][]float32, T)
	for t := range dxs {
		dxs[t] = run.at(dx, t, in)
	}
	return dxs
}
