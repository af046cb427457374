package train

import (
	"gorgonia.org/tensor"

	"compbench/models"
	"compbench/ops"
)

// Adam holds the first and second moment estimates, one per parameter,
// and applies ops.AdamStep (bias-corrected Adam, Kingma & Ba 2015).
type Adam struct {
	// Cfg holds the constants.
	Cfg ops.AdamConfig
	// M and V are the moments, aligned with the model's parameters.
	M, V [][]float32
	// T is the number of updates applied.
	T int

	m, v, grads []*tensor.Dense
}

// NewAdam makes zero moments for p.
func NewAdam(p *models.Params, beta1, beta2, eps float64) *Adam {
	a := &Adam{Cfg: ops.AdamConfig{Beta1: float32(beta1), Beta2: float32(beta2), Eps: float32(eps)}}
	for i := range p.Names {
		n := len(p.Data(i))
		a.M = append(a.M, make([]float32, n))
		a.V = append(a.V, make([]float32, n))
		a.m = append(a.m, tensor.New(tensor.WithShape(n), tensor.WithBacking(a.M[i])))
		a.v = append(a.v, tensor.New(tensor.WithShape(n), tensor.WithBacking(a.V[i])))
		a.grads = append(a.grads, tensor.New(tensor.WithShape(n), tensor.WithBacking(p.Grads[i])))
	}
	return a
}

// ClipGlobalNorm scales the gradients so their global norm is at most
// limit (0: no clipping) and returns the norm before clipping.
func (a *Adam) ClipGlobalNorm(limit float64) float64 {
	return float64(ops.ClipGlobalNorm(a.grads, float32(limit)))
}

// Step applies one update with learning rate lr.
func (a *Adam) Step(p *models.Params, lr float64) error {
	a.T++
	for i := range p.Names {
		w := tensor.New(tensor.WithShape(len(p.Data(i))), tensor.WithBacking(p.Data(i)))
		if err := ops.AdamStep(w, a.grads[i], a.m[i], a.v[i], float32(lr), a.T, a.Cfg); err != nil {
			return err
		}
	}
	return nil
}
