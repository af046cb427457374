package pretrained

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"

	"compbench/attention"
	"compbench/engine"
	"compbench/kernels"
	"compbench/models"
)

// Incremental decoding with a key/value cache: the CrossKV graph projects
// the encoder output into every decoder layer's cross-attention keys and
// values once per batch, and the Step graph computes one position per row,
// reading the earlier positions' self-attention keys and values from a
// cache of L rows per row (models.Stepper). The Step graph is the decoder
// of Graph, built by the same code (T5.stack, BART.stack) with its
// attention switched to the cache (builder.attendCached); the tests hold
// its logits to the full decoder's at every position.

// stepProg is a compiled Step or CrossKV graph on its machine.
type stepProg struct {
	g    *Graph
	mc   *engine.Machine
	last uint64
}

// maxStepProgs bounds the decoding programs kept: a Step program holds
// its caches, and dev evaluation decodes batches of several source
// lengths.
const maxStepProgs = 4

// stepKey names a compiled decoding graph.
type stepKey struct {
	part    Part
	b, s, l int
}

// stepProgram returns the machine of the decoding graph of k, compiling it
// on first use; the least recently used beyond maxStepProgs are freed
// (never the one in use: a decoding holds one Step program).
func (e *Engine) stepProgram(k stepKey) (*stepProg, error) {
	e.stepClock++
	if sp, ok := e.steps[k]; ok {
		sp.last = e.stepClock
		return sp, nil
	}
	for len(e.steps) >= maxStepProgs {
		old := models.Oldest(e.steps, func(sp *stepProg) uint64 { return sp.last })
		e.steps[old].mc.Close()
		delete(e.steps, old)
	}
	g, err := e.m.net.build(k.b, k.s, k.l, k.part, false, 0, nil)
	if err != nil {
		return nil, err
	}
	st := g.Step
	var roots, inputs G.Nodes
	if k.part == CrossKV {
		roots = append(append(roots, st.CrossKOut...), st.CrossVOut...)
		inputs = G.Nodes{g.Mem}
	} else {
		roots = append(append(G.Nodes{g.Logits}, st.NewK...), st.NewV...)
		inputs = G.Nodes{g.DecIn, g.CrossBias, st.SelfMask, st.OneHot}
		for _, n := range []*G.Node{st.Buckets, st.Pos} {
			if n != nil {
				inputs = append(inputs, n)
			}
		}
		if st.EmbedT != nil {
			inputs = append(inputs, st.EmbedT)
		}
		inputs = append(append(append(append(inputs, st.CacheK...), st.CacheV...), st.CrossK...), st.CrossV...)
	}
	prog, err := engine.Compile(roots, engine.Options{Inputs: inputs})
	if err != nil {
		return nil, fmt.Errorf("decoding program: %w", err)
	}
	mc, err := engine.NewSharedMachine(prog, e.B, e.W.Shared())
	if err != nil {
		return nil, err
	}
	if e.steps == nil {
		e.steps = map[stepKey]*stepProg{}
	}
	sp := &stepProg{g: g, mc: mc, last: e.stepClock}
	e.steps[k] = sp
	return sp, nil
}

// closeSteps frees the decoding machines and buffers.
func (e *Engine) closeSteps() {
	for _, sp := range e.steps {
		sp.mc.Close()
	}
	e.steps = nil
	for _, b := range []engine.Buf{e.zero, e.spare, e.order} {
		if b != nil {
			e.B.Free(b)
		}
	}
	e.zero, e.spare, e.order, e.spareN = nil, nil, nil, 0
}

// decoder is the state of one incremental decoding (models.DecodeState).
type decoder struct {
	e     *Engine
	sp    *stepProg
	B, L  int
	t     int // the model position the next Step computes
	first bool
	// mask and oneHot are the step's host inputs, rewritten per position.
	mask, oneHot []float32
	err          error
}

// StartDecode implements models.Stepper: it projects mem's cross-attention
// keys and values and prepares a cache of maxLen positions (plus the
// model's target prefix, BART's <s>).
func (e *Engine) StartDecode(mem *models.Memory, maxLen int) (models.DecodeState, error) {
	B, S := mem.B, mem.S
	L := e.m.ids.cut(maxLen + len(e.m.ids.tgtPre))
	ckv, err := e.stepProgram(stepKey{part: CrossKV, b: B, s: S})
	if err != nil {
		return nil, err
	}
	sp, err := e.stepProgram(stepKey{part: Step, b: B, s: S, l: L})
	if err != nil {
		return nil, err
	}
	if err := ckv.mc.SetFloats(ckv.g.Mem, mem.Data); err != nil {
		return nil, err
	}
	if err := ckv.mc.Run(); err != nil {
		return nil, fmt.Errorf("decode: cross-attention keys: %w", err)
	}
	if e.zero == nil {
		if e.zero, err = e.B.Alloc(1); err != nil {
			return nil, err
		}
	}
	st, cst := sp.g.Step, ckv.g.Step
	for i := range st.CrossK {
		for _, pair := range [][2]*G.Node{{cst.CrossKOut[i], st.CrossK[i]}, {cst.CrossVOut[i], st.CrossV[i]}} {
			if err := e.copyBuf(ckv.mc, pair[0], sp.mc, pair[1]); err != nil {
				return nil, err
			}
		}
	}
	if st.EmbedT != nil { // the output layer, transposed once
		dst, err := sp.mc.Buffer(st.EmbedT)
		if err != nil {
			return nil, err
		}
		w := st.EmbedT.Shape()
		if err := e.B.Transpose2D(w[1], w[0], e.W.Shared()[st.EmbedName], dst); err != nil {
			return nil, err
		}
	}
	// The caches start zero: rows at and after the position computed are
	// read as zero by attendCached.
	for _, n := range append(append([]*G.Node(nil), st.CacheK...), st.CacheV...) {
		buf, err := sp.mc.Buffer(n)
		if err != nil {
			return nil, err
		}
		if err := e.B.Binary(kernels.OpMul, n.Shape().TotalSize(), buf, 1, e.zero, 0, buf); err != nil {
			return nil, err
		}
	}
	cross := make([]float32, B*S) // [B, 1, 1, S]
	for b := 0; b < B; b++ {
		for j := mem.SrcLen[b]; j < S; j++ {
			cross[b*S+j] = float32(math.Inf(-1))
		}
	}
	if err := sp.mc.SetFloats(sp.g.CrossBias, cross); err != nil {
		return nil, err
	}
	return &decoder{e: e, sp: sp, B: B, L: L, first: true, mask: make([]float32, B*L), oneHot: make([]float32, L)}, nil
}

// copyBuf copies the value of node from on machine a into node to on
// machine b, on the backend.
func (e *Engine) copyBuf(a *engine.Machine, from *G.Node, b *engine.Machine, to *G.Node) error {
	src, err := a.Buffer(from)
	if err != nil {
		return err
	}
	dst, err := b.Buffer(to)
	if err != nil {
		return err
	}
	return e.B.Binary(kernels.OpAdd, to.Shape().TotalSize(), src, 1, e.zero, 0, dst)
}

// Step implements models.DecodeState: tokens are compbench ids, StartID
// first. The first step also feeds the model's target prefix.
func (d *decoder) Step(tokens []int) ([]float32, error) {
	if d.err != nil {
		return nil, d.err
	}
	ids := d.e.m.ids
	if len(tokens) != d.B {
		return nil, fmt.Errorf("decode: %d tokens for %d rows", len(tokens), d.B)
	}
	feed := make([]int, d.B)
	for b, tok := range tokens {
		feed[b] = ids.id(tok)
	}
	if d.first {
		d.first = false
		for _, p := range ids.tgtPre {
			if _, err := d.position(feed, false); err != nil {
				return nil, err
			}
			for b := range feed {
				feed[b] = p
			}
		}
	}
	return d.position(feed, true)
}

// position runs the Step graph for model ids feed at position d.t, writes
// the new keys and values into the caches and, with logits, returns the
// next-token logits in compbench's ids.
func (d *decoder) position(feed []int, logits bool) ([]float32, error) {
	sp, e, t := d.sp, d.e, d.t
	if t >= d.L {
		return nil, fmt.Errorf("decoding position %d: the cache holds %d positions (the model's limit or --max-len)", t, d.L)
	}
	st := sp.g.Step
	inf := float32(math.Inf(-1))
	for b := 0; b < d.B; b++ {
		for j := 0; j < d.L; j++ {
			d.mask[b*d.L+j] = 0
			if j > t {
				d.mask[b*d.L+j] = inf
			}
		}
	}
	clear(d.oneHot)
	d.oneHot[t] = 1
	set := []error{sp.mc.SetInts(sp.g.DecIn, feed), sp.mc.SetFloats(st.SelfMask, d.mask), sp.mc.SetFloats(st.OneHot, d.oneHot)}
	if st.Buckets != nil {
		c := e.m.Config()
		buckets := make([]int, d.L)
		for j := range buckets {
			buckets[j] = attention.Bucket(t-j, false, c.RelBuckets, c.RelMaxDistance)
		}
		set = append(set, sp.mc.SetInts(st.Buckets, buckets))
	}
	if st.Pos != nil {
		pos := make([]int, d.B)
		for b := range pos {
			pos[b] = t + 2 // Hugging Face's learned positions start at row 2
		}
		set = append(set, sp.mc.SetInts(st.Pos, pos))
	}
	for _, err := range set {
		if err != nil {
			return nil, err
		}
	}
	if err := sp.mc.Run(); err != nil {
		return nil, fmt.Errorf("decode step: %w", err)
	}
	for i := range st.NewK {
		for _, pair := range [][2]*G.Node{{st.NewK[i], st.CacheK[i]}, {st.NewV[i], st.CacheV[i]}} {
			if err := d.write(pair[0], pair[1]); err != nil {
				return nil, err
			}
		}
	}
	d.t++
	if !logits {
		return nil, nil
	}
	Vm := e.m.Config().VocabSize
	all := make([]float32, d.B*Vm) // [B, Vm]
	if err := sp.mc.Read(sp.g.Logits, all); err != nil {
		return nil, err
	}
	V := models.NumSpecials + Vm
	out := make([]float32, d.B*V)
	for b := 0; b < d.B; b++ {
		e.m.ids.logits(all[b*Vm:(b+1)*Vm], out[b*V:(b+1)*V])
	}
	return out, nil
}

// write copies the new position's rows [B, hd] into the cache [B*L, hd]
// at rows b*L + t.
func (d *decoder) write(newRows, cache *G.Node) error {
	src, err := d.sp.mc.Buffer(newRows)
	if err != nil {
		return err
	}
	dst, err := d.sp.mc.Buffer(cache)
	if err != nil {
		return err
	}
	hd, be := newRows.Shape()[1], d.e.B
	for b := 0; b < d.B; b++ {
		if err := be.Binary(kernels.OpAdd, hd, be.View(src, b*hd, hd), 1, d.e.zero, 0, be.View(dst, (b*d.L+d.t)*hd, hd)); err != nil {
			return err
		}
	}
	return nil
}

// Reorder implements models.DecodeState: every row b takes row from[b]'s
// cached self-attention keys and values, gathered on the backend; each
// row keeps its own memory (beam search reorders rows of one source). An
// error surfaces at the next step.
func (d *decoder) Reorder(from []int) {
	if d.err != nil {
		return
	}
	d.err = d.reorder(from)
}

func (d *decoder) reorder(from []int) error {
	if len(from) != d.B {
		return fmt.Errorf("decode: reorder of %d rows, want %d", len(from), d.B)
	}
	identity := true
	ids := make([]int32, d.B)
	for i, f := range from {
		if f < 0 || f >= d.B {
			return fmt.Errorf("decode: reorder from row %d of %d", f, d.B)
		}
		identity = identity && f == i
		ids[i] = int32(f)
	}
	if identity {
		return nil
	}
	e, st := d.e, d.sp.g.Step
	var err error
	if e.order == nil {
		if e.order, err = e.B.AllocInt(d.B); err != nil {
			return err
		}
	}
	if err := e.B.UploadInt(e.order, ids); err != nil {
		return err
	}
	for _, n := range append(append([]*G.Node(nil), st.CacheK...), st.CacheV...) {
		size := n.Shape().TotalSize()
		if size > e.spareN {
			if e.spare != nil {
				e.B.Free(e.spare)
			}
			if e.spare, err = e.B.Alloc(size); err != nil {
				e.spare, e.spareN = nil, 0
				return err
			}
			e.spareN = size
		}
		buf, err := d.sp.mc.Buffer(n)
		if err != nil {
			return err
		}
		row := size / d.B
		if err := e.B.Embed(d.B, row, buf, e.order, e.spare); err != nil {
			return err
		}
		if err := e.B.Binary(kernels.OpAdd, size, e.spare, 1, e.zero, 0, buf); err != nil {
			return err
		}
	}
	return nil
}
