package lstm

import (
	"fmt"
	"math"

	"compbench/engine"
	"compbench/kernels"
	"compbench/models"
)

// Slots of Engine.ints, the int32 uploads of a pass.
const (
	slotSrc = iota // source ids as embedded, time-major [S*B]
	slotLen        // source lengths [B]
	slotDec        // decoder input ids, time-major [T*B]
	slotTgt        // targets, time-major [T*B]
)

// devRun is one LSTM layer run over a sequence in one direction on the
// device, time-major.
type devRun struct {
	T, n, in, h int
	rev         bool
	x, mask     engine.Buf // [T*n, In] input; [T*n] 1 for real rows, nil: all real
	gates       engine.Buf // [T*n, 4H] i, f, g, o after their nonlinearities
	hs, cs      engine.Buf // [T*n, H] states after each step
	tanhC       engine.Buf // [T*n, H]
	zero        engine.Buf // [n, H] the initial state
	c           cellIDs
}

// devPass is one forward (and backward) pass of an Engine over a
// batch on device buffers.
type devPass struct {
	e       *Engine
	a       *devArena
	ints    *[5]intBuf
	B, S, T int
	train   bool // a training pass: the backward pass follows
	drop    bool
	step    int
	count   int // target rows that count (not padding)

	srcLen            []int      // [B]
	tgtTM             []int      // [T*B] time-major targets
	srcIDs, lenBuf    engine.Buf // int32 [S*B], [B]
	decIDs, tgtBuf    engine.Buf // int32 [T*B], [T*B]
	encMask           engine.Buf // [S*B] the BiLSTM's step masks
	embIDs            []int      // [B*S] the Transformer encoder's source ids as embedded
	tprog             *tencProg  // the Transformer encoder's program of this pass
	srcX, srcDrop     engine.Buf // [S*B, H] embeddings after dropout, mask
	enc               [][2]*devRun
	encOut, encInDrop []engine.Buf // [layer] outputs [S*B, 2H]; masks on inputs of layers > 0
	mem, keys         engine.Buf   // [S*B, W], [S*B, H]
	match             engine.Buf   // [T*B, S] copy positions of each target

	tgtX, tgtDrop    engine.Buf // [T*B, H] decoder input embeddings after dropout, mask
	dec              []*devRun
	decIn, decInDrop []engine.Buf // [layer] inputs of layers > 0 after dropout, masks
	out              devOut
	dLogits          engine.Buf // [R, V]
	dZg, dAttCopy    engine.Buf // [R], [R, S]
}

// devOut is the attention and output layer over R query rows.
type devOut struct {
	R, T           int        // rows, and steps (rows per batch row)
	hd, embQ       engine.Buf // [R, H] top decoder states, decoder input embeddings
	q, att         engine.Buf // [R, H] query + bias, [R, S] attention weights
	o, oDrop       engine.Buf // [R, H+W] [h; ctx] after dropout, mask
	logits         engine.Buf // [R, V]
	gin, zg, probs engine.Buf // copy: [R, 2H+W] gate input, [R] gate pre-activation, [R] P(y)
}

func (f *devPass) alloc(n int) (engine.Buf, error) { return f.a.alloc(n) }

func (f *devPass) param(i int) engine.Buf { return f.e.w.Bufs[i] }

func (f *devPass) grad(i int) engine.Buf { return f.e.grads[i] }

func (f *devPass) dropParams(site int) kernels.DropoutParams {
	return kernels.DropoutParams{P: float32(f.e.m.Cfg.Dropout), Seed: f.e.m.seed, ID: site, Step: uint64(f.step)}
}

// dropout applies site's mask to x [n] in place, returning the mask.
func (f *devPass) dropout(site, n int, x engine.Buf) (engine.Buf, error) {
	mask, err := f.alloc(n) // [n]
	if err != nil {
		return nil, err
	}
	return mask, f.e.b.Dropout(n, f.dropParams(site), x, x, mask)
}

// upload sends the batch: ids and targets time-major, lengths, the
// encoder's step masks and, for lstm-copy, the copy positions.
func (f *devPass) upload(bt *models.Batch) error {
	m, be, B, S, T := f.e.m, f.e.b, f.B, f.S, f.T
	V := m.Cfg.TgtVocab
	f.srcLen = rowLengths(bt.Src, B, S)
	embIDs := bt.Src
	if m.Copy && f.drop {
		// lstm-copy's word dropout: tokens unseen in training reach the
		// encoder as <unk>, so training shows it <unk> positions whose
		// tokens are still to be copied (the copy targets keep the real
		// ids).
		rng := wordDropRand(m.seed, f.step)
		embIDs = append([]int(nil), bt.Src...)
		for i, id := range embIDs {
			if id != models.PadID && rng.Float64() < copyUnkRate {
				embIDs[i] = models.UnkID
			}
		}
	}
	// The BiLSTM takes time-major ids and step masks; the Transformer
	// encoder's program takes the batch-major ids and its padding mask
	// (engine_lstm_tenc.go).
	var src []int
	var mask []float32
	if m.tenc != nil {
		f.embIDs = embIDs
	} else {
		src, mask = make([]int, S*B), make([]float32, S*B) // time-major, [S*B]
		for t := 0; t < S; t++ {
			for b := 0; b < B; b++ {
				src[t*B+b] = embIDs[b*S+t]
				if t < f.srcLen[b] {
					mask[t*B+b] = 1
				}
			}
		}
	}
	dec := make([]int, T*B) // time-major
	f.tgtTM = make([]int, T*B)
	for t := 0; t < T; t++ {
		for b := 0; b < B; b++ {
			id, y := bt.DecIn[b*T+t], bt.Tgt[b*T+t]
			if id >= V {
				id = models.UnkID // a copied token enters the decoder as UNK
			}
			if y >= V && !m.Copy {
				y = models.UnkID // a copy id, meaningless without copying
			}
			if y != models.PadID {
				f.count++
			}
			dec[t*B+b], f.tgtTM[t*B+b] = id, y
		}
	}
	var err error
	if m.tenc == nil {
		if f.srcIDs, err = f.ints[slotSrc].set(be, src); err != nil {
			return err
		}
		if f.encMask, err = f.alloc(len(mask)); err != nil { // [S*B]
			return err
		}
		if err := be.Upload(f.encMask, mask); err != nil {
			return err
		}
	}
	if f.lenBuf, err = f.ints[slotLen].set(be, f.srcLen); err != nil {
		return err
	}
	if f.decIDs, err = f.ints[slotDec].set(be, dec); err != nil {
		return err
	}
	if f.tgtBuf, err = f.ints[slotTgt].set(be, f.tgtTM); err != nil {
		return err
	}
	if !m.Copy {
		return nil
	}
	match := make([]float32, T*B*S) // [T*B, S]
	for t := 0; t < T; t++ {
		for b := 0; b < B; b++ {
			if y := f.tgtTM[t*B+b]; y != models.PadID {
				m.copyMatch(bt.Src[b*S:(b+1)*S], f.srcLen[b], y, func(j int) { match[(t*B+b)*S+j] = 1 })
			}
		}
	}
	if f.match, err = f.alloc(T * B * S); err != nil { // [T*B, S]
		return err
	}
	return be.Upload(f.match, match)
}

// newRun allocates a run's buffers.
func (f *devPass) newRun(T, n, in int, rev bool, x, mask engine.Buf, c cellIDs) (*devRun, error) {
	H := f.e.m.Cfg.Dim
	r := &devRun{T: T, n: n, in: in, h: H, rev: rev, x: x, mask: mask, c: c}
	var err error
	for _, p := range []struct {
		buf *engine.Buf
		n   int
	}{{&r.gates, T * n * 4 * H}, {&r.hs, T * n * H}, {&r.cs, T * n * H}, {&r.tanhC, T * n * H}, {&r.zero, n * H}} {
		if *p.buf, err = f.alloc(p.n); err != nil {
			return nil, err
		}
	}
	return r, f.e.b.Fill(n*H, 0, r.zero)
}

// at is step t's block of a time-major buffer of width w.
func (f *devPass) at(r *devRun, buf engine.Buf, t, w int) engine.Buf {
	return f.e.b.View(buf, t*r.n*w, r.n*w)
}

// prev is the time index of the step before t in the run's order, or -1.
func (r *devRun) prev(t int) int {
	if r.rev {
		if t+1 < r.T {
			return t + 1
		}
		return -1
	}
	return t - 1
}

// state is h (or c, from cs) entering step t.
func (f *devPass) state(r *devRun, buf engine.Buf, t int) engine.Buf {
	if p := r.prev(t); p >= 0 {
		return f.at(r, buf, p, r.h)
	}
	return r.zero
}

func (f *devPass) maskAt(r *devRun, t int) engine.Buf {
	if r.mask == nil {
		return nil
	}
	return f.e.b.View(r.mask, t*r.n, r.n)
}

// runFwd runs the layer: x·W_ih + b for every step in one product, then
// per step h_prev·W_hh and the gates.
func (f *devPass) runFwd(r *devRun) error {
	be, n, in, H, T := f.e.b, r.n, r.in, r.h, r.T
	w := f.param(r.c.w)
	wih, whh := be.View(w, 0, in*4*H), be.View(w, in*4*H, H*4*H)
	if err := mm(be, false, false, T*n, 4*H, in, r.x, wih, 0, r.gates); err != nil { // [T*n, 4H]
		return err
	}
	if err := be.AddBias(T*n, 4*H, r.gates, f.param(r.c.b), r.gates); err != nil {
		return err
	}
	for k := 0; k < T; k++ {
		t := k
		if r.rev {
			t = T - 1 - k
		}
		z := f.at(r, r.gates, t, 4*H) // [n, 4H]
		hp, cp := f.state(r, r.hs, t), f.state(r, r.cs, t)
		if k > 0 {
			if err := mm(be, false, false, n, 4*H, H, hp, whh, 1, z); err != nil {
				return err
			}
		}
		if err := be.LSTMGates(n, H, z, hp, cp, f.maskAt(r, t), f.at(r, r.hs, t, H), f.at(r, r.cs, t, H), f.at(r, r.tanhC, t, H)); err != nil {
			return err
		}
	}
	return nil
}

// encode runs the encoder (the bidirectional LSTM here, the Transformer's
// program in engine_lstm_tenc.go); it sets mem and keys.
func (f *devPass) encode() error {
	m, be, H, B, S := f.e.m, f.e.b, f.e.m.Cfg.Dim, f.B, f.S
	if m.tenc != nil {
		return f.encodeTransformer()
	}
	N := S * B
	var err error
	if f.srcX, err = f.alloc(N * H); err != nil { // [S*B, H]
		return err
	}
	if err := be.Embed(N, H, f.param(m.srcEmb), f.srcIDs, f.srcX); err != nil {
		return err
	}
	if f.drop {
		if f.srcDrop, err = f.dropout(dropSrcEmb, N*H, f.srcX); err != nil {
			return err
		}
	}
	x, in := f.srcX, H
	f.enc = make([][2]*devRun, len(m.enc))
	f.encOut = make([]engine.Buf, len(m.enc))
	f.encInDrop = make([]engine.Buf, len(m.enc))
	for l, c := range m.enc {
		for d := range 2 {
			if f.enc[l][d], err = f.newRun(S, B, in, d == 1, x, f.encMask, c[d]); err != nil {
				return err
			}
			if err := f.runFwd(f.enc[l][d]); err != nil {
				return fmt.Errorf("layer %d: %w", l, err)
			}
		}
		out, err := f.alloc(N * 2 * H) // [S*B, 2H] [forward; backward]
		if err != nil {
			return err
		}
		if err := be.Copy2D(N, H, f.enc[l][0].hs, H, out, 2*H); err != nil {
			return err
		}
		if err := be.Copy2D(N, H, f.enc[l][1].hs, H, be.View(out, H, N*2*H-H), 2*H); err != nil {
			return err
		}
		f.encOut[l] = out
		if l+1 < len(m.enc) && f.drop {
			if f.encInDrop[l+1], err = f.dropout(dropEncIn+l+1, N*2*H, out); err != nil {
				return err
			}
		}
		x, in = out, 2*H
	}
	f.mem = x
	if f.keys, err = f.alloc(N * H); err != nil { // [S*B, H]
		return err
	}
	return mm(be, false, false, N, H, m.memW, f.mem, f.param(m.wk), 0, f.keys)
}

// decode runs the decoder stack over every position, then the attention
// and output layer.
func (f *devPass) decode() error {
	m, be, H, B, T := f.e.m, f.e.b, f.e.m.Cfg.Dim, f.B, f.T
	R := T * B
	var err error
	if f.tgtX, err = f.alloc(R * H); err != nil { // [T*B, H]
		return err
	}
	if err := be.Embed(R, H, f.param(m.tgtEmb), f.decIDs, f.tgtX); err != nil {
		return err
	}
	if f.drop {
		if f.tgtDrop, err = f.dropout(dropTgtEmb, R*H, f.tgtX); err != nil {
			return err
		}
	}
	x := f.tgtX
	f.dec = make([]*devRun, len(m.dec))
	f.decIn = make([]engine.Buf, len(m.dec))
	f.decInDrop = make([]engine.Buf, len(m.dec))
	for l, c := range m.dec {
		run, err := f.newRun(T, B, H, false, x, nil, c)
		if err != nil {
			return err
		}
		if err := f.runFwd(run); err != nil {
			return fmt.Errorf("layer %d: %w", l, err)
		}
		f.dec[l] = run
		x = run.hs
		if l+1 < len(m.dec) && f.drop {
			// Dropout into a copy: the run's states are the next steps'
			// h_prev in the backward pass.
			in, err := f.alloc(R * H) // [T*B, H]
			if err != nil {
				return err
			}
			mask, err := f.alloc(R * H) // [T*B, H]
			if err != nil {
				return err
			}
			if err := be.Dropout(R*H, f.dropParams(dropDecIn+l+1), run.hs, in, mask); err != nil {
				return err
			}
			f.decIn[l+1], f.decInDrop[l+1], x = in, mask, in
		}
	}
	f.out = devOut{R: R, T: T, hd: x, embQ: f.tgtX}
	return f.attendOutput(&f.out, f.a)
}

// attendOutput computes the attention, the output logits and (lstm-copy)
// the gate pre-activation for o.R query rows, o.T per batch row.
func (f *devPass) attendOutput(o *devOut, a *devArena) error {
	m, be, H, B, S := f.e.m, f.e.b, f.e.m.Cfg.Dim, f.B, f.S
	W, V, R := m.memW, m.Cfg.TgtVocab, o.R
	O, Gn := H+W, 2*H+W
	var err error
	for _, p := range []struct {
		buf *engine.Buf
		n   int
	}{{&o.q, R * H}, {&o.att, R * S}, {&o.o, R * O}, {&o.logits, R * V}} {
		if *p.buf, err = a.alloc(p.n); err != nil {
			return err
		}
	}
	if err := mm(be, false, false, R, H, H, o.hd, f.param(m.wq), 0, o.q); err != nil { // [R, H]
		return err
	}
	if err := be.AddBias(R, H, o.q, f.param(m.ba), o.q); err != nil {
		return err
	}
	if err := be.AddAttn(R, S, H, B, o.q, f.keys, f.param(m.va), f.lenBuf, o.att); err != nil { // [R, S]
		return err
	}
	if err := be.Copy2D(R, H, o.hd, H, o.o, O); err != nil {
		return err
	}
	// ctx_b [T, W] = att_b [T, S] · mem_b [S, W] for each batch row b, whose
	// rows are every B-th row of the time-major buffers.
	ctx := kernels.GemmParams{M: o.T, N: W, K: S, Alpha: 1, LdA: B * S, LdB: B * W, LdC: B * O,
		Batch: [2]int{B, 1}, StrideA: [2]int{S, 0}, StrideB: [2]int{W, 0}, StrideC: [2]int{O, 0}}
	if err := be.Gemm(ctx, o.att, f.mem, be.View(o.o, H, R*O-H)); err != nil { // [R, W] into o
		return err
	}
	if f.drop {
		if o.oDrop, err = f.dropout(dropOut, R*O, o.o); err != nil {
			return err
		}
	}
	if err := mm(be, false, false, R, V, O, o.o, f.param(m.outW), 0, o.logits); err != nil { // [R, V]
		return err
	}
	if err := be.AddBias(R, V, o.logits, f.param(m.outB), o.logits); err != nil {
		return err
	}
	if !m.Copy {
		return nil
	}
	if o.gin, err = a.alloc(R * Gn); err != nil { // [R, 2H+W]
		return err
	}
	if o.zg, err = a.alloc(R); err != nil { // [R]
		return err
	}
	if err := be.Copy2D(R, O, o.o, O, o.gin, Gn); err != nil {
		return err
	}
	if err := be.Copy2D(R, H, o.embQ, H, be.View(o.gin, O, R*Gn-O), Gn); err != nil {
		return err
	}
	if err := mm(be, false, false, R, 1, Gn, o.gin, f.param(m.gateW), 0, o.zg); err != nil { // [R, 1]
		return err
	}
	return be.AddBias(R, 1, o.zg, f.param(m.gateB), o.zg)
}

// lossFwd computes the mean token loss (label smoothing eps for
// lstm-attention) and the seeds of the backward pass.
func (f *devPass) lossFwd(eps float32) (float64, error) {
	m, be, o := f.e.m, f.e.b, &f.out
	R, S, V := o.R, f.S, m.Cfg.TgtVocab
	if f.count == 0 {
		return 0, nil
	}
	var err error
	if f.dLogits, err = f.alloc(R * V); err != nil { // [R, V]
		return 0, err
	}
	if !m.Copy {
		p := kernels.CEParams{Ignore: models.PadID, Smoothing: eps}
		if err := be.SoftmaxCE(R, V, p, o.logits, f.tgtBuf, f.e.loss); err != nil {
			return 0, err
		}
		var l [1]float32
		if err := be.Download(l[:], f.e.loss); err != nil {
			return 0, err
		}
		return float64(l[0]), be.SoftmaxCEGrad(R, V, p, o.logits, f.tgtBuf, f.e.one, f.dLogits)
	}
	if o.probs, err = f.alloc(R); err != nil { // [R]
		return 0, err
	}
	if f.dZg, err = f.alloc(R); err != nil { // [R]
		return 0, err
	}
	if f.dAttCopy, err = f.alloc(R * S); err != nil { // [R, S]
		return 0, err
	}
	if err := be.CopyLoss(R, V, S, f.count, models.PadID, o.logits, o.zg, o.att, f.match, f.tgtBuf, o.probs,
		f.dLogits, f.dZg, f.dAttCopy); err != nil {
		return 0, err
	}
	probs := make([]float32, R) // [R]
	if err := be.Download(probs, o.probs); err != nil {
		return 0, err
	}
	// Summed in batch-major row order, in float64.
	var tot float64
	for b := 0; b < f.B; b++ {
		for t := 0; t < f.T; t++ {
			if i := t*f.B + b; f.tgtTM[i] != models.PadID {
				tot -= math.Log(math.Max(float64(probs[i]), 1e-30))
			}
		}
	}
	return tot / float64(f.count), nil
}
