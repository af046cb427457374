package lstm

import (
	"fmt"
	"strconv"

	"compbench/engine"
	"compbench/models"
	"compbench/vecmath"
)

// Decoding on the device: Encode leaves
// the memory and the attention keys on the backend, and Logits steps the
// decoder one position from the cached states of the previous call when
// every row's prefix was decoded there (greedy, or beam search with
// reordered rows: the states are gathered by row); otherwise it reruns
// the decoder over the prefix. Each call downloads the step's logits
// ([B, V]; lstm-copy also the gate and attention, [B] and [B, S], to form
// the extended distribution on the host).

// lstmEncoded is a memory on the device.
type lstmEncoded struct {
	mem        *models.Memory // held, so its address is not reused while cached
	memBuf     engine.Buf     // [S*B, W] time-major
	keys       engine.Buf     // [S*B, H]
	lenBuf     engine.Buf     // int32 [B]
	h, c       [2][]engine.Buf
	mark       arenaMark // the decoding arena after the memory and states
	cur        int       // the state set holding the last call's states
	pos        int       // the states follow decoder inputs 0..pos; -1: none
	rows       map[string]int
	srcLenHost []int
}

// arenaMark is a devArena position to return to.
type arenaMark struct{ cur, off int }

func (a *devArena) mark() arenaMark      { return arenaMark{a.cur, a.off} }
func (a *devArena) restore(mk arenaMark) { a.cur, a.off = mk.cur, mk.off }

// Encode implements models.Seq2Seq on the backend; the memory is [B*S, W]
// (W: 2·Dim for the BiLSTM, Dim for the Transformer encoder).
func (e *Engine) Encode(src []int, B, S int) (*models.Memory, error) {
	if err := e.m.checkIDs(src, nil); err != nil {
		return nil, err
	}
	e.enc = nil
	e.dec.reset()
	f := &devPass{e: e, a: &e.dec, ints: &e.dints, B: B, S: S, T: 1}
	bt := &models.Batch{B: B, S: S, T: 1, Src: src, DecIn: make([]int, B), Tgt: make([]int, B)}
	if err := f.upload(bt); err != nil {
		return nil, err
	}
	if err := f.encode(); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	W := e.m.memW
	tm := make([]float32, S*B*W) // [S*B, W]
	if err := e.b.Download(tm, f.mem); err != nil {
		return nil, err
	}
	mem := &models.Memory{B: B, S: S, Data: make([]float32, B*S*W), SrcLen: f.srcLen, Src: append([]int(nil), src...)}
	for t := 0; t < S; t++ {
		for b := 0; b < B; b++ {
			copy(mem.Data[(b*S+t)*W:(b*S+t+1)*W], tm[(t*B+b)*W:(t*B+b+1)*W])
		}
	}
	return mem, e.keep(mem, f)
}

// keep records f's memory as the cached one and allocates the state sets.
func (e *Engine) keep(mem *models.Memory, f *devPass) error {
	enc := &lstmEncoded{mem: mem, memBuf: f.mem, keys: f.keys, lenBuf: f.lenBuf, pos: -1, srcLenHost: f.srcLen}
	H := e.m.Cfg.Dim
	for s := range enc.h {
		for range e.m.dec {
			h, err := e.dec.alloc(mem.B * H) // [B, H]
			if err != nil {
				return err
			}
			c, err := e.dec.alloc(mem.B * H) // [B, H]
			if err != nil {
				return err
			}
			enc.h[s], enc.c[s] = append(enc.h[s], h), append(enc.c[s], c)
		}
	}
	enc.mark = e.dec.mark()
	e.enc = enc
	return nil
}

// uploadMemory puts a memory that did not come from the last Encode (a
// beam's repeated rows) on the backend.
func (e *Engine) uploadMemory(mem *models.Memory) error {
	m, B, S, W := e.m, mem.B, mem.S, e.m.memW
	if len(mem.Data) != B*S*W || len(mem.SrcLen) != B {
		return fmt.Errorf("decode: memory of %d floats for %d rows of %d positions of width %d", len(mem.Data), B, S, W)
	}
	e.enc = nil
	e.dec.reset()
	f := &devPass{e: e, a: &e.dec, ints: &e.dints, B: B, S: S, T: 1, srcLen: mem.SrcLen}
	tm := make([]float32, S*B*W) // [S*B, W]
	for t := 0; t < S; t++ {
		for b := 0; b < B; b++ {
			copy(tm[(t*B+b)*W:(t*B+b+1)*W], mem.Data[(b*S+t)*W:(b*S+t+1)*W])
		}
	}
	var err error
	if f.mem, err = e.dec.alloc(S * B * W); err != nil { // [S*B, W]
		return err
	}
	if err := e.b.Upload(f.mem, tm); err != nil {
		return err
	}
	if f.keys, err = e.dec.alloc(S * B * m.Cfg.Dim); err != nil { // [S*B, H]
		return err
	}
	if err := mm(e.b, false, false, S*B, m.Cfg.Dim, W, f.mem, f.param(m.wk), 0, f.keys); err != nil {
		return err
	}
	if f.lenBuf, err = e.dints[slotLen].set(e.b, mem.SrcLen); err != nil {
		return err
	}
	return e.keep(mem, f)
}

// Logits implements models.Seq2Seq on the backend: lstm-attention's logits
// [B, V], lstm-copy's log-probabilities over the extended vocabulary
// [B, V+S] (already normalised, so a log-softmax leaves them unchanged).
func (e *Engine) Logits(mem *models.Memory, decIn []int, T, pos int) ([]float32, error) {
	m := e.m
	if pos < 0 || pos >= T || len(decIn) != mem.B*T {
		return nil, fmt.Errorf("decode: position %d outside %d-token inputs for %d rows", pos, T, mem.B)
	}
	if m.Copy && len(mem.Src) != mem.B*mem.S {
		return nil, fmt.Errorf("decode: lstm-copy needs the source ids in the memory")
	}
	if err := m.checkIDs(nil, decIn); err != nil {
		return nil, err
	}
	if e.enc == nil || e.enc.mem != mem {
		if err := e.uploadMemory(mem); err != nil {
			return nil, err
		}
	}
	enc, B, V := e.enc, mem.B, m.Cfg.TgtVocab
	e.dec.restore(enc.mark)
	f := &devPass{e: e, a: &e.dec, ints: &e.dints, B: B, S: mem.S, T: 1, srcLen: enc.srcLenHost,
		mem: enc.memBuf, keys: enc.keys, lenBuf: enc.lenBuf}
	from, stepping := e.fromRows(decIn, T, pos)
	next := 1 - enc.cur
	var err error
	var top, emb engine.Buf
	if stepping {
		top, emb, err = e.step(f, decIn, T, pos, from, next)
	} else {
		top, emb, err = e.rerun(f, decIn, T, pos, next)
	}
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	enc.cur, enc.pos, enc.rows = next, pos, map[string]int{}
	for b := 0; b < B; b++ {
		enc.rows[prefixKey(decIn[b*T:b*T+pos+1])] = b
	}
	o := devOut{R: B, T: 1, hd: top, embQ: emb}
	if err := f.attendOutput(&o, &e.dec); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	logits := make([]float32, B*V) // [B, V]
	if err := e.b.Download(logits, o.logits); err != nil {
		return nil, err
	}
	if !m.Copy {
		return logits, nil
	}
	zg, att := make([]float32, B), make([]float32, B*mem.S) // [B], [B, S]
	if err := e.b.Download(zg, o.zg); err != nil {
		return nil, err
	}
	if err := e.b.Download(att, o.att); err != nil {
		return nil, err
	}
	for b, z := range zg {
		zg[b] = vecmath.Sigmoid(z) // p_gen
	}
	return m.extendedLogProbs(logits, zg, att, mem.Src, enc.srcLenHost, mem.S), nil
}

// fromRows returns, per row, the row of the cached states its prefix
// 0..pos-1 left, and whether every row has one.
func (e *Engine) fromRows(decIn []int, T, pos int) ([]int, bool) {
	enc := e.enc
	if enc.pos < 0 || pos != enc.pos+1 {
		return nil, false
	}
	B := enc.mem.B
	from := make([]int, B)
	for b := range from {
		r, ok := enc.rows[prefixKey(decIn[b*T:b*T+pos])]
		if !ok {
			return nil, false
		}
		from[b] = r
	}
	return from, true
}

// inputIDs uploads the decoder inputs at pos (copy ids read as UNK).
func (e *Engine) inputIDs(decIn []int, T, pos, B int) (engine.Buf, error) {
	ids := make([]int, B)
	for b := range ids {
		ids[b] = decIn[b*T+pos]
		if ids[b] >= e.m.Cfg.TgtVocab {
			ids[b] = models.UnkID
		}
	}
	return e.dints[slotDec].set(e.b, ids)
}

// step advances the cached states by one position into state set next
// and returns the top states and the input embeddings [B, H].
func (e *Engine) step(f *devPass, decIn []int, T, pos int, from []int, next int) (top, emb engine.Buf, err error) {
	m, be, enc, B, H := e.m, e.b, e.enc, f.B, e.m.Cfg.Dim
	ids, err := e.inputIDs(decIn, T, pos, B)
	if err != nil {
		return nil, nil, err
	}
	// One buffer serves every memory, so Close frees it.
	fromBuf, err := e.from.set(be, from)
	if err != nil {
		return nil, nil, err
	}
	bufs := make([]engine.Buf, 5)
	for i, n := range []int{B * H, B * H, B * H, B * 4 * H, B * H} {
		if bufs[i], err = f.alloc(n); err != nil {
			return nil, nil, err
		}
	}
	// [B, H] ×3, [B, 4H], [B, H]
	x, hp, cp, z, tanhC := bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]
	if err := be.Embed(B, H, f.param(m.tgtEmb), ids, x); err != nil {
		return nil, nil, err
	}
	in := x
	for l, c := range m.dec {
		// The rows' previous states, gathered (beam search reorders rows).
		if err := be.Embed(B, H, enc.h[enc.cur][l], fromBuf, hp); err != nil {
			return nil, nil, err
		}
		if err := be.Embed(B, H, enc.c[enc.cur][l], fromBuf, cp); err != nil {
			return nil, nil, err
		}
		w := f.param(c.w)
		if err := mm(be, false, false, B, 4*H, H, in, be.View(w, 0, H*4*H), 0, z); err != nil { // [B, 4H]
			return nil, nil, err
		}
		if err := be.AddBias(B, 4*H, z, f.param(c.b), z); err != nil {
			return nil, nil, err
		}
		if err := mm(be, false, false, B, 4*H, H, hp, be.View(w, H*4*H, H*4*H), 1, z); err != nil {
			return nil, nil, err
		}
		if err := be.LSTMGates(B, H, z, hp, cp, nil, enc.h[next][l], enc.c[next][l], tanhC); err != nil {
			return nil, nil, err
		}
		in = enc.h[next][l]
	}
	return in, x, nil
}

// rerun runs the decoder over positions 0..pos and keeps the last
// position's states in state set next.
func (e *Engine) rerun(f *devPass, decIn []int, T, pos int, next int) (top, emb engine.Buf, err error) {
	m, be, enc, B, H := e.m, e.b, e.enc, f.B, e.m.Cfg.Dim
	P := pos + 1
	dec := make([]int, P*B) // time-major
	for t := 0; t < P; t++ {
		for b := 0; b < B; b++ {
			dec[t*B+b] = decIn[b*T+t]
			if dec[t*B+b] >= m.Cfg.TgtVocab {
				dec[t*B+b] = models.UnkID
			}
		}
	}
	if f.decIDs, err = e.dints[slotDec].set(be, dec); err != nil {
		return nil, nil, err
	}
	if f.tgtX, err = f.alloc(P * B * H); err != nil { // [P*B, H]
		return nil, nil, err
	}
	if err := be.Embed(P*B, H, f.param(m.tgtEmb), f.decIDs, f.tgtX); err != nil {
		return nil, nil, err
	}
	x := f.tgtX
	for l, c := range m.dec {
		run, err := f.newRun(P, B, H, false, x, nil, c)
		if err != nil {
			return nil, nil, err
		}
		if err := f.runFwd(run); err != nil {
			return nil, nil, err
		}
		if err := be.Copy2D(B, H, f.at(run, run.hs, pos, H), H, enc.h[next][l], H); err != nil {
			return nil, nil, err
		}
		if err := be.Copy2D(B, H, f.at(run, run.cs, pos, H), H, enc.c[next][l], H); err != nil {
			return nil, nil, err
		}
		x = run.hs
	}
	return enc.h[next][len(m.dec)-1], be.View(f.tgtX, pos*B*H, B*H), nil
}

// prefixKey names a row's decoder inputs 0..pos.
func prefixKey(ids []int) string {
	b := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, ' ')
	}
	return string(b)
}
