package pretrained

import (
	"fmt"

	"compbench/engine"
	"compbench/models"
	"compbench/ops"
)

// Engine is a Model bound to a backend (models.Runner): training steps,
// losses, encoding and next-token logits, all run by package engine.
type Engine struct {
	*models.Programs
	m *Model
	// steps are the decoding programs (decode.go); zero a one-element zero,
	// spare (spareN floats) and order the buffers of cache copies and
	// reorders.
	steps              map[stepKey]*stepProg
	stepClock          uint64
	zero, spare, order engine.Buf
	spareN             int
}

// Bind implements models.Model: it uploads the weights to be, and with
// opt zero Adam moments for Step.
func (m *Model) Bind(be engine.Backend, opt *ops.AdamConfig) (models.Runner, error) {
	ps, err := models.NewPrograms(be, m.Params(), opt, m.MaxGraphs)
	if err != nil {
		return nil, err
	}
	return &Engine{Programs: ps, m: m}, nil
}

// Params are the host weights, current after Download.
func (e *Engine) Params() *models.Params { return e.m.Params() }

// Step is one training step (models.Runner), with the dropout masks of
// step.
func (e *Engine) Step(bt *models.Batch, eps float64, step int, clip, lr float64) (loss, norm float64, err error) {
	v, err := e.m.batchView(bt, eps, true, step)
	if err != nil {
		return 0, 0, err
	}
	return e.TrainStep(v, clip, lr)
}

// Loss is the mean token cross-entropy of bt (models.Seq2Seq); with train
// its gradients are downloaded into Params().Grads.
func (e *Engine) Loss(bt *models.Batch, train bool, eps float64, step int) (float64, error) {
	v, err := e.m.batchView(bt, eps, train, step)
	if err != nil {
		return 0, err
	}
	var grads [][]float32
	if train {
		grads = e.m.Params().Grads
	}
	return e.Programs.Loss(v, grads)
}

// Encode runs the encoder over compbench source ids [B*S]; the memory is
// over the model's framed source (models.Seq2Seq).
func (e *Engine) Encode(src []int, B, S int) (*models.Memory, error) {
	v, S2, srcLen, err := e.m.encodeView(src, B, S)
	if err != nil {
		return nil, err
	}
	out, _, err := e.Output(v) // [B*S2, D]
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return &models.Memory{B: B, S: S2, Data: out, SrcLen: srcLen}, nil
}

// Logits are the next-token logits [B, V] at position pos of compbench
// decoder inputs decIn [B*T], in compbench's ids (models.Seq2Seq).
func (e *Engine) Logits(mem *models.Memory, decIn []int, T, pos int) ([]float32, error) {
	v, T2, pos2, err := e.m.decodeView(mem, decIn, T, pos)
	if err != nil {
		return nil, err
	}
	all, _, err := e.Output(v) // [B*T2, Vm]
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	Vm := e.m.Config().VocabSize
	V := models.NumSpecials + Vm
	out := make([]float32, mem.B*V)
	for b := 0; b < mem.B; b++ {
		row := all[(b*T2+pos2)*Vm : (b*T2+pos2+1)*Vm]
		e.m.ids.logits(row, out[b*V:(b+1)*V])
	}
	return out, nil
}

// Download copies the backend's weights into Params.
func (e *Engine) Download() error { return e.Programs.Download(e.m.Params()) }

// Close frees the backend memory.
func (e *Engine) Close() {
	e.closeSteps()
	e.Programs.Close()
}
