package transformer

import (
	"fmt"
	"math"

	"compbench/attention"
	"compbench/engine"
	"compbench/kernels"
	"compbench/models"
	"compbench/ops"
)

// Incremental decoding on an engine backend: the decoder's forward pass
// one new position per step, as kernel calls on the backend's buffers. The
// encoder memory is used where Encode left it on the backend; the
// cross-attention keys and values are computed from it once per batch, and
// each layer's self-attention keys and values are cached on the backend.
// Re-running the decoder graph over the whole prefix at every step (what
// Logits does, and the definition the tests compare against) costs
// O(T^2) positions per sequence; this costs O(T).
//
// Design: a step calls the backend's kernels directly instead of running
// per-step Gorgonia graphs. The kernels take their sizes as arguments, so
// one step serves every position t (keys 0..t) without compiling a program
// per position or per cache-length bucket; the arithmetic is the compiled
// decoder graph's (Linear as bias rows then GEMM, the per-head products of
// kernels.AttnGemm over one query row, AttentionSoftmax with its additive
// mask and relative bias, LayerNorm, ReLU). Each cache is laid out
// [maxLen, B, D]: the key and value projections of position t write
// straight into rows t*B.., attention reads the keys with row stride B*D,
// and beam reordering gathers the filled rows (Embed) into a spare buffer.
//
// Tokens are chosen on the backend too (Picker): greedy decoding downloads
// B ids and their log-probabilities per step, beam search the k best
// candidates per row.

// decoderMaskRow is the last row of the decoder mask over x: which of the
// positions 0..len(x)-1 the newest one attends to.
func decoderMaskRow(kind string, x []int) ([]bool, error) {
	if kind == "causal" {
		row := make([]bool, len(x))
		for j := range row {
			row[j] = true
		}
		return row, nil
	}
	full, err := decoderAllowed(kind, x, len(x))
	if err != nil {
		return nil, err
	}
	return full[len(x)-1], nil
}

// engineEncoded is the last encoder output Encode left on the backend.
type engineEncoded struct {
	mem *models.Memory
	buf engine.Buf // [B*S, D], the encode program's output buffer
	key any        // the encode program, to tell whether it is still cached
	ep  *models.Program
}

type engineLayerCache struct {
	k, v           engine.Buf // [maxLen, B, D] self-attention keys, values
	spareK, spareV engine.Buf // gather targets of Reorder (allocated on first use)
	memK, memV     engine.Buf // [B*S, D] cross-attention keys, values
}

// engineDecoder implements models.Picker on an Engine's backend.
type engineDecoder struct {
	t      *Engine
	be     engine.DecodeBackend
	B, S   int
	maxLen int
	pos    int
	hist   []int // [B, maxLen] fed tokens (mask rows)
	srcLen []int
	layers []engineLayerCache
	owned  []engine.Buf
	closed bool
	err    error // from Reorder, reported by the next step

	ids, buckets, gather, pick engine.Buf // int32 [B], [maxLen], [maxLen*B], [B*k]
	x, y, q, att, o            engine.Buf // [B, D]
	hid                        engine.Buf // [B, MLP]
	scores, probs              engine.Buf // [B, H, 1, max(maxLen, S)]
	selfMask                   engine.Buf // [B, 1, 1, t+1]
	crossMask                  engine.Buf // [B, 1, 1, S]
	rel                        engine.Buf // [1, H, 1, t+1]
	posTab                     engine.Buf // [maxLen, D]; nil with relative attention
	logits, lp                 engine.Buf // [B, V]
	loops                      bool       // attention's products in loops (loopAttention)
	pickLP                     engine.Buf // float64 [B]
	topV                       engine.Buf // [B, k]
	topK                       int        // capacity of pick and topV per row

	act  *decodeACT // with adaptive computation time (universal.go)
	conv []int32    // staging for id uploads
	mask []float32  // staging for mask rows
}

// StartDecode implements models.Stepper on the backend. The model keeps one
// decoding state: starting another frees the previous one's buffers, and
// the previous state then fails.
func (t *Engine) StartDecode(mem *models.Memory, maxLen int) (models.DecodeState, error) {
	c := t.m.Cfg
	d := c.Dim
	if maxLen < 1 {
		return nil, fmt.Errorf("decode: maximum length %d", maxLen)
	}
	if len(mem.Data) != mem.B*mem.S*d || len(mem.SrcLen) != mem.B {
		return nil, fmt.Errorf("decode: memory has %d values and %d lengths, want %d and %d", len(mem.Data), len(mem.SrcLen), mem.B*mem.S*d, mem.B)
	}
	be, err := engine.Decoding(t.b)
	if err != nil {
		return nil, err
	}
	if t.dec != nil {
		t.dec.free()
		t.dec = nil
	}
	s := &engineDecoder{t: t, be: be, B: mem.B, S: mem.S, maxLen: maxLen, hist: make([]int, mem.B*maxLen),
		srcLen: append([]int(nil), mem.SrcLen...)}
	if err := s.start(mem); err != nil {
		s.free()
		return nil, fmt.Errorf("decode: %w", err)
	}
	t.dec = s
	return s, nil
}

func (s *engineDecoder) alloc(n int) (engine.Buf, error) {
	b, err := s.be.Alloc(max(n, 1))
	if err == nil {
		s.owned = append(s.owned, b)
	}
	return b, err
}

func (s *engineDecoder) allocInt(n int) (engine.Buf, error) {
	b, err := s.be.AllocInt(max(n, 1))
	if err == nil {
		s.owned = append(s.owned, b)
	}
	return b, err
}

// free releases the backend buffers; the state fails from then on.
func (s *engineDecoder) free() {
	for _, b := range s.owned {
		s.be.Free(b)
	}
	s.owned, s.closed = nil, true
}

// start allocates the caches and scratch buffers and computes the
// cross-attention keys and values of every layer.
func (s *engineDecoder) start(mem *models.Memory) error {
	c := s.t.m.Cfg
	B, S, D, L := s.B, s.S, c.Dim, s.maxLen
	var err error
	s.loops = loopAttention(s.be)
	for _, a := range []struct {
		dst *engine.Buf
		n   int
	}{{&s.x, B * D}, {&s.y, B * D}, {&s.q, B * D}, {&s.att, B * D}, {&s.o, B * D},
		{&s.hid, B * c.MLPDim}, {&s.scores, B * c.Heads * max(L, S)}, {&s.probs, B * c.Heads * max(L, S)},
		{&s.selfMask, B * L}, {&s.rel, c.Heads * L}, {&s.logits, B * c.TgtVocab}, {&s.lp, B * c.TgtVocab}} {
		if *a.dst, err = s.alloc(a.n); err != nil {
			return err
		}
	}
	if s.ids, err = s.allocInt(B); err != nil {
		return err
	}
	if s.buckets, err = s.allocInt(L); err != nil {
		return err
	}
	if s.pickLP, err = s.be.AllocF64(B); err != nil {
		return err
	}
	s.owned = append(s.owned, s.pickLP)
	if c.ACT {
		if err := s.startACT(); err != nil {
			return err
		}
	}
	if !c.Relative {
		tab := make([]float32, L*D) // [maxLen, D]
		FillPos(tab, 1, L, D)
		if s.posTab, err = s.alloc(L * D); err != nil {
			return err
		}
		if err := s.be.Upload(s.posTab, tab); err != nil {
			return err
		}
	}
	memBuf, rows, err := s.memory(mem)
	if err != nil {
		return err
	}
	rep := s.B / rows // memory rows repeated rep times each (beam search)
	var tmp, repIDs engine.Buf
	if rep > 1 {
		if tmp, err = s.alloc(rows * S * D); err != nil {
			return err
		}
		ids := make([]int32, B)
		for i := range ids {
			ids[i] = int32(i / rep)
		}
		if repIDs, err = s.allocInt(B); err != nil {
			return err
		}
		if err := s.be.UploadInt(repIDs, ids); err != nil {
			return err
		}
	}
	// crossKV projects the memory with (w, b) into dst [B*S, D], on the
	// distinct rows first when they are repeated.
	crossKV := func(w, b int) (engine.Buf, error) {
		dst, err := s.alloc(B * S * D)
		if err != nil {
			return nil, err
		}
		if rep == 1 {
			return dst, s.linear(memBuf, B*S, w, b, dst)
		}
		if err := s.linear(memBuf, rows*S, w, b, tmp); err != nil {
			return nil, err
		}
		return dst, s.be.Embed(B, S*D, tmp, repIDs, dst)
	}
	s.layers = make([]engineLayerCache, len(s.t.m.dec))
	for i := range s.t.m.dec {
		l, lc := &s.t.m.dec[i], &s.layers[i]
		if lc.k, err = s.alloc(L * B * D); err != nil {
			return err
		}
		if lc.v, err = s.alloc(L * B * D); err != nil {
			return err
		}
		if lc.memK, err = crossKV(l.cross.wk, l.cross.bk); err != nil {
			return err
		}
		if lc.memV, err = crossKV(l.cross.wv, l.cross.bv); err != nil {
			return err
		}
	}
	// The cross-attention mask: keys beyond each row's source length.
	cm := make([]float32, B*S) // [B, 1, 1, S]
	for b := 0; b < B; b++ {
		for j := s.srcLen[b]; j < S; j++ {
			cm[b*S+j] = float32(math.Inf(-1))
		}
	}
	cross, err := s.alloc(B * S)
	if err != nil {
		return err
	}
	s.crossMask = cross
	return s.be.Upload(cross, cm)
}

// memory returns the encoder output of mem on the backend and how many
// distinct rows it has: the buffer Encode left there when mem is what it
// returned, or (beam search) mem is Memory.Repeat of that; otherwise mem's
// data uploaded.
func (s *engineDecoder) memory(mem *models.Memory) (engine.Buf, int, error) {
	if e := s.t.enc; e != nil && s.t.Has(e.key, e.ep) {
		if e.mem == mem {
			return e.buf, mem.B, nil
		}
		if repeatOf(mem, e.mem) {
			return e.buf, e.mem.B, nil
		}
	}
	buf, err := s.alloc(len(mem.Data))
	if err != nil {
		return nil, 0, err
	}
	return buf, mem.B, s.be.Upload(buf, mem.Data)
}

// repeatOf says whether mem is orig.Repeat(k) for some k (compared by value).
func repeatOf(mem, orig *models.Memory) bool {
	if orig.B == 0 || mem.B%orig.B != 0 || mem.S != orig.S || len(mem.SrcLen) != mem.B ||
		len(orig.SrcLen) != orig.B || len(orig.Data)*(mem.B/orig.B) != len(mem.Data) {
		return false
	}
	k, n := mem.B/orig.B, len(orig.Data)/orig.B
	for b := 0; b < mem.B; b++ {
		o := b / k
		if mem.SrcLen[b] != orig.SrcLen[o] {
			return false
		}
		src, dst := orig.Data[o*n:(o+1)*n], mem.Data[b*n:(b+1)*n]
		for i := range src {
			if math.Float32bits(src[i]) != math.Float32bits(dst[i]) {
				return false
			}
		}
	}
	return true
}

// linear computes y [n, out] = x [n, in] · W + b, as the engine runs ops'
// Linear: bias rows, then a GEMM accumulating onto them.
func (s *engineDecoder) linear(x engine.Buf, n, w, b int, y engine.Buf) error {
	shape := s.t.m.p.Values[w].Shape()
	in, out := shape[0], shape[1]
	W := s.t.W.Bufs
	if err := s.be.RepeatRows(n, out, W[b], y); err != nil {
		return err
	}
	p := kernels.GemmParams{M: n, N: out, K: in, Alpha: 1, Beta: 1, LdA: in, LdB: out, LdC: out}
	return s.be.Gemm(p, x, W[w], y)
}

// attend runs one query row per batch row (s.q [B, D]) over tk keys and
// values stored with row stride ld and per-row offset stride rs (the
// self-attention cache: ld B*D, rs D; the cross-attention memory: ld D, rs
// S*D), with an optional mask [B, 1, 1, tk] and relative bias [1, H, 1,
// tk], into s.att [B, D]. When the mask hides every key of row b from
// rowLen[b] on (the cross-attention's padding; rowLen may be nil), the
// loops (loopAttention) skip those keys.
func (s *engineDecoder) attend(k, v engine.Buf, tk, ld, rs int, rowLen []int, mask, bias engine.Buf) error {
	c := s.t.m.Cfg
	B, D, H := s.B, c.Dim, c.Heads
	dh := D / H
	scale := float32(1 / math.Sqrt(float64(dh)))
	if s.loops {
		scoreLoops(B, H, dh, tk, ld, rs, rowLen, scale, s.q.([]float32), k.([]float32), s.scores.([]float32))
	} else {
		sp := kernels.GemmParams{M: 1, N: tk, K: dh, TransB: true, Alpha: scale, LdA: D, LdB: ld, LdC: tk,
			Batch: [2]int{B, H}, StrideA: [2]int{D, dh}, StrideB: [2]int{rs, dh}, StrideC: [2]int{H * tk, tk}}
		if err := s.be.Gemm(sp, s.q, k, s.scores); err != nil { // [B, H, 1, tk]
			return err
		}
	}
	shape := kernels.AttnShape{B: B, H: H, Tq: 1, Tk: tk}
	if err := s.be.AttnSoftmax(shape, s.scores, mask, kernels.Bcast{B: B, H: 1}, bias, kernels.Bcast{B: 1, H: H}, s.probs); err != nil {
		return err
	}
	if s.loops {
		valueLoops(B, H, dh, tk, ld, rs, rowLen, s.probs.([]float32), v.([]float32), s.att.([]float32))
		return nil
	}
	vp := kernels.GemmParams{M: 1, N: dh, K: tk, Alpha: 1, LdA: tk, LdB: ld, LdC: D,
		Batch: [2]int{B, H}, StrideA: [2]int{H * tk, tk}, StrideB: [2]int{rs, dh}, StrideC: [2]int{D, dh}}
	return s.be.Gemm(vp, s.probs, v, s.att) // [B, D]
}

// loopAttention says whether the decoder computes attention's two products
// in loops on the backend's buffers (scoreLoops, valueLoops) instead of
// the backend's Gemm. With one query row the products are B*H tiny GEMMs
// (M 1, K D/H or the key count): on the CPU backend each is one BLAS call,
// whose fixed cost exceeds the work; on the GPU they are one launch. The
// loops sum in the order of kernels.GemmRef, which the CPU backend runs
// without BLAS. In TF32 mode the CPU backend rounds the operands first,
// so it keeps its Gemm. Tests flip it to check both.
var loopAttention = func(be engine.Backend) bool {
	c, ok := be.(*engine.CPU)
	return ok && !c.TF32
}

// scoreLoops computes scores [B, H, 1, tk] = scale · q·k for q [B, D] and
// key j of row b, head h at k[b*rs + j*ld + h*dh:][:dh]: the dot product
// accumulated in increasing index, then scaled, as kernels.GemmRef. Keys
// from rowLen[b] on (masked) score 0.
func scoreLoops(B, H, dh, tk, ld, rs int, rowLen []int, scale float32, q, k, scores []float32) {
	for b := 0; b < B; b++ {
		n := tk
		if rowLen != nil {
			n = max(0, min(n, rowLen[b]))
		}
		for h := 0; h < H; h++ {
			qh := q[(b*H+h)*dh : (b*H+h+1)*dh]
			row := scores[(b*H+h)*tk : (b*H+h+1)*tk]
			for j := range n {
				o := b*rs + j*ld + h*dh
				kj := k[o : o+len(qh)]
				var dot float32
				for e, x := range qh {
					dot += x * kj[e]
				}
				row[j] = scale * dot
			}
			clear(row[n:])
		}
	}
}

// valueLoops computes att [B, D], head h of row b = Σ_j p[b, h, j] ·
// v[b*rs + j*ld + h*dh:][:dh], each output accumulated in increasing j, as
// kernels.GemmRef. Keys from rowLen[b] on have probability 0 and are
// skipped: adding their 0·v changes nothing unless v is not finite there.
func valueLoops(B, H, dh, tk, ld, rs int, rowLen []int, p, v, att []float32) {
	for b := 0; b < B; b++ {
		n := tk
		if rowLen != nil {
			n = max(0, min(n, rowLen[b]))
		}
		for h := 0; h < H; h++ {
			out := att[(b*H+h)*dh : (b*H+h+1)*dh]
			clear(out)
			for j, pj := range p[(b*H+h)*tk : (b*H+h)*tk+n] {
				o := b*rs + j*ld + h*dh
				vj := v[o : o+len(out)]
				for e, x := range vj {
					out[e] += pj * x
				}
			}
		}
	}
}

// uploadIDs uploads ids as int32.
func (s *engineDecoder) uploadIDs(dst engine.Buf, ids []int) error {
	s.conv = s.conv[:0]
	for _, v := range ids {
		s.conv = append(s.conv, int32(v))
	}
	return s.be.UploadInt(dst, s.conv)
}

// forward feeds tokens at the current position and leaves the logits in
// s.logits.
func (s *engineDecoder) forward(tokens []int) error {
	if s.closed {
		return fmt.Errorf("decode: the state was closed (a later StartDecode or Close)")
	}
	if s.err != nil {
		return s.err
	}
	m, c := s.t.m, s.t.m.Cfg
	B, D, t := s.B, c.Dim, s.pos
	if t >= s.maxLen {
		return fmt.Errorf("decode: step %d beyond the maximum length %d", t+1, s.maxLen)
	}
	if len(tokens) != B {
		return fmt.Errorf("decode: %d tokens for %d rows", len(tokens), B)
	}
	for b, tok := range tokens {
		if tok < 0 || tok >= c.TgtVocab {
			return fmt.Errorf("decode: token id %d outside the vocabulary", tok)
		}
		s.hist[b*s.maxLen+t] = tok
	}
	W := s.t.W.Bufs
	if err := s.uploadIDs(s.ids, tokens); err != nil {
		return err
	}
	if err := s.be.Embed(B, D, W[m.tgtEmb], s.ids, s.x); err != nil { // [B, D]
		return err
	}
	if s.posTab != nil && m.decStep == nil {
		if err := s.be.AddBias(B, D, s.x, s.be.View(s.posTab, t*D, D), s.x); err != nil {
			return err
		}
	}
	tk := t + 1
	// The mask row of position t per row, from its history (the last row
	// of the graph's decoder mask); the causal mask allows every key 0..t.
	var selfMask engine.Buf
	if c.Mask != "causal" {
		s.mask = s.mask[:0]
		for b := 0; b < B; b++ {
			row, err := decoderMaskRow(c.Mask, s.hist[b*s.maxLen:b*s.maxLen+tk])
			if err != nil {
				return err
			}
			for _, ok := range row {
				s.mask = append(s.mask, maskValue(ok))
			}
		}
		if err := s.be.Upload(s.selfMask, s.mask); err != nil {
			return err
		}
		selfMask = s.selfMask
	}
	if c.Relative {
		bk := make([]int, tk)
		for j := range bk {
			bk[j] = attention.Bucket(t-j, false, c.RelBuckets, c.RelMaxDistance)
		}
		if err := s.uploadIDs(s.buckets, bk); err != nil {
			return err
		}
	}
	eps := float32(ops.LayerNormEps)
	for i := range m.dec {
		l, lc := &m.dec[i], &s.layers[i]
		if m.decStep != nil { // the Universal Transformer's timing (universal.go)
			if s.posTab != nil {
				if err := s.be.AddBias(B, D, s.x, s.be.View(s.posTab, t*D, D), s.x); err != nil {
					return err
				}
			}
			if err := s.be.AddBias(B, D, s.x, W[m.decStep[i]], s.x); err != nil {
				return err
			}
			if s.act != nil {
				if err := s.actHalt(i); err != nil {
					return err
				}
			}
		}
		if err := s.be.LayerNorm(B, D, eps, s.x, W[l.ln[0][0]], W[l.ln[0][1]], s.y); err != nil {
			return err
		}
		if err := s.linear(s.y, B, l.self.wq, l.self.bq, s.q); err != nil {
			return err
		}
		if err := s.linear(s.y, B, l.self.wk, l.self.bk, s.be.View(lc.k, t*B*D, B*D)); err != nil {
			return err
		}
		if err := s.linear(s.y, B, l.self.wv, l.self.bv, s.be.View(lc.v, t*B*D, B*D)); err != nil {
			return err
		}
		var bias engine.Buf
		if l.self.rel >= 0 {
			if err := s.be.RelBias(c.RelBuckets, c.Heads, 1, tk, W[l.self.rel], s.buckets, s.rel); err != nil {
				return err
			}
			bias = s.rel
		}
		if err := s.attend(lc.k, lc.v, tk, B*D, D, nil, selfMask, bias); err != nil {
			return err
		}
		if err := s.residual(l.self.wo, l.self.bo); err != nil {
			return err
		}

		if err := s.be.LayerNorm(B, D, eps, s.x, W[l.ln[1][0]], W[l.ln[1][1]], s.y); err != nil {
			return err
		}
		if err := s.linear(s.y, B, l.cross.wq, l.cross.bq, s.q); err != nil {
			return err
		}
		if err := s.attend(lc.memK, lc.memV, s.S, D, s.S*D, s.srcLen, s.crossMask, nil); err != nil {
			return err
		}
		if err := s.residual(l.cross.wo, l.cross.bo); err != nil {
			return err
		}

		if err := s.be.LayerNorm(B, D, eps, s.x, W[l.ln[2][0]], W[l.ln[2][1]], s.y); err != nil {
			return err
		}
		if err := s.linear(s.y, B, l.w1, l.b1, s.hid); err != nil { // [B, MLP]
			return err
		}
		if err := s.be.ReLU(B*c.MLPDim, s.hid, s.hid); err != nil {
			return err
		}
		if err := s.linear(s.hid, B, l.w2, l.b2, s.o); err != nil {
			return err
		}
		if err := s.be.Binary(kernels.OpAdd, B*D, s.x, 1, s.o, 1, s.x); err != nil {
			return err
		}
		if s.act != nil {
			if err := s.actMix(i); err != nil {
				return err
			}
		}
	}
	out := s.x
	if s.act != nil {
		out = s.act.acc
	}
	if err := s.be.LayerNorm(B, D, eps, out, W[m.decLN[0]], W[m.decLN[1]], s.y); err != nil {
		return err
	}
	s.pos++
	return s.linear(s.y, B, m.outW, m.outB, s.logits) // [B, V]
}

// residual adds the output projection (w, b) of s.att to s.x.
func (s *engineDecoder) residual(w, b int) error {
	if err := s.linear(s.att, s.B, w, b, s.o); err != nil {
		return err
	}
	return s.be.Binary(kernels.OpAdd, s.B*s.t.m.Cfg.Dim, s.x, 1, s.o, 1, s.x)
}

func maskValue(ok bool) float32 {
	if ok {
		return 0
	}
	return float32(math.Inf(-1))
}
