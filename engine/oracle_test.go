package engine_test

import (
	"gorgonia.org/tensor"

	"compbench/models"
	"compbench/ops"
)

// adamCfg is train's default Adam (Vaswani et al.'s constants).
var adamCfg = ops.AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9}

// oracleAdam is the host optimizer the engine's is checked against:
// ops.ClipGlobalNorm and ops.AdamStep over the model's host gradients,
// after a TapeMachine Loss. No command runs it.
type oracleAdam struct {
	p           *models.Params
	m, v, grads []*tensor.Dense
	t           int
}

func newOracleAdam(p *models.Params) *oracleAdam {
	o := &oracleAdam{p: p}
	for i := range p.Names {
		n := len(p.Data(i))
		o.m = append(o.m, tensor.New(tensor.WithShape(n), tensor.WithBacking(make([]float32, n))))
		o.v = append(o.v, tensor.New(tensor.WithShape(n), tensor.WithBacking(make([]float32, n))))
		o.grads = append(o.grads, tensor.New(tensor.WithShape(n), tensor.WithBacking(p.Grads[i])))
	}
	return o
}

// ClipGlobalNorm clips the gradients to global norm limit (0: none) and
// returns the norm before clipping.
func (o *oracleAdam) ClipGlobalNorm(limit float64) float64 {
	return float64(ops.ClipGlobalNorm(o.grads, float32(limit)))
}

// Step applies one bias-corrected Adam update with learning rate lr.
func (o *oracleAdam) Step(lr float64) error {
	o.t++
	for i := range o.p.Names {
		w := tensor.New(tensor.WithShape(len(o.p.Data(i))), tensor.WithBacking(o.p.Data(i)))
		if err := ops.AdamStep(w, o.grads[i], o.m[i], o.v[i], float32(lr), o.t, adamCfg); err != nil {
			return err
		}
	}
	return nil
}
