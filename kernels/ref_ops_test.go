package kernels

import (
	"math"
	"testing"

	"compgen/ops"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestLayerNormRefMatchesOps(t *testing.T) {
	for _, c := range []struct {
		name string
		n, d int
	}{{"1x1", 1, 1}, {"3x5", 3, 5}, {"130x37", 130, 37}} {
		t.Run(c.name, func(t *testing.T) {
			n, d := c.n, c.d
			x, gm, bt := randF(1, n*d, 3), randF(2, d, 1), randF(3, d, 1)
			dy := randF(4, n*d, 1)
			res := runOp(t, []*tensor.Dense{dense(x, n, d), dense(gm, d), dense(bt, d)}, []int{0, 1, 2}, dy,
				func(in []*G.Node) (*G.Node, error) { return ops.LayerNorm(in[0], in[1], in[2], ops.LayerNormEps) })
			y, dx, dg, db := make([]float32, n*d), make([]float32, n*d), make([]float32, d), make([]float32, d)
			LayerNormRef(n, d, LayerNormEps, x, gm, bt, y)
			LayerNormGradXRef(n, d, LayerNormEps, x, gm, dy, dx)
			LayerNormGradGammaRef(n, d, LayerNormEps, x, dy, dg)
			LayerNormGradBetaRef(n, d, dy, db)
			same(t, "y", y, res.y)
			same(t, "dx", dx, res.grads[0])
			same(t, "dgamma", dg, res.grads[1])
			same(t, "dbeta", db, res.grads[2])
		})
	}
}

func TestAttnSoftmaxRefMatchesOps(t *testing.T) {
	for _, c := range []struct {
		name     string
		s        AttnShape
		mb, bb   Bcast // zero: absent
		maskRows bool  // fully mask some rows
	}{
		{"plain", AttnShape{2, 3, 4, 5}, Bcast{}, Bcast{}, false},
		{"mask B1H1", AttnShape{2, 3, 4, 5}, Bcast{2, 1}, Bcast{}, true},
		{"mask+bias", AttnShape{3, 2, 5, 7}, Bcast{3, 1}, Bcast{1, 2}, true},
		{"bias full", AttnShape{2, 2, 3, 3}, Bcast{}, Bcast{2, 2}, false},
		{"length 1", AttnShape{1, 1, 1, 1}, Bcast{1, 1}, Bcast{1, 1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.s
			x := randF(5, s.Len(), 4)
			dy := randF(6, s.Len(), 1)
			in := []*tensor.Dense{dense(x, s.B, s.H, s.Tq, s.Tk)}
			var mask, bias []float32
			if c.mb.B > 0 {
				mask = make([]float32, c.mb.B*c.mb.H*s.Tq*s.Tk)
				for i := range mask {
					if i%3 == 1 || (c.maskRows && (i/s.Tk)%4 == 2) {
						mask[i] = float32(math.Inf(-1))
					}
				}
				in = append(in, dense(mask, c.mb.B, c.mb.H, s.Tq, s.Tk))
			}
			if c.bb.B > 0 {
				bias = randF(7, c.bb.B*c.bb.H*s.Tq*s.Tk, 2)
				in = append(in, dense(bias, c.bb.B, c.bb.H, s.Tq, s.Tk))
			}
			wrt := []int{0}
			if bias != nil {
				wrt = append(wrt, len(in)-1)
			}
			res := runOp(t, in, wrt, dy, func(n []*G.Node) (*G.Node, error) {
				var m, b *G.Node
				k := 1
				if mask != nil {
					m = n[k]
					k++
				}
				if bias != nil {
					b = n[k]
				}
				return ops.AttentionSoftmax(n[0], m, b)
			})
			y, ds := make([]float32, s.Len()), make([]float32, s.Len())
			AttnSoftmaxRef(s, x, mask, c.mb, bias, c.bb, y)
			same(t, "y", y, res.y)
			AttnSoftmaxGradRef(s.B*s.H*s.Tq, s.Tk, y, dy, ds)
			same(t, "dscores", ds, res.grads[0])
			if bias != nil {
				db := make([]float32, c.bb.B*c.bb.H*s.Tq*s.Tk)
				SumToRef(s, c.bb, ds, db)
				same(t, "dbias", db, res.grads[1])
			}
			if c.maskRows {
				for r := 0; r < s.B*s.H*s.Tq; r++ {
					b, i := r/(s.H*s.Tq), r%s.Tq
					if c.mb.B == 1 {
						b = 0
					}
					if (b*s.Tq+i)%4 == 2 && c.mb.H == 1 {
						for j := 0; j < s.Tk; j++ {
							if y[r*s.Tk+j] != 0 {
								t.Fatalf("all-masked row %d: y = %v, want zeros", r, y[r*s.Tk:(r+1)*s.Tk])
							}
						}
					}
				}
			}
		})
	}
}

func TestSoftmaxCERefMatchesOps(t *testing.T) {
	for _, c := range []struct {
		name   string
		n, v   int
		ignore int32
		smooth float32
		t      []int32
	}{
		{"plain", 4, 7, 0, 0, []int32{1, 2, 6, 3}},
		{"ignore+smooth", 5, 9, 0, 0.1, []int32{1, 0, 8, 0, 4}},
		{"all ignored", 2, 3, 0, 0.1, []int32{0, 0}},
		{"one row", 1, 1, -1, 0.1, []int32{0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := randF(8, c.n*c.v, 5)
			res := runOp(t, []*tensor.Dense{dense(x, c.n, c.v), ints(c.t)}, []int{0}, nil, func(in []*G.Node) (*G.Node, error) {
				return ops.SoftmaxCrossEntropy(in[0], in[1], int(c.ignore), c.smooth)
			})
			p := CEParams{Ignore: c.ignore, Smoothing: c.smooth}
			loss, dx := make([]float32, 1), make([]float32, c.n*c.v)
			SoftmaxCERef(c.n, c.v, p, x, c.t, loss)
			SoftmaxCEGradRef(c.n, c.v, p, x, c.t, []float32{1}, dx)
			same(t, "loss", loss, res.y)
			same(t, "dx", dx, res.grads[0])
		})
	}
}

func TestGatherRefsMatchOps(t *testing.T) {
	t.Run("embed", func(t *testing.T) {
		v, d, n := 7, 5, 9
		ids := []int32{3, 0, 6, 3, 3, 1, 6, 2, 0}
		table, dy := randF(9, v*d, 1), randF(10, n*d, 1)
		res := runOp(t, []*tensor.Dense{dense(table, v, d), ints(ids)}, []int{0}, dy,
			func(in []*G.Node) (*G.Node, error) { return ops.Embed(in[0], in[1]) })
		y, dt := make([]float32, n*d), make([]float32, v*d)
		EmbedRef(n, d, table, ids, y)
		EmbedGradRef(v, d, n, dy, ids, dt)
		same(t, "y", y, res.y)
		same(t, "dtable", dt, res.grads[0])
	})
	t.Run("relbias", func(t *testing.T) {
		nb, h, tq, tk := 5, 3, 4, 6
		bk := make([]int32, tq*tk)
		bi := make([]int, tq*tk)
		for i := range bk {
			bk[i] = int32((i*7 + i/tk) % nb)
			bi[i] = int(bk[i])
		}
		table, dy := randF(11, nb*h, 1), randF(12, h*tq*tk, 1)
		res := runOp(t, []*tensor.Dense{dense(table, nb, h)}, []int{0}, dy,
			func(in []*G.Node) (*G.Node, error) { return ops.RelativeBias(in[0], bi, tq, tk) })
		y, dt := make([]float32, h*tq*tk), make([]float32, nb*h)
		RelBiasRef(nb, h, tq, tk, table, bk, y)
		RelBiasGradRef(nb, h, tq, tk, dy, bk, dt)
		same(t, "y", y, res.y)
		same(t, "dtable", dt, res.grads[0])
	})
}

func TestElementwiseRefsMatchOps(t *testing.T) {
	n := 1001
	x, b, dy := randF(13, n, 4), randF(14, n, 4), randF(15, n, 1)
	x[3], x[4] = 0, float32(math.Copysign(0, -1))
	t.Run("gelu", func(t *testing.T) {
		res := runOp(t, []*tensor.Dense{dense(x, n)}, []int{0}, dy, func(in []*G.Node) (*G.Node, error) { return ops.GELU(in[0]) })
		y, dx := make([]float32, n), make([]float32, n)
		GELURef(n, x, y)
		GELUGradRef(n, x, dy, dx)
		same(t, "y", y, res.y)
		same(t, "dx", dx, res.grads[0])
	})
	t.Run("relu", func(t *testing.T) {
		res := runOp(t, []*tensor.Dense{dense(x, n)}, []int{0}, dy, func(in []*G.Node) (*G.Node, error) { return ops.ReLU(in[0]) })
		y, dx := make([]float32, n), make([]float32, n)
		ReLURef(n, x, y)
		ReLUGradRef(n, y, dy, dx)
		same(t, "y", y, res.y)
		same(t, "dx", dx, res.grads[0])
	})
	t.Run("add", func(t *testing.T) {
		res := runOp(t, []*tensor.Dense{dense(x, n), dense(b, n)}, nil, nil, func(in []*G.Node) (*G.Node, error) { return ops.Add(in[0], in[1]) })
		y := make([]float32, n)
		BinaryRef(OpAdd, n, x, 1, b, 1, y)
		same(t, "y", y, res.y)
	})
	t.Run("addbias", func(t *testing.T) {
		rows, d := 131, 7 // more than two SumChunks of rows
		xs, bs, dys := randF(16, rows*d, 2), randF(17, d, 2), randF(18, rows*d, 1)
		res := runOp(t, []*tensor.Dense{dense(xs, rows, d), dense(bs, d)}, []int{0, 1}, dys,
			func(in []*G.Node) (*G.Node, error) { return ops.AddBias(in[0], in[1]) })
		y, db := make([]float32, rows*d), make([]float32, d)
		AddBiasRef(rows, d, xs, bs, y)
		SumRowsRef(rows, d, dys, db)
		same(t, "y", y, res.y)
		same(t, "dx", dys, res.grads[0])
		same(t, "db", db, res.grads[1])
	})
}

func TestDropoutRefMatchesOps(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		p    float32
		step uint64
	}{
		{"one element", 1, 0.1, 0},
		{"odd, three chunks", 2*DropChunk + 13, 0.1, 7},
		{"half", 999, 0.5, 123456789},
		{"zero", 50, 0, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, dy := randF(19, c.n, 1), randF(20, c.n, 1)
			src := ops.NewDropoutSource(42)
			src.SetStep(c.step)
			res := runOp(t, []*tensor.Dense{dense(x, c.n)}, []int{0}, dy, func(in []*G.Node) (*G.Node, error) {
				// Op #0 is a throwaway so the tested one is #1.
				if _, err := ops.Dropout(in[0], c.p, src); err != nil {
					return nil, err
				}
				return ops.Dropout(in[0], c.p, src)
			})
			y, mask, dx := make([]float32, c.n), make([]float32, c.n), make([]float32, c.n)
			DropoutRef(c.n, DropoutParams{P: c.p, Seed: 42, ID: 1, Step: c.step}, x, y, mask)
			DropoutGradRef(c.n, dy, mask, dx)
			same(t, "y", y, res.y)
			same(t, "dx", dx, res.grads[0])
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

func TestAdamRefMatchesOps(t *testing.T) {
	n := 257
	cfg := ops.AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9, WeightDecay: 0.01}
	p := AdamParams{Beta1: cfg.Beta1, Beta2: cfg.Beta2, Eps: cfg.Eps, WeightDecay: cfg.WeightDecay}
	w, m, v := randF(21, n, 1), make([]float32, n), make([]float32, n)
	wt, mt, vt := dense(w, n), dense(m, n), dense(v, n)
	for step := 1; step <= 3; step++ {
		g := randF(uint64(22+step), n, 1)
		if err := ops.AdamStep(wt, dense(g, n), mt, vt, 1e-3, step, cfg); err != nil {
			t.Fatal(err)
		}
		AdamRef(n, p, 1e-3, step, w, g, m, v)
	}
	same(t, "param", w, wt.Float32s())
	same(t, "m", m, mt.Float32s())
	same(t, "v", v, vt.Float32s())
}

func TestClipRefsMatchOps(t *testing.T) {
	for _, limit := range []float32{0, 0.5, 1e9} {
		a, b := randF(30, 100, 1), randF(31, 37, 2)
		ta, tb := dense(a, 100), dense(b, 37)
		norm := ops.ClipGlobalNorm([]*tensor.Dense{ta, tb}, limit)
		sq := []float64{0}
		SumSquaresRef(100, a, sq)
		SumSquaresRef(37, b, sq)
		if got := float32(math.Sqrt(sq[0])); got != norm {
			t.Fatalf("limit %g: norm %g, want %g", limit, got, norm)
		}
		ClipByNormRef(100, sq, limit, a)
		ClipByNormRef(37, sq, limit, b)
		same(t, "a", a, ta.Float32s())
		same(t, "b", b, tb.Float32s())
	}
}
