package models

import (
	"sync/atomic"

	G "gorgonia.org/gorgonia"

	"compbench/ops"
)

// GraphView exposes one of a model's compiled Gorgonia graphs (the
// Transformer's, GPT-2's) to an external executor (package engine): its
// root, gradients and input nodes, with the inputs' values set for one
// batch.
type GraphView struct {
	// Out is the loss scalar (training graphs) or the logits [B*T, V]
	// (decoding graphs).
	Out *G.Node
	// Grads are the loss gradients of the parameters ParamIdx (training
	// graphs only).
	Grads    []*G.Node
	ParamIdx []int
	// Inputs are the per-batch input nodes; Values their values for the
	// batch last set (the tensors the graph is bound to). The sinusoidal
	// position tables are not among them: they are fixed per graph, so an
	// executor treats them as weights, uploaded once.
	Inputs []*G.Node
	Values []G.Value
	// Drop is the graph's dropout source (nil without dropout), at the
	// batch's step.
	Drop *ops.DropoutSource
	// Key identifies the graph: views with equal keys share nodes.
	Key any
}

// DefaultGraphBudget is the default GraphBudget: 2 GiB of estimated graph
// memory. The Go heap may grow to about twice its live size between
// collections, so a process's peak lies above it.
const DefaultGraphBudget int64 = 2 << 30

// graphBudget is the GraphBudget of models made from now on; 0 stands
// for DefaultGraphBudget. Process-wide because models are built deep
// inside training, resuming, fine-tuning and loading alike, and the budget
// is a memory setting of the process, not part of a run's config.
var graphBudget atomic.Int64

// SetGraphBudget sets the GraphBudget of models made from now on (bytes;
// 0: DefaultGraphBudget, < 0: no byte bound) and returns the previous
// setting. Models already made keep theirs.
func SetGraphBudget(bytes int64) (previous int64) {
	return graphBudget.Swap(bytes)
}

// GraphBudget is the GraphBudget a model made now starts with
// (SetGraphBudget): the Transformer's and GPT-2's caches of compiled
// graphs and programs.
func GraphBudget() int64 {
	if b := graphBudget.Load(); b != 0 {
		return b
	}
	return DefaultGraphBudget
}
