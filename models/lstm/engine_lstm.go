package lstm

import (
	"fmt"
	"math"

	"compbench/engine"
	"compbench/kernels"
	"compbench/models"
	"compbench/ops"
)

// Engine runs an LSTM model (lstm-attention, lstm-copy; Keysers et al.
// 2020 App. E, Bogin et al. 2022 §5.3; the architecture is described in
// lstm.go) on an engine backend. It is the models' only implementation:
// the forward pass (engine_lstm_pass.go), its hand-derived backward pass
// (engine_lstm_back.go) and decoding (engine_lstm_decode.go) as kernel
// calls on device buffers, the same on the CPU backend and on a GPU. The
// Transformer encoder is the Transformer's own graph, compiled by package
// engine and run on the same backend and weights (engine_lstm_tenc.go). The weights, gradients and Adam moments
// stay on the backend; a training step uploads the batch (ids, lengths,
// masks) and downloads the loss and the gradient norm. It implements
// Runner, so evaluation and decoding run on the backend too. The host
// weights (Params) are stale until Download.
//
// Decisions:
//   - The recurrence is written as kernel calls, not as a Gorgonia graph
//     compiled by package engine: unrolled, the graph would differ with
//     every source and target length, while this program takes the
//     lengths as arguments. Besides the GEMMs it needs a few kernels of
//     its own (the LSTM cell's gates forward and backward, additive
//     attention forward and backward, the copy mixture's loss).
//   - Sequences are time-major on the device (row t*B+b), so each step of
//     a recurrence is a contiguous block and the decoder's query rows are
//     the top layer's states as they are; the host permutes ids and masks
//     on upload and the encoder memory on download.
//   - Each dropout site draws its mask with kernels.DropoutRef's stream
//     (the drop* sites of lstm.go) over a time-major buffer, on every
//     backend. lstm-copy's word dropout is drawn on the host and uploaded
//     with the ids.
//   - The Transformer encoder (Config.Encoder "transformer") is the
//     Transformer's encoder graph (builder.encodeStack), compiled per batch
//     shape; it runs batch-major, as the Transformer models do, and its
//     output is permuted to the time-major memory. Its gradients are the
//     graph's vector-Jacobian product of the memory's gradient, copied
//     into the model's gradient buffers (engine_lstm_tenc.go).
//   - The tests (engine_lstm_test.go) check the gradients against finite
//     differences of the loss, the forward pass against a hand
//     computation, and decoding against the training pass and against
//     reruns of the whole prefix.
type Engine struct {
	m     *Model
	b     engine.RecurrentBackend
	w     *engine.Weights
	opt   *engine.Adam
	grads []engine.Buf // [param] persistent gradient buffers
	one   engine.Buf   // [1] 1.0, the seed of the cross-entropy's gradient
	loss  engine.Buf   // [1] the cross-entropy
	work  devArena     // a training or evaluation pass's buffers
	dec   devArena     // decoding's buffers (Encode resets it)
	ints  [5]intBuf    // uploaded ids and lengths (see the slot constants)
	dints [5]intBuf    // decoding's ids and lengths
	from  intBuf       // decoding's int32 [B] state rows to gather
	enc   *lstmEncoded // the memory of the last Encode or uploaded memory
	// The Transformer encoder's compiled programs (engine_lstm_tenc.go).
	tprogs   map[tencKey]*tencProg
	tclock   uint64
	posTable engine.Buf // [posRows, D] sinusoidal positions
	posRows  int
}

// NewEngine uploads m's weights to b, for evaluation and decoding.
func NewEngine(m *Model, b engine.Backend) (*Engine, error) {
	return newEngine(m, b, nil)
}

// NewTrainer is NewEngine with zero Adam moments of
// constants c, for Step.
func NewTrainer(m *Model, b engine.Backend, c ops.AdamConfig) (*Engine, error) {
	return newEngine(m, b, &c)
}

func newEngine(m *Model, b engine.Backend, c *ops.AdamConfig) (*Engine, error) {
	rb, err := engine.Recurrent(b)
	if err != nil {
		return nil, err
	}
	p := m.Params()
	vals := p.AllData()
	sizes := make([]int, len(p.Names))
	for i := range p.Names {
		sizes[i] = len(vals[i])
	}
	e := &Engine{m: m, b: rb, work: devArena{b: rb}, dec: devArena{b: rb}}
	if e.w, err = engine.NewWeights(b, p.Names, vals); err != nil {
		return nil, err
	}
	for i, n := range sizes {
		g, err := b.Alloc(n) // [param size]
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("engine: gradient of %s: %w", p.Names[i], err)
		}
		e.grads = append(e.grads, g)
	}
	if e.one, err = b.Alloc(1); err == nil {
		if e.loss, err = b.Alloc(1); err == nil {
			err = b.Upload(e.one, []float32{1})
		}
	}
	if err == nil && c != nil {
		e.opt, err = engine.NewAdam(b, sizes, *c)
	}
	if err == nil && m.tenc != nil {
		err = e.posTableFor(tencPosRows) // uploaded now, not in a step
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Adam returns the optimizer (nil from NewEngine), for loading and
// saving its moments.
func (e *Engine) Adam() *engine.Adam { return e.opt }

// Params implements models.Seq2Seq: the host weights, current after Download.
func (e *Engine) Params() *models.Params { return e.m.Params() }

// Step runs one training step on bt as train's loop does with Loss,
// ClipGlobalNorm and Adam (see transformer.Engine.Step): it returns the loss and
// the gradient norm before clipping; on a non-finite loss or norm the
// weights are not updated.
func (e *Engine) Step(bt *models.Batch, eps float64, step int, clip, lr float64) (loss, norm float64, err error) {
	if e.opt == nil {
		return 0, 0, fmt.Errorf("engine model: no optimizer (made by NewEngine)")
	}
	if loss, err = e.pass(bt, true, eps, step); err != nil {
		return 0, 0, err
	}
	nm, err := e.opt.ClipGlobalNorm(e.grads, float32(clip))
	if err != nil {
		return 0, 0, err
	}
	norm = float64(nm)
	if math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return loss, norm, nil // the caller stops
	}
	if err := e.opt.Step(e.w.Bufs, e.grads, float32(lr)); err != nil {
		return 0, 0, err
	}
	return loss, norm, nil
}

// Loss implements models.Seq2Seq on the backend. With train the gradients are
// downloaded into Params().Grads (Step keeps them on the backend).
func (e *Engine) Loss(bt *models.Batch, train bool, eps float64, step int) (float64, error) {
	loss, err := e.pass(bt, train, eps, step)
	if err != nil || !train {
		return loss, err
	}
	p := e.m.Params()
	for i, g := range e.grads {
		if err := e.b.Download(p.Grads[i], g); err != nil {
			return 0, fmt.Errorf("engine: gradient of %s: %w", p.Names[i], err)
		}
	}
	return loss, nil
}

// pass runs the forward pass over bt and, with train, the backward pass
// into e.grads (dropout masks of step); it returns the mean token loss.
func (e *Engine) pass(bt *models.Batch, train bool, eps float64, step int) (float64, error) {
	m := e.m
	if err := m.checkIDs(bt.Src, bt.DecIn); err != nil {
		return 0, err
	}
	e.work.reset()
	f := &devPass{e: e, a: &e.work, ints: &e.ints, B: bt.B, S: bt.S, T: bt.T, train: train}
	if train && m.Cfg.Dropout > 0 {
		f.drop, f.step = true, step
	}
	if err := f.upload(bt); err != nil {
		return 0, err
	}
	if err := f.encode(); err != nil {
		return 0, fmt.Errorf("engine lstm: encoder: %w", err)
	}
	if err := f.decode(); err != nil {
		return 0, fmt.Errorf("engine lstm: decoder: %w", err)
	}
	loss, err := f.lossFwd(float32(eps))
	if err != nil || !train {
		return loss, err
	}
	if f.count == 0 { // nothing to learn from: zero gradients, as on the CPU
		for i, g := range e.grads {
			if err := e.b.Fill(e.w.Sizes[i], 0, g); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}
	if err := f.backward(); err != nil {
		return 0, fmt.Errorf("engine lstm: backward: %w", err)
	}
	return loss, nil
}

// Download copies the trained weights into the model's Params.
func (e *Engine) Download() error { return e.w.Download(e.m.Params().AllData()) }

// Close frees the backend memory.
func (e *Engine) Close() {
	e.work.free()
	e.dec.free()
	for i := range e.ints {
		e.ints[i].free(e.b)
	}
	for i := range e.dints {
		e.dints[i].free(e.b)
	}
	e.from.free(e.b)
	for _, tp := range e.tprogs {
		tp.free(e.b)
	}
	e.tprogs = nil
	if e.posTable != nil {
		e.b.Free(e.posTable)
		e.posTable, e.posRows = nil, 0
	}
	for _, g := range append(e.grads, e.one, e.loss) {
		if g != nil {
			e.b.Free(g)
		}
	}
	e.grads, e.one, e.loss = nil, nil, nil
	if e.opt != nil {
		e.opt.Free()
		e.opt = nil
	}
	if e.w != nil {
		e.w.Free()
		e.w = nil
	}
	e.enc = nil
}

// devArena hands out views of a few large backend buffers, reused from
// pass to pass: after reset the same sequence of requests gets the same
// views, and chunks are added only when a pass needs more than ever.
// Views are aligned to 64 elements; their contents are stale, so every
// kernel writing one overwrites it (or the pass fills it first).
type devArena struct {
	b      engine.Backend
	chunks []engine.Buf
	sizes  []int
	cur    int // chunk being filled
	off    int // next free element in it
}

// arenaChunk is the smallest chunk, in floats (16 MiB).
const arenaChunk = 4 << 20

func (a *devArena) reset() { a.cur, a.off = 0, 0 }

// alloc returns a view of n floats.
func (a *devArena) alloc(n int) (engine.Buf, error) {
	n = max((n+63)&^63, 64)
	for ; a.cur < len(a.chunks); a.cur, a.off = a.cur+1, 0 {
		if a.off+n <= a.sizes[a.cur] {
			v := a.b.View(a.chunks[a.cur], a.off, n)
			a.off += n
			return v, nil
		}
	}
	size := max(n, arenaChunk)
	buf, err := a.b.Alloc(size)
	if err != nil {
		return nil, fmt.Errorf("device buffer of %d floats: %w", size, err)
	}
	a.chunks, a.sizes = append(a.chunks, buf), append(a.sizes, size)
	a.cur, a.off = len(a.chunks)-1, n
	return a.b.View(buf, 0, n), nil
}

func (a *devArena) free() {
	for _, c := range a.chunks {
		a.b.Free(c)
	}
	a.chunks, a.sizes = nil, nil
	a.reset()
}

// intBuf is a reusable int32 buffer that grows to the largest upload.
type intBuf struct {
	buf engine.Buf
	n   int
}

// set uploads ids (as int32) and returns the buffer.
func (ib *intBuf) set(b engine.Backend, ids []int) (engine.Buf, error) {
	if len(ids) > ib.n || ib.buf == nil {
		ib.free(b)
		buf, err := b.AllocInt(max(len(ids), 64))
		if err != nil {
			return nil, err
		}
		ib.buf, ib.n = buf, max(len(ids), 64)
	}
	v := make([]int32, len(ids))
	for i, id := range ids {
		v[i] = int32(id)
	}
	return ib.buf, b.UploadInt(ib.buf, v)
}

func (ib *intBuf) free(b engine.Backend) {
	if ib.buf != nil {
		b.Free(ib.buf)
	}
	ib.buf, ib.n = nil, 0
}

// mm is C = op(A)·op(B) + beta·C for dense row-major matrices with op(A)
// [m, k] and op(B) [k, n].
func mm(b engine.Backend, ta, tb bool, m, n, k int, x, y engine.Buf, beta float32, c engine.Buf) error {
	p := kernels.GemmParams{TransA: ta, TransB: tb, M: m, N: n, K: k, Alpha: 1, Beta: beta, LdA: k, LdB: n, LdC: n}
	if ta {
		p.LdA = m
	}
	if tb {
		p.LdB = k
	}
	return b.Gemm(p, x, y, c)
}
