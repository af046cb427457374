package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The LSTM models' optional Transformer encoder (Config.Encoder
// "transformer"): Bogin et al. (2022, §5.3) put their copying LSTM decoder
// on top of a (pretrained) Transformer encoder. The layers are the
// Transformer's own (transformer.go): sinusoidal positions added to the
// embeddings, pre-LN self-attention and ReLU feed-forward sublayers with
// residuals, a final LayerNorm, dropout on the embeddings, the sublayer
// outputs and the feed-forward hidden layer; the parameter names and shapes
// are the Transformer's too, so a Transformer run's encoder loads into it
// (InitEncoder).
//
// Decision: the forward and backward passes are written by hand here, like
// the rest of the LSTM pass, instead of building the Transformer's Gorgonia
// encoder graph: the LSTM pass runs outside any graph, and a graph would
// need a second run of the encoder for the vector-Jacobian product the
// decoder's gradient feeds it. TestLSTMTransformerEncoderMatchesGraph checks
// that both compute the same memory from the same weights.

// tEncoder holds the parameter ids of the encoder layers.
type tEncoder struct {
	layers []tLayerIDs
	ln     [2]int // final LayerNorm [gain, bias]
	heads  int
	mlp    int
}

type tLayerIDs struct {
	wq, wk, wv, wo, bq, bk, bv, bo int
	ln0, ln1                       [2]int
	w1, b1, w2, b2                 int
}

// newTEncoder adds the encoder's parameters in the Transformer's order and
// with its initialisation.
func newTEncoder(p *Params, rng *rand.Rand, cfg Config) *tEncoder {
	d, mlp := cfg.Dim, cfg.MLPDim
	e := &tEncoder{heads: cfg.EncoderHeads, mlp: mlp}
	ln := func(name string) [2]int {
		return [2]int{p.Add(name+".g", tensor.Shape{d}, constant(1)), p.Add(name+".b", tensor.Shape{d}, constant(0))}
	}
	for i := 0; i < cfg.encoderLayers(); i++ {
		n := fmt.Sprintf("enc%d", i)
		var l tLayerIDs
		l.wq = p.Add(n+".self.wq", tensor.Shape{d, d}, xavier(rng, d, d))
		l.wk = p.Add(n+".self.wk", tensor.Shape{d, d}, xavier(rng, d, d))
		l.wv = p.Add(n+".self.wv", tensor.Shape{d, d}, xavier(rng, d, d))
		l.wo = p.Add(n+".self.wo", tensor.Shape{d, d}, xavier(rng, d, d))
		l.bq = p.Add(n+".self.bq", tensor.Shape{d}, constant(0))
		l.bk = p.Add(n+".self.bk", tensor.Shape{d}, constant(0))
		l.bv = p.Add(n+".self.bv", tensor.Shape{d}, constant(0))
		l.bo = p.Add(n+".self.bo", tensor.Shape{d}, constant(0))
		l.ln0, l.ln1 = ln(n+".ln0"), ln(n+".ln1")
		l.w1 = p.Add(n+".ffn.w1", tensor.Shape{d, mlp}, xavier(rng, d, mlp))
		l.b1 = p.Add(n+".ffn.b1", tensor.Shape{mlp}, constant(0))
		l.w2 = p.Add(n+".ffn.w2", tensor.Shape{mlp, d}, xavier(rng, mlp, d))
		l.b2 = p.Add(n+".ffn.b2", tensor.Shape{d}, constant(0))
		e.layers = append(e.layers, l)
	}
	e.ln = ln("enc.ln")
	return e
}

// lnCache is what a LayerNorm's backward pass needs.
type lnCache struct {
	xhat []float32 // [N, D] normalised input
	rstd []float32 // [N] 1/sqrt(var+eps)
}

// tLayerCache is one encoder layer's forward state.
type tLayerCache struct {
	ln0        lnCache
	y0         []float32   // [N, D] LN0 output
	q, k, v    []float32   // [N, D]
	probs      [][]float32 // [B*heads][n_b*n_b] attention weights
	att        []float32   // [N, D] head outputs, concatenated
	drop0      []float32   // [N, D] mask on the attention sublayer output
	ln1        lnCache     //
	y1         []float32   // [N, D] LN1 output
	hid        []float32   // [N, MLP] ReLU output after dropout
	hidDrop    []float32   // [N, MLP]
	drop1      []float32   // [N, D] mask on the feed-forward output
	embDropout []float32   // [N, D] embedding mask (first layer only)
}

// tEncCache is the whole encoder's forward state.
type tEncCache struct {
	layers []tLayerCache
	lnF    lnCache
}

// layerNormFwd writes (x−mean)·rstd·g + b of each row of x [N, D] to y,
// with the statistics of ops.LayerNorm.
func layerNormFwd(x, g, b []float32, D int) (y []float32, c lnCache) {
	n := len(x) / D
	y = make([]float32, n*D) // [N, D]
	c = lnCache{xhat: make([]float32, n*D), rstd: make([]float32, n)}
	for r := 0; r < n; r++ {
		row := x[r*D : (r+1)*D]
		var s float64
		for _, v := range row {
			s += float64(v)
		}
		mean := s / float64(D)
		var q float64
		for _, v := range row {
			dv := float64(v) - mean
			q += dv * dv
		}
		rstd := float32(1 / math.Sqrt(q/float64(D)+lnEps))
		c.rstd[r] = rstd
		for j, v := range row {
			xh := (v - float32(mean)) * rstd
			c.xhat[r*D+j] = xh
			y[r*D+j] = xh*g[j] + b[j]
		}
	}
	return y, c
}

// lnEps is ops.LayerNormEps.
const lnEps = 1e-5

// layerNormBwd adds the gain and bias gradients and returns dx.
func layerNormBwd(c lnCache, g, dy, dg, db []float32, D int) []float32 {
	n := len(c.rstd)
	dx := make([]float32, n*D) // [N, D]
	for r := 0; r < n; r++ {
		xh, d := c.xhat[r*D:(r+1)*D], dy[r*D:(r+1)*D]
		var m1, m2 float32
		for j := range d {
			dg[j] += d[j] * xh[j]
			db[j] += d[j]
			dxh := d[j] * g[j]
			m1 += dxh
			m2 += dxh * xh[j]
		}
		m1, m2 = m1/float32(D), m2/float32(D)
		for j := range d {
			dx[r*D+j] = c.rstd[r] * (d[j]*g[j] - m1 - xh[j]*m2)
		}
	}
	return dx
}

// linearFwd is x·W + b for x [N, in], W [in, out].
func (f *lstmPass) linearFwd(x []float32, w, b, in, out int) []float32 {
	n := len(x) / in
	y := make([]float32, n*out) // [N, out]
	bias := f.m.p.Data(b)
	for r := 0; r < n; r++ {
		copy(y[r*out:(r+1)*out], bias)
	}
	gemm(false, false, n, out, in, 1, x, f.m.p.Data(w), 1, y)
	return y
}

// linearBwd adds the weight gradients of y = x·W + b and adds x's gradient
// into dx (when dx is not nil).
func (f *lstmPass) linearBwd(x, dy []float32, w, b, in, out int, dx []float32) {
	n := len(x) / in
	g := f.m.p.Grads
	gemm(true, false, in, out, n, 1, x, dy, 1, g[w])
	for r := 0; r < n; r++ {
		for k, v := range dy[r*out : (r+1)*out] {
			g[b][k] += v
		}
	}
	if dx != nil {
		gemm(false, true, n, in, out, 1, dy, f.m.p.Data(w), 1, dx)
	}
}

// encodeTransformer runs the Transformer encoder over f.embIDs and sets
// f.mem [B*S, D].
func (f *lstmPass) encodeTransformer() {
	m, e, D := f.m, f.m.tenc, f.m.Cfg.Dim
	B, S, N := f.B, f.S, f.B*f.S
	emb := m.p.Data(m.srcEmb)
	x := make([]float32, N*D) // [B*S, D]
	fillPos(x, B, S, D)
	for i, id := range f.embIDs {
		for j, v := range emb[id*D : (id+1)*D] {
			x[i*D+j] += v
		}
	}
	f.tenc = &tEncCache{layers: make([]tLayerCache, len(e.layers))}
	f.tenc.layers[0].embDropout = f.dropout(dropTEnc, x)
	for li, l := range e.layers {
		c := &f.tenc.layers[li]
		c.y0, c.ln0 = layerNormFwd(x, m.p.Data(l.ln0[0]), m.p.Data(l.ln0[1]), D)
		c.q = f.linearFwd(c.y0, l.wq, l.bq, D, D) // [N, D]
		c.k = f.linearFwd(c.y0, l.wk, l.bk, D, D) // [N, D]
		c.v = f.linearFwd(c.y0, l.wv, l.bv, D, D) // [N, D]
		c.att, c.probs = f.selfAttention(c.q, c.k, c.v, e.heads)
		a := f.linearFwd(c.att, l.wo, l.bo, D, D) // [N, D]
		c.drop0 = f.dropout(dropTEnc+4*li+1, a)
		for i := range x {
			x[i] += a[i]
		}
		c.y1, c.ln1 = layerNormFwd(x, m.p.Data(l.ln1[0]), m.p.Data(l.ln1[1]), D)
		c.hid = f.linearFwd(c.y1, l.w1, l.b1, D, e.mlp) // [N, MLP]
		for i, v := range c.hid {
			c.hid[i] = max(v, 0)
		}
		c.hidDrop = f.dropout(dropTEnc+4*li+2, c.hid)
		o := f.linearFwd(c.hid, l.w2, l.b2, e.mlp, D) // [N, D]
		c.drop1 = f.dropout(dropTEnc+4*li+3, o)
		for i := range x {
			x[i] += o[i]
		}
	}
	f.mem, f.tenc.lnF = layerNormFwd(x, m.p.Data(e.ln[0]), m.p.Data(e.ln[1]), D)
}

// selfAttention is scaled dot-product attention per row and head over the
// row's real positions; query rows beyond them get zeros (the decoder
// never reads them). It returns the head outputs [N, D] and the weights.
func (f *lstmPass) selfAttention(q, k, v []float32, heads int) ([]float32, [][]float32) {
	D, S := f.m.Cfg.Dim, f.S
	dk := D / heads
	scale := float32(1 / math.Sqrt(float64(dk)))
	out := make([]float32, f.B*S*D) // [N, D]
	probs := make([][]float32, f.B*heads)
	for b := 0; b < f.B; b++ {
		n := f.srcLen[b]
		if n == 0 {
			continue
		}
		for h := 0; h < heads; h++ {
			off := b*S*D + h*dk
			p := make([]float32, n*n) // [n, n]
			gemmLD(false, true, n, n, dk, scale, q[off:], D, k[off:], D, 0, p, n)
			for i := 0; i < n; i++ {
				softmaxInPlace(p[i*n : (i+1)*n])
			}
			gemmLD(false, false, n, dk, n, 1, p, n, v[off:], D, 0, out[off:], D)
			probs[b*heads+h] = p
		}
	}
	return out, probs
}

// backwardTransformer takes the gradient of the memory [B*S, D] down to
// the source embeddings.
func (f *lstmPass) backwardTransformer(dMem []float32) {
	m, e, D := f.m, f.m.tenc, f.m.Cfg.Dim
	g := m.p.Grads
	dx := layerNormBwd(f.tenc.lnF, m.p.Data(e.ln[0]), dMem, g[e.ln[0]], g[e.ln[1]], D)
	for li := len(e.layers) - 1; li >= 0; li-- {
		l, c := e.layers[li], &f.tenc.layers[li]
		// x2 = x1 + drop(FFN(LN1(x1)))
		do := append([]float32(nil), dx...)
		applyMask(do, c.drop1)
		dHid := make([]float32, len(c.hid)) // [N, MLP]
		f.linearBwd(c.hid, do, l.w2, l.b2, e.mlp, D, dHid)
		for i, h := range c.hid {
			if h <= 0 {
				dHid[i] = 0
			}
		}
		applyMask(dHid, c.hidDrop)
		dY1 := make([]float32, len(dx)) // [N, D]
		f.linearBwd(c.y1, dHid, l.w1, l.b1, D, e.mlp, dY1)
		for i, v := range layerNormBwd(c.ln1, m.p.Data(l.ln1[0]), dY1, g[l.ln1[0]], g[l.ln1[1]], D) {
			dx[i] += v
		}
		// x1 = x0 + drop(Attn(LN0(x0)))
		da := append([]float32(nil), dx...)
		applyMask(da, c.drop0)
		dAtt := make([]float32, len(dx)) // [N, D]
		f.linearBwd(c.att, da, l.wo, l.bo, D, D, dAtt)
		dq, dk, dv := f.selfAttentionBwd(c, dAtt, e.heads)
		dY0 := make([]float32, len(dx)) // [N, D]
		f.linearBwd(c.y0, dq, l.wq, l.bq, D, D, dY0)
		f.linearBwd(c.y0, dk, l.wk, l.bk, D, D, dY0)
		f.linearBwd(c.y0, dv, l.wv, l.bv, D, D, dY0)
		for i, v := range layerNormBwd(c.ln0, m.p.Data(l.ln0[0]), dY0, g[l.ln0[0]], g[l.ln0[1]], D) {
			dx[i] += v
		}
	}
	applyMask(dx, f.tenc.layers[0].embDropout)
	dEmb := g[m.srcEmb]
	for i, id := range f.embIDs {
		for j, v := range dx[i*D : (i+1)*D] {
			dEmb[id*D+j] += v
		}
	}
}

// selfAttentionBwd returns the gradients of q, k, v given that of the
// head outputs.
func (f *lstmPass) selfAttentionBwd(c *tLayerCache, dOut []float32, heads int) (dq, dk, dv []float32) {
	D, S := f.m.Cfg.Dim, f.S
	dk_ := D / heads
	scale := float32(1 / math.Sqrt(float64(dk_)))
	dq, dk, dv = make([]float32, len(dOut)), make([]float32, len(dOut)), make([]float32, len(dOut)) // [N, D]
	for b := 0; b < f.B; b++ {
		n := f.srcLen[b]
		if n == 0 {
			continue
		}
		for h := 0; h < heads; h++ {
			off := b*S*D + h*dk_
			p := c.probs[b*heads+h]
			// dV = Pᵀ·dO; dP = dO·Vᵀ; dS = P⊙(dP − rowsum(P⊙dP)).
			gemmLD(true, false, n, dk_, n, 1, p, n, dOut[off:], D, 1, dv[off:], D)
			ds := make([]float32, n*n) // [n, n]
			gemmLD(false, true, n, n, dk_, 1, dOut[off:], D, c.v[off:], D, 0, ds, n)
			for i := 0; i < n; i++ {
				pr, dr := p[i*n:(i+1)*n], ds[i*n:(i+1)*n]
				var s float32
				for j := range pr {
					s += pr[j] * dr[j]
				}
				for j := range pr {
					dr[j] = pr[j] * (dr[j] - s)
				}
			}
			gemmLD(false, false, n, dk_, n, scale, ds, n, c.k[off:], D, 1, dq[off:], D)
			gemmLD(true, false, n, dk_, n, scale, ds, n, c.q[off:], D, 1, dk[off:], D)
		}
	}
	return dq, dk, dv
}

// gemmLD is gemm with explicit leading dimensions, for the heads' column
// blocks of [N, D] matrices.
func gemmLD(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	tA, tB := blas.NoTrans, blas.NoTrans
	if ta {
		tA = blas.Trans
	}
	if tb {
		tB = blas.Trans
	}
	G.WhichBLAS().Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
