package models

import (
	"compbench/engine"
	"compbench/ops"
)

// Model is a model definition: its configuration and host weights. It
// does not compute; Bind puts it on a backend, where package engine runs
// it. Every device, the CPU included, runs the same Runner.
type Model interface {
	// Params are the host weights (what checkpoints read and write).
	Params() *Params
	// Bind uploads the weights to be. With opt the Runner also trains:
	// it holds zero Adam moments of those constants.
	Bind(be engine.Backend, opt *ops.AdamConfig) (Runner, error)
}

// Runner is a model bound to a backend: evaluation and decoding
// (Seq2Seq) and, when bound with an optimizer, training steps. The host
// weights are stale until Download.
type Runner interface {
	Seq2Seq
	// Step is one training step on bt: the loss with label smoothing eps
	// and step's dropout masks, its gradients, clipping to global norm
	// clip (0: none) and an Adam update with learning rate lr. It returns
	// the loss and the gradient norm before clipping, and leaves the
	// weights alone when either is not finite.
	Step(bt *Batch, eps float64, step int, clip, lr float64) (loss, norm float64, err error)
	// Adam holds the moments on the backend (nil when bound without an
	// optimizer).
	Adam() *engine.Adam
	// Download copies the backend's weights into Params.
	Download() error
	// Close frees the backend memory.
	Close()
}
