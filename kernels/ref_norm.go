package kernels

import "math"

// LayerNormEps is the variance floor of every LayerNorm of the
// Transformers (PyTorch's default and GPT-2's); ops and the CUDA launchers
// use this one definition.
const LayerNormEps = 1e-5

// rowStats is ops' LayerNorm row statistics: mean and variance accumulate
// in float64 (two passes), then convert to float32. Each pass keeps four
// partial sums (element j of each full group of four goes to sum j%4, a
// tail to the first; combined as (s0+s1)+(s2+s3)): four independent add
// chains instead of one, on every row of the three layer-norm references;
// in float64 the order's effect stays far below float32 rounding.
func rowStats(row []float32, eps float32) (mean, rstd float32) {
	n := len(row)
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+3 < n; j += 4 {
		r := row[j : j+4 : j+4]
		s0 += float64(r[0])
		s1 += float64(r[1])
		s2 += float64(r[2])
		s3 += float64(r[3])
	}
	for ; j < n; j++ {
		s0 += float64(row[j])
	}
	m := ((s0 + s1) + (s2 + s3)) / float64(n)
	var q0, q1, q2, q3 float64
	j = 0
	for ; j+3 < n; j += 4 {
		r := row[j : j+4 : j+4]
		d0, d1, d2, d3 := float64(r[0])-m, float64(r[1])-m, float64(r[2])-m, float64(r[3])-m
		q0 += d0 * d0
		q1 += d1 * d1
		q2 += d2 * d2
		q3 += d3 * d3
	}
	for ; j < n; j++ {
		dv := float64(row[j]) - m
		q0 += dv * dv
	}
	q := (q0 + q1) + (q2 + q3)
	return float32(m), float32(1 / math.Sqrt(q/float64(n)+float64(eps)))
}

// LayerNormRef computes ops.LayerNorm: y [N,D] = (x-mean)*rstd*gamma + beta
// per row.
func LayerNormRef(n, d int, eps float32, x, gamma, beta, y []float32) {
	gamma, beta = gamma[:d], beta[:d] // lets the compiler drop bounds checks
	for r := 0; r < n; r++ {
		row := x[r*d : (r+1)*d]
		mean, rstd := rowStats(row, eps)
		yr := y[r*d : (r+1)*d]
		for j, v := range row {
			yr[j] = (v-mean)*rstd*gamma[j] + beta[j]
		}
	}
}

// LayerNormGradXRef computes ops' LayerNormGradX: dx [N,D] from x, gamma
// and dy, with the row sums accumulated in float32 in column order.
func LayerNormGradXRef(n, d int, eps float32, x, gamma, dy, dx []float32) {
	inv := 1 / float32(d)
	gamma = gamma[:d] // lets the compiler drop bounds checks
	for r := 0; r < n; r++ {
		row := x[r*d : (r+1)*d]
		dyr := dy[r*d : (r+1)*d]
		mean, rstd := rowStats(row, eps)
		var sg, sgx float32
		for j, v := range row {
			g := dyr[j] * gamma[j]
			sg += g
			sgx += g * (v - mean) * rstd
		}
		sg *= inv
		sgx *= inv
		out := dx[r*d : (r+1)*d]
		for j, v := range row {
			xh := (v - mean) * rstd
			out[j] = rstd * (dyr[j]*gamma[j] - sg - xh*sgx)
		}
	}
}

// LayerNormGradGammaRef computes ops' LayerNormGradGamma: dgamma [D] =
// Σ_rows dy * xhat, in SumRowsRef's chunked order.
func LayerNormGradGammaRef(n, d int, eps float32, x, dy, dgamma []float32) {
	chunkedGamma(n, d, eps, x, dy, dgamma, LayerNormGammaAccRef)
}

// chunkedGamma sums a norm's gain gradient in SumRowsRef's chunked order:
// acc over each chunk of SumChunk rows into a partial sum, the partial
// sums added in chunk order.
func chunkedGamma(n, d int, eps float32, x, dy, dgamma []float32, acc func(n, d int, eps float32, x, dy, acc []float32)) {
	clear(dgamma[:d])
	part := make([]float32, d)
	for c := 0; c*SumChunk < n; c++ {
		clear(part)
		lo, hi := c*SumChunk, min((c+1)*SumChunk, n)
		acc(hi-lo, d, eps, x[lo*d:hi*d], dy[lo*d:hi*d], part)
		AddRowsRef(1, d, part, dgamma)
	}
}

// LayerNormGammaAccRef adds Σ_rows dy * xhat of x, dy [N,D] into acc [D] in
// row order: one chunk of LayerNormGradGammaRef.
func LayerNormGammaAccRef(n, d int, eps float32, x, dy, acc []float32) {
	acc = acc[:d]
	for r := 0; r < n; r++ {
		row := x[r*d : (r+1)*d]
		dyr := dy[r*d : (r+1)*d]
		mean, rstd := rowStats(row, eps)
		for j, v := range row {
			acc[j] += dyr[j] * (v - mean) * rstd
		}
	}
}

// LayerNormGradBetaRef computes ops' LayerNormGradBeta: dbeta [D] = Σ_rows
// dy (SumRowsRef).
func LayerNormGradBetaRef(n, d int, dy, dbeta []float32) { SumRowsRef(n, d, dy, dbeta) }

// AttnShape is the shape [B, H, Tq, Tk] of attention scores.
type AttnShape struct {
	// B is the batch size, H the number of heads, Tq and Tk the query and
	// key lengths.
	B, H, Tq, Tk int
}

// Len returns B*H*Tq*Tk.
func (s AttnShape) Len() int { return s.B * s.H * s.Tq * s.Tk }

// Bcast gives the extents of the first two axes of an addend [B|1, H|1,
// Tq, Tk] of attention scores: 1 broadcasts that axis.
type Bcast struct {
	// B is 1 or the scores' B; H is 1 or the scores' H.
	B, H int
}

// offset returns where row i of block (b, h) starts in an addend of extents a.
func (a Bcast) offset(s AttnShape, b, h, i int) int {
	bb, hh := 0, 0
	if a.B > 1 {
		bb = b
	}
	if a.H > 1 {
		hh = h
	}
	return ((bb*a.H+hh)*s.Tq + i) * s.Tk
}

// AttnSoftmaxRef computes ops.AttentionSoftmax: y = softmax over the last
// axis of x + mask + bias (added in that order, in float32), where mask
// (extents mb) and bias (extents bb) may each be nil. Rows whose maximum is
// -Inf (all masked) give zeros. exp is evaluated in float64 and rounded,
// the sum accumulates in float32.
func AttnSoftmaxRef(s AttnShape, x, mask []float32, mb Bcast, bias []float32, bb Bcast, y []float32) {
	negInf := float32(math.Inf(-1))
	for b := 0; b < s.B; b++ {
		for h := 0; h < s.H; h++ {
			for i := 0; i < s.Tq; i++ {
				off := ((b*s.H+h)*s.Tq + i) * s.Tk
				yr := y[off : off+s.Tk]
				copy(yr, x[off:off+s.Tk])
				if mask != nil {
					o := mb.offset(s, b, h, i)
					for j, v := range mask[o : o+s.Tk] {
						yr[j] += v
					}
				}
				if bias != nil {
					o := bb.offset(s, b, h, i)
					for j, v := range bias[o : o+s.Tk] {
						yr[j] += v
					}
				}
				mx := negInf
				for _, v := range yr {
					mx = max(mx, v)
				}
				if mx == negInf {
					clear(yr)
					continue
				}
				var sum float32
				for j, v := range yr {
					e := float32(math.Exp(float64(v - mx)))
					yr[j] = e
					sum += e
				}
				inv := 1 / sum
				for j := range yr {
					yr[j] *= inv
				}
			}
		}
	}
}

// AttnSoftmaxGradRef computes ops' AttnSoftmaxGrad over rows rows of
// length tk: ds = p * (dp - Σ p*dp), the dot accumulated in float32.
func AttnSoftmaxGradRef(rows, tk int, p, dp, ds []float32) {
	for r := 0; r < rows; r++ {
		pr, dr, sr := p[r*tk:(r+1)*tk], dp[r*tk:(r+1)*tk], ds[r*tk:(r+1)*tk]
		var dot float32
		for j, v := range pr {
			dot += v * dr[j]
		}
		for j, v := range pr {
			sr[j] = v * (dr[j] - dot)
		}
	}
}

// SumToRef computes ops' SumTo: y with extents to = Σ of x [B,H,Tq,Tk] over
// the broadcast axes, adding blocks in (b, h) order.
func SumToRef(s AttnShape, to Bcast, x, y []float32) {
	clear(y[:to.B*to.H*s.Tq*s.Tk])
	for b := 0; b < s.B; b++ {
		for h := 0; h < s.H; h++ {
			for i := 0; i < s.Tq; i++ {
				off := ((b*s.H+h)*s.Tq + i) * s.Tk
				o := to.offset(s, b, h, i)
				dst := y[o : o+s.Tk]
				for j, v := range x[off : off+s.Tk] {
					dst[j] += v
				}
			}
		}
	}
}

// rmsStat is the RMS norm's row statistic 1/sqrt(mean(x²) + eps), with the
// squares summed in float64 four ways as rowStats does.
func rmsStat(row []float32, eps float32) float32 {
	n := len(row)
	var q0, q1, q2, q3 float64
	j := 0
	for ; j+3 < n; j += 4 {
		r := row[j : j+4 : j+4]
		d0, d1, d2, d3 := float64(r[0]), float64(r[1]), float64(r[2]), float64(r[3])
		q0 += d0 * d0
		q1 += d1 * d1
		q2 += d2 * d2
		q3 += d3 * d3
	}
	for ; j < n; j++ {
		dv := float64(row[j])
		q0 += dv * dv
	}
	q := (q0 + q1) + (q2 + q3)
	return float32(1 / math.Sqrt(q/float64(n)+float64(eps)))
}

// RMSNormRef computes ops.RMSNorm, T5's layer norm: y [N,D] = x * r *
// gamma per row, r = 1/sqrt(mean(x²) + eps) (no mean, no bias).
func RMSNormRef(n, d int, eps float32, x, gamma, y []float32) {
	gamma = gamma[:d]
	for r := 0; r < n; r++ {
		row := x[r*d : (r+1)*d]
		s := rmsStat(row, eps)
		yr := y[r*d : (r+1)*d]
		for j, v := range row {
			yr[j] = v * s * gamma[j]
		}
	}
}

// RMSNormGradXRef computes ops' RMSNormGradX: dx = r * (g - xh * mean(g *
// xh)) with g = dy * gamma and xh = x * r, the row sum in float32 in
// column order.
func RMSNormGradXRef(n, d int, eps float32, x, gamma, dy, dx []float32) {
	inv := 1 / float32(d)
	gamma = gamma[:d]
	for r := 0; r < n; r++ {
		row := x[r*d : (r+1)*d]
		dyr := dy[r*d : (r+1)*d]
		s := rmsStat(row, eps)
		var sgx float32
		for j, v := range row {
			sgx += dyr[j] * gamma[j] * v * s
		}
		sgx *= inv
		out := dx[r*d : (r+1)*d]
		for j, v := range row {
			out[j] = s * (dyr[j]*gamma[j] - v*s*sgx)
		}
	}
}

// RMSNormGradGammaRef computes ops' RMSNormGradGamma: dgamma [D] = Σ_rows
// dy * x * r, in SumRowsRef's chunked order.
func RMSNormGradGammaRef(n, d int, eps float32, x, dy, dgamma []float32) {
	chunkedGamma(n, d, eps, x, dy, dgamma, RMSNormGammaAccRef)
}

// RMSNormGammaAccRef adds Σ_rows dy * x * r of x, dy [N,D] into acc [D] in
// row order: one chunk of RMSNormGradGammaRef.
func RMSNormGammaAccRef(n, d int, eps float32, x, dy, acc []float32) {
	acc = acc[:d]
	for r := 0; r < n; r++ {
		row := x[r*d : (r+1)*d]
		dyr := dy[r*d : (r+1)*d]
		s := rmsStat(row, eps)
		for j, v := range row {
			acc[j] += dyr[j] * v * s
		}
	}
}
