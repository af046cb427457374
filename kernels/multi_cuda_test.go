//go:build gpu || gpuemu

package kernels

import (
	"math"
	"testing"
)

// TestMultiTensorParity: the multi-tensor optimizer kernels on lists of
// tensors of mixed sizes (a one-element tensor, an empty one, sizes around
// the block width) give the per-tensor references' results: Adam and the
// clip bit for bit, the sum of squares to float64 rounding.
func TestMultiTensorParity(t *testing.T) {
	for _, sizes := range [][]int{{1}, {300, 0, 1, 1001, 256}, {70000, 3}} {
		t.Run("", func(t *testing.T) {
			n := len(sizes)
			w, g, m, v := make([][]float32, n), make([][]float32, n), make([][]float32, n), make([][]float32, n)
			gw, gg, gm, gv := make([]Buf, n), make([]Buf, n), make([]Buf, n), make([]Buf, n)
			for i, s := range sizes {
				w[i], g[i] = randF(uint64(20+i), s, 1), randF(uint64(40+i), s, 3)
				m[i], v[i] = randF(uint64(60+i), s, 0.1), randF(uint64(80+i), s, 0.1)
				for j := range v[i] {
					v[i][j] *= v[i][j] // second moments are not negative
				}
				gw[i], gg[i], gm[i], gv[i] = up(t, w[i]), up(t, g[i]), up(t, m[i]), up(t, v[i])
			}
			list := func(b []Buf) Tensors {
				tl, err := dev.NewTensors(b, sizes)
				ok(t, err)
				t.Cleanup(func() { dev.FreeTensors(tl) })
				return tl
			}
			tw, tg, tm, tv := list(gw), list(gg), list(gm), list(gv)

			sq := []float64{0}
			for i, s := range sizes {
				SumSquaresRef(s, g[i], sq)
			}
			acc, err := dev.AllocBytes(8)
			ok(t, err)
			defer dev.Free(acc)
			ok(t, dev.SumSquaresMulti(tg, acc))
			got := []float64{0}
			ok(t, dev.DownloadFloat64(got, acc))
			if math.Abs(got[0]-sq[0]) > 1e-12*sq[0] {
				t.Fatalf("sum squares %v, want %v", got[0], sq[0])
			}

			limit := float32(math.Sqrt(sq[0]) / 3) // clips
			ok(t, dev.ClipByNormMulti(tg, acc, limit))
			for i, s := range sizes {
				ClipByNormRef(s, got, limit, g[i])
				same(t, "clipped grad", down(t, gg[i], s), g[i])
			}

			p := AdamParams{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9, WeightDecay: 0.01}
			for step := 1; step <= 2; step++ {
				ok(t, dev.AdamMulti(p, 1e-3, step, tw, tg, tm, tv))
				for i, s := range sizes {
					AdamRef(s, p, 1e-3, step, w[i], g[i], m[i], v[i])
				}
			}
			for i, s := range sizes {
				same(t, "param", down(t, gw[i], s), w[i])
				same(t, "m", down(t, gm[i], s), m[i])
				same(t, "v", down(t, gv[i], s), v[i])
			}
		})
	}
}

// TestMultiTensorErrors: bad lists are refused before anything runs.
func TestMultiTensorErrors(t *testing.T) {
	b := up(t, make([]float32, 4))
	for _, c := range []struct {
		name  string
		bufs  []Buf
		sizes []int
	}{
		{"empty", nil, nil},
		{"sizes differ in number", []Buf{b}, []int{4, 4}},
		{"negative size", []Buf{b}, []int{-1}},
		{"buffer too short", []Buf{b}, []int{5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if tl, err := dev.NewTensors(c.bufs, c.sizes); err == nil {
				dev.FreeTensors(tl)
				t.Fatal("accepted")
			}
		})
	}
	a, err := dev.NewTensors([]Buf{b}, []int{4})
	ok(t, err)
	defer dev.FreeTensors(a)
	c, err := dev.NewTensors([]Buf{b, b}, []int{2, 2})
	ok(t, err)
	defer dev.FreeTensors(c)
	if err := dev.AdamMulti(AdamParams{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9}, 1e-3, 1, a, c, a, a); err == nil {
		t.Error("AdamMulti accepted lists of different shapes")
	}
}
