package kernels

import (
	"math"

	"compbench/vecmath"
)

// Kernels of the recurrent models (models/lstm): the LSTM cell of
// Keysers et al. (2020, App. E), the additive attention of Bahdanau et al.
// (2015) and the copy mixture of Bogin et al. (2022, §5.3). The CPU models
// call these references; the engine's GPU path launches the CUDA kernels of
// the same names (kernels/lstm.cu).
//
// Layouts: sequences are time-major, row t*B+b for batch row b at step t,
// so each step of a recurrence is a contiguous block of B rows. Attention
// query row i belongs to batch row i % B (time-major decoder rows, or one
// row per batch row when decoding a single step).

// LSTMGatesRef is one LSTM step after the products: z [N,4H] holds the
// pre-activations in gate order i, f, g, o and is overwritten with the
// gates σ(i), σ(f), tanh(g), σ(o); then c = f⊙cPrev + i⊙g, tanhC =
// tanh(c) and h = o⊙tanhC. A row with mask 0 (padding) keeps its previous
// state: h and c are copies of hPrev and cPrev (its gates and tanhC are
// still written). mask nil: every row is real.
func LSTMGatesRef(n, h int, z, hPrev, cPrev, mask, hOut, cOut, tanhC []float32) {
	z, tanhC = z[:n*4*h], tanhC[:n*h]
	vecmath.LSTMGates(z, h)
	for r := 0; r < n; r++ {
		zr := z[r*4*h : (r+1)*4*h]
		zi, zf, zg := zr[:h], zr[h:2*h], zr[2*h:3*h]
		cp, tr := cPrev[r*h:(r+1)*h], tanhC[r*h:(r+1)*h]
		for k := range tr {
			tr[k] = zf[k]*cp[k] + zi[k]*zg[k]
		}
	}
	copy(cOut[:n*h], tanhC) // the new cells, before padding rows take cPrev back
	vecmath.TanhSlice(tanhC)
	for r := 0; r < n; r++ {
		hr, cr, tr := hOut[r*h:(r+1)*h], cOut[r*h:(r+1)*h], tanhC[r*h:(r+1)*h]
		if mask != nil && mask[r] == 0 {
			copy(hr, hPrev[r*h:(r+1)*h])
			copy(cr, cPrev[r*h:(r+1)*h])
			continue
		}
		zo := z[r*4*h+3*h : (r+1)*4*h]
		for k, t := range tr {
			hr[k] = zo[k] * t
		}
	}
}

// LSTMGatesBackRef is the backward pass of LSTMGatesRef up to z. The
// gradient of the step's h is dhOut + dhNext (from the step's output and
// from the later step), that of its c is dcNext. It writes dz [N,4H],
// dcPrev [N,H], and dhPrev [N,H]: 0 on real rows, where the caller adds
// dz·W_hhᵀ, and the whole h gradient on padding rows, whose dz is 0 and
// whose dcPrev is dcNext. dhPrev and dcPrev must not alias the inputs.
func LSTMGatesBackRef(n, h int, gates, tanhC, cPrev, mask, dhOut, dhNext, dcNext, dz, dhPrev, dcPrev []float32) {
	for r := 0; r < n; r++ {
		dzr := dz[r*4*h : (r+1)*4*h]
		dho, dhn, dcr := dhOut[r*h:(r+1)*h], dhNext[r*h:(r+1)*h], dcNext[r*h:(r+1)*h]
		dhp, dcp := dhPrev[r*h:(r+1)*h], dcPrev[r*h:(r+1)*h]
		if mask != nil && mask[r] == 0 {
			clear(dzr)
			for k := range dhp {
				dhp[k] = dho[k] + dhn[k]
			}
			copy(dcp, dcr)
			continue
		}
		g := gates[r*4*h : (r+1)*4*h]
		gi, gf, gg, gO := g[:h], g[h:2*h], g[2*h:3*h], g[3*h:]
		di, df, dg, dO := dzr[:h], dzr[h:2*h], dzr[2*h:3*h], dzr[3*h:]
		tc, cp := tanhC[r*h:(r+1)*h], cPrev[r*h:(r+1)*h]
		for k := range dhp {
			dh := dho[k] + dhn[k]
			i, f, gk, o, t := gi[k], gf[k], gg[k], gO[k], tc[k]
			dcn := dcr[k] + dh*o*(1-t*t)
			di[k] = dcn * gk * i * (1 - i)
			df[k] = dcn * cp[k] * f * (1 - f)
			dg[k] = dcn * i * (1 - gk*gk)
			dO[k] = dh * t * o * (1 - o)
			dcp[k] = dcn * f
			dhp[k] = 0
		}
	}
}

// AddAttnRef is additive attention's weights for r query rows: e_ij =
// va·tanh(q_i + k_j) over the srcLen[b] real source positions of row i's
// batch row b = i % nb, then a softmax over them; att [R,S] is 0 beyond
// srcLen[b] (a whole row of 0 when srcLen[b] is 0). q [R,H] already holds
// the attention bias; keys [S*nb,H] are time-major (position j of batch
// row b is row j*nb+b). The scores are float32 sums in j order and the
// exponentials float64, as models' attention on the CPU computes them.
func AddAttnRef(r, s, h, nb int, q, keys, va []float32, srcLen []int32, att []float32) {
	u := make([]float32, h) // [H]
	for i := 0; i < r; i++ {
		b := i % nb
		n := int(srcLen[b])
		a := att[i*s : (i+1)*s]
		clear(a[n:])
		qi := q[i*h : (i+1)*h]
		for j := 0; j < n; j++ {
			k := keys[(j*nb+b)*h : (j*nb+b+1)*h]
			for x, qv := range qi {
				u[x] = qv + k[x]
			}
			vecmath.TanhSlice(u)
			var e float32
			for x, t := range u {
				e += va[x] * t
			}
			a[j] = e
		}
		SoftmaxRowRef(a[:n])
	}
}

// SoftmaxRowRef is the recurrent models' float32 softmax in place: the
// exponentials in float64, rounded, then summed in float32.
func SoftmaxRowRef(x []float32) {
	if len(x) == 0 {
		return
	}
	mx := x[0]
	for _, v := range x {
		mx = max(mx, v)
	}
	var s float32
	for i, v := range x {
		x[i] = float32(math.Exp(float64(v - mx)))
		s += x[i]
	}
	for i := range x {
		x[i] /= s
	}
}

// AddAttnBackRef is AddAttnRef's backward pass from de [R,S], the
// gradient of the scores e (after the softmax's backward pass; entries
// beyond srcLen are ignored). With u_ij = tanh(q_i + k_j) recomputed and
// du_ij = de_ij · va ⊙ (1 − u_ij²) it writes dq [R,H] = Σ_j du_ij,
// dkeys [S*nb,H] = Σ over the rows i of batch row b of du_ij (0 beyond
// srcLen[b]), and dvaPart [R,H] = Σ_j de_ij u_ij, whose row sum is va's
// gradient. Sums run in increasing j, and increasing i for dkeys.
func AddAttnBackRef(r, s, h, nb int, q, keys, va []float32, srcLen []int32, de, dq, dkeys, dvaPart []float32) {
	clear(dq[:r*h])
	clear(dkeys[:s*nb*h])
	clear(dvaPart[:r*h])
	u := make([]float32, h) // [H]
	for i := 0; i < r; i++ {
		b := i % nb
		qi, dqi, dvi := q[i*h:(i+1)*h], dq[i*h:(i+1)*h], dvaPart[i*h:(i+1)*h]
		for j := 0; j < int(srcLen[b]); j++ {
			d := de[i*s+j]
			k, dk := keys[(j*nb+b)*h:(j*nb+b+1)*h], dkeys[(j*nb+b)*h:(j*nb+b+1)*h]
			for x, qv := range qi {
				u[x] = qv + k[x]
			}
			vecmath.TanhSlice(u)
			for x, t := range u {
				dvi[x] += d * t
				du := d * va[x] * (1 - t*t)
				dqi[x] += du
				dk[x] += du
			}
		}
	}
}

// CopyLossRef is lstm-copy's loss rows (Bogin et al. 2022, §5.3; the
// mixture of Gu et al. 2016): for row i with extended target t[i]
// (ignore: no loss), P = pg·softmax(logits_i)[t] + (1 − pg)·Σ_j match_ij
// att_ij, pg = σ(zg_i), the softmax term 0 for a copy id t >= V. It writes
// prob[i] = P (0 on ignored rows; the caller sums −log max(P, 1e-30) in
// float64) and the gradients of the mean loss over n counted rows:
// dLogits [R,V], dZg [R] (of the gate's pre-activation) and dAtt [R,S]
// (of the attention weights, on the matched positions). Rows with P below
// 1e-30 add no gradient.
func CopyLossRef(r, v, s, n int, ignore int32, logits, zg, att, match []float32, t []int32, prob, dLogits, dZg, dAtt []float32) {
	p := make([]float32, v) // [V]
	for i := 0; i < r; i++ {
		d, da := dLogits[i*v:(i+1)*v], dAtt[i*s:(i+1)*s]
		clear(d)
		clear(da)
		prob[i], dZg[i] = 0, 0
		y := t[i]
		if y == ignore {
			continue
		}
		copy(p, logits[i*v:(i+1)*v])
		SoftmaxRowRef(p)
		pg := vecmath.Sigmoid(zg[i])
		var gen, cm float32
		if int(y) < v {
			gen = p[y]
		}
		for j := 0; j < s; j++ {
			if match[i*s+j] != 0 {
				cm += att[i*s+j]
			}
		}
		P := pg*gen + (1-pg)*cm
		prob[i] = P
		if P < 1e-30 {
			continue
		}
		dP := -1 / (P * float32(n))
		dZg[i] = dP * (gen - cm) * pg * (1 - pg)
		if int(y) < v {
			dg := dP * pg * gen
			for k := range p {
				d[k] = -dg * p[k]
			}
			d[y] += dg
		}
		for j := 0; j < s; j++ {
			if match[i*s+j] != 0 {
				da[j] = dP * (1 - pg)
			}
		}
	}
}

// Copy2DRef copies a rows×cols block from src (row stride ldSrc) to dst
// (row stride ldDst): concatenating and splitting feature columns.
func Copy2DRef(rows, cols int, src []float32, ldSrc int, dst []float32, ldDst int) {
	for r := 0; r < rows; r++ {
		copy(dst[r*ldDst:r*ldDst+cols], src[r*ldSrc:r*ldSrc+cols])
	}
}

// FillRef sets y[:n] to v.
func FillRef(n int, v float32, y []float32) {
	for i := range y[:n] {
		y[i] = v
	}
}
