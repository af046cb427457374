package train

import (
	"fmt"

	"compbench/engine"
	"compbench/models"
)

// defaultBackend is the CPU device: package engine's executor with its
// matrix products on BLAS. Every device runs the same executor; a nil
// Backend in the options means this one.
func defaultBackend(be engine.Backend) engine.Backend {
	if be == nil {
		return &engine.CPU{BLAS: true}
	}
	return be
}

// bindTrainer uploads m's weights and opt's moments and step count to be.
// Called after the weights are final (initialised, loaded or resumed),
// since the backend keeps its own copy from then on.
func bindTrainer(m models.Model, be engine.Backend, opt *Adam) (models.Runner, error) {
	r, err := m.Bind(be, &opt.Cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", be.Name(), err)
	}
	if err := r.Adam().Load(opt.M, opt.V, opt.T); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: optimizer state: %w", be.Name(), err)
	}
	return r, nil
}

// syncHost copies the backend's weights, Adam moments and step count into
// the host model and opt, so a checkpoint saves what the backend trained.
func syncHost(r models.Runner, opt *Adam) error {
	if err := r.Download(); err != nil {
		return fmt.Errorf("download weights: %w", err)
	}
	if err := r.Adam().Download(opt.M, opt.V); err != nil {
		return fmt.Errorf("download optimizer state: %w", err)
	}
	opt.T = r.Adam().T
	return nil
}

// UseBackend binds r's model to be (nil: the CPU), for decoding and
// evaluation: it sets r.Model. The returned function frees the backend
// memory; call it when done with r.Model.
func (r *Run) UseBackend(be engine.Backend) (release func(), err error) {
	be = defaultBackend(be)
	rn, err := r.Def.Bind(be, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", be.Name(), err)
	}
	r.Model = rn
	return func() { rn.Close(); r.Model = nil }, nil
}
