package models

import (
	"math"
	"testing"
)

// TestFastMath compares the float32 nonlinearities with float64 math
// rounded to float32 over the range the LSTM meets and beyond.
func TestFastMath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		f      func(float32) float32
		ref    func(float64) float64
		lo, hi float64
		rel    float64 // allowed relative error
		abs    float64 // allowed absolute error
	}{
		{"sigmoid", sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, -100, 100, 4e-7, 1e-37},
		{"tanh", tanh32, math.Tanh, -20, 20, 4e-7, 1e-7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 200001
			worst := 0.0
			for i := 0; i < n; i++ {
				x := tc.lo + (tc.hi-tc.lo)*float64(i)/(n-1)
				x = float64(float32(x))
				got, want := float64(tc.f(float32(x))), tc.ref(x)
				err := math.Abs(got - want)
				if err > tc.abs+tc.rel*math.Abs(want) {
					t.Fatalf("%s(%g) = %g, want %g", tc.name, x, got, want)
				}
				if math.Abs(want) > 1e-30 {
					worst = max(worst, err/math.Abs(want))
				}
			}
			t.Logf("worst relative error %.3g", worst)
		})
	}
	for _, x := range []float32{-1e30, -100, 100, 1e30} {
		if s := tanh32(x); s != float32(math.Copysign(1, float64(x))) {
			t.Errorf("tanh32(%g) = %g", x, s)
		}
		if s, want := sigmoid(x), float32(math.Max(0, math.Copysign(1, float64(x)))); math.Abs(float64(s-want)) > 1e-37 {
			t.Errorf("sigmoid(%g) = %g", x, s)
		}
	}
	if s := tanh32(float32(math.Copysign(0, -1))); s != 0 || !math.Signbit(float64(s)) {
		t.Errorf("tanh32(-0) = %g", s)
	}
}

// TestSliceMath checks that the loop forms agree with the scalar ones.
func TestSliceMath(t *testing.T) {
	var xs []float32
	for x := float32(-100); x <= 100; x += 0.0137 {
		xs = append(xs, x)
	}
	xs = append(xs, -1e30, 1e30, 0, 0.25, -0.25, 9, -9)
	s, th := append([]float32(nil), xs...), append([]float32(nil), xs...)
	sigmoidSlice(s)
	tanhSlice(th)
	for i, x := range xs {
		if s[i] != sigmoid(x) {
			t.Fatalf("sigmoidSlice(%g) = %g, sigmoid %g", x, s[i], sigmoid(x))
		}
		if th[i] != tanh32(x) {
			t.Fatalf("tanhSlice(%g) = %g, tanh32 %g", x, th[i], tanh32(x))
		}
	}
}

func BenchmarkSigmoidSlice(b *testing.B) {
	x := make([]float32, 4096)
	for i := 0; i < b.N; i++ {
		for j := range x {
			x[j] = float32(j%97)/10 - 5
		}
		sigmoidSlice(x)
	}
}

func BenchmarkTanhSlice(b *testing.B) {
	x := make([]float32, 4096)
	for i := 0; i < b.N; i++ {
		for j := range x {
			x[j] = float32(j%97)/10 - 5
		}
		tanhSlice(x)
	}
}

// TestVecMath checks the forms the passes call (C where cgo builds them)
// against float64 math, and lstmAct's gate blocks.
func TestVecMath(t *testing.T) {
	var xs []float32
	for x := float32(-100); x <= 100; x += 0.00731 {
		xs = append(xs, x)
	}
	xs = append(xs, -1e30, 1e30, 0)
	s, th := append([]float32(nil), xs...), append([]float32(nil), xs...)
	sigmoidVec(s)
	tanhVec(th)
	for i, x := range xs {
		ws, wt := 1/(1+math.Exp(-float64(x))), math.Tanh(float64(x))
		if d := math.Abs(float64(s[i]) - ws); d > 1e-37+4e-7*ws {
			t.Fatalf("sigmoidVec(%g) = %g, want %g", x, s[i], ws)
		}
		if d := math.Abs(float64(th[i]) - wt); d > 1e-7+4e-7*math.Abs(wt) {
			t.Fatalf("tanhVec(%g) = %g, want %g", x, th[i], wt)
		}
	}
	const H = 40
	z := make([]float32, 3*4*H) // [3, 4H]
	for i := range z {
		z[i] = float32(i%17)/4 - 2
	}
	want := append([]float32(nil), z...)
	lstmAct(z, H)
	for i, v := range want {
		w := sigmoid(v)
		if i%(4*H)/H == 2 {
			w = tanh32(v)
		}
		if math.Abs(float64(z[i]-w)) > 2e-7 {
			t.Fatalf("lstmAct: z[%d] = %g, want %g", i, z[i], w)
		}
	}
}
