package engine

import "fmt"

// Recurrent kernels: what the LSTM models' engine path
// (models/lstm/engine_lstm*.go) needs beyond Backend. The backends implement
// them in recurrent_cpu.go and recurrent_cuda.go; like DecodeBackend they
// are a separate interface, so that Backend stays the graph executor's.

// RecurrentBackend is a Backend with the kernels of package kernels'
// ref_lstm.go: the LSTM cell, additive attention, the copy mixture's loss
// and strided copies. Int32 buffers (srcLen, tgt) come from AllocInt.
type RecurrentBackend interface {
	Backend
	// LSTMGates is kernels.LSTMGatesRef; mask may be nil (every row real).
	LSTMGates(n, h int, z, hPrev, cPrev, mask, hOut, cOut, tanhC Buf) error
	// LSTMGatesBack is kernels.LSTMGatesBackRef; mask may be nil.
	LSTMGatesBack(n, h int, gates, tanhC, cPrev, mask, dhOut, dhNext, dcNext, dz, dhPrev, dcPrev Buf) error
	// AddAttn is kernels.AddAttnRef with srcLen an int32 buffer.
	AddAttn(r, s, h, nb int, q, keys, va, srcLen, att Buf) error
	// AddAttnBack is kernels.AddAttnBackRef.
	AddAttnBack(r, s, h, nb int, q, keys, va, srcLen, de, dq, dkeys, dvaPart Buf) error
	// CopyLoss is kernels.CopyLossRef with tgt an int32 buffer.
	CopyLoss(r, v, s, n int, ignore int32, logits, zg, att, match, tgt, prob, dLogits, dZg, dAtt Buf) error
	// Copy2D is kernels.Copy2DRef; src and dst are views at the blocks'
	// first elements.
	Copy2D(rows, cols int, src Buf, ldSrc int, dst Buf, ldDst int) error
	// Fill is kernels.FillRef.
	Fill(n int, v float32, y Buf) error
}

// Recurrent returns b's recurrent kernels, or an error naming the backend
// when it has none.
func Recurrent(b Backend) (RecurrentBackend, error) {
	r, ok := b.(RecurrentBackend)
	if !ok {
		return nil, fmt.Errorf("engine: backend %s has no LSTM kernels", b.Name())
	}
	return r, nil
}

// compile-time checks that the CPU backend has them (the CUDA backend's
// check is in recurrent_cuda.go).
var _ RecurrentBackend = (*CPU)(nil)
