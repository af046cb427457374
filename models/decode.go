package models

// Stepper is implemented by models that decode incrementally.
type Stepper interface {
	// StartDecode prepares decoding of mem's rows for up to maxLen steps.
	StartDecode(mem *Memory, maxLen int) (DecodeState, error)
}

// DecodeState advances a batch of decodes by one position.
type DecodeState interface {
	// Step feeds each row's token at the current position (StartID first)
	// and returns the next-token logits [B, V].
	Step(tokens []int) ([]float32, error)
	// Reorder makes row i continue the history of row from[i] (beam
	// search).
	Reorder(from []int)
}

// Picker is a DecodeState that chooses tokens where the logits are, so that
// only the choices leave the device.
type Picker interface {
	DecodeState
	// StepGreedy is Step followed by the greedy choice per row: the id of
	// the largest log-probability (PAD and UNK skipped; starting from EOS,
	// the first id strictly above the best so far, kernels.ArgmaxRef), and
	// that log-probability.
	StepGreedy(tokens []int) (ids []int, logp []float64, err error)
	// StepTopK is Step followed by the k best ids per row by
	// log-probability (PAD and UNK skipped, ties in increasing id order;
	// id -1 pads rows with fewer candidates) and their log-probabilities,
	// both [B, k] row-major.
	StepTopK(tokens []int, k int) (ids []int, logp []float32, err error)
}
