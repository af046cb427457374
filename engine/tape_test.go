package engine_test

import (
	"fmt"
	"math"
	"runtime"

	G "gorgonia.org/gorgonia"

	"compbench/models"
	"compbench/models/transformer"
)

// tapeModel is the oracle the engine is checked against: a Transformer's
// graphs (its GraphViews) run on Gorgonia's TapeMachine, as
// models.Seq2Seq. Training losses leave their gradients in Params().Grads.
type tapeModel struct{ *transformer.Model }

// runTape runs v's graph on a TapeMachine of its own, with v's inputs; the
// nodes keep their values. The machine is closed and its finalizer
// cleared, so it does not keep the graph alive.
func runTape(v *models.GraphView) error {
	for k, n := range v.Inputs {
		if err := G.Let(n, v.Values[k]); err != nil {
			return err
		}
	}
	vm := G.NewTapeMachine(v.Out.Graph())
	defer func() {
		vm.Close()
		runtime.SetFinalizer(vm, nil)
	}()
	return vm.RunAll()
}

func (m tapeModel) Loss(bt *models.Batch, train bool, eps float64, step int) (float64, error) {
	var v *models.GraphView
	var err error
	if train {
		v, err = m.TrainView(bt, eps, step)
	} else {
		v, err = m.LossView(bt, eps)
	}
	if err != nil {
		return 0, err
	}
	if err := runTape(v); err != nil {
		return 0, fmt.Errorf("forward: %w", err)
	}
	loss := math.NaN()
	switch x := v.Out.Value().Data().(type) {
	case float32:
		loss = float64(x)
	case []float32:
		loss = float64(x[0])
	}
	if train {
		p := m.Params()
		p.ZeroGrads()
		for k, g := range v.Grads {
			gv, ok := g.Value().Data().([]float32)
			if !ok {
				return 0, fmt.Errorf("gradient of %s is not float32", p.Names[v.ParamIdx[k]])
			}
			copy(p.Grads[v.ParamIdx[k]], gv)
		}
	}
	return loss, nil
}

func (m tapeModel) Encode(src []int, B, S int) (*models.Memory, error) {
	v, srcLen, err := m.EncodeView(src, B, S)
	if err != nil {
		return nil, err
	}
	if err := runTape(v); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	out := append([]float32(nil), v.Out.Value().Data().([]float32)...)
	return &models.Memory{B: B, S: S, Data: out, SrcLen: srcLen}, nil
}

func (m tapeModel) Logits(mem *models.Memory, decIn []int, T, pos int) ([]float32, error) {
	v, err := m.DecodeView(mem, decIn, T, pos)
	if err != nil {
		return nil, err
	}
	if err := runTape(v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	all := v.Out.Value().Data().([]float32) // [B*T, V]
	V := m.Cfg.TgtVocab
	out := make([]float32, mem.B*V)
	for b := 0; b < mem.B; b++ {
		copy(out[b*V:(b+1)*V], all[(b*T+pos)*V:(b*T+pos+1)*V])
	}
	return out, nil
}
