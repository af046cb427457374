package train

import (
	"compbench/models"
	"compbench/ops"
)

// Adam is the optimizer's state on the host, as checkpoints hold it: the
// first and second moment estimates, one per parameter, and the update
// count. The updates themselves run on the backend (engine.Adam,
// bias-corrected Adam, Kingma & Ba 2015).
type Adam struct {
	// Cfg holds the constants.
	Cfg ops.AdamConfig
	// M and V are the moments, aligned with the model's parameters.
	M, V [][]float32
	// T is the number of updates applied.
	T int
}

// NewAdam makes zero moments for p.
func NewAdam(p *models.Params, beta1, beta2, eps, decay float64) *Adam {
	a := &Adam{Cfg: ops.AdamConfig{Beta1: float32(beta1), Beta2: float32(beta2), Eps: float32(eps), WeightDecay: float32(decay)}}
	for i := range p.Names {
		n := len(p.Data(i))
		a.M = append(a.M, make([]float32, n))
		a.V = append(a.V, make([]float32, n))
	}
	return a
}
