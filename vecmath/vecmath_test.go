package vecmath

import (
	"fmt"
	"math"
	"testing"
)

// geluRef and geluGradRef are GELU and its derivative in float64. GELU
// is GPT-2's tanh form 0.5x(1 + tanh u) written as x/(1 + e^(−2u)), equal
// but without the cancellation that makes the tanh form 0 below x ≈ −9.
func geluRef(x float64) float64 {
	return x / (1 + math.Exp(-2*geluC*(x+geluA*x*x*x)))
}

func geluGradRef(x float64) float64 {
	t := math.Tanh(geluC * (x + geluA*x*x*x))
	return 0.5*(1+t) + 0.5*x*(1-t*t)*geluC*(1+3*geluA*x*x)
}

// geluCond is the relative error bound's factor for GELU at x: 1, or
// |2u|/5 where e^(−2u) amplifies the rounding of 2u.
func geluCond(x float64) float64 {
	return max(1, math.Abs(2*geluC*(x+geluA*x*x*x))/5)
}

// grid returns float32 values from lo to hi in steps of step, then extra.
func grid(lo, hi, step float32, extra ...float32) []float32 {
	var xs []float32
	for x := lo; x <= hi; x += step {
		xs = append(xs, x)
	}
	return append(xs, extra...)
}

// unary wraps a slice function of (x, y) as an in-place one.
func unary(f func(x, y []float32)) func([]float32) {
	return func(x []float32) { f(x, x) }
}

// TestAccuracy compares every function, in its exported form (C where cgo
// builds it) and its Go loop, with float64 math over the range the models
// meet and beyond: |got − want| <= abs + rel·|want|.
func TestAccuracy(t *testing.T) {
	xs := grid(-100, 100, 0.00731, -1e30, 1e30, 0, 0.25, -0.25, 9, -9)
	sigmoidRef := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for _, tc := range []struct {
		name     string
		f        func([]float32)
		ref      func(float64) float64
		rel, abs float64
		cond     func(x float64) float64 // multiplies rel; nil: 1
	}{
		{"SigmoidSlice", SigmoidSlice, sigmoidRef, 4e-7, 1e-37, nil},
		{"sigmoidGo", sigmoidGo, sigmoidRef, 4e-7, 1e-37, nil},
		{"TanhSlice", TanhSlice, math.Tanh, 4e-7, 1e-7, nil},
		{"tanhGo", tanhGo, math.Tanh, 4e-7, 1e-7, nil},
		// GELU's relative error stays small even where the float64
		// tanh form's 1 + tanh u cancels (x near −5 and below). There the
		// float32 rounding of 2u (relative 1e-7) becomes a relative error
		// of |2u|·1e-7 in e^(−2u), hence geluCond; below x ≈ −10, where
		// GELU is under 1e-36, it is 0.
		{"GELU", unary(GELU), geluRef, 1e-6, 1e-35, geluCond},
		{"geluGo", unary(geluGo), geluRef, 1e-6, 1e-35, geluCond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := append([]float32(nil), xs...)
			tc.f(got)
			worst := 0.0
			for i, x := range xs {
				want := tc.ref(float64(x))
				if math.IsNaN(want) { // GELU(±1e30) overflows x³ in float64 too
					continue
				}
				rel := tc.rel
				if tc.cond != nil {
					rel *= tc.cond(float64(x))
				}
				err := math.Abs(float64(got[i]) - want)
				if err > tc.abs+rel*math.Abs(want) {
					t.Fatalf("%s(%g) = %g, want %g", tc.name, x, got[i], want)
				}
				if math.Abs(want) > 1e-30 {
					worst = max(worst, err/math.Abs(want))
				}
			}
			t.Logf("worst relative error %.3g", worst)
		})
	}
}

// TestGELUGrad checks the derivative against float64 and that far tails
// give exactly 0 or dy rather than x³ times a clamped exponential.
func TestGELUGrad(t *testing.T) {
	xs := grid(-60, 60, 0.00317, 0, -1e30, 1e30, -1e5, 1e5)
	dy := make([]float32, len(xs))
	for i := range dy {
		dy[i] = float32(i%7) - 3
	}
	for _, tc := range []struct {
		name string
		f    func(x, dy, dx []float32)
	}{{"GELUGrad", GELUGrad}, {"geluGradGo", geluGradGo}} {
		t.Run(tc.name, func(t *testing.T) {
			dx := make([]float32, len(xs))
			tc.f(xs, dy, dx)
			for i, x := range xs {
				want := float64(dy[i]) * geluGradRef(float64(x))
				if math.Abs(float64(x)) >= 1e5 {
					want = float64(dy[i]) * math.Max(0, math.Copysign(1, float64(x)))
				}
				if err := math.Abs(float64(dx[i]) - want); err > 1e-6*math.Abs(float64(dy[i]))+1e-6*math.Abs(want) {
					t.Fatalf("%s(%g, dy %g) = %g, want %g", tc.name, x, dy[i], dx[i], want)
				}
			}
		})
	}
}

// TestGELUFiniteDifference checks GELUGrad against central differences of
// GELU itself, evaluated in float64 from the float32 function.
func TestGELUFiniteDifference(t *testing.T) {
	const h = 1e-2
	for _, x := range []float32{-6, -3, -1.5, -0.5, -0.01, 0, 0.3, 1, 2.5, 7} {
		t.Run("", func(t *testing.T) {
			in := []float32{x - h, x + h}
			out := make([]float32, 2)
			GELU(in, out)
			fd := (float64(out[1]) - float64(out[0])) / (float64(in[1]) - float64(in[0]))
			dx := make([]float32, 1)
			GELUGrad([]float32{x}, []float32{1}, dx)
			if math.Abs(float64(dx[0])-fd) > 1e-3 {
				t.Errorf("GELU'(%g) = %g, finite difference %g", x, dx[0], fd)
			}
		})
	}
}

// TestExpSum compares the max and Σ e^(x−max) with float64 sums over rows
// of the sizes scoring meets (a 50,257-id vocabulary) and odd tails.
func TestExpSum(t *testing.T) {
	for _, n := range []int{1, 7, 31, 32, 33, 255, 256, 257, 1000, 50257} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32((i*7919)%1013)/40 - 12 // [-12, 13.3)
		}
		x[n/2] = 20 // the maximum, away from the ends
		if n == 1 {
			x[0] = -3
		}
		for _, tc := range []struct {
			name string
			f    func([]float32) (float32, float64)
		}{{"ExpSum", ExpSum}, {"expSumGo", expSumGo}} {
			t.Run(tc.name, func(t *testing.T) {
				mx, s := tc.f(x)
				wmx := x[0]
				var want float64
				for _, v := range x {
					wmx = max(wmx, v)
				}
				for _, v := range x {
					want += math.Exp(float64(v - wmx))
				}
				if mx != wmx {
					t.Fatalf("n %d: max %g, want %g", n, mx, wmx)
				}
				if math.Abs(s-want) > 1e-6*want {
					t.Fatalf("n %d: sum %.9g, want %.9g", n, s, want)
				}
			})
		}
	}
	t.Run("far below the max", func(t *testing.T) {
		x := make([]float32, 100)
		for i := range x {
			x[i] = -1e30
		}
		x[40] = 5
		if mx, s := ExpSum(x); mx != 5 || math.Abs(s-1) > 1e-30 {
			t.Fatalf("max %g sum %g, want 5 and 1", mx, s)
		}
	})
}

// TestExpShift: e^(x−c) within a few float32 ulp of float64's, in C and
// in Go, across the range a softmax meets (down to the clamp at −87).
func TestExpShift(t *testing.T) {
	for _, n := range []int{1, 7, 33, 257, 1000} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32((i*7919)%1013)/10 - 90 // [-90, 11.3)
		}
		for _, tc := range []struct {
			name string
			f    func([]float32, float32, []float32)
		}{{"ExpShift", ExpShift}, {"expShiftGo", expShiftGo}} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, n), func(t *testing.T) {
				const c = 1.5
				y := make([]float32, n)
				tc.f(x, c, y)
				for i, v := range x {
					want := math.Exp(math.Max(float64(v-c), -87))
					if d := math.Abs(float64(y[i]) - want); d > 4e-7*want {
						t.Fatalf("e^(%g-%g) = %g, want %g", v, c, y[i], want)
					}
				}
			})
		}
	}
}

// TestScalar checks the scalar forms at the ends of their ranges.
func TestScalar(t *testing.T) {
	for _, x := range []float32{-1e30, -100, 100, 1e30} {
		if s := Tanh(x); s != float32(math.Copysign(1, float64(x))) {
			t.Errorf("Tanh(%g) = %g", x, s)
		}
		if s, want := Sigmoid(x), float32(math.Max(0, math.Copysign(1, float64(x)))); math.Abs(float64(s-want)) > 1e-37 {
			t.Errorf("Sigmoid(%g) = %g", x, s)
		}
	}
	if s := Tanh(float32(math.Copysign(0, -1))); s != 0 || !math.Signbit(float64(s)) {
		t.Errorf("Tanh(-0) = %g", s)
	}
}

// TestLSTMGates checks the gate blocks of rows [4H]: σ, σ, tanh, σ.
func TestLSTMGates(t *testing.T) {
	const H = 40
	z := make([]float32, 3*4*H) // [3, 4H]
	for i := range z {
		z[i] = float32(i%17)/4 - 2
	}
	want := append([]float32(nil), z...)
	LSTMGates(z, H)
	for i, v := range want {
		w := Sigmoid(v)
		if i%(4*H)/H == 2 {
			w = Tanh(v)
		}
		if math.Abs(float64(z[i]-w)) > 2e-7 {
			t.Fatalf("LSTMGates: z[%d] = %g, want %g", i, z[i], w)
		}
	}
}

func benchInput() []float32 {
	x := make([]float32, 4096)
	for j := range x {
		x[j] = float32(j%97)/10 - 5
	}
	return x
}

func BenchmarkSigmoidSlice(b *testing.B) {
	x := benchInput()
	y := make([]float32, len(x))
	for i := 0; i < b.N; i++ {
		copy(y, x)
		SigmoidSlice(y)
	}
}

func BenchmarkTanhSlice(b *testing.B) {
	x := benchInput()
	y := make([]float32, len(x))
	for i := 0; i < b.N; i++ {
		copy(y, x)
		TanhSlice(y)
	}
}

func BenchmarkGELU(b *testing.B) {
	x := benchInput()
	y := make([]float32, len(x))
	for i := 0; i < b.N; i++ {
		GELU(x, y)
	}
}

func BenchmarkExpSum(b *testing.B) {
	x := make([]float32, 50257)
	for j := range x {
		x[j] = float32(j%997)/50 - 10
	}
	for i := 0; i < b.N; i++ {
		ExpSum(x)
	}
}

// TestDotAxpyScoreBack compares the fused loops with float64 arithmetic
// at lengths around the vector width and the C threshold.
func TestDotAxpyScoreBack(t *testing.T) {
	for _, n := range []int{1, 7, 8, 31, 32, 33, 256, 517} {
		x, y, u, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(i%11)/5 - 1
			y[i] = float32(i%7)/3 - 1
			u[i] = float32(i%19)/10 - 0.95 // tanh values in (−1, 1)
			v[i] = float32(i%5) - 2
		}
		const a, de = 0.375, -1.25
		t.Run("DotAxpy", func(t *testing.T) {
			z := make([]float32, n)
			for i := range z {
				z[i] = 0.5
			}
			d := DotAxpy(x, y, a, z)
			var want float64
			for i := range x {
				want += float64(x[i]) * float64(y[i])
				if w := 0.5 + a*float64(x[i]); math.Abs(float64(z[i])-w) > 1e-6 {
					t.Fatalf("n %d: z[%d] = %g, want %g", n, i, z[i], w)
				}
			}
			if math.Abs(float64(d)-want) > 1e-5*float64(n) {
				t.Fatalf("n %d: dot %g, want %g", n, d, want)
			}
		})
		t.Run("ScoreBack", func(t *testing.T) {
			dv, dz1, dz2 := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range dz2 {
				dz2[i] = 1
			}
			ScoreBack(de, u, v, dv, dz1, dz2)
			for i := range u {
				wv := de * float64(u[i])
				wz := de * float64(v[i]) * (1 - float64(u[i])*float64(u[i]))
				if math.Abs(float64(dv[i])-wv) > 1e-6 || math.Abs(float64(dz1[i])-wz) > 1e-6 || math.Abs(float64(dz2[i])-1-wz) > 1e-6 {
					t.Fatalf("n %d, i %d: dv %g dz1 %g dz2 %g, want %g %g %g", n, i, dv[i], dz1[i], dz2[i], wv, wz, 1+wz)
				}
			}
		})
	}
}
