package kernels

import (
	"fmt"
	"math"
	"testing"

	"compbench/data"
)

// The ops of package ops run these references on their tensors' slices, so
// comparing the two would be circular. These tests check the references
// against hand-computed cases and against plain float64 formulas; the
// finite-difference gradient checks in ops cover the backward references
// through the ops.

// near64 fails unless |got-want| <= tol*(1+|want|) everywhere.
func near64(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol*(1+math.Abs(want[i]))) {
			t.Fatalf("%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

// layerNorm64 is the textbook LayerNorm and its gradients in float64.
func layerNorm64(n, d int, x, gm, bt, dy []float32) (y, dx, dg, db []float64) {
	y, dx, dg, db = make([]float64, n*d), make([]float64, n*d), make([]float64, d), make([]float64, d)
	for r := 0; r < n; r++ {
		var mean, vr float64
		for j := 0; j < d; j++ {
			mean += float64(x[r*d+j]) / float64(d)
		}
		for j := 0; j < d; j++ {
			vr += (float64(x[r*d+j]) - mean) * (float64(x[r*d+j]) - mean) / float64(d)
		}
		rstd := 1 / math.Sqrt(vr+LayerNormEps)
		xh := make([]float64, d)
		var mg, mgx float64
		for j := 0; j < d; j++ {
			xh[j] = (float64(x[r*d+j]) - mean) * rstd
			y[r*d+j] = xh[j]*float64(gm[j]) + float64(bt[j])
			g := float64(dy[r*d+j]) * float64(gm[j])
			mg += g / float64(d)
			mgx += g * xh[j] / float64(d)
			dg[j] += float64(dy[r*d+j]) * xh[j]
			db[j] += float64(dy[r*d+j])
		}
		for j := 0; j < d; j++ {
			dx[r*d+j] = rstd * (float64(dy[r*d+j])*float64(gm[j]) - mg - xh[j]*mgx)
		}
	}
	return y, dx, dg, db
}

func TestLayerNormRef(t *testing.T) {
	t.Run("hand", func(t *testing.T) {
		y := make([]float32, 6)
		LayerNormRef(2, 3, LayerNormEps, []float32{1, 2, 3, -1, -1, -1}, []float32{1, 2, 1}, []float32{0, 0, 0.5}, y)
		s := 1 / math.Sqrt(2.0/3+1e-5)
		// A constant row normalises to 0, leaving beta.
		near64(t, "y", y, []float64{-s, 0, s + 0.5, 0, 0, 0.5}, 1e-6)
	})
	for _, c := range []struct {
		name string
		n, d int
	}{{"1x1", 1, 1}, {"3x5", 3, 5}, {"130x37", 130, 37}} {
		t.Run(c.name, func(t *testing.T) {
			n, d := c.n, c.d
			x, gm, bt := randF(1, n*d, 3), randF(2, d, 1), randF(3, d, 1)
			dy := randF(4, n*d, 1)
			y, dx, dg, db := make([]float32, n*d), make([]float32, n*d), make([]float32, d), make([]float32, d)
			LayerNormRef(n, d, LayerNormEps, x, gm, bt, y)
			LayerNormGradXRef(n, d, LayerNormEps, x, gm, dy, dx)
			LayerNormGradGammaRef(n, d, LayerNormEps, x, dy, dg)
			LayerNormGradBetaRef(n, d, dy, db)
			wy, wdx, wdg, wdb := layerNorm64(n, d, x, gm, bt, dy)
			near64(t, "y", y, wy, 1e-5)
			near64(t, "dx", dx, wdx, 1e-4)
			near64(t, "dgamma", dg, wdg, 1e-5*float64(n))
			near64(t, "dbeta", db, wdb, 1e-5*float64(n))
		})
	}
}

// rmsNorm64 is T5's RMS norm, its input and gain gradients in float64.
func rmsNorm64(n, d int, eps float64, x, gm, dy []float32) (y, dx, dg []float64) {
	y, dx, dg = make([]float64, n*d), make([]float64, n*d), make([]float64, d)
	for r := 0; r < n; r++ {
		q := 0.0
		for j := 0; j < d; j++ {
			q += float64(x[r*d+j]) * float64(x[r*d+j])
		}
		s := 1 / math.Sqrt(q/float64(d)+eps)
		dot := 0.0 // Σ_k dy_k gamma_k x_k
		for j := 0; j < d; j++ {
			k := r*d + j
			y[k] = float64(x[k]) * s * float64(gm[j])
			dot += float64(dy[k]) * float64(gm[j]) * float64(x[k])
			dg[j] += float64(dy[k]) * float64(x[k]) * s
		}
		// dy_j/dx_i = s gamma_j δ_ij - s³ x_i gamma_j x_j / d
		for j := 0; j < d; j++ {
			k := r*d + j
			dx[k] = s*float64(dy[k])*float64(gm[j]) - s*s*s*float64(x[k])*dot/float64(d)
		}
	}
	return y, dx, dg
}

func TestRMSNormRef(t *testing.T) {
	t.Run("hand", func(t *testing.T) {
		// Row (3, 4): mean square 12.5, so y = (3, 4)/sqrt(12.5) · gamma.
		y := make([]float32, 2)
		RMSNormRef(1, 2, 0, []float32{3, 4}, []float32{1, 2}, y)
		s := 1 / math.Sqrt(12.5)
		near64(t, "y", y, []float64{3 * s, 8 * s}, 1e-7)
	})
	for _, c := range []struct {
		name string
		n, d int
	}{{"1x1", 1, 1}, {"3x5", 3, 5}, {"130x37", 130, 37}} {
		t.Run(c.name, func(t *testing.T) {
			n, d := c.n, c.d
			x, gm, dy := randF(1, n*d, 3), randF(2, d, 1), randF(4, n*d, 1)
			y, dx, dg := make([]float32, n*d), make([]float32, n*d), make([]float32, d)
			RMSNormRef(n, d, 1e-6, x, gm, y)
			RMSNormGradXRef(n, d, 1e-6, x, gm, dy, dx)
			RMSNormGradGammaRef(n, d, 1e-6, x, dy, dg)
			wy, wdx, wdg := rmsNorm64(n, d, 1e-6, x, gm, dy)
			near64(t, "y", y, wy, 1e-5)
			near64(t, "dx", dx, wdx, 1e-4)
			near64(t, "dgamma", dg, wdg, 1e-5*float64(n))
		})
	}
}

// TestSumRowsChunkOrder pins the chunked order: 2^25 absorbs a single 1 in
// float32, so rows added one by one stay at 2^25, while the second chunk's
// 64 ones are summed first and survive.
func TestSumRowsChunkOrder(t *testing.T) {
	x := make([]float32, 2*SumChunk)
	for i := range x {
		x[i] = 1
	}
	x[0] = 1 << 25
	y := make([]float32, 1)
	SumRowsRef(len(x), 1, x, y)
	if want := float32(1<<25 + SumChunk); y[0] != want {
		t.Fatalf("SumRowsRef = %g, want %g", y[0], want)
	}
	g := make([]float32, 1)
	LayerNormGradGammaRef(2, 1, LayerNormEps, []float32{1, 2}, []float32{3, 4}, g)
	if g[0] != 0 {
		t.Fatalf("dgamma of a width-1 row = %g, want 0 (xhat is 0)", g[0])
	}
}

// softmax64 is softmax(x + mask + bias) over rows of tk in float64, zeros
// for all -Inf rows.
func softmax64(s AttnShape, x, mask []float32, mb Bcast, bias []float32, bb Bcast) []float64 {
	y := make([]float64, s.Len())
	for b := 0; b < s.B; b++ {
		for h := 0; h < s.H; h++ {
			for i := 0; i < s.Tq; i++ {
				off := ((b*s.H+h)*s.Tq + i) * s.Tk
				row := make([]float64, s.Tk)
				mx := math.Inf(-1)
				for j := range row {
					row[j] = float64(x[off+j])
					if mask != nil {
						row[j] += float64(mask[mb.offset(s, b, h, i)+j])
					}
					if bias != nil {
						row[j] += float64(bias[bb.offset(s, b, h, i)+j])
					}
					mx = math.Max(mx, row[j])
				}
				if math.IsInf(mx, -1) {
					continue
				}
				var sum float64
				for _, v := range row {
					sum += math.Exp(v - mx)
				}
				for j, v := range row {
					y[off+j] = math.Exp(v-mx) / sum
				}
			}
		}
	}
	return y
}

func TestAttnSoftmaxRef(t *testing.T) {
	inf := float32(math.Inf(-1))
	t.Run("hand", func(t *testing.T) {
		// Row 0: exp(0):exp(ln 3) = 1:3; row 1: a masked key gets 0; row 2
		// is fully masked and gives zeros, not NaN.
		s := AttnShape{1, 1, 3, 2}
		x := []float32{0, float32(math.Log(3)), 5, 7, 1, 2}
		mask := []float32{0, 0, 0, inf, inf, inf}
		y := make([]float32, 6)
		AttnSoftmaxRef(s, x, mask, Bcast{1, 1}, nil, Bcast{}, y)
		near64(t, "y", y, []float64{0.25, 0.75, 1, 0, 0, 0}, 1e-6)
		ds := make([]float32, 6)
		// ds = p (dp - Σ p dp): row 0 has Σ = 0.25*1 + 0.75*2 = 1.75.
		AttnSoftmaxGradRef(3, 2, y, []float32{1, 2, 3, 4, 5, 6}, ds)
		near64(t, "ds", ds, []float64{0.25 * (1 - 1.75), 0.75 * (2 - 1.75), 0, 0, 0, 0}, 1e-6)
	})
	for _, c := range []struct {
		name   string
		s      AttnShape
		mb, bb Bcast // zero: absent
	}{
		{"plain", AttnShape{2, 3, 4, 5}, Bcast{}, Bcast{}},
		{"mask B1", AttnShape{2, 3, 4, 5}, Bcast{2, 1}, Bcast{}},
		{"mask+bias", AttnShape{3, 2, 5, 7}, Bcast{3, 1}, Bcast{1, 2}},
		{"bias full", AttnShape{2, 2, 3, 3}, Bcast{}, Bcast{2, 2}},
		{"length 1", AttnShape{1, 1, 1, 1}, Bcast{1, 1}, Bcast{1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.s
			x := randF(5, s.Len(), 4)
			var mask, bias []float32
			if c.mb.B > 0 {
				mask = make([]float32, c.mb.B*c.mb.H*s.Tq*s.Tk)
				for i := range mask {
					if i%3 == 1 || (i/s.Tk)%4 == 2 {
						mask[i] = inf
					}
				}
			}
			if c.bb.B > 0 {
				bias = randF(7, c.bb.B*c.bb.H*s.Tq*s.Tk, 2)
			}
			y := make([]float32, s.Len())
			AttnSoftmaxRef(s, x, mask, c.mb, bias, c.bb, y)
			near64(t, "y", y, softmax64(s, x, mask, c.mb, bias, c.bb), 1e-6)
			if c.bb.B > 0 {
				// SumTo adds the blocks that broadcast onto each bias block.
				ds := randF(8, s.Len(), 1)
				db := make([]float32, len(bias))
				SumToRef(s, c.bb, ds, db)
				want := make([]float64, len(bias))
				for b := 0; b < s.B; b++ {
					for h := 0; h < s.H; h++ {
						for i := 0; i < s.Tq; i++ {
							for j := 0; j < s.Tk; j++ {
								want[c.bb.offset(s, b, h, i)+j] += float64(ds[((b*s.H+h)*s.Tq+i)*s.Tk+j])
							}
						}
					}
				}
				near64(t, "sumto", db, want, 1e-6)
			}
		})
	}
}

func TestSoftmaxCERef(t *testing.T) {
	ln2 := math.Log(2)
	for _, c := range []struct {
		name  string
		n, v  int
		x     []float32
		t     []int32
		p     CEParams
		loss  float64
		grad  []float64
		dloss float32 // the loss's incoming gradient
	}{
		// Two equal logits: loss ln 2, gradient softmax - onehot = ±0.5.
		{"uniform", 1, 2, []float32{3, 3}, []int32{1}, CEParams{Ignore: -1}, ln2, []float64{0.5, -0.5}, 1},
		// Row 1 is ignored: it adds nothing to the mean and gets 0; the
		// incoming dloss 2 scales the gradient.
		{"ignore", 2, 2, []float32{0, 0, 9, -9}, []int32{0, 5}, CEParams{Ignore: 5}, ln2, []float64{-1, 1, 0, 0}, 2},
		// Smoothing 0.2 over V=2: target (0.9, 0.1); loss = lse - 0.9*0 -
		// 0.1*ln 3 with logits (0, ln 3), lse = ln 4.
		{"smoothing", 1, 2, []float32{0, float32(math.Log(3))}, []int32{0}, CEParams{Ignore: -1, Smoothing: 0.2},
			math.Log(4) - 0.1*math.Log(3), []float64{0.25 - 0.9, 0.75 - 0.1}, 1},
		{"all ignored", 2, 3, []float32{1, 2, 3, 4, 5, 6}, []int32{0, 0}, CEParams{Ignore: 0, Smoothing: 0.1}, 0, []float64{0, 0, 0, 0, 0, 0}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			loss, dx := make([]float32, 1), make([]float32, c.n*c.v)
			SoftmaxCERef(c.n, c.v, c.p, c.x, c.t, loss)
			near64(t, "loss", loss, []float64{c.loss}, 1e-6)
			SoftmaxCEGradRef(c.n, c.v, c.p, c.x, c.t, []float32{c.dloss}, dx)
			near64(t, "dx", dx, c.grad, 1e-6)
		})
	}
}

func TestGatherRefs(t *testing.T) {
	t.Run("embed", func(t *testing.T) {
		table := []float32{0, 1, 10, 11, 20, 21} // [3, 2]
		ids := []int32{2, 0, 2}
		y := make([]float32, 6)
		EmbedRef(3, 2, table, ids, y)
		same(t, "y", y, []float32{20, 21, 0, 1, 20, 21})
		dt := []float32{9, 9, 9, 9, 9, 9} // overwritten, not added to
		EmbedGradRef(3, 2, 3, []float32{1, 2, 3, 4, 5, 6}, ids, dt)
		same(t, "dtable", dt, []float32{3, 4, 0, 0, 1 + 5, 2 + 6})
	})
	t.Run("relbias", func(t *testing.T) {
		table := []float32{0, 1, 10, 11} // [NB=2, H=2]
		buckets := []int32{1, 0, 1}      // Tq=1, Tk=3
		y := make([]float32, 6)
		RelBiasRef(2, 2, 1, 3, table, buckets, y)
		same(t, "y", y, []float32{10, 0, 10, 11, 1, 11})
		dt := []float32{9, 9, 9, 9} // overwritten, not added to: ops reuse the buffer
		RelBiasGradRef(2, 2, 1, 3, []float32{1, 2, 3, 4, 5, 6}, buckets, dt)
		same(t, "dtable", dt, []float32{2, 5, 1 + 3, 4 + 6})
	})
}

func gelu64(v float64) float64 {
	return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
}

func TestElementwiseRefs(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	t.Run("gelu", func(t *testing.T) {
		x := []float32{-3, 0, 1, 3}
		y := make([]float32, 4)
		GELURef(4, x, y)
		near64(t, "y", y, []float64{-0.0036373920817729943, 0, 0.8411919906082768, 2.9963626079182272}, 1e-7)
		xs, dy := randF(13, 101, 4), randF(15, 101, 1)
		dx := make([]float32, 101)
		GELUGradRef(101, xs, dy, dx)
		want := make([]float64, 101)
		for i, v := range xs {
			const h = 1e-5
			want[i] = float64(dy[i]) * (gelu64(float64(v)+h) - gelu64(float64(v)-h)) / (2 * h)
		}
		near64(t, "dx", dx, want, 1e-6)
	})
	t.Run("gelu erf", func(t *testing.T) {
		x := []float32{-3, 0, 1, 3}
		y := make([]float32, 4)
		GELUErfRef(4, x, y)
		// x Φ(x), Φ from tables: Φ(1) = 0.8413447460685429.
		near64(t, "y", y, []float64{-0.00404969409489031, 0, 0.8413447460685429, 2.99595030590511}, 1e-7)
		xs, dy := randF(13, 101, 4), randF(15, 101, 1)
		dx := make([]float32, 101)
		GELUErfGradRef(101, xs, dy, dx)
		want := make([]float64, 101)
		gelu := func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) }
		for i, v := range xs {
			const h = 1e-5
			want[i] = float64(dy[i]) * (gelu(float64(v)+h) - gelu(float64(v)-h)) / (2 * h)
		}
		near64(t, "dx", dx, want, 1e-6)
	})
	t.Run("relu", func(t *testing.T) {
		x := []float32{-2, negZero, 0, 3}
		y := make([]float32, 4)
		ReLURef(4, x, y)
		same(t, "y", y, []float32{0, 0, 0, 3})
		dx := make([]float32, 4)
		// The gradient passes only where the output is not +0.
		ReLUGradRef(4, []float32{0, 0, 1e-30, 3}, []float32{5, 6, 7, 8}, dx)
		same(t, "dx", dx, []float32{0, 0, 7, 8})
	})
	t.Run("binary", func(t *testing.T) {
		a, b := []float32{1, 2, 3}, []float32{4, 2, 0.5}
		for _, c := range []struct {
			op   BinOp
			bs   int
			want []float32
		}{
			{OpAdd, 1, []float32{5, 4, 3.5}},
			{OpAdd, 0, []float32{5, 6, 7}},
			{OpSub, 1, []float32{-3, 0, 2.5}},
			{OpMul, 1, []float32{4, 4, 1.5}},
			{OpDiv, 0, []float32{0.25, 0.5, 0.75}},
			{OpGreaterEq, 1, []float32{0, 1, 1}},
		} {
			t.Run(fmt.Sprint(c.op, "/", c.bs), func(t *testing.T) {
				y := make([]float32, 3)
				BinaryRef(c.op, 3, a, 1, b, c.bs, y)
				same(t, "y", y, c.want)
			})
		}
	})
	t.Run("bias", func(t *testing.T) {
		y := make([]float32, 4)
		AddBiasRef(2, 2, []float32{1, 2, 3, 4}, []float32{10, 20}, y)
		same(t, "addbias", y, []float32{11, 22, 13, 24})
		RepeatRowsRef(2, 2, []float32{7, 8}, y)
		same(t, "repeat", y, []float32{7, 8, 7, 8})
		s := make([]float32, 2)
		SumRowsRef(2, 2, []float32{1, 2, 3, 4}, s)
		same(t, "sumrows", s, []float32{4, 6})
	})
}

// TestDropStreamIsSubRand pins that the spelled-out PCG and stream hash give
// data.SubRand's draws, which defined the masks of earlier runs.
func TestDropStreamIsSubRand(t *testing.T) {
	for _, c := range []struct {
		seed      uint64
		id        int
		step      uint64
		chunk, nd int
	}{{42, 1, 0, 0, 5}, {7, 12, 123456789, 3, 1000}} {
		r := data.SubRand(c.seed, fmt.Sprintf("dropout/%d/%d/%d", c.id, c.step, c.chunk))
		st := NewPCGState(c.seed, DropStream(c.id, c.step, c.chunk))
		for i := 0; i < c.nd; i++ {
			if a, b := r.Uint64(), st.Uint64(); a != b {
				t.Fatalf("%+v draw %d: %x, want %x", c, i, b, a)
			}
		}
	}
}

func TestDropoutRef(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		p    float32
	}{{"one element", 1, 0.1}, {"odd, three chunks", 2*DropChunk + 13, 0.1}, {"half", 999, 0.5}, {"zero", 50, 0}} {
		t.Run(c.name, func(t *testing.T) {
			x, dy := randF(19, c.n, 1), randF(20, c.n, 1)
			p := DropoutParams{P: c.p, Seed: 42, ID: 1, Step: 7}
			y, mask := make([]float32, c.n), make([]float32, c.n)
			DropoutRef(c.n, p, x, y, mask)
			keep, dropped := 1/(1-c.p), 0
			for i := range x {
				switch {
				case mask[i] == 0 && y[i] == 0:
					dropped++
				case mask[i] != keep || y[i] != x[i]*keep:
					t.Fatalf("element %d: mask %g y %g, want mask %g y %g", i, mask[i], y[i], keep, x[i]*keep)
				}
			}
			if c.n > 100 {
				if f := float64(dropped) / float64(c.n); math.Abs(f-float64(c.p)) > 0.05 {
					t.Fatalf("dropped fraction %.3f, want about %g", f, c.p)
				}
			}
			// The second draw of a 64-bit word decides the next element:
			// element 1 uses the high half of chunk 0's first draw.
			if c.n > 1 && c.p > 0 {
				st := NewPCGState(42, DropStream(1, 7, 0))
				u := st.Uint64()
				if want := uint32(u>>32) >= DropThreshold(c.p); (mask[1] != 0) != want {
					t.Fatalf("element 1 kept = %v, want %v", mask[1] != 0, want)
				}
			}
			if c.p > 0 {
				// Chunks filled separately (as ops does, in parallel) agree.
				y2, m2 := make([]float32, c.n), make([]float32, c.n)
				chunks := (c.n + DropChunk - 1) / DropChunk
				for k := chunks - 1; k >= 0; k-- {
					DropoutChunksRef(c.n, p, k, k+1, x, y2, m2)
				}
				same(t, "y by chunk", y2, y)
				same(t, "mask by chunk", m2, mask)
			}
			dx := make([]float32, c.n)
			DropoutGradRef(c.n, dy, mask, dx)
			for i := range dx {
				if dx[i] != dy[i]*mask[i] {
					t.Fatalf("dx[%d] = %g, want %g", i, dx[i], dy[i]*mask[i])
				}
			}
		})
	}
}

func TestPCGAdvance(t *testing.T) {
	for _, k := range []uint64{0, 1, 2, 7, 100, 8191} {
		seq := NewPCGState(5, DropStream(3, 9, 2))
		for i := uint64(0); i < k; i++ {
			seq.Uint64()
		}
		jump := NewPCGState(5, DropStream(3, 9, 2))
		jump.Advance(k)
		if seq != jump {
			t.Fatalf("Advance(%d) = %+v, want %+v", k, jump, seq)
		}
		if a, b := seq.Uint64(), jump.Uint64(); a != b {
			t.Fatalf("draw after Advance(%d): %x, want %x", k, b, a)
		}
	}
}

// TestAdamRef follows Kingma & Ba's Algorithm 1 in float64 (bias
// corrections applied to the moments, not folded) with decoupled decay.
func TestAdamRef(t *testing.T) {
	for _, c := range []struct {
		name string
		p    AdamParams
		lr   float32
	}{
		{"weight decay", AdamParams{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9, WeightDecay: 0.01}, 1e-3},
		// eps of the gradients' size: AdamStepScalars folds it into
		// Eps·sqrt(1-b2^t), and with eps 1e-9 an eps left unscaled passes.
		{"large eps", AdamParams{Beta1: 0.8, Beta2: 0.999, Eps: 0.1}, 1e-2},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, p, lr := 257, c.p, c.lr
			w, m, v := randF(21, n, 1), make([]float32, n), make([]float32, n)
			w64, m64, v64 := make([]float64, n), make([]float64, n), make([]float64, n)
			for i, x := range w {
				w64[i] = float64(x)
			}
			b1, b2 := float64(p.Beta1), float64(p.Beta2)
			for step := 1; step <= 3; step++ {
				g := randF(uint64(22+step), n, 1)
				AdamRef(n, p, lr, step, w, g, m, v)
				for i := range w64 {
					gi := float64(g[i])
					m64[i] = b1*m64[i] + (1-b1)*gi
					v64[i] = b2*v64[i] + (1-b2)*gi*gi
					mh := m64[i] / (1 - math.Pow(b1, float64(step)))
					vh := v64[i] / (1 - math.Pow(b2, float64(step)))
					w64[i] = w64[i]*(1-float64(lr)*float64(p.WeightDecay)) - float64(lr)*mh/(math.Sqrt(vh)+float64(p.Eps))
				}
			}
			near64(t, "param", w, w64, 1e-6)
			near64(t, "m", m, m64, 1e-6)
			near64(t, "v", v, v64, 1e-6)
		})
	}
}

func TestClipRefs(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit float32
		want  []float32
	}{
		{"measure only", 0, []float32{3, 4, 0}},
		{"above", 1, []float32{0.6, 0.8, 0}},
		{"below", 6, []float32{3, 4, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := []float32{3}, []float32{4, 0}
			sq := []float64{0}
			SumSquaresRef(1, a, sq)
			SumSquaresRef(2, b, sq)
			if sq[0] != 25 {
				t.Fatalf("sum of squares %g, want 25", sq[0])
			}
			ClipByNormRef(1, sq, c.limit, a)
			ClipByNormRef(2, sq, c.limit, b)
			near64(t, "clipped", append(a, b...), []float64{float64(c.want[0]), float64(c.want[1]), 0}, 1e-7)
		})
	}
	t.Run("nan", func(t *testing.T) {
		x := []float32{float32(math.NaN()), 1}
		sq := []float64{0}
		SumSquaresRef(2, x, sq)
		ClipByNormRef(2, sq, 1, x)
		if x[1] != 1 {
			t.Fatalf("a NaN norm scaled the gradient: %v", x)
		}
	})
}
