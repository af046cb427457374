//go:build gpu || gpuemu

package kernels

import (
	"math"
	"strings"
	"testing"
)

// Parity of the recurrent models' kernels (lstm.cu) with ref_lstm.go.
// Tolerances: the GPU's sigmoid and tanh are float32 expf/tanhf, a few ulp
// from vecmath's, so everything downstream of them (the LSTM cell, the
// attention weights and their gradients) gets atol 1e-6 / rtol 1e-5;
// the copy loss's softmax sum runs in a tree in float64 instead of in
// order in float32 (the same bounds). The
// LSTM backward pass (no transcendental), Copy2D and Fill are
// bit-identical. Every output starts as garbage, so an element a kernel
// fails to write shows.

const (
	lstmAtol = 1e-6
	lstmRtol = 1e-5
)

// garbage returns n values no kernel writes by accident.
func garbage(t testing.TB, n int) Buf { return up(t, randF(99, n, 1e3)) }

func TestLSTMGatesParity(t *testing.T) {
	for _, c := range []struct {
		name  string
		n, h  int
		scale float32 // of the pre-activations
		pad   []int   // rows with mask 0; nil: no mask
	}{
		{"n1 h1 no mask", 1, 1, 2, nil},
		{"h37 no mask", 5, 37, 3, nil},
		{"h37 padding rows", 6, 37, 3, []int{1, 4}},
		{"mask without padding", 3, 32, 3, []int{}},
		{"all padding", 3, 8, 3, []int{0, 1, 2}},
		{"saturated h64", 4, 64, 40, []int{2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, h := c.n, c.h
			z, hp, cp := randF(40, n*4*h, c.scale), randF(41, n*h, 1), randF(42, n*h, 2)
			var mask []float32
			var gmask Buf
			if c.pad != nil {
				mask = make([]float32, n) // [N]
				for i := range mask {
					mask[i] = 1
				}
				for _, r := range c.pad {
					mask[r] = 0
				}
				gmask = up(t, mask)
			}
			gz := up(t, z)
			gh, gc, gt := garbage(t, n*h), garbage(t, n*h), garbage(t, n*h)
			hOut, cOut, tanhC := make([]float32, n*h), make([]float32, n*h), make([]float32, n*h) // [N,H] each
			ok(t, dev.LSTMGates(n, h, gz, up(t, hp), up(t, cp), gmask, gh, gc, gt))
			LSTMGatesRef(n, h, z, hp, cp, mask, hOut, cOut, tanhC)
			closeTo(t, "gates", down(t, gz, n*4*h), z, lstmAtol, lstmRtol)
			closeTo(t, "tanhC", down(t, gt, n*h), tanhC, lstmAtol, lstmRtol)
			closeTo(t, "h", down(t, gh, n*h), hOut, lstmAtol, lstmRtol)
			closeTo(t, "c", down(t, gc, n*h), cOut, lstmAtol, lstmRtol)
			for _, r := range c.pad { // padding rows are copies
				same(t, "padding h", down(t, gh, n*h)[r*h:(r+1)*h], hp[r*h:(r+1)*h])
				same(t, "padding c", down(t, gc, n*h)[r*h:(r+1)*h], cp[r*h:(r+1)*h])
			}
		})
	}
}

func TestLSTMGatesBackParity(t *testing.T) {
	for _, c := range []struct {
		name string
		n, h int
		pad  []int
	}{
		{"n1 h1 no mask", 1, 1, nil},
		{"h37 no mask", 5, 37, nil},
		{"h37 padding rows", 6, 37, []int{0, 5}},
		{"all padding", 2, 33, []int{0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, h := c.n, c.h
			gates := randF(50, n*4*h, 1) // [N,4H]: σ gates in (0,1), tanh in (-1,1)
			for r := 0; r < n; r++ {
				for k := 0; k < 4*h; k++ {
					if k < 2*h || k >= 3*h {
						gates[r*4*h+k] = 0.5 + gates[r*4*h+k]/2
					}
				}
			}
			tanhC, cp := randF(51, n*h, 1), randF(52, n*h, 2)
			dho, dhn, dcn := randF(53, n*h, 1), randF(54, n*h, 1), randF(55, n*h, 1)
			var mask []float32
			var gmask Buf
			if c.pad != nil {
				mask = make([]float32, n) // [N]
				for i := range mask {
					mask[i] = 1
				}
				for _, r := range c.pad {
					mask[r] = 0
				}
				gmask = up(t, mask)
			}
			dz, dhp, dcp := make([]float32, n*4*h), make([]float32, n*h), make([]float32, n*h)
			gdz, gdhp, gdcp := garbage(t, n*4*h), garbage(t, n*h), garbage(t, n*h)
			LSTMGatesBackRef(n, h, gates, tanhC, cp, mask, dho, dhn, dcn, dz, dhp, dcp)
			ok(t, dev.LSTMGatesBack(n, h, up(t, gates), up(t, tanhC), up(t, cp), gmask, up(t, dho), up(t, dhn),
				up(t, dcn), gdz, gdhp, gdcp))
			same(t, "dz", down(t, gdz, n*4*h), dz)
			same(t, "dhPrev", down(t, gdhp, n*h), dhp)
			same(t, "dcPrev", down(t, gdcp, n*h), dcp)
		})
	}
}

func TestAddAttnParity(t *testing.T) {
	for _, c := range []struct {
		name        string
		r, s, h, nb int
		lens        []int32 // [nb]
	}{
		{"length 1", 1, 1, 1, 1, []int32{1}},
		{"h37 nb3 full, empty, partial", 6, 5, 37, 3, []int32{5, 0, 2}},
		{"decode step nb4", 4, 9, 64, 4, []int32{9, 1, 3, 0}},
		{"all empty", 4, 3, 8, 2, []int32{0, 0}},
		{"s33 h70 nb2", 14, 33, 70, 2, []int32{33, 17}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, s, h, nb := c.r, c.s, c.h, c.nb
			q, keys, va := randF(60, r*h, 1), randF(61, s*nb*h, 1), randF(62, h, 1)
			gq, gk, gva, gl := up(t, q), up(t, keys), up(t, va), upInt(t, c.lens)
			att, gatt := make([]float32, r*s), garbage(t, r*s) // [R,S]
			AddAttnRef(r, s, h, nb, q, keys, va, c.lens, att)
			ok(t, dev.AddAttn(r, s, h, nb, gq, gk, gva, gl, gatt))
			closeTo(t, "att", down(t, gatt, r*s), att, lstmAtol, lstmRtol)

			de := randF(63, r*s, 1) // entries beyond srcLen too: they must be ignored
			dq, dk, dv := make([]float32, r*h), make([]float32, s*nb*h), make([]float32, r*h)
			gdq, gdk, gdv := garbage(t, r*h), garbage(t, s*nb*h), garbage(t, r*h)
			AddAttnBackRef(r, s, h, nb, q, keys, va, c.lens, de, dq, dk, dv)
			ok(t, dev.AddAttnBack(r, s, h, nb, gq, gk, gva, gl, up(t, de), gdq, gdk, gdv))
			closeTo(t, "dq", down(t, gdq, r*h), dq, lstmAtol, lstmRtol)
			closeTo(t, "dkeys", down(t, gdk, s*nb*h), dk, lstmAtol, lstmRtol)
			closeTo(t, "dvaPart", down(t, gdv, r*h), dv, lstmAtol, lstmRtol)
		})
	}
}

// copyCase builds CopyLoss's inputs. Row kinds cycle through a generated
// target, an ignored row, a copy id >= V with matches, one without (P =
// 0), a target whose P is positive but below 1e-30 (no gradient), and one
// whose P is about 1e-27 (gradients through dP of about 1e27).
func copyCase(r, v, s int, ignore int32) (logits, zg, att, match []float32, tgt []int32) {
	logits, zg = randF(70, r*v, 3), randF(71, r, 2)
	att, match = randF(72, r*s, 1), make([]float32, r*s) // [R,S] each
	tgt = make([]int32, r)                               // [R]
	for i := 0; i < r; i++ {
		a := att[i*s : (i+1)*s]
		var sum float32
		for j := range a {
			a[j] = float32(math.Abs(float64(a[j]))) + 0.01
			sum += a[j]
			if (i+j)%3 == 0 {
				match[i*s+j] = 1
			}
		}
		for j := range a {
			a[j] /= sum
		}
		tgt[i] = int32((i * 7) % v)
		switch i % 7 {
		case 1:
			tgt[i] = ignore
		case 2:
			tgt[i] = int32(v + i%s) // a copy id
		case 3:
			tgt[i] = int32(v + 1)
			clear(match[i*s : (i+1)*s]) // nothing to copy: P = 0
		case 4:
			clear(match[i*s : (i+1)*s])
			logits[i*v+int(tgt[i])] = -80 // P ≈ e^-83: a normal float32 below 1e-30
		case 5:
			clear(match[i*s : (i+1)*s])
			logits[i*v+int(tgt[i])] = -55
		}
	}
	return
}

func TestCopyLossParity(t *testing.T) {
	for _, c := range []struct {
		name       string
		r, v, s, n int
		ignore     int32
	}{
		{"one row", 1, 1, 1, 1, -1},
		{"v37 s7", 12, 37, 7, 8, 0},
		{"v300 s40", 7, 300, 40, 5, -100},
		{"v5 s1", 6, 5, 1, 4, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, v, s := c.r, c.v, c.s
			logits, zg, att, match, tgt := copyCase(r, v, s, c.ignore)
			prob, dl, dzg, da := make([]float32, r), make([]float32, r*v), make([]float32, r), make([]float32, r*s)
			gp, gdl, gdz, gda := garbage(t, r), garbage(t, r*v), garbage(t, r), garbage(t, r*s)
			CopyLossRef(r, v, s, c.n, c.ignore, logits, zg, att, match, tgt, prob, dl, dzg, da)
			ok(t, dev.CopyLoss(r, v, s, c.n, c.ignore, up(t, logits), up(t, zg), up(t, att), up(t, match), upInt(t, tgt),
				gp, gdl, gdz, gda))
			closeTo(t, "prob", down(t, gp, r), prob, lstmAtol, lstmRtol)
			// |dLogits| <= 1/n and |dZg| <= 1/n however small P is (dP's
			// 1/P meets a factor of P), so the absolute tolerance holds;
			// dAtt = dP·(1−pg) is relative to P.
			closeTo(t, "dLogits", down(t, gdl, r*v), dl, lstmAtol, lstmRtol)
			closeTo(t, "dZg", down(t, gdz, r), dzg, lstmAtol, lstmRtol)
			closeTo(t, "dAtt", down(t, gda, r*s), da, lstmAtol, lstmRtol)
			for i := 0; i < r; i++ {
				if i%7 == 4 && (prob[i] <= 0 || prob[i] >= 1e-30) {
					t.Fatalf("row %d: P = %g, want a positive P below 1e-30", i, prob[i])
				}
				if i%7 == 5 && (prob[i] < 1e-30 || prob[i] > 1e-20) {
					t.Fatalf("row %d: P = %g, want a small P above 1e-30", i, prob[i])
				}
			}
		})
	}
}

func TestCopy2DFillParity(t *testing.T) {
	for _, c := range []struct {
		name                 string
		rows, cols, lds, ldd int
		offS, offD           int
	}{
		{"empty rows", 0, 4, 4, 4, 0, 0},
		{"empty cols", 3, 0, 4, 4, 0, 0},
		{"one element", 1, 1, 1, 1, 0, 0},
		{"split columns", 5, 3, 8, 3, 5, 0},
		{"concatenate columns", 7, 37, 37, 50, 0, 13},
		{"contiguous", 33, 65, 65, 65, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns, nd := c.offS+max(c.rows, 1)*c.lds, c.offD+max(c.rows, 1)*c.ldd
			src, dst := randF(80, ns, 1), randF(81, nd, 1)
			gd := up(t, dst)
			Copy2DRef(c.rows, c.cols, src[c.offS:], c.lds, dst[c.offD:], c.ldd)
			ok(t, dev.Copy2D(c.rows, c.cols, up(t, src).At(c.offS), c.lds, gd.At(c.offD), c.ldd))
			same(t, "dst", down(t, gd, nd), dst) // outside the block unchanged too
		})
	}
	for _, n := range []int{0, 1, 1000, 3*elemBlock*7 + 5} {
		for _, v := range []float32{0, float32(math.Copysign(0, -1)), 1.5, float32(math.Inf(-1))} {
			y, gy := randF(82, n+3, 1), up(t, randF(82, n+3, 1))
			FillRef(n, v, y)
			ok(t, dev.Fill(n, v, gy))
			same(t, "fill", down(t, gy, n+3), y)
		}
	}
}

// The launchers reject short or inconsistent buffers before launching.
func TestLSTMLauncherChecks(t *testing.T) {
	b := func(n int) Buf { return up(t, make([]float32, n)) }
	for _, c := range []struct {
		name, want string
		err        error
	}{
		{"short mask", "mask", dev.LSTMGates(4, 3, b(48), b(12), b(12), b(3), b(12), b(12), b(12))},
		{"short z", "lstm gates z", dev.LSTMGates(4, 3, b(47), b(12), b(12), Buf{}, b(12), b(12), b(12))},
		{"short dz", "[N,4H]", dev.LSTMGatesBack(2, 3, b(24), b(6), b(6), Buf{}, b(6), b(6), b(6), b(23), b(6), b(6))},
		{"missing srcLen", "srcLen", dev.AddAttn(2, 3, 4, 2, b(8), b(24), b(4), Buf{}, b(6))},
		{"nb 0", "nb 0", dev.AddAttn(2, 3, 4, 0, b(8), b(24), b(4), b(1), b(6))},
		{"short dkeys", "dkeys", dev.AddAttnBack(2, 3, 4, 2, b(8), b(24), b(4), b(2), b(6), b(8), b(23), b(8))},
		{"short dAtt", "[R,S]", dev.CopyLoss(2, 5, 3, 2, -1, b(10), b(2), b(6), b(6), b(2), b(2), b(10), b(2), b(5))},
		{"stride below cols", "strides", dev.Copy2D(2, 5, b(10), 4, b(10), 5)},
		{"short copy dst", "copy2d dst", dev.Copy2D(2, 5, b(10), 5, b(12), 8)},
		{"short fill", "fill", dev.Fill(5, 1, b(4))},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", c.err, c.want)
			}
		})
	}
}
