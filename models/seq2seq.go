package models

// Seq2Seq is what evaluation and decoding need from a model bound to a
// device (Runner). Tests also implement it on Gorgonia's TapeMachine running
// a Transformer's graphs, the oracle of the engine; no command runs on it.
type Seq2Seq interface {
	// Params are the weights and their gradient buffers.
	Params() *Params
	// Loss returns the mean token cross-entropy of b (label smoothing eps).
	// With train it uses the dropout masks of step and leaves the gradients
	// of that mean in Params().Grads.
	Loss(b *Batch, train bool, eps float64, step int) (float64, error)
	// Encode runs the encoder over src [B*S] (PadID-padded rows).
	Encode(src []int, B, S int) (*Memory, error)
	// Logits returns next-token logits [B, V] at position pos for decoder
	// inputs decIn [B*T] (StartID first); positions after pos are ignored.
	Logits(mem *Memory, decIn []int, T, pos int) ([]float32, error)
}

// Memory is the encoder output for a decoding batch.
type Memory struct {
	// B, S are rows and padded source length.
	B, S int
	// Data [B*S, D] is the encoder output.
	Data []float32
	// SrcLen are the real source lengths per row.
	SrcLen []int
	// Src [B*S] are the source ids, for models that copy from the source
	// (nil when a model does not need them).
	Src []int
}

// Repeat gives each row k consecutive copies (for beam search).
func (m *Memory) Repeat(k int) *Memory {
	d := len(m.Data) / (m.B * m.S)
	out := &Memory{B: m.B * k, S: m.S, Data: make([]float32, 0, len(m.Data)*k), SrcLen: make([]int, 0, m.B*k)}
	for b := 0; b < m.B; b++ {
		row := m.Data[b*m.S*d : (b+1)*m.S*d]
		for r := 0; r < k; r++ {
			out.Data = append(out.Data, row...)
			out.SrcLen = append(out.SrcLen, m.SrcLen[b])
			if m.Src != nil {
				out.Src = append(out.Src, m.Src[b*m.S:(b+1)*m.S]...)
			}
		}
	}
	return out
}
