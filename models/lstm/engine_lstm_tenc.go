package lstm

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/engine"
	"compbench/models"
	"compbench/models/transformer"
	"compbench/ops"
)

// The LSTM models' Transformer encoder (lstm_tenc.go; Bogin et al. 2022,
// §5.3) on an engine backend: the Transformer's own encoder graph
// (builder.encodeStack) over the LSTM's parameters, compiled by package
// engine once per batch shape and run on the LSTM's backend, bound to its
// weight buffers.
//
// A training program computes the memory and the vector-Jacobian product
// of the memory's gradient: one graph with the memory [B*S, D] as output
// and, as its gradient, an input dMem, differentiated by Gorgonia
// (G.Backpropagate from mem with dMem as the output's gradient, which is
// G.Grad of the scalar Σ(mem ⊙ dMem) without building that sum). The
// program runs in two parts on one machine: the steps up to the memory,
// then, once the LSTM program has produced dMem, the rest. The backward
// part reads the forward part's activations and dropout masks, so nothing
// is computed twice and the masks are those of the forward pass. An
// evaluation program (no dropout, no gradients) computes the memory only.
//
// The graph is batch-major (row b*S+t), as the Transformer's; the memory
// is copied into the time-major layout the decoder reads, and its gradient
// back (permute).

// tencKey identifies a compiled encoder program.
type tencKey struct {
	train bool // memory and gradients, with dropout; else the memory only
	b, s  int
}

// tencPrograms bounds the compiled encoder programs an Engine keeps;
// the least recently used is dropped beyond it.
const tencPrograms = 8

// tencProg is the compiled encoder of one batch shape.
type tencProg struct {
	mc *engine.Machine
	// split (training programs) is the number of steps up to the memory;
	// the rest need its gradient. 0 for evaluation programs.
	split     int
	src, bias *G.Node    // int [B*S] ids; [B, 1, S, S] padding mask
	pos       engine.Buf // [B*S, D] the sinusoidal positions, bound to the graph's src_pos
	mem, dMem *G.Node    // [B*S, D] the memory and its gradient (training)
	gradIdx   []int      // the parameter of each gradient
	gradBufs  []engine.Buf
	drop      *ops.DropoutSource // nil without dropout
	biasHost  []float32          // [B*S*S]
	last      uint64
}

// tencProgram returns the encoder program for k, compiling it on first
// use.
func (e *Engine) tencProgram(k tencKey) (*tencProg, error) {
	e.tclock++
	if tp, ok := e.tprogs[k]; ok {
		tp.last = e.tclock
		return tp, nil
	}
	for len(e.tprogs) >= tencPrograms {
		old := models.Oldest(e.tprogs, func(tp *tencProg) uint64 { return tp.last })
		e.tprogs[old].free(e.b)
		delete(e.tprogs, old)
	}
	tp, err := e.compileTEnc(k)
	if err != nil {
		return nil, fmt.Errorf("transformer encoder program %+v: %w", k, err)
	}
	tp.last = e.tclock
	if e.tprogs == nil {
		e.tprogs = map[tencKey]*tencProg{}
	}
	e.tprogs[k] = tp
	return tp, nil
}

// compileTEnc builds the encoder graph for k with the Transformer's
// builder and compiles it.
func (e *Engine) compileTEnc(k tencKey) (*tencProg, error) {
	m, te := e.m, e.m.tenc
	B, S, D := k.b, k.s, m.Cfg.Dim
	var drop *ops.DropoutSource
	if k.train && te.cfg.Dropout > 0 {
		// Numbered from 0 in every program, as the Transformer's graphs:
		// the masks depend on the seed, the op and the step only.
		drop = ops.NewDropoutSource(m.seed)
	}
	b := transformer.NewEncoderGraph(&m.p, te.cfg, te.enc, k.train, drop)
	tp := &tencProg{biasHost: make([]float32, B*S*S), drop: drop}
	tp.src = b.Input("src", tensor.Int, B*S)
	tp.bias = b.Input("enc_bias", tensor.Float32, B, 1, S, S)
	// The positions are not fed per run: the engine takes the graph's
	// src_pos for a parameter, bound to tp.pos, which the machine neither
	// allocates nor uploads.
	pos := b.Input("src_pos", tensor.Float32, B*S, D)
	var err error
	if tp.mem, err = b.Encode(tp.src, pos, B, S, tp.bias); err != nil { // [B*S, D]
		return nil, err
	}
	roots, inputs := G.Nodes{tp.mem}, []*G.Node{tp.src, tp.bias}
	var grads G.Nodes
	if k.train {
		tp.dMem = b.Input("mem_grad", tensor.Float32, B*S, D)
		var wrt G.Nodes
		for i := range m.p.Names {
			if n, ok := b.Param(i); ok {
				wrt = append(wrt, n)
				tp.gradIdx = append(tp.gradIdx, i)
			}
		}
		if grads, err = G.Backpropagate(G.Nodes{tp.mem}, G.Nodes{tp.dMem}, wrt); err != nil {
			return nil, fmt.Errorf("gradient: %w", err)
		}
		roots, inputs = append(roots, grads...), append(inputs, tp.dMem)
	}
	prog, err := engine.Compile(roots, engine.Options{Inputs: inputs})
	if err != nil {
		return nil, err
	}
	if k.train {
		if tp.split, err = splitAt(prog, tp.mem, tp.dMem); err != nil {
			return nil, err
		}
	}
	if tp.pos, err = e.positions(B, S); err != nil {
		return nil, err
	}
	shared := e.w.Shared()
	shared[pos.Name()] = tp.pos
	if tp.mc, err = engine.NewSharedMachine(prog, e.b, shared); err != nil {
		tp.free(e.b)
		return nil, err
	}
	for _, g := range grads {
		buf, err := tp.mc.Buffer(g)
		if err != nil {
			tp.free(e.b)
			return nil, err
		}
		tp.gradBufs = append(tp.gradBufs, buf)
	}
	return tp, nil
}

// free releases the program's machine and positions.
func (tp *tencProg) free(b engine.Backend) {
	if tp.mc != nil {
		tp.mc.Close()
	}
	if tp.pos != nil {
		b.Free(tp.pos)
	}
	tp.mc, tp.pos = nil, nil
}

// tencPosRows is the number of positions the sinusoid table starts with.
const tencPosRows = 256

// positions returns a new buffer of sinusoidal positions [B*S, D] (each
// batch row's S positions), copied on the device from the model's table
// of positions, which is uploaded when the model is made and again only
// when a source is longer than any before (and 256).
func (e *Engine) positions(B, S int) (engine.Buf, error) {
	D := e.m.Cfg.Dim
	if err := e.posTableFor(S); err != nil {
		return nil, err
	}
	pos, err := e.b.Alloc(B * S * D) // [B*S, D]
	if err != nil {
		return nil, err
	}
	for b := 0; b < B; b++ {
		if err := e.b.Copy2D(S, D, e.posTable, D, e.b.View(pos, b*S*D, S*D), D); err != nil {
			e.b.Free(pos)
			return nil, err
		}
	}
	return pos, nil
}

// splitAt returns the number of p's steps up to the last one the memory
// depends on. Those steps must not read the memory's gradient, directly or
// through another step; running them, then the rest, is running p.
func splitAt(p *engine.Program, mem, dMem *G.Node) (int, error) {
	memID, ok1 := p.BufferOf(mem)
	dID, ok2 := p.BufferOf(dMem)
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("split: the memory or its gradient is not in the program")
	}
	need, k := map[int]bool{memID: true}, 0
	for i := len(p.Steps) - 1; i >= 0; i-- {
		st := &p.Steps[i]
		if !need[st.Out] && (st.Aux < 0 || !need[st.Aux]) {
			continue
		}
		k = max(k, i+1)
		for _, in := range st.In {
			need[in] = true
		}
	}
	tainted := map[int]bool{dID: true}
	for i := 0; i < k; i++ {
		for _, in := range p.Steps[i].In {
			if tainted[in] {
				return 0, fmt.Errorf("split: step %d (%s), before the memory is complete, reads its gradient", i, p.Steps[i].String())
			}
		}
	}
	return k, nil
}

// encodeTransformer runs the encoder (for training, its part up to the
// memory): it sets f.mem [S*B, D] (time-major) and f.keys.
func (f *devPass) encodeTransformer() error {
	e, be, D, B, S := f.e, f.e.b, f.e.m.Cfg.Dim, f.B, f.S
	N := B * S
	tp, err := e.tencProgram(tencKey{train: f.train, b: B, s: S})
	if err != nil {
		return err
	}
	if err := tp.mc.SetInts(tp.src, f.embIDs); err != nil {
		return err
	}
	transformer.FillPadBias(tp.biasHost, B, S, S, f.srcLen, f.srcLen)
	if err := tp.mc.SetFloats(tp.bias, tp.biasHost); err != nil {
		return err
	}
	end := len(tp.mc.Prog.Steps)
	if f.train {
		end = tp.split
	}
	if tp.drop != nil {
		tp.drop.SetStep(uint64(f.step))
	}
	if err := tp.mc.RunSteps(0, end); err != nil {
		return err
	}
	f.tprog = tp
	mem, err := tp.mc.Buffer(tp.mem) // [B*S, D]
	if err != nil {
		return err
	}
	if f.mem, err = f.alloc(N * D); err != nil { // [S*B, D]
		return err
	}
	if err := f.permute(mem, f.mem, true); err != nil {
		return err
	}
	if f.keys, err = f.alloc(N * D); err != nil { // [S*B, H]
		return err
	}
	return mm(be, false, false, N, D, D, f.mem, f.param(e.m.wk), 0, f.keys)
}

// backwardTransformer finishes the encoder's training program from the
// memory's gradient [S*B, D] (time-major) and copies the parameters'
// gradients into the model's gradient buffers.
func (f *devPass) backwardTransformer(dMem engine.Buf) error {
	e, tp := f.e, f.tprog
	if tp == nil || tp.split == 0 {
		return fmt.Errorf("transformer encoder: no training forward pass to continue")
	}
	in, err := tp.mc.Buffer(tp.dMem) // [B*S, D]
	if err != nil {
		return err
	}
	if err := f.permute(dMem, in, false); err != nil {
		return err
	}
	if err := tp.mc.RunSteps(tp.split, len(tp.mc.Prog.Steps)); err != nil {
		return err
	}
	for k, i := range tp.gradIdx {
		n := e.w.Sizes[i]
		if err := e.b.Copy2D(1, n, tp.gradBufs[k], n, e.grads[i], n); err != nil {
			return fmt.Errorf("gradient of %s: %w", e.m.p.Names[i], err)
		}
	}
	return nil
}

// permute copies a [rows of B·S, D] buffer between the batch-major and
// the time-major order, with min(B, S) strided copies.
func (f *devPass) permute(src, dst engine.Buf, toTimeMajor bool) error {
	be, B, S, D := f.e.b, f.B, f.S, f.e.m.Cfg.Dim
	N := B * S * D
	// Batch-major row b*S+t is time-major row t*B+b.
	bm, tm := src, dst
	if !toTimeMajor {
		bm, tm = dst, src
	}
	cp := func(rows int, bOff, bLd, tOff, tLd int) error {
		if toTimeMajor {
			return be.Copy2D(rows, D, be.View(bm, bOff, N-bOff), bLd, be.View(tm, tOff, N-tOff), tLd)
		}
		return be.Copy2D(rows, D, be.View(tm, tOff, N-tOff), tLd, be.View(bm, bOff, N-bOff), bLd)
	}
	if B <= S {
		for b := 0; b < B; b++ { // S rows t of batch row b
			if err := cp(S, b*S*D, D, b*D, B*D); err != nil {
				return err
			}
		}
		return nil
	}
	for t := 0; t < S; t++ { // B rows b of step t
		if err := cp(B, t*D, S*D, t*B*D, D); err != nil {
			return err
		}
	}
	return nil
}

// posTableFor makes sure the table of positions has at least S rows.
func (e *Engine) posTableFor(S int) error {
	if S <= e.posRows {
		return nil
	}
	D := e.m.Cfg.Dim
	rows := max(S, 2*e.posRows, tencPosRows)
	tab, err := e.b.Alloc(rows * D) // [rows, D]
	if err != nil {
		return err
	}
	host := make([]float32, rows*D)
	transformer.FillPos(host, 1, rows, D)
	if err := e.b.Upload(tab, host); err != nil {
		e.b.Free(tab)
		return err
	}
	if e.posTable != nil {
		e.b.Free(e.posTable)
	}
	e.posTable, e.posRows = tab, rows
	return nil
}
