package engine

import "compbench/kernels"

// LSTMGates implements RecurrentBackend.
func (c *CPU) LSTMGates(n, h int, z, hPrev, cPrev, mask, hOut, cOut, tanhC Buf) error {
	kernels.LSTMGatesRef(n, h, f32(z), f32(hPrev), f32(cPrev), f32(mask), f32(hOut), f32(cOut), f32(tanhC))
	return nil
}

// LSTMGatesBack implements RecurrentBackend.
func (c *CPU) LSTMGatesBack(n, h int, gates, tanhC, cPrev, mask, dhOut, dhNext, dcNext, dz, dhPrev, dcPrev Buf) error {
	kernels.LSTMGatesBackRef(n, h, f32(gates), f32(tanhC), f32(cPrev), f32(mask), f32(dhOut), f32(dhNext),
		f32(dcNext), f32(dz), f32(dhPrev), f32(dcPrev))
	return nil
}

// AddAttn implements RecurrentBackend.
func (c *CPU) AddAttn(r, s, h, nb int, q, keys, va, srcLen, att Buf) error {
	kernels.AddAttnRef(r, s, h, nb, f32(q), f32(keys), f32(va), i32(srcLen), f32(att))
	return nil
}

// AddAttnBack implements RecurrentBackend.
func (c *CPU) AddAttnBack(r, s, h, nb int, q, keys, va, srcLen, de, dq, dkeys, dvaPart Buf) error {
	kernels.AddAttnBackRef(r, s, h, nb, f32(q), f32(keys), f32(va), i32(srcLen), f32(de), f32(dq), f32(dkeys), f32(dvaPart))
	return nil
}

// CopyLoss implements RecurrentBackend.
func (c *CPU) CopyLoss(r, v, s, n int, ignore int32, logits, zg, att, match, tgt, prob, dLogits, dZg, dAtt Buf) error {
	kernels.CopyLossRef(r, v, s, n, ignore, f32(logits), f32(zg), f32(att), f32(match), i32(tgt), f32(prob),
		f32(dLogits), f32(dZg), f32(dAtt))
	return nil
}

// Copy2D implements RecurrentBackend.
func (c *CPU) Copy2D(rows, cols int, src Buf, ldSrc int, dst Buf, ldDst int) error {
	if rows == 0 || cols == 0 {
		return nil
	}
	kernels.Copy2DRef(rows, cols, f32(src), ldSrc, f32(dst), ldDst)
	return nil
}

// Fill implements RecurrentBackend.
func (c *CPU) Fill(n int, v float32, y Buf) error {
	kernels.FillRef(n, v, f32(y))
	return nil
}
