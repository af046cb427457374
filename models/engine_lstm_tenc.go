package models

import (
	"fmt"
	"math"

	"compbench/engine"
	"compbench/kernels"
	"compbench/ops"
)

// The LSTM models' Transformer encoder (lstm_tenc.go; Bogin et al. 2022,
// §5.3) on an engine backend: encodeTransformer and backwardTransformer as
// kernel calls. The encoder runs batch-major (row b*S+t), and each dropout
// site draws its mask over that buffer; the final LayerNorm's output is
// then permuted into the time-major memory the decoder reads, and the
// memory's gradient back.
//
// Each row attends over its real positions only, and padded query
// positions get zeros in the head outputs: the scores of all S×S
// positions are computed and an uploaded mask [B, 1, S, S] sets -Inf
// wherever the query or the key is padding, and AttnSoftmax turns an all
// -Inf row into zeros.

// devTLayer is one encoder layer's forward state; the dropout masks are
// nil without dropout.
type devTLayer struct {
	x, y0        engine.Buf // [N, D] the layer's input, LN0(x)
	q, k, v      engine.Buf // [N, D]
	probs        engine.Buf // [B, heads, S, S] attention weights
	att          engine.Buf // [N, D] head outputs, concatenated
	drop0        engine.Buf // [N, D] mask on the attention sublayer output
	x1, y1       engine.Buf // [N, D] x + attention sublayer, LN1(x1)
	hid, hidDrop engine.Buf // [N, MLP] ReLU output after dropout, mask
	drop1        engine.Buf // [N, D] mask on the feed-forward output
}

// devTEnc is the encoder's forward state.
type devTEnc struct {
	embDrop engine.Buf // [N, D] mask on embeddings + positions
	layers  []devTLayer
	xF      engine.Buf // [N, D] the final LayerNorm's input
}

// tencInputs is the host part of the encoder's upload: the attention mask
// [B, 1, S, S] (0 where query and key are both real, -Inf elsewhere) and
// the sinusoidal positions [S, D], in one buffer.
func (f *devPass) tencInputs() []float32 {
	B, S, D := f.B, f.S, f.e.m.Cfg.Dim
	buf := make([]float32, B*S*S+S*D) // [B*S*S + S*D]
	negInf := float32(math.Inf(-1))
	for b := 0; b < B; b++ {
		n := f.srcLen[b]
		for i := 0; i < S; i++ {
			row := buf[(b*S+i)*S : (b*S+i+1)*S]
			for j := range row {
				if i >= n || j >= n {
					row[j] = negInf
				}
			}
		}
	}
	fillPos(buf[B*S*S:], 1, S, D)
	return buf
}

// attnGemm is the per-(row, head) product of the encoder's self-attention
// on batch-major buffers: operands of width D (q, k, v and their
// gradients, head h at column h·dk) or S (scores and weights [B, heads,
// S, S]). wide says which operands have width D.
func (f *devPass) attnGemm(ta, tb bool, m, n, k int, alpha float32, wideA, wideB, wideC bool, a, b, c engine.Buf) error {
	D, S, heads := f.e.m.Cfg.Dim, f.S, f.e.m.tenc.heads
	dk := D / heads
	ld := func(wide bool) (int, [2]int) {
		if wide {
			return D, [2]int{S * D, dk}
		}
		return S, [2]int{heads * S * S, S * S}
	}
	p := kernels.GemmParams{TransA: ta, TransB: tb, M: m, N: n, K: k, Alpha: alpha, Batch: [2]int{f.B, heads}}
	p.LdA, p.StrideA = ld(wideA)
	p.LdB, p.StrideB = ld(wideB)
	p.LdC, p.StrideC = ld(wideC)
	return f.e.b.Gemm(p, a, b, c)
}

// linear is y [n, out] = x [n, in]·W + b.
func (f *devPass) linear(n, in, out int, x engine.Buf, w, b int, y engine.Buf) error {
	if err := mm(f.e.b, false, false, n, out, in, x, f.param(w), 0, y); err != nil {
		return err
	}
	return f.e.b.AddBias(n, out, y, f.param(b), y)
}

// linearBack writes the gradients of W and b of y = x·W + b and, when dx
// is not nil, dx = dy·Wᵀ (beta 1 adds it to dx).
func (f *devPass) linearBack(n, in, out int, x, dy engine.Buf, w, b int, beta float32, dx engine.Buf) error {
	be := f.e.b
	if err := mm(be, true, false, in, out, n, x, dy, 0, f.grad(w)); err != nil { // [in, out]
		return err
	}
	if err := be.SumRows(n, out, dy, f.grad(b)); err != nil {
		return err
	}
	if dx == nil {
		return nil
	}
	return mm(be, false, true, n, in, out, dy, f.param(w), beta, dx) // [n, in]
}

// permute copies a [rows of B·S, D] buffer between the batch-major and
// the time-major order, with min(B, S) strided copies.
func (f *devPass) permute(src, dst engine.Buf, toTimeMajor bool) error {
	be, B, S, D := f.e.b, f.B, f.S, f.e.m.Cfg.Dim
	N := B * S * D
	// Batch-major row b*S+t is time-major row t*B+b.
	bm, tm := src, dst
	if !toTimeMajor {
		bm, tm = dst, src
	}
	cp := func(rows int, bOff, bLd, tOff, tLd int) error {
		if toTimeMajor {
			return be.Copy2D(rows, D, be.View(bm, bOff, N-bOff), bLd, be.View(tm, tOff, N-tOff), tLd)
		}
		return be.Copy2D(rows, D, be.View(tm, tOff, N-tOff), tLd, be.View(bm, bOff, N-bOff), bLd)
	}
	if B <= S {
		for b := 0; b < B; b++ { // S rows t of batch row b
			if err := cp(S, b*S*D, D, b*D, B*D); err != nil {
				return err
			}
		}
		return nil
	}
	for t := 0; t < S; t++ { // B rows b of step t
		if err := cp(B, t*D, S*D, t*B*D, D); err != nil {
			return err
		}
	}
	return nil
}

// encodeTransformer runs the encoder: it sets
// f.mem [S*B, D] (time-major) and f.keys.
func (f *devPass) encodeTransformer() error {
	m, be, e := f.e.m, f.e.b, f.e.m.tenc
	D, B, S, F, heads := m.Cfg.Dim, f.B, f.S, e.mlp, e.heads
	N := B * S
	eps := float32(ops.LayerNormEps)
	scale := float32(1 / math.Sqrt(float64(D/heads)))
	mask, pos := be.View(f.encMask, 0, B*S*S), be.View(f.encMask, B*S*S, S*D)
	f.tenc = &devTEnc{layers: make([]devTLayer, len(e.layers))}
	alloc := func(bufs ...*engine.Buf) error {
		for _, p := range bufs {
			var err error
			if *p, err = f.alloc(N * D); err != nil { // [N, D]
				return err
			}
		}
		return nil
	}
	var x engine.Buf
	if err := alloc(&x); err != nil {
		return err
	}
	if err := be.Embed(N, D, f.param(m.srcEmb), f.srcIDs, x); err != nil { // [N, D]
		return err
	}
	if err := be.AddBias(B, S*D, x, pos, x); err != nil { // + positions, per batch row
		return err
	}
	if f.drop {
		var err error
		if f.tenc.embDrop, err = f.dropout(dropTEnc, N*D, x); err != nil {
			return err
		}
	}
	for li, l := range e.layers {
		c := &f.tenc.layers[li]
		c.x = x
		if err := alloc(&c.y0, &c.q, &c.k, &c.v, &c.att, &c.x1, &c.y1); err != nil {
			return err
		}
		var err error
		if c.probs, err = f.alloc(B * heads * S * S); err != nil { // [B, heads, S, S]
			return err
		}
		if c.hid, err = f.alloc(N * F); err != nil { // [N, MLP]
			return err
		}
		if err := be.LayerNorm(N, D, eps, x, f.param(l.ln0[0]), f.param(l.ln0[1]), c.y0); err != nil {
			return err
		}
		for _, p := range []struct {
			w, b int
			y    engine.Buf
		}{{l.wq, l.bq, c.q}, {l.wk, l.bk, c.k}, {l.wv, l.bv, c.v}} {
			if err := f.linear(N, D, D, c.y0, p.w, p.b, p.y); err != nil { // [N, D]
				return err
			}
		}
		if err := f.attnGemm(false, true, S, S, D/heads, scale, true, true, false, c.q, c.k, c.probs); err != nil { // [B, heads, S, S] scores
			return err
		}
		sh := kernels.AttnShape{B: B, H: heads, Tq: S, Tk: S}
		if err := be.AttnSoftmax(sh, c.probs, mask, kernels.Bcast{B: B, H: 1}, nil, kernels.Bcast{}, c.probs); err != nil {
			return err
		}
		if err := f.attnGemm(false, false, S, D/heads, S, 1, false, true, true, c.probs, c.v, c.att); err != nil { // [N, D]
			return err
		}
		if err := f.linear(N, D, D, c.att, l.wo, l.bo, c.x1); err != nil { // [N, D] the sublayer output
			return err
		}
		if f.drop {
			if c.drop0, err = f.dropout(dropTEnc+4*li+1, N*D, c.x1); err != nil {
				return err
			}
		}
		if err := be.Binary(kernels.OpAdd, N*D, c.x1, 1, x, 1, c.x1); err != nil { // x1 = x + drop(attn)
			return err
		}
		if err := be.LayerNorm(N, D, eps, c.x1, f.param(l.ln1[0]), f.param(l.ln1[1]), c.y1); err != nil {
			return err
		}
		if err := f.linear(N, D, F, c.y1, l.w1, l.b1, c.hid); err != nil { // [N, MLP]
			return err
		}
		if err := be.ReLU(N*F, c.hid, c.hid); err != nil {
			return err
		}
		if f.drop {
			if c.hidDrop, err = f.dropout(dropTEnc+4*li+2, N*F, c.hid); err != nil {
				return err
			}
		}
		var x2 engine.Buf
		if err := alloc(&x2); err != nil {
			return err
		}
		if err := f.linear(N, F, D, c.hid, l.w2, l.b2, x2); err != nil { // [N, D] the sublayer output
			return err
		}
		if f.drop {
			if c.drop1, err = f.dropout(dropTEnc+4*li+3, N*D, x2); err != nil {
				return err
			}
		}
		if err := be.Binary(kernels.OpAdd, N*D, x2, 1, c.x1, 1, x2); err != nil { // x2 = x1 + drop(ffn)
			return err
		}
		x = x2
	}
	f.tenc.xF = x
	y, err := f.alloc(N * D) // [N, D] batch-major memory
	if err != nil {
		return err
	}
	if err := be.LayerNorm(N, D, eps, x, f.param(e.ln[0]), f.param(e.ln[1]), y); err != nil {
		return err
	}
	if f.mem, err = f.alloc(N * D); err != nil { // [S*B, D]
		return err
	}
	if err := f.permute(y, f.mem, true); err != nil {
		return err
	}
	if f.keys, err = f.alloc(N * D); err != nil { // [S*B, H]
		return err
	}
	return mm(be, false, false, N, D, D, f.mem, f.param(m.wk), 0, f.keys)
}

// layerNormBack writes the gain and bias gradients of y = LN(x) and dx =
// the input gradient (beta 1: added to dx, through tmp [N, D]).
func (f *devPass) layerNormBack(x, dy engine.Buf, ln [2]int, add bool, dx, tmp engine.Buf) error {
	be, N, D := f.e.b, f.B*f.S, f.e.m.Cfg.Dim
	eps := float32(ops.LayerNormEps)
	if err := be.LayerNormGradGamma(N, D, eps, x, dy, f.grad(ln[0])); err != nil {
		return err
	}
	if err := be.LayerNormGradBeta(N, D, dy, f.grad(ln[1])); err != nil {
		return err
	}
	if !add {
		return be.LayerNormGradX(N, D, eps, x, f.param(ln[0]), dy, dx)
	}
	if err := be.LayerNormGradX(N, D, eps, x, f.param(ln[0]), dy, tmp); err != nil {
		return err
	}
	return be.Binary(kernels.OpAdd, N*D, dx, 1, tmp, 1, dx)
}

// backwardTransformer is the encoder's backward pass: from
// the memory's gradient [S*B, D] (time-major) to the source embeddings'.
func (f *devPass) backwardTransformer(dMem engine.Buf) error {
	m, be, e, c0 := f.e.m, f.e.b, f.e.m.tenc, f.tenc
	D, B, S, F, heads := m.Cfg.Dim, f.B, f.S, e.mlp, e.heads
	N, dk := B*S, D/heads
	scale := float32(1 / math.Sqrt(float64(dk)))
	bufs := make([]engine.Buf, 8)
	for i := range bufs {
		var err error
		if bufs[i], err = f.alloc(N * D); err != nil {
			return err
		}
	}
	// [N, D] each: the residual stream's gradient, a sublayer output's,
	// an input gradient, scratch, and the gradients of q, k, v, att.
	dx, dOut, dIn, tmp, dq, dkk, dv, dAtt := bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], bufs[6], bufs[7]
	dHid, err := f.alloc(N * F) // [N, MLP]
	if err != nil {
		return err
	}
	dP, err := f.alloc(B * heads * S * S) // [B, heads, S, S]
	if err != nil {
		return err
	}
	if err := f.permute(dMem, dOut, false); err != nil {
		return err
	}
	if err := f.layerNormBack(c0.xF, dOut, e.ln, false, dx, nil); err != nil {
		return fmt.Errorf("final LayerNorm: %w", err)
	}
	// dropGrad is dy through a dropout mask into out, or dy itself without
	// dropout.
	dropGrad := func(n int, dy, mask, out engine.Buf) (engine.Buf, error) {
		if mask == nil {
			return dy, nil
		}
		return out, be.DropoutGrad(n, dy, mask, out)
	}
	for li := len(e.layers) - 1; li >= 0; li-- {
		l, c := e.layers[li], &c0.layers[li]
		// x2 = x1 + drop(FFN(LN1(x1)))
		do, err := dropGrad(N*D, dx, c.drop1, dOut)
		if err != nil {
			return err
		}
		if err := f.linearBack(N, F, D, c.hid, do, l.w2, l.b2, 0, dHid); err != nil {
			return err
		}
		if err := be.ReLUGrad(N*F, c.hid, dHid, dHid); err != nil {
			return err
		}
		if c.hidDrop != nil {
			if err := be.DropoutGrad(N*F, dHid, c.hidDrop, dHid); err != nil {
				return err
			}
		}
		if err := f.linearBack(N, D, F, c.y1, dHid, l.w1, l.b1, 0, dIn); err != nil {
			return err
		}
		if err := f.layerNormBack(c.x1, dIn, l.ln1, true, dx, tmp); err != nil {
			return fmt.Errorf("layer %d: LN1: %w", li, err)
		}
		// x1 = x + drop(Attn(LN0(x)))
		da, err := dropGrad(N*D, dx, c.drop0, dOut)
		if err != nil {
			return err
		}
		if err := f.linearBack(N, D, D, c.att, da, l.wo, l.bo, 0, dAtt); err != nil {
			return err
		}
		// dV = Pᵀ·dO; dP = dO·Vᵀ; dS = P⊙(dP − rowsum(P⊙dP)); dQ = s·dS·K;
		// dK = s·dSᵀ·Q.
		if err := f.attnGemm(true, false, S, dk, S, 1, false, true, true, c.probs, dAtt, dv); err != nil {
			return err
		}
		if err := f.attnGemm(false, true, S, S, dk, 1, true, true, false, dAtt, c.v, dP); err != nil {
			return err
		}
		if err := be.AttnSoftmaxGrad(B*heads*S, S, c.probs, dP, dP); err != nil {
			return err
		}
		if err := f.attnGemm(false, false, S, dk, S, scale, false, true, true, dP, c.k, dq); err != nil {
			return err
		}
		if err := f.attnGemm(true, false, S, dk, S, scale, false, true, true, dP, c.q, dkk); err != nil {
			return err
		}
		for i, p := range []struct {
			w, b int
			d    engine.Buf
		}{{l.wq, l.bq, dq}, {l.wk, l.bk, dkk}, {l.wv, l.bv, dv}} {
			if err := f.linearBack(N, D, D, c.y0, p.d, p.w, p.b, float32(min(i, 1)), dIn); err != nil {
				return err
			}
		}
		if err := f.layerNormBack(c.x, dIn, l.ln0, true, dx, tmp); err != nil {
			return fmt.Errorf("layer %d: LN0: %w", li, err)
		}
	}
	if c0.embDrop != nil {
		if err := be.DropoutGrad(N*D, dx, c0.embDrop, dx); err != nil {
			return err
		}
	}
	return be.EmbedGrad(m.Cfg.SrcVocab, D, N, dx, f.srcIDs, f.grad(m.srcEmb))
}
