package models

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
)

// Seq2Seq is what evaluation and decoding need from a model bound to a
// device (Runner). *Transformer implements it on Gorgonia's TapeMachine,
// which tests use as the oracle of the engine; no command runs on it.
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

// New makes the model cfg.Variant names, with weights drawn from seed;
// v is the run's vocabulary (the copying model needs it). Bind puts it on
// a device.
func New(cfg Config, seed uint64, v *Vocab) (Model, error) {
	vr, ok := Variants[cfg.Variant]
	if !ok {
		return nil, fmt.Errorf("unknown model %q (known: %v)", cfg.Variant, VariantNames())
	}
	return families[vr.Family](cfg, seed, v)
}

// newTransformerModel is the Transformer family's constructor.
func newTransformerModel(cfg Config, seed uint64, v *Vocab) (Model, error) {
	m, err := NewTransformer(cfg, seed)
	if err == nil && cfg.DoubleIO() {
		err = m.SetIOVocab(v)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
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

// Loss implements Seq2Seq.
func (m *Transformer) Loss(bt *Batch, train bool, eps float64, step int) (float64, error) {
	kind := kindLoss
	if train {
		kind = kindTrain
	}
	c, err := m.batchGraph(kind, bt, eps)
	if err != nil {
		return 0, err
	}
	copy(c.in.vals[c.in.tgt].Data().([]int), bt.Tgt)
	if c.drop != nil {
		c.drop.SetStep(uint64(step))
	}
	if err := c.run(); err != nil {
		return 0, fmt.Errorf("forward: %w", err)
	}
	loss := float64(scalar(c.out))
	if train {
		m.p.ZeroGrads()
		for k, g := range c.grads {
			gv, ok := g.Value().Data().([]float32)
			if !ok {
				return 0, fmt.Errorf("gradient of %s is not float32", m.p.Names[c.gradIdx[k]])
			}
			copy(m.p.Grads[c.gradIdx[k]], gv)
		}
	}
	return loss, nil
}

func scalar(n *G.Node) float32 {
	switch v := n.Value().Data().(type) {
	case float32:
		return v
	case []float32:
		return v[0]
	}
	return float32(math.NaN())
}

// Encode implements Seq2Seq.
func (m *Transformer) Encode(src []int, B, S int) (*Memory, error) {
	if m.Cfg.DoubleIO() {
		return m.encodeIO(src, B, S)
	}
	c, err := m.graph(graphKey{kind: kindEncode, b: B, s: S})
	if err != nil {
		return nil, err
	}
	srcLen := make([]int, B)
	for b := 0; b < B; b++ {
		for j := 0; j < S && src[b*S+j] != PadID; j++ {
			srcLen[b] = j + 1
		}
	}
	if err := m.setInputs(c, src, nil, srcLen, nil); err != nil {
		return nil, err
	}
	if err := c.run(); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	out := append([]float32(nil), c.out.Value().Data().([]float32)...)
	return &Memory{B: B, S: S, Data: out, SrcLen: srcLen}, nil
}

// Logits implements Seq2Seq.
func (m *Transformer) Logits(mem *Memory, decIn []int, T, pos int) ([]float32, error) {
	c, err := m.graph(graphKey{kind: kindDecode, b: mem.B, s: mem.S, t: T})
	if err != nil {
		return nil, err
	}
	decLen := make([]int, mem.B)
	for b := range decLen {
		decLen[b] = pos + 1
	}
	if err := m.setInputs(c, nil, decIn, mem.SrcLen, decLen); err != nil {
		return nil, err
	}
	copy(c.in.vals[c.in.mem].Data().([]float32), mem.Data)
	if err := c.run(); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	all := c.out.Value().Data().([]float32) // [B*T, V]
	v := m.Cfg.TgtVocab
	out := make([]float32, mem.B*v)
	for b := 0; b < mem.B; b++ {
		copy(out[b*v:(b+1)*v], all[(b*T+pos)*v:(b*T+pos+1)*v])
	}
	return out, nil
}
