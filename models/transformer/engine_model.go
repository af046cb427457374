package transformer

import (
	"fmt"

	"compbench/engine"
	"compbench/models"
	"compbench/ops"
)

// Engine runs a Transformer's graphs through package engine
// (models.Programs: one program per purpose and batch shape, sharing one
// set of weights on the backend). It implements models.Seq2Seq, so
// evaluation and decoding run on the backend too; Step trains, with the
// Adam moments on the backend as well, and per step only the batch goes in
// and the loss and gradient norm come out. The host weights (Params) are
// stale until Download.
type Engine struct {
	*models.Programs
	m   *Model
	b   engine.Backend
	enc *engineEncoded // the last Encode's output (decode.go)
	// steps are the decoding programs, bufs the buffers they share, state
	// the current decoding (decode.go).
	steps     map[stepKey]*stepProg
	stepClock uint64
	bufs      decodeBufs
	state     *decoder
}

// NewEngine uploads m's weights to b, for evaluation and decoding.
func NewEngine(m *Model, b engine.Backend) (*Engine, error) { return newEngine(m, b, nil) }

// NewTrainer is NewEngine with zero Adam moments of constants c,
// for Step.
func NewTrainer(m *Model, b engine.Backend, c ops.AdamConfig) (*Engine, error) {
	return newEngine(m, b, &c)
}

func newEngine(m *Model, b engine.Backend, c *ops.AdamConfig) (*Engine, error) {
	ps, err := models.NewPrograms(b, m.Params(), c, m.MaxGraphs)
	if err != nil {
		return nil, err
	}
	return &Engine{Programs: ps, m: m, b: b}, nil
}

// Step runs one training step on bt, as train's loop does with Loss,
// ClipGlobalNorm and Adam: the loss with label smoothing eps and the
// dropout masks of step, gradients clipped to global norm clip (0: not
// clipped), then one Adam update with learning rate lr. It returns the loss
// and the gradient norm before clipping; on a non-finite loss or norm the
// weights are not updated.
func (t *Engine) Step(bt *models.Batch, eps float64, step int, clip, lr float64) (loss, norm float64, err error) {
	v, err := t.m.TrainView(bt, eps, step)
	if err != nil {
		return 0, 0, err
	}
	return t.TrainStep(v, clip, lr)
}

// Params implements models.Seq2Seq: the host weights, current after Download.
func (t *Engine) Params() *models.Params { return t.m.Params() }

// Loss implements models.Seq2Seq on the backend. With train the gradients are
// downloaded into Params().Grads (Step keeps them on the backend instead).
func (t *Engine) Loss(bt *models.Batch, train bool, eps float64, step int) (float64, error) {
	if !train {
		v, err := t.m.LossView(bt, eps)
		if err != nil {
			return 0, err
		}
		return t.Programs.Loss(v, nil)
	}
	v, err := t.m.TrainView(bt, eps, step)
	if err != nil {
		return 0, err
	}
	return t.Programs.Loss(v, t.m.Params().Grads)
}

// Encode implements models.Seq2Seq on the backend.
func (t *Engine) Encode(src []int, B, S int) (*models.Memory, error) {
	if t.m.Cfg.DoubleIO() {
		return t.encodeIO(src, B, S)
	}
	v, srcLen, err := t.m.EncodeView(src, B, S)
	if err != nil {
		return nil, err
	}
	out, ep, err := t.Output(v) // [B*S, D]
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	mem := &models.Memory{B: B, S: S, Data: out, SrcLen: srcLen}
	// Decoding starts from the output still on the backend.
	t.enc = nil
	if buf, err := ep.Mc.Buffer(v.Out); err == nil {
		t.enc = &engineEncoded{mem: mem, buf: buf, key: v.Key, ep: ep}
	}
	return mem, nil
}

// encodeIO is Encode for the double I/O encoder. Its memory is assembled
// on the host from the examples' encoded outputs (ioMemory), so decoding
// uploads it rather than reusing the program's output buffer.
func (t *Engine) encodeIO(src []int, B, S int) (*models.Memory, error) {
	t.enc = nil
	v, ib, err := t.m.encodeIOView(src, B, S)
	if err != nil {
		return nil, err
	}
	out, _, err := t.Output(v) // [B*E*So, D]
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return t.m.ioMemory(ib, out), nil
}

// Logits implements models.Seq2Seq on the backend.
func (t *Engine) Logits(mem *models.Memory, decIn []int, T, pos int) ([]float32, error) {
	v, err := t.m.DecodeView(mem, decIn, T, pos)
	if err != nil {
		return nil, err
	}
	all, _, err := t.Output(v) // [B*T, V]
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	V := t.m.Cfg.TgtVocab
	out := make([]float32, mem.B*V)
	for b := 0; b < mem.B; b++ {
		copy(out[b*V:(b+1)*V], all[(b*T+pos)*V:(b*T+pos+1)*V])
	}
	return out, nil
}

// Download copies the trained weights into the model's Params (before
// evaluating with the model, or saving a checkpoint).
func (t *Engine) Download() error { return t.Programs.Download(t.m.Params()) }

// Close frees the backend memory.
func (t *Engine) Close() {
	t.closeSteps()
	t.bufs.close()
	t.Programs.Close()
}
