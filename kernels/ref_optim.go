package kernels

import "math"

// AdamParams are Adam's constants (ops.AdamConfig).
type AdamParams struct {
	// Beta1 and Beta2 are the moment decays, Eps the denominator's epsilon.
	Beta1, Beta2, Eps float32
	// WeightDecay is decoupled (AdamW) weight decay; 0 gives plain Adam.
	WeightDecay float32
}

// AdamScalars are the per-step constants AdamRef folds the bias corrections
// into, computed in float64 on the host as ops.AdamStep does.
type AdamScalars struct {
	// Alpha is lr*sqrt(1-b2^t)/(1-b1^t); Eps is eps*sqrt(1-b2^t); Decay is
	// 1 - lr*WeightDecay.
	Alpha, Eps, Decay float32
}

// AdamStepScalars returns the constants of update number step (from 1).
func AdamStepScalars(p AdamParams, lr float32, step int) AdamScalars {
	bc1 := 1 - math.Pow(float64(p.Beta1), float64(step))
	bc2 := 1 - math.Pow(float64(p.Beta2), float64(step))
	return AdamScalars{
		Alpha: float32(float64(lr) * math.Sqrt(bc2) / bc1),
		Eps:   float32(float64(p.Eps) * math.Sqrt(bc2)),
		Decay: 1 - lr*p.WeightDecay,
	}
}

// AdamRef applies ops.AdamStep to n parameters in place (param, m, v),
// bit for bit: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g²;
// p = p*Decay - Alpha*m/(sqrt(v)+Eps), sqrt in float64.
func AdamRef(n int, p AdamParams, lr float32, step int, param, grad, m, v []float32) {
	s := AdamStepScalars(p, lr, step)
	b1, b2 := p.Beta1, p.Beta2
	for i := 0; i < n; i++ {
		gi := grad[i]
		mi := b1*m[i] + (1-b1)*gi
		vi := b2*v[i] + (1-b2)*gi*gi
		m[i], v[i] = mi, vi
		param[i] = param[i]*s.Decay - s.Alpha*mi/(float32(math.Sqrt(float64(vi)))+s.Eps)
	}
}

// SumSquaresRef adds Σ x² (in float64, in order) to acc[0], so calls over
// every gradient tensor give the squared global norm of ops.ClipGlobalNorm.
// The GPU kernel sums in a tree: agreement within a relative 1e-12 in
// float64 (1e-6 after the float32 norm).
func SumSquaresRef(n int, x []float32, acc []float64) {
	s := acc[0]
	for _, v := range x[:n] {
		s += float64(v) * float64(v)
	}
	acc[0] = s
}

// ClipByNormRef scales x in place by limit/norm, norm = float32(sqrt(sq[0])),
// when limit > 0 and norm > limit and norm is finite: ops.ClipGlobalNorm's
// scaling step, read from the device-resident sum of squares.
func ClipByNormRef(n int, sq []float64, limit float32, x []float32) {
	norm := float32(math.Sqrt(sq[0]))
	if limit <= 0 || norm <= limit || math.IsNaN(float64(norm)) || math.IsInf(float64(norm), 0) {
		return
	}
	s := limit / norm
	for i := range x[:n] {
		x[i] *= s
	}
}
