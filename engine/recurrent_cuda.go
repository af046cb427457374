//go:build gpu || gpuemu

package engine

var _ RecurrentBackend = (*CUDA)(nil)

// LSTMGates implements RecurrentBackend; a nil mask is the zero Buf (every
// row real).
func (c *CUDA) LSTMGates(n, h int, z, hPrev, cPrev, mask, hOut, cOut, tanhC Buf) error {
	return c.Dev.LSTMGates(n, h, kb(z), kb(hPrev), kb(cPrev), kb(mask), kb(hOut), kb(cOut), kb(tanhC))
}

// LSTMGatesBack implements RecurrentBackend.
func (c *CUDA) LSTMGatesBack(n, h int, gates, tanhC, cPrev, mask, dhOut, dhNext, dcNext, dz, dhPrev, dcPrev Buf) error {
	return c.Dev.LSTMGatesBack(n, h, kb(gates), kb(tanhC), kb(cPrev), kb(mask), kb(dhOut), kb(dhNext), kb(dcNext),
		kb(dz), kb(dhPrev), kb(dcPrev))
}

// AddAttn implements RecurrentBackend.
func (c *CUDA) AddAttn(r, s, h, nb int, q, keys, va, srcLen, att Buf) error {
	return c.Dev.AddAttn(r, s, h, nb, kb(q), kb(keys), kb(va), kb(srcLen), kb(att))
}

// AddAttnBack implements RecurrentBackend.
func (c *CUDA) AddAttnBack(r, s, h, nb int, q, keys, va, srcLen, de, dq, dkeys, dvaPart Buf) error {
	return c.Dev.AddAttnBack(r, s, h, nb, kb(q), kb(keys), kb(va), kb(srcLen), kb(de), kb(dq), kb(dkeys), kb(dvaPart))
}

// CopyLoss implements RecurrentBackend.
func (c *CUDA) CopyLoss(r, v, s, n int, ignore int32, logits, zg, att, match, tgt, prob, dLogits, dZg, dAtt Buf) error {
	return c.Dev.CopyLoss(r, v, s, n, ignore, kb(logits), kb(zg), kb(att), kb(match), kb(tgt), kb(prob),
		kb(dLogits), kb(dZg), kb(dAtt))
}

// Copy2D implements RecurrentBackend.
func (c *CUDA) Copy2D(rows, cols int, src Buf, ldSrc int, dst Buf, ldDst int) error {
	return c.Dev.Copy2D(rows, cols, kb(src), ldSrc, kb(dst), ldDst)
}

// Fill implements RecurrentBackend.
func (c *CUDA) Fill(n int, v float32, y Buf) error { return c.Dev.Fill(n, v, kb(y)) }
