package ops

import (
	"fmt"
	"math"

	"compbench/kernels"

	"gorgonia.org/tensor"
)

// ClipGlobalNorm scales all gradients in place by max/norm when their global
// L2 norm (over all tensors together, as Pascanu et al. 2013 and PyTorch's
// clip_grad_norm_) exceeds max, and returns the norm before clipping. A max
// of 0 or less only measures. A NaN or Inf norm is returned unchanged and the
// gradients are left alone, so the caller can stop on it.
func ClipGlobalNorm(grads []*tensor.Dense, max float32) float32 {
	sq := []float64{0}
	for _, g := range grads {
		d := g.Float32s()
		kernels.SumSquaresRef(len(d), d, sq)
	}
	for _, g := range grads {
		d := g.Float32s()
		kernels.ClipByNormRef(len(d), sq, max, d)
	}
	return float32(math.Sqrt(sq[0]))
}

// AdamConfig holds Adam's constants (Kingma & Ba 2015).
type AdamConfig struct {
	// Beta1 is the decay of the first-moment average (Shi et al.: 0.9).
	Beta1 float32
	// Beta2 is the decay of the second-moment average (Shi et al.: 0.98).
	Beta2 float32
	// Eps is added to the root of the second moment (Shi et al.: 1e-9).
	Eps float32
	// WeightDecay is decoupled weight decay (AdamW, Loshchilov & Hutter
	// 2019): p -= lr * WeightDecay * p each step. 0 gives plain Adam.
	WeightDecay float32
}

// DefaultAdamConfig returns the settings of Shi et al. (App. C) and Vaswani
// et al. (2017): beta (0.9, 0.98), eps 1e-9, no weight decay.
func DefaultAdamConfig() AdamConfig {
	return AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9}
}

// Validate reports constants outside their meaningful ranges.
func (c AdamConfig) Validate() error {
	switch {
	case c.Beta1 < 0 || c.Beta1 >= 1:
		return fmt.Errorf("adam: beta1 %g not in [0,1)", c.Beta1)
	case c.Beta2 < 0 || c.Beta2 >= 1:
		return fmt.Errorf("adam: beta2 %g not in [0,1)", c.Beta2)
	case c.Eps < 0:
		return fmt.Errorf("adam: negative eps %g", c.Eps)
	case c.WeightDecay < 0:
		return fmt.Errorf("adam: negative weight decay %g", c.WeightDecay)
	}
	return nil
}

// AdamStep applies one bias-corrected Adam update to param in a single pass
// over param, grad and the moment buffers m and v (same shapes, zero at step
// 1). step counts from 1.
//
//	m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//	p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
func AdamStep(param, grad, m, v *tensor.Dense, lr float32, step int, c AdamConfig) error {
	p, g, md, vd := param.Float32s(), grad.Float32s(), m.Float32s(), v.Float32s()
	if len(g) != len(p) || len(md) != len(p) || len(vd) != len(p) {
		return fmt.Errorf("adam: sizes differ: param %d, grad %d, m %d, v %d", len(p), len(g), len(md), len(vd))
	}
	if step < 1 {
		return fmt.Errorf("adam: step %d, want >= 1", step)
	}
	// kernels.AdamRef folds the bias corrections into the step size and
	// eps, keeping the inner loop to one sqrt and one division per element.
	p32 := kernels.AdamParams{Beta1: c.Beta1, Beta2: c.Beta2, Eps: c.Eps, WeightDecay: c.WeightDecay}
	parallel(len(p), len(p), func(lo, hi int) {
		kernels.AdamRef(hi-lo, p32, lr, step, p[lo:hi], g[lo:hi], md[lo:hi], vd[lo:hi])
	})
	return nil
}
