//go:build gpu || gpuemu

package kernels

import "fmt"

// Launchers of the recurrent models' kernels (lstm.cu); each is the
// reference in ref_lstm.go of the same name plus "Ref", with device buffers
// for slices. A zero mask Buf means every row is real.

// needMask checks an optional [n] mask.
func needMask(what string, mask Buf, n int) error {
	if mask.IsZero() {
		return nil
	}
	return need(what, mask, n)
}

// LSTMGates is LSTMGatesRef (sigmoid and tanh in float32: a few ulp from
// vecmath's).
func (d *Device) LSTMGates(n, h int, z, hPrev, cPrev, mask, hOut, cOut, tanhC Buf) error {
	if err := need("lstm gates z", z, n*4*h); err != nil {
		return err
	}
	if err := needAll("lstm gates state", n*h, hPrev, cPrev, hOut, cOut, tanhC); err != nil {
		return err
	}
	if err := needMask("lstm gates mask", mask, n); err != nil {
		return err
	}
	return d.elementwise("lstm_gates", n*h, n, h, z, hPrev, cPrev, mask, hOut, cOut, tanhC)
}

// LSTMGatesBack is LSTMGatesBackRef (bit-identical).
func (d *Device) LSTMGatesBack(n, h int, gates, tanhC, cPrev, mask, dhOut, dhNext, dcNext, dz, dhPrev, dcPrev Buf) error {
	if err := needAll("lstm gates back [N,4H]", n*4*h, gates, dz); err != nil {
		return err
	}
	if err := needAll("lstm gates back [N,H]", n*h, tanhC, cPrev, dhOut, dhNext, dcNext, dhPrev, dcPrev); err != nil {
		return err
	}
	if err := needMask("lstm gates back mask", mask, n); err != nil {
		return err
	}
	return d.elementwise("lstm_gates_back", n*h, n, h, gates, tanhC, cPrev, mask, dhOut, dhNext, dcNext, dz, dhPrev, dcPrev)
}

// checkAttn validates additive attention's shapes and inputs.
func checkAttn(what string, r, s, h, nb int, q, keys, va, srcLen Buf) error {
	if r < 0 || s < 0 || h < 0 || nb < 1 {
		return fmt.Errorf("cuda: %s: r %d, s %d, h %d, nb %d", what, r, s, h, nb)
	}
	if err := need(what+" q", q, r*h); err != nil {
		return err
	}
	if err := need(what+" keys", keys, s*nb*h); err != nil {
		return err
	}
	if err := need(what+" va", va, h); err != nil {
		return err
	}
	return need(what+" srcLen", srcLen, nb)
}

// AddAttn is AddAttnRef; lengths outside [0, s] are clamped on the device.
func (d *Device) AddAttn(r, s, h, nb int, q, keys, va, srcLen, att Buf) error {
	if err := checkAttn("add attn", r, s, h, nb, q, keys, va, srcLen); err != nil {
		return err
	}
	if err := need("add attn att", att, r*s); err != nil {
		return err
	}
	if s == 0 {
		return nil
	}
	return d.launch("add_attn", dim3{r, 1, 1}, dim3{rowBlock, 1, 1}, 0, r, s, h, nb, q, keys, va, srcLen, att)
}

// AddAttnBack is AddAttnBackRef: one launch for dq and dvaPart, one for
// dkeys, each output element summed by one thread in the reference's order.
func (d *Device) AddAttnBack(r, s, h, nb int, q, keys, va, srcLen, de, dq, dkeys, dvaPart Buf) error {
	if err := checkAttn("add attn back", r, s, h, nb, q, keys, va, srcLen); err != nil {
		return err
	}
	if err := need("add attn back de", de, r*s); err != nil {
		return err
	}
	if err := needAll("add attn back dq", r*h, dq, dvaPart); err != nil {
		return err
	}
	if err := need("add attn back dkeys", dkeys, s*nb*h); err != nil {
		return err
	}
	if err := d.elementwise("add_attn_back_q", r*h, r, s, h, nb, q, keys, va, srcLen, de, dq, dvaPart); err != nil {
		return err
	}
	return d.elementwise("add_attn_back_k", s*nb*h, r, s, h, nb, q, keys, va, srcLen, de, dkeys)
}

// CopyLoss is CopyLossRef; tgt holds int32 ids.
func (d *Device) CopyLoss(r, v, s, n int, ignore int32, logits, zg, att, match, tgt, prob, dLogits, dZg, dAtt Buf) error {
	if err := needAll("copy loss [R,V]", r*v, logits, dLogits); err != nil {
		return err
	}
	if err := needAll("copy loss [R,S]", r*s, att, match, dAtt); err != nil {
		return err
	}
	if err := needAll("copy loss [R]", r, zg, tgt, prob, dZg); err != nil {
		return err
	}
	return d.launch("copy_loss", dim3{r, 1, 1}, dim3{rowBlock, 1, 1}, 0,
		r, v, s, n, ignore, logits, zg, att, match, tgt, prob, dLogits, dZg, dAtt)
}

// Copy2D is Copy2DRef (bit-identical); src and dst are views at the
// blocks' first elements.
func (d *Device) Copy2D(rows, cols int, src Buf, ldSrc int, dst Buf, ldDst int) error {
	if rows <= 0 || cols <= 0 {
		return nil
	}
	if ldSrc < cols || ldDst < cols {
		return fmt.Errorf("cuda: copy2d of %d columns with strides %d, %d", cols, ldSrc, ldDst)
	}
	if err := need("copy2d src", src, (rows-1)*ldSrc+cols); err != nil {
		return err
	}
	if err := need("copy2d dst", dst, (rows-1)*ldDst+cols); err != nil {
		return err
	}
	return d.elementwise("copy2d", rows*cols, rows, cols, src, ldSrc, dst, ldDst)
}

// Fill is FillRef (bit-identical).
func (d *Device) Fill(n int, v float32, y Buf) error {
	if err := need("fill", y, n); err != nil {
		return err
	}
	return d.elementwise("fill_f32", n, n, v, y)
}
