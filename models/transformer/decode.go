package transformer

import (
	"fmt"
	"math"
	"slices"

	G "gorgonia.org/gorgonia"

	"compbench/attention"
	"compbench/engine"
	"compbench/models"
)

// Incremental decoding on an engine backend: the step graphs of step.go,
// compiled once per shape, run one position per step, over buffers that
// outlive them (decodeBufs: the caches, the memory's keys and values, the
// cross-attention mask). The memory's keys and values are projected once
// per decoding by a CrossKV program, from the encoder output Encode left
// on the backend. Re-running the decoder graph over the whole prefix at
// every step (what Model.Logits does, the definition the tests compare
// against) costs O(T^2) positions per sequence; this costs O(T).
//
// Tokens are chosen on the backend too (Picker, decode_pick.go): greedy
// decoding downloads B ids and their log-probabilities per step, beam
// search the k best candidates per row.

// stepKey names a compiled graph: the step graph of b rows over s memory
// positions and l cached ones, or (l 0) the CrossKV graph of b rows.
type stepKey struct{ b, s, l int }

// stepProg is a compiled step or CrossKV graph on its machine.
type stepProg struct {
	step  *stepGraph  // nil for a CrossKV graph
	cross *crossGraph // nil for a step graph
	mc    *engine.Machine
	last  uint64
}

// maxStepProgs bounds the programs kept: a decoding runs a few step
// programs (cacheLen: 10 for 48 positions) and one CrossKV program per
// shape, and evaluation decodes batches of several source lengths. A
// program holds only its activations and per-step inputs; the decoding
// state is in decodeBufs.
const maxStepProgs = 64

// program returns the program of k, compiling it on first use; the least
// recently used beyond maxStepProgs are freed (a decoding fetches its
// programs at every step, so one it used before may be rebuilt).
func (t *Engine) program(k stepKey) (*stepProg, error) {
	t.stepClock++
	if sp, ok := t.steps[k]; ok {
		sp.last = t.stepClock
		return sp, nil
	}
	for len(t.steps) >= maxStepProgs {
		old := models.Oldest(t.steps, func(sp *stepProg) uint64 { return sp.last })
		t.steps[old].mc.Close()
		delete(t.steps, old)
	}
	sp := &stepProg{last: t.stepClock}
	var roots, inputs G.Nodes
	if k.l == 0 {
		cg, err := t.m.buildCross(k.b, k.s)
		if err != nil {
			return nil, err
		}
		sp.cross, roots, inputs = cg, append(append(roots, cg.k...), cg.v...), G.Nodes{cg.mem}
	} else {
		g, err := t.m.buildStep(k.b, k.s, k.l)
		if err != nil {
			return nil, err
		}
		sp.step, roots, inputs = g, append(append(G.Nodes{g.logits}, g.io.newK...), g.io.newV...), g.inputs()
	}
	prog, err := engine.Compile(roots, engine.Options{Inputs: inputs})
	if err != nil {
		return nil, fmt.Errorf("decoding program: %w", err)
	}
	if sp.mc, err = engine.NewSharedMachine(prog, t.b, t.bufs.shared(t.W.Shared())); err != nil {
		return nil, err
	}
	if t.steps == nil {
		t.steps = map[stepKey]*stepProg{}
	}
	t.steps[k] = sp
	return sp, nil
}

// inputs are the step graph's inputs set at every step.
func (g *stepGraph) inputs() G.Nodes {
	in := G.Nodes{g.in.decIn, g.io.oneHot, g.io.mask}
	for _, n := range []*G.Node{g.io.posIDs, g.io.buckets} {
		if n != nil {
			in = append(in, n)
		}
	}
	return in
}

// closeSteps frees the programs; the decoding state then fails.
func (t *Engine) closeSteps() {
	for _, sp := range t.steps {
		sp.mc.Close()
	}
	t.steps = nil
	if t.state != nil {
		t.state.closed = true
		t.state = nil
	}
}

// engineEncoded is the last encoder output Encode left on the backend.
type engineEncoded struct {
	mem *models.Memory
	buf engine.Buf // [B*S, D], the encode program's output buffer
	key any        // the encode program, to tell whether it is still cached
	ep  *models.Program
}

// decoder implements models.Picker with the step programs.
type decoder struct {
	t      *Engine
	be     engine.DecodeBackend
	B, S   int
	maxLen int
	pos    int   // the position the next step computes
	hist   []int // [B, maxLen] fed tokens (the masks' separators)
	closed bool
	err    error     // from Reorder, reported by the next step
	cur    *stepProg // the last step's program, holding its logits
	// Host staging of the step inputs.
	fill         []int
	mask, oneHot []float32
}

// StartDecode implements models.Stepper on the backend. The model keeps one
// decoding state: starting another ends the previous one, which then fails.
func (t *Engine) StartDecode(mem *models.Memory, maxLen int) (models.DecodeState, error) {
	c := t.m.Cfg
	if maxLen < 1 {
		return nil, fmt.Errorf("decode: maximum length %d", maxLen)
	}
	if len(mem.Data) != mem.B*mem.S*c.Dim || len(mem.SrcLen) != mem.B {
		return nil, fmt.Errorf("decode: memory has %d values and %d lengths, want %d and %d", len(mem.Data), len(mem.SrcLen), mem.B*mem.S*c.Dim, mem.B)
	}
	be, err := engine.Decoding(t.b)
	if err != nil {
		return nil, err
	}
	if t.state != nil {
		t.state.closed = true
		t.state = nil
	}
	d := &decoder{t: t, be: be, B: mem.B, S: mem.S, maxLen: maxLen, hist: make([]int, mem.B*maxLen)}
	if err := d.start(mem); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	t.state = d
	return d, nil
}

// start sizes the buffers, projects the memory's keys and values, sets
// the cross-attention mask and zeroes the caches.
func (d *decoder) start(mem *models.Memory) error {
	t, c := d.t, d.t.m.Cfg
	B, S, D := d.B, d.S, c.Dim
	t.bufs.be = t.b
	nSelf, nCross := len(t.m.dec), len(t.m.crossLayers())
	grown, err := t.bufs.fitBound(B, S, d.maxLen, D, nSelf, nCross)
	if grown {
		t.closeSteps() // bound to the old buffers
	}
	if err != nil {
		return err
	}
	if err := t.bufs.fitRest(B, d.maxLen, D, c.TgtVocab); err != nil {
		return err
	}
	if err := d.crossKV(mem); err != nil {
		return err
	}
	cross := make([]float32, B*S) // [B, 1, 1, S]
	for b := 0; b < B; b++ {
		for j := mem.SrcLen[b]; j < S; j++ {
			cross[b*S+j] = negInf
		}
	}
	if err := d.be.Upload(t.bufs.bound[crossBiasName].buf, cross); err != nil {
		return err
	}
	for i := 0; i < nSelf; i++ {
		for _, name := range []string{cacheKName, cacheVName} {
			// Rows t*B.. must read zero at step t (attendCached).
			if err := d.be.RepeatRows(d.maxLen*B, D, t.bufs.zero.buf, t.bufs.get(name, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// crossKV runs the CrossKV program over mem's distinct rows and fills the
// bound keys and values of its B rows (beam search repeats each row).
func (d *decoder) crossKV(mem *models.Memory) error {
	t, be := d.t, d.be
	src, rows := t.encoded(mem)
	cp, err := t.program(stepKey{b: rows, s: d.S})
	if err != nil {
		return err
	}
	if src != nil {
		dst, err := cp.mc.Buffer(cp.cross.mem)
		if err == nil {
			err = t.bufs.copy(rows*d.S*t.m.Cfg.Dim, src, dst)
		}
		if err != nil {
			return err
		}
	} else if err := cp.mc.SetFloats(cp.cross.mem, mem.Data); err != nil {
		return err
	}
	if err := cp.mc.Run(); err != nil {
		return fmt.Errorf("cross-attention keys: %w", err)
	}
	rep := d.B / rows
	ids := make([]int, d.B)
	for b := range ids {
		ids[b] = b / rep
	}
	if err := d.upload(t.bufs.order.buf, ids); err != nil {
		return err
	}
	n := d.S * t.m.Cfg.Dim
	for i := range cp.cross.k {
		for _, p := range []struct {
			out  *G.Node
			name string
		}{{cp.cross.k[i], crossKName}, {cp.cross.v[i], crossVName}} {
			out, err := cp.mc.Buffer(p.out)
			if err != nil {
				return err
			}
			if err := be.Embed(d.B, n, out, t.bufs.order.buf, t.bufs.get(p.name, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// encoded returns the encoder output of mem on the backend and how many
// distinct rows it has, when mem is what the last Encode returned or
// (beam search) Memory.Repeat of it; otherwise nil and mem.B.
func (t *Engine) encoded(mem *models.Memory) (engine.Buf, int) {
	if e := t.enc; e != nil && t.Has(e.key, e.ep) && (e.mem == mem || repeatOf(mem, e.mem)) {
		return e.buf, e.mem.B
	}
	return nil, mem.B
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

// upload uploads ids as int32.
func (d *decoder) upload(dst engine.Buf, ids []int) error {
	conv := make([]int32, len(ids))
	for i, v := range ids {
		conv[i] = int32(v)
	}
	return d.be.UploadInt(dst, conv)
}

// forward feeds tokens at the current position; the logits [B, V] are then
// in d.cur's machine.
func (d *decoder) forward(tokens []int) error {
	if err := d.check(tokens); err != nil {
		return err
	}
	t, B, pos := d.t, d.B, d.pos
	for b, tok := range tokens {
		d.hist[b*d.maxLen+pos] = tok
	}
	sp, err := t.program(stepKey{b: B, s: d.S, l: cacheLen(pos, d.maxLen)})
	if err != nil {
		return err
	}
	if err := d.setInputs(sp, tokens); err != nil {
		return err
	}
	if err := sp.mc.Run(); err != nil {
		return fmt.Errorf("decode step: %w", err)
	}
	io, n := sp.step.io, B*t.m.Cfg.Dim
	for i := range io.newK {
		for _, p := range []struct {
			row  *G.Node
			name string
		}{{io.newK[i], cacheKName}, {io.newV[i], cacheVName}} {
			src, err := sp.mc.Buffer(p.row)
			if err == nil {
				err = t.bufs.copy(n, src, d.be.View(t.bufs.get(p.name, i), pos*n, n))
			}
			if err != nil {
				return err
			}
		}
	}
	d.pos++
	d.cur = sp
	return nil
}

// check refuses a step of a closed or failed state, beyond the maximum
// length, or with bad tokens.
func (d *decoder) check(tokens []int) error {
	switch {
	case d.closed:
		return fmt.Errorf("decode: the state was closed (a later StartDecode or Close)")
	case d.err != nil:
		return d.err
	case d.pos >= d.maxLen:
		return fmt.Errorf("decode: step %d beyond the maximum length %d", d.pos+1, d.maxLen)
	case len(tokens) != d.B:
		return fmt.Errorf("decode: %d tokens for %d rows", len(tokens), d.B)
	}
	for _, tok := range tokens {
		if tok < 0 || tok >= d.t.m.Cfg.TgtVocab {
			return fmt.Errorf("decode: token id %d outside the vocabulary", tok)
		}
	}
	return nil
}

// setInputs sets the step program's inputs for tokens at position d.pos.
func (d *decoder) setInputs(sp *stepProg, tokens []int) error {
	c, g, mc, pos := d.t.m.Cfg, sp.step, sp.mc, d.pos
	L := g.io.L
	d.oneHot = slices.Grow(d.oneHot[:0], L)[:L]
	clear(d.oneHot)
	d.oneHot[pos] = 1
	if err := d.selfMask(L); err != nil {
		return err
	}
	set := []error{mc.SetInts(g.in.decIn, tokens), mc.SetFloats(g.io.oneHot, d.oneHot), mc.SetFloats(g.io.mask, d.mask)}
	if g.io.buckets != nil {
		d.fill = d.fill[:0]
		for j := 0; j < L; j++ {
			d.fill = append(d.fill, attention.Bucket(pos-j, false, c.RelBuckets, c.RelMaxDistance))
		}
		set = append(set, mc.SetInts(g.io.buckets, d.fill))
	}
	if g.io.posIDs != nil {
		d.fill = d.fill[:0]
		for range d.B {
			d.fill = append(d.fill, pos)
		}
		set = append(set, mc.SetInts(g.io.posIDs, d.fill))
	}
	for _, err := range set {
		if err != nil {
			return err
		}
	}
	return nil
}

// selfMask fills d.mask, the mask row of position pos over L keys: the
// causal mask's keys 0..pos, or each row's decoder mask over its history
// (decoderMaskRow); -Inf after pos.
func (d *decoder) selfMask(L int) error {
	kind, pos := d.t.m.Cfg.Mask, d.pos
	d.mask = d.mask[:0]
	if kind == "causal" {
		for j := 0; j < L; j++ {
			d.mask = append(d.mask, maskValue(j <= pos))
		}
		return nil
	}
	for b := 0; b < d.B; b++ {
		row, err := decoderMaskRow(kind, d.hist[b*d.maxLen:b*d.maxLen+pos+1])
		if err != nil {
			return err
		}
		for j := 0; j < L; j++ {
			d.mask = append(d.mask, maskValue(j <= pos && row[j]))
		}
	}
	return nil
}

func maskValue(ok bool) float32 {
	if ok {
		return 0
	}
	return negInf
}
