package train

import (
	"fmt"

	"compgen/engine"
	"compgen/models"
)

// EngineSupported says why cfg's model cannot run on package engine's
// executor, or nil when it can. Only the Transformer family compiles to
// engine programs: the LSTM models are hand-written passes, not Gorgonia
// graphs, and the double I/O encoder's extra inputs are not part of the
// graph views the engine reads.
func EngineSupported(cfg models.Config) error {
	switch {
	case models.IsLSTM(cfg.Variant):
		return fmt.Errorf("model %s has no engine (GPU) path yet: the LSTM models run on the CPU only (use --device cpu)", cfg.Variant)
	case cfg.DoubleIO():
		return fmt.Errorf("--io-encoder double has no engine (GPU) path yet (use --device cpu)")
	}
	return nil
}

// newEngineTrainer uploads m's weights and opt's moments and step count
// to be. Called after the weights are final (initialised, loaded or
// resumed), since the backend keeps its own copy from then on.
func newEngineTrainer(m models.Seq2Seq, cfg models.Config, be engine.Backend, opt *Adam) (*models.EngineModel, error) {
	if err := EngineSupported(cfg); err != nil {
		return nil, err
	}
	tf, ok := m.(*models.Transformer)
	if !ok {
		return nil, fmt.Errorf("model %s (%T) has no engine path", cfg.Variant, m)
	}
	em, err := models.NewEngineTrainer(tf, be, opt.Cfg)
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
func syncHost(em *models.EngineModel, opt *Adam) error {
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
	if err := EngineSupported(r.Config.Model); err != nil {
		return nil, err
	}
	tf, ok := r.Model.(*models.Transformer)
	if !ok {
		return nil, fmt.Errorf("model %s (%T) has no engine path", r.Config.Model.Variant, r.Model)
	}
	em, err := models.NewEngineModel(tf, be)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", be.Name(), err)
	}
	r.Model = em
	return func() { em.Close(); r.Model = tf }, nil
}
