//go:build gpu || gpuemu

package engine_test

import (
	"testing"

	"compbench/data"
	"compbench/engine"
)

// recRun uploads inputs to one backend and downloads its outputs.
type recRun struct {
	t  *testing.T
	be engine.Backend
}

func (r recRun) f(x []float32) engine.Buf {
	b, err := r.be.Alloc(len(x))
	r.ok(err)
	r.t.Cleanup(func() { r.be.Free(b) })
	r.ok(r.be.Upload(b, x))
	return b
}

func (r recRun) i(x []int32) engine.Buf {
	b, err := r.be.AllocInt(len(x))
	r.ok(err)
	r.t.Cleanup(func() { r.be.Free(b) })
	r.ok(r.be.UploadInt(b, x))
	return b
}

// out is an output buffer of n elements, filled with garbage so that an
// element the backend fails to write shows.
func (r recRun) out(n int) engine.Buf { return r.f(randVals(9, n, 100)) }

func (r recRun) get(b engine.Buf, n int) []float32 {
	x := make([]float32, n) // [n]
	r.ok(r.be.Download(x, b))
	return x
}

func (r recRun) ok(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}

func randVals(seed uint64, n int, scale float32) []float32 {
	g := data.NewRand(seed)
	x := make([]float32, n) // [n]
	for i := range x {
		x[i] = (2*g.Float32() - 1) * scale
	}
	return x
}

// TestGPURecurrentMatchesCPU runs every RecurrentBackend method on the CUDA
// backend and on the CPU one with the same inputs: the wrappers pass each
// argument to its place (the kernels' own parity tests are in package
// kernels). Tolerance 1e-5 of each output's largest magnitude where the
// GPU's float32 sigmoid and tanh differ from vecmath's in the last bits;
// bit for bit elsewhere.
func TestGPURecurrentMatchesCPU(t *testing.T) {
	gb, err := engine.Recurrent(gpu(t))
	if err != nil {
		t.Fatal(err)
	}
	const tol, floor = 1e-5, 1e-3
	const n, h, s, nb, v = 6, 37, 5, 3, 11
	r := 2 * nb // query rows: two decoder steps
	mask := []float32{1, 0, 1, 1, 0, 1}
	lens := []int32{5, 0, 2}
	for _, c := range []struct {
		name string
		tol  float64
		run  func(r recRun, rb engine.RecurrentBackend) [][]float32
	}{
		{"LSTMGates", tol, func(x recRun, rb engine.RecurrentBackend) [][]float32 {
			z, ho, co, tc := x.f(randVals(1, n*4*h, 3)), x.out(n*h), x.out(n*h), x.out(n*h)
			x.ok(rb.LSTMGates(n, h, z, x.f(randVals(2, n*h, 1)), x.f(randVals(3, n*h, 1)), x.f(mask), ho, co, tc))
			return [][]float32{x.get(z, n*4*h), x.get(ho, n*h), x.get(co, n*h), x.get(tc, n*h)}
		}},
		{"LSTMGates nil mask", tol, func(x recRun, rb engine.RecurrentBackend) [][]float32 {
			z, ho, co, tc := x.f(randVals(1, n*4*h, 3)), x.out(n*h), x.out(n*h), x.out(n*h)
			x.ok(rb.LSTMGates(n, h, z, x.f(randVals(2, n*h, 1)), x.f(randVals(3, n*h, 1)), nil, ho, co, tc))
			return [][]float32{x.get(ho, n*h), x.get(co, n*h)}
		}},
		{"LSTMGatesBack", 0, func(x recRun, rb engine.RecurrentBackend) [][]float32 {
			in := func(seed uint64) engine.Buf { return x.f(randVals(seed, n*h, 1)) }
			dz, dh, dc := x.out(n*4*h), x.out(n*h), x.out(n*h)
			x.ok(rb.LSTMGatesBack(n, h, x.f(randVals(4, n*4*h, 1)), in(5), in(6), x.f(mask), in(7), in(8), in(9), dz, dh, dc))
			return [][]float32{x.get(dz, n*4*h), x.get(dh, n*h), x.get(dc, n*h)}
		}},
		{"AddAttn", tol, func(x recRun, rb engine.RecurrentBackend) [][]float32 {
			att := x.out(r * s)
			x.ok(rb.AddAttn(r, s, h, nb, x.f(randVals(10, r*h, 1)), x.f(randVals(11, s*nb*h, 1)),
				x.f(randVals(12, h, 1)), x.i(lens), att))
			return [][]float32{x.get(att, r*s)}
		}},
		{"AddAttnBack", tol, func(x recRun, rb engine.RecurrentBackend) [][]float32 {
			dq, dk, dv := x.out(r*h), x.out(s*nb*h), x.out(r*h)
			x.ok(rb.AddAttnBack(r, s, h, nb, x.f(randVals(10, r*h, 1)), x.f(randVals(11, s*nb*h, 1)),
				x.f(randVals(12, h, 1)), x.i(lens), x.f(randVals(13, r*s, 1)), dq, dk, dv))
			return [][]float32{x.get(dq, r*h), x.get(dk, s*nb*h), x.get(dv, r*h)}
		}},
		{"CopyLoss", tol, func(x recRun, rb engine.RecurrentBackend) [][]float32 {
			match := make([]float32, r*s) // [R,S]
			for i := range match {
				match[i] = float32(i % 2)
			}
			att := randVals(15, r*s, 0.2)
			for i := range att {
				att[i] += 0.2
			}
			tgt := []int32{3, -1, v + 2, 0, 10, v}
			p, dl, dz, da := x.out(r), x.out(r*v), x.out(r), x.out(r*s)
			x.ok(rb.CopyLoss(r, v, s, 4, -1, x.f(randVals(14, r*v, 3)), x.f(randVals(16, r, 2)), x.f(att), x.f(match),
				x.i(tgt), p, dl, dz, da))
			return [][]float32{x.get(p, r), x.get(dl, r*v), x.get(dz, r), x.get(da, r*s)}
		}},
		{"Copy2D", 0, func(x recRun, rb engine.RecurrentBackend) [][]float32 {
			src, dst := x.f(randVals(17, 40, 1)), x.f(randVals(18, 60, 1))
			x.ok(rb.Copy2D(4, 3, x.be.View(src, 2, 38), 9, x.be.View(dst, 5, 55), 11))
			return [][]float32{x.get(dst, 60)}
		}},
		{"Fill", 0, func(x recRun, rb engine.RecurrentBackend) [][]float32 {
			y := x.out(50)
			x.ok(rb.Fill(47, -2.5, y))
			return [][]float32{x.get(y, 50)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := c.run(recRun{t, &engine.CPU{}}, &engine.CPU{})
			got := c.run(recRun{t, gb}, gb)
			for k := range want {
				compare(t, c.name, want[k], got[k], c.tol, floor)
			}
		})
	}
}
