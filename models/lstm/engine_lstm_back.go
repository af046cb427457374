package lstm

import (
	"fmt"

	"compbench/engine"
	"compbench/kernels"
)

// backward is the backward pass: from the loss seeds
// through the output layer, the copy gate, the attention, the decoder and
// the encoder. Every weight's gradient buffer is written exactly once.
func (f *devPass) backward() error {
	m, be, o := f.e.m, f.e.b, &f.out
	H, B, S, T, V := m.Cfg.Dim, f.B, f.S, f.T, m.Cfg.TgtVocab
	R, W := o.R, m.memW
	O, Gn := H+W, 2*H+W
	bufs := make([]engine.Buf, 8)
	for i, n := range []int{R * O, R * S, R * S, R * H, S * B * H, R * H, S * B * W, R * H} {
		var err error
		if bufs[i], err = f.alloc(n); err != nil {
			return err
		}
	}
	// [R, H+W], [R, S] ×2, [R, H], [S*B, H], [R, H], [S*B, W], [R, H]
	dO, dA, dE, dQ, dKeys, dVaPart, dMem, dHd := bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], bufs[6], bufs[7]

	if err := mm(be, false, true, R, O, V, f.dLogits, f.param(m.outW), 0, dO); err != nil { // [R, H+W]
		return err
	}
	if err := mm(be, true, false, O, V, R, o.o, f.dLogits, 0, f.grad(m.outW)); err != nil { // [H+W, V]
		return err
	}
	if err := be.SumRows(R, V, f.dLogits, f.grad(m.outB)); err != nil {
		return err
	}
	var dEmbQ engine.Buf // [R, H] the copy gate's gradient of the decoder input embeddings
	if m.Copy {
		var err error
		if dEmbQ, err = f.alloc(R * H); err != nil {
			return err
		}
		gw := f.param(m.gateW)
		if err := mm(be, true, false, Gn, 1, R, o.gin, f.dZg, 0, f.grad(m.gateW)); err != nil { // [2H+W, 1]
			return err
		}
		if err := be.SumRows(R, 1, f.dZg, f.grad(m.gateB)); err != nil {
			return err
		}
		if err := mm(be, false, false, R, O, 1, f.dZg, gw, 1, dO); err != nil { // [R, H+W] += dz·w[:O]ᵀ
			return err
		}
		if err := mm(be, false, false, R, H, 1, f.dZg, be.View(gw, O, H), 0, dEmbQ); err != nil { // [R, H]
			return err
		}
	}
	if o.oDrop != nil {
		if err := be.DropoutGrad(R*O, dO, o.oDrop, dO); err != nil {
			return err
		}
	}

	// Attention: e = v·tanh(q + k_j), a = softmax(e), ctx = Σ a_j mem_j.
	dCtx := be.View(dO, H, R*O-H) // [R, W] with row stride H+W
	dap := kernels.GemmParams{M: T, N: S, K: W, TransB: true, Alpha: 1, LdA: B * O, LdB: B * W, LdC: B * S,
		Batch: [2]int{B, 1}, StrideA: [2]int{O, 0}, StrideB: [2]int{W, 0}, StrideC: [2]int{S, 0}}
	if err := be.Gemm(dap, dCtx, f.mem, dA); err != nil { // [R, S] dctx_b · mem_bᵀ
		return err
	}
	if m.Copy {
		if err := be.Binary(kernels.OpAdd, R*S, dA, 1, f.dAttCopy, 1, dA); err != nil {
			return err
		}
	}
	if err := be.AttnSoftmaxGrad(R, S, o.att, dA, dE); err != nil {
		return err
	}
	if err := be.AddAttnBack(R, S, H, B, o.q, f.keys, f.param(m.va), f.lenBuf, dE, dQ, dKeys, dVaPart); err != nil {
		return err
	}
	if err := be.SumRows(R, H, dVaPart, f.grad(m.va)); err != nil {
		return err
	}
	if err := be.SumRows(R, H, dQ, f.grad(m.ba)); err != nil { // the bias joins q
		return err
	}
	if err := mm(be, true, false, H, H, R, o.hd, dQ, 0, f.grad(m.wq)); err != nil { // [H, H]
		return err
	}
	if err := be.Copy2D(R, H, dO, O, dHd, H); err != nil {
		return err
	}
	if err := mm(be, false, true, R, H, H, dQ, f.param(m.wq), 1, dHd); err != nil { // [R, H]
		return err
	}
	dmp := kernels.GemmParams{M: S, N: W, K: T, TransA: true, Alpha: 1, LdA: B * S, LdB: B * O, LdC: B * W,
		Batch: [2]int{B, 1}, StrideA: [2]int{S, 0}, StrideB: [2]int{O, 0}, StrideC: [2]int{W, 0}}
	if err := be.Gemm(dmp, o.att, dCtx, dMem); err != nil { // [S*B, W] att_bᵀ · dctx_b
		return err
	}
	if err := mm(be, true, false, W, H, S*B, f.mem, dKeys, 0, f.grad(m.wk)); err != nil { // [W, H]
		return err
	}
	if err := mm(be, false, true, S*B, W, H, dKeys, f.param(m.wk), 1, dMem); err != nil { // [S*B, W]
		return err
	}

	// Decoder stack, top to bottom.
	dhs := dHd
	for l := len(m.dec) - 1; l >= 0; l-- {
		dx, err := f.runBack(f.dec[l], dhs)
		if err != nil {
			return fmt.Errorf("decoder layer %d: %w", l, err)
		}
		if l > 0 && f.decInDrop[l] != nil {
			if err := be.DropoutGrad(R*H, dx, f.decInDrop[l], dx); err != nil {
				return err
			}
		}
		dhs = dx
	}
	if dEmbQ != nil {
		if err := be.Binary(kernels.OpAdd, R*H, dhs, 1, dEmbQ, 1, dhs); err != nil {
			return err
		}
	}
	if f.tgtDrop != nil {
		if err := be.DropoutGrad(R*H, dhs, f.tgtDrop, dhs); err != nil {
			return err
		}
	}
	if err := be.EmbedGrad(m.Cfg.TgtVocab, H, R, dhs, f.decIDs, f.grad(m.tgtEmb)); err != nil {
		return err
	}
	return f.encoderBack(dMem)
}

// encoderBack takes the memory's gradient [S*B, 2H] through the
// bidirectional stack; both directions read the same input.
func (f *devPass) encoderBack(dMem engine.Buf) error {
	m, be, H, N := f.e.m, f.e.b, f.e.m.Cfg.Dim, f.S*f.B
	if m.tenc != nil {
		return f.backwardTransformer(dMem)
	}
	dh := [2]engine.Buf{}
	for d := range dh {
		var err error
		if dh[d], err = f.alloc(N * H); err != nil { // [S*B, H]
			return err
		}
	}
	split := func(src engine.Buf) error {
		if err := be.Copy2D(N, H, src, 2*H, dh[0], H); err != nil {
			return err
		}
		return be.Copy2D(N, H, be.View(src, H, N*2*H-H), 2*H, dh[1], H)
	}
	if err := split(dMem); err != nil {
		return err
	}
	for l := len(m.enc) - 1; l >= 0; l-- {
		dxf, err := f.runBack(f.enc[l][0], dh[0])
		if err != nil {
			return fmt.Errorf("encoder layer %d: %w", l, err)
		}
		dxb, err := f.runBack(f.enc[l][1], dh[1])
		if err != nil {
			return fmt.Errorf("encoder layer %d: %w", l, err)
		}
		in := f.enc[l][0].in
		if err := be.Binary(kernels.OpAdd, N*in, dxf, 1, dxb, 1, dxf); err != nil {
			return err
		}
		if l > 0 {
			if f.encInDrop[l] != nil {
				if err := be.DropoutGrad(N*in, dxf, f.encInDrop[l], dxf); err != nil {
					return err
				}
			}
			if err := split(dxf); err != nil {
				return err
			}
			continue
		}
		if f.srcDrop != nil {
			if err := be.DropoutGrad(N*H, dxf, f.srcDrop, dxf); err != nil {
				return err
			}
		}
		if err := be.EmbedGrad(m.Cfg.SrcVocab, H, N, dxf, f.srcIDs, f.grad(m.srcEmb)); err != nil {
			return err
		}
	}
	return nil
}

// runBack is backpropagation through time for one run:
// dhs [T*n, H] are the gradients of its outputs; it writes the cell's
// weight and bias gradients and returns dx [T*n, In].
func (f *devPass) runBack(r *devRun, dhs engine.Buf) (engine.Buf, error) {
	be, T, n, in, H := f.e.b, r.T, r.n, r.in, r.h
	bufs := make([]engine.Buf, 6)
	for i, size := range []int{T * n * 4 * H, n * H, n * H, n * H, n * H, T * n * in} {
		var err error
		if bufs[i], err = f.alloc(size); err != nil {
			return nil, err
		}
	}
	// [T*n, 4H], [n, H] ×4, [T*n, In]
	dz, dh, dc, dhP, dcP, dx := bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5]
	if err := be.Fill(n*H, 0, dh); err != nil {
		return nil, err
	}
	if err := be.Fill(n*H, 0, dc); err != nil {
		return nil, err
	}
	w, dW := f.param(r.c.w), f.grad(r.c.w)
	wih, whh := be.View(w, 0, in*4*H), be.View(w, in*4*H, H*4*H)
	dwih, dwhh := be.View(dW, 0, in*4*H), be.View(dW, in*4*H, H*4*H)
	for k := T - 1; k >= 0; k-- {
		t := k
		if r.rev {
			t = T - 1 - k
		}
		dzt := f.at(r, dz, t, 4*H) // [n, 4H]
		if err := be.LSTMGatesBack(n, H, f.at(r, r.gates, t, 4*H), f.at(r, r.tanhC, t, H), f.state(r, r.cs, t),
			f.maskAt(r, t), f.at(r, dhs, t, H), dh, dc, dzt, dhP, dcP); err != nil {
			return nil, err
		}
		if k > 0 {
			if err := mm(be, false, true, n, H, 4*H, dzt, whh, 1, dhP); err != nil { // [n, H] += dz·W_hhᵀ
				return nil, err
			}
		}
		dh, dhP = dhP, dh
		dc, dcP = dcP, dc
	}
	// h_prev of step t is the states of its previous step: rows 0..T-2 of
	// hs against dz rows 1..T-1 forward, rows 1..T-1 against 0..T-2
	// reversed; the first step's h_prev is 0.
	if T > 1 {
		hPrev, dzRec := r.hs, be.View(dz, n*4*H, (T-1)*n*4*H)
		if r.rev {
			hPrev, dzRec = be.View(r.hs, n*H, (T-1)*n*H), dz
		}
		if err := mm(be, true, false, H, 4*H, (T-1)*n, hPrev, dzRec, 0, dwhh); err != nil { // [H, 4H]
			return nil, err
		}
	} else if err := be.Fill(H*4*H, 0, dwhh); err != nil {
		return nil, err
	}
	if err := mm(be, true, false, in, 4*H, T*n, r.x, dz, 0, dwih); err != nil { // [In, 4H]
		return nil, err
	}
	if err := be.SumRows(T*n, 4*H, dz, f.grad(r.c.b)); err != nil {
		return nil, err
	}
	return dx, mm(be, false, true, T*n, in, 4*H, dz, wih, 0, dx) // [T*n, In]
}
