package train

import (
	"fmt"

	"compbench/engine"
	"compbench/models"
)

// engineTrainer is a model training on a backend: models.EngineModel
// (Transformers) or models.EngineLSTM.
type engineTrainer interface {
	models.Seq2Seq
	// Step is one training step: loss, clipping and Adam on the backend.
	Step(bt *models.Batch, eps float64, step int, clip, lr float64) (loss, norm float64, err error)
	// Adam holds the moments on the backend.
	Adam() *engine.Adam
	// Download copies the weights into the host model.
	Download() error
	// Close frees the backend memory.
	Close()
}

// newEngineTrainer uploads m's weights and opt's moments and step count
// to be. Called after the weights are final (initialised, loaded or
// resumed), since the backend keeps its own copy from then on.
func newEngineTrainer(m models.Seq2Seq, cfg models.Config, be engine.Backend, opt *Adam) (engineTrainer, error) {
	var em engineTrainer
	var err error
	switch mm := m.(type) {
	case *models.Transformer:
		em, err = models.NewEngineTrainer(mm, be, opt.Cfg)
	case *models.LSTM:
		em, err = models.NewEngineLSTMTrainer(mm, be, opt.Cfg)
	default:
		return nil, fmt.Errorf("model %s (%T) has no engine path", cfg.Variant, m)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", be.Name(), err)
	}
	if err := em.Adam().Load(opt.M, opt.V, opt.T); err != nil {
		em.Close()
		return nil, fmt.Errorf("%s: optimizer state: %w", be.Name(), err)
	}
	return em, nil
}

// syncHost copies the backend's weights, Adam moments and step count into
// the host model and opt, so a checkpoint saves what the backend trained.
func syncHost(em engineTrainer, opt *Adam) error {
	if err := em.Download(); err != nil {
		return fmt.Errorf("download weights: %w", err)
	}
	if err := em.Adam().Download(opt.M, opt.V); err != nil {
		return fmt.Errorf("download optimizer state: %w", err)
	}
	opt.T = em.Adam().T
	return nil
}

// UseBackend makes r decode and evaluate on be (package engine's executor)
// instead of Gorgonia's TapeMachine. The returned function frees the
// backend memory; call it when done with r.Model.
func (r *Run) UseBackend(be engine.Backend) (release func(), err error) {
	switch m := r.Model.(type) {
	case *models.Transformer:
		em, err := models.NewEngineModel(m, be)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", be.Name(), err)
		}
		r.Model = em
		return func() { em.Close(); r.Model = m }, nil
	case *models.LSTM:
		em, err := models.NewEngineLSTM(m, be)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", be.Name(), err)
		}
		r.Model = em
		return func() { em.Close(); r.Model = m }, nil
	}
	return nil, fmt.Errorf("model %s (%T) has no engine path", r.Config.Model.Variant, r.Model)
}
