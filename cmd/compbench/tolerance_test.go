package main

import (
	"math"
	"testing"
)

// fp32Unit is the unit roundoff of float32, u = 2^-24.
const fp32Unit = 0x1p-24

// gammaN is Higham's γ_n = n·u/(1 − n·u) (Accuracy and Stability of
// Numerical Algorithms, §3.1): a float32 sum or dot product of n terms
// computed in any order lies within γ_n·Σ|terms| of the exact value, so
// two orders (a BLAS kernel with FMA against Go loops, say) differ by at
// most 2·γ_n relative to Σ|terms|.
func gammaN(n int) float64 {
	nu := float64(n) * fp32Unit
	return nu / (1 - nu)
}

// crossTol is the relative tolerance, against each tensor's largest
// magnitude, between two FP32 implementations of a training run that
// differ only in summation order, after steps optimizer steps whose
// longest sum has n terms. Each step's gradients differ by at most 2·γ_n
// of their scale; Adam's update is invariant to the gradient's scale, so
// that relative difference moves a weight by at most about 2·γ_n of the
// step, which is below the weights' scale; the differences of successive
// steps add up, hence 2·steps·γ_n. The bound assumes gradients that are
// not dominated by cancellation: a weight whose gradient is a sum of
// cancelling terms has updates made of rounding noise and is skipped by
// name where the tests compare weights (lstmNoise).
func crossTol(n, steps int) float64 {
	return 2 * float64(steps) * gammaN(n)
}

func TestCrossTol(t *testing.T) {
	cases := []struct {
		name     string
		n, steps int
		want     float64
	}{
		{"one term one step", 1, 1, 2 * fp32Unit / (1 - fp32Unit)},
		{"lstm tests", lstmReduction, lstmSteps, 20 * 1000 * fp32Unit / (1 - 1000*fp32Unit)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := crossTol(c.n, c.steps); math.Abs(got-c.want) > 1e-15 {
				t.Fatalf("crossTol(%d, %d) = %g, want %g", c.n, c.steps, got, c.want)
			}
		})
	}
	// The bound must stay well below what a real bug moves (a weight
	// off by a whole step of lr 1e-2 on weights of scale about 0.3).
	if tol := crossTol(lstmReduction, lstmSteps); tol > 3e-3 {
		t.Fatalf("lstm tolerance %g is too loose to catch a missed update", tol)
	}
}
