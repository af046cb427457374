package models

import "compbench/vecmath"

// backward propagates the seeds set by loss through the output layer, the
// copy gate, the attention, the decoder and the encoder, adding into the
// model's gradient buffers.
func (f *lstmPass) backward() {
	m, H, B, S, T, V := f.m, f.m.Cfg.Dim, f.B, f.S, f.T, f.m.Cfg.TgtVocab
	R, W := len(f.rows), m.memW
	O, Gn := H+W, 2*H+W // widths of [h; ctx] and of the gate input
	g := func(i int) []float32 { return m.p.Grads[i] }

	dO := make([]float32, R*O) // [R, H+W]
	gemm(true, false, O, V, R, 1, f.o, f.dLogits, 1, g(m.outW))
	gemm(false, true, R, O, V, 1, f.dLogits, m.p.Data(m.outW), 0, dO)
	for r := 0; r < R; r++ {
		for k, v := range f.dLogits[r*V : (r+1)*V] {
			g(m.outB)[k] += v
		}
	}
	dEmbQ := make([]float32, R*H) // [R, H] gate's gradient of the decoder input embedding
	if m.Copy {
		gw := m.p.Data(m.gateW)
		for r := 0; r < R; r++ {
			dz := f.dPgen[r] * f.pgen[r] * (1 - f.pgen[r])
			g(m.gateB)[0] += dz
			gin := f.gin[r*Gn : (r+1)*Gn]
			for i := range gin {
				g(m.gateW)[i] += dz * gin[i]
			}
			for i := 0; i < O; i++ {
				dO[r*O+i] += dz * gw[i]
			}
			for i := 0; i < H; i++ {
				dEmbQ[r*H+i] += dz * gw[O+i]
			}
		}
	}
	applyMask(dO, f.oDrop)

	// Attention: e_j = v·tanh(q + k_j + b), a = softmax(e), ctx = Σ a_j mem_j.
	dHq := make([]float32, R*H)     // [R, H]
	dQ := make([]float32, R*H)      // [R, H]
	dKeys := make([]float32, B*S*H) // [B*S, H]
	dMem := make([]float32, B*S*W)  // [B*S, W]
	va := m.p.Data(m.va)
	dVa, dBa := g(m.va), g(m.ba)
	da := make([]float32, S)
	uBuf := make([]float32, H) // [H] tanh recomputed when attU was not kept
	for r, row := range f.rows {
		b := row / T
		n := f.srcLen[b]
		copy(dHq[r*H:(r+1)*H], dO[r*O:r*O+H])
		dctx := dO[r*O+H : (r+1)*O]
		a := f.att[r*S : r*S+n]
		var sum float32
		for j := 0; j < n; j++ {
			mj := f.mem[(b*S+j)*W : (b*S+j+1)*W]
			dm := dMem[(b*S+j)*W : (b*S+j+1)*W]
			d := vecmath.DotAxpy(dctx, mj, a[j], dm) // dctx·mem_j; dMem_j += a_j·dctx
			if f.dAttCopy != nil {
				d += f.dAttCopy[r*S+j]
			}
			da[j] = d
			sum += a[j] * d
		}
		qr, dq := f.q[r*H:(r+1)*H], dQ[r*H:(r+1)*H]
		for j := 0; j < n; j++ {
			de := a[j] * (da[j] - sum)
			if de == 0 {
				continue
			}
			k, dk := f.keys[(b*S+j)*H:(b*S+j+1)*H], dKeys[(b*S+j)*H:(b*S+j+1)*H]
			us := uBuf
			if f.attU != nil {
				us = f.attU[(r*S+j)*H : (r*S+j+1)*H]
			} else {
				for i, q := range qr {
					us[i] = q + k[i] // qr holds q + b
				}
				vecmath.TanhSlice(us)
			}
			vecmath.ScoreBack(de, us, va, dVa, dq, dk) // dq and dk get the same du
		}
	}
	colSums(dQ, dBa) // the bias is added to q, so its gradient is Σ_r dq_r
	gemm(true, false, H, H, R, 1, f.hq, dQ, 1, g(m.wq))
	gemm(false, true, R, H, H, 1, dQ, m.p.Data(m.wq), 1, dHq)
	gemm(true, false, W, H, B*S, 1, f.mem, dKeys, 1, g(m.wk))
	gemm(false, true, B*S, W, H, 1, dKeys, m.p.Data(m.wk), 1, dMem)

	// Decoder stack, top to bottom.
	dhs := make([][]float32, T)
	for t := range dhs {
		dhs[t] = make([]float32, B*H) // [B, H]
	}
	for r, row := range f.rows {
		t, b := row%T, row/T
		for i := 0; i < H; i++ {
			dhs[t][b*H+i] += dHq[r*H+i]
		}
	}
	for l := len(m.dec) - 1; l >= 0; l-- {
		c := m.dec[l]
		dxs := f.decRuns[l].backward(m.p.Data(c.w), g(c.w), g(c.b), dhs)
		if l > 0 {
			for t := range dxs {
				applyMask(dxs[t], f.decInDrop[l][t])
			}
		}
		dhs = dxs
	}
	for r, row := range f.rows {
		t, b := row%T, row/T
		for i := 0; i < H; i++ {
			dhs[t][b*H+i] += dEmbQ[r*H+i]
		}
	}
	dTgt := g(m.tgtEmb)
	for t := 0; t < T; t++ {
		applyMask(dhs[t], f.tgtDrop[t])
		for b := 0; b < B; b++ {
			id := f.decIDs[b*T+t]
			for i := 0; i < H; i++ {
				dTgt[id*H+i] += dhs[t][b*H+i]
			}
		}
	}

	if m.tenc != nil {
		f.backwardTransformer(dMem)
		return
	}
	f.backwardBiLSTM(dMem)
}

// backwardBiLSTM takes the gradient of the memory [B*S, 2H] through the
// encoder stack, top to bottom; both directions read the same input.
func (f *lstmPass) backwardBiLSTM(dMem []float32) {
	m, H, B, S := f.m, f.m.Cfg.Dim, f.B, f.S
	g := func(i int) []float32 { return m.p.Grads[i] }
	dhf, dhb := make([][]float32, S), make([][]float32, S)
	for t := 0; t < S; t++ {
		dhf[t], dhb[t] = make([]float32, B*H), make([]float32, B*H) // [B, H]
		for b := 0; b < B; b++ {
			copy(dhf[t][b*H:(b+1)*H], dMem[(b*S+t)*2*H:(b*S+t)*2*H+H])
			copy(dhb[t][b*H:(b+1)*H], dMem[(b*S+t)*2*H+H:(b*S+t+1)*2*H])
		}
	}
	dSrc := g(m.srcEmb)
	for l := len(m.enc) - 1; l >= 0; l-- {
		c := m.enc[l]
		dxf := f.encRuns[l][0].backward(m.p.Data(c[0].w), g(c[0].w), g(c[0].b), dhf)
		dxb := f.encRuns[l][1].backward(m.p.Data(c[1].w), g(c[1].w), g(c[1].b), dhb)
		for t := 0; t < S; t++ {
			for i, v := range dxb[t] {
				dxf[t][i] += v
			}
			if l > 0 {
				applyMask(dxf[t], f.encInDrop[l][t])
				for b := 0; b < B; b++ {
					copy(dhf[t][b*H:(b+1)*H], dxf[t][b*2*H:b*2*H+H])
					copy(dhb[t][b*H:(b+1)*H], dxf[t][b*2*H+H:(b+1)*2*H])
				}
				continue
			}
			applyMask(dxf[t], f.srcDrop[t])
			for b := 0; b < B; b++ {
				id := f.embIDs[b*S+t]
				for i := 0; i < H; i++ {
					dSrc[id*H+i] += dxf[t][b*H+i]
				}
			}
		}
	}
}
