package transformer

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"compbench/models"
)

func (c *compiled) view() *models.GraphView {
	v := &models.GraphView{Out: c.out, Grads: c.grads, ParamIdx: c.gradIdx, Drop: c.drop, Key: c}
	in := &c.in
	for _, n := range []*G.Node{in.src, in.decIn, in.tgt, in.encBias, in.decBias, in.crossBias, in.mem,
		in.ioIn, in.ioOut, in.inBias, in.outBias, in.outCrossBias, in.encReal, in.decReal} {
		if n != nil {
			v.Inputs = append(v.Inputs, n)
			v.Values = append(v.Values, in.vals[n])
		}
	}
	return v
}

// TrainView returns the training graph Loss(bt, true, eps, step) runs, with
// its inputs set for bt and its dropout source at step.
func (m *Model) TrainView(bt *models.Batch, eps float64, step int) (*models.GraphView, error) {
	c, err := m.batchGraph(kindTrain, bt, eps)
	if err != nil {
		return nil, err
	}
	copy(c.in.vals[c.in.tgt].Data().([]int), bt.Tgt)
	if c.drop != nil {
		c.drop.SetStep(uint64(step))
	}
	return c.view(), nil
}

// DecodeView returns the decoding graph Logits(mem, decIn, T, pos) runs,
// with its inputs set; Out holds the logits of every position.
func (m *Model) DecodeView(mem *models.Memory, decIn []int, T, pos int) (*models.GraphView, error) {
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
	if len(mem.Data) != len(c.in.vals[c.in.mem].Data().([]float32)) {
		return nil, fmt.Errorf("decode view: memory of %d floats, graph wants %d", len(mem.Data), len(c.in.vals[c.in.mem].Data().([]float32)))
	}
	copy(c.in.vals[c.in.mem].Data().([]float32), mem.Data)
	return c.view(), nil
}

// LossView returns the evaluation graph Loss(bt, false, eps, 0) runs (no
// dropout, no gradients), with its inputs set for bt.
func (m *Model) LossView(bt *models.Batch, eps float64) (*models.GraphView, error) {
	c, err := m.batchGraph(kindLoss, bt, eps)
	if err != nil {
		return nil, err
	}
	copy(c.in.vals[c.in.tgt].Data().([]int), bt.Tgt)
	return c.view(), nil
}

// EncodeView returns the encoder graph Encode(src, B, S) runs, with its
// inputs set; Out is the memory [B*S, D]. It also returns the source
// lengths Encode puts in its Memory.
func (m *Model) EncodeView(src []int, B, S int) (*models.GraphView, []int, error) {
	if m.Cfg.DoubleIO() {
		return nil, nil, fmt.Errorf("encode view: the double I/O encoder's memory is assembled from its examples (Engine.Encode)")
	}
	c, err := m.graph(graphKey{kind: kindEncode, b: B, s: S})
	if err != nil {
		return nil, nil, err
	}
	srcLen := make([]int, B)
	for b := 0; b < B; b++ {
		for j := 0; j < S && src[b*S+j] != models.PadID; j++ {
			srcLen[b] = j + 1
		}
	}
	if err := m.setInputs(c, src, nil, srcLen, nil); err != nil {
		return nil, nil, err
	}
	return c.view(), srcLen, nil
}

// encodeIOView is EncodeView for the double I/O encoder: Out is the
// encoded outputs [B*E*So, D], which ioMemory assembles into the memory.
func (m *Model) encodeIOView(src []int, B, S int) (*models.GraphView, *ioBatch, error) {
	c, ib, err := m.ioEncodeGraph(src, B, S)
	if err != nil {
		return nil, nil, err
	}
	return c.view(), ib, nil
}
