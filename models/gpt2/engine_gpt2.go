package gpt2

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"compbench/engine"
	"compbench/kernels"
)

// Engine scores with GPT-2 on an engine backend, on every device (the
// CPU runs engine.CPU{BLAS: true}): the whole-model forward graph runs as
// one program per batch shape, then the scored rows are gathered,
// projected onto the tied embeddings and turned into log-probabilities on
// the backend; only the ids go in and one float64 per scored token comes
// out. The program's arena reuses each layer's activations for the next,
// so scoring holds about one block's activations beside the weights.
type Engine struct {
	m *Model
	b engine.Backend
	w *engine.Weights
	// alias: w's buffers are the host tensors (CPU backend), not copies.
	alias bool
	progs map[gpt2Key]*gpt2Prog
	bytes int64 // sum of the programs' bytes
	clock uint64
	wte   engine.Buf
	// scratch, grown as needed: row ids and targets [n], gathered hidden
	// states [n, E], logits [n, V], log-probabilities [n].
	rows, tgt, h, logits, out engine.Buf
	cap                       int
}

// gpt2Prog is one graph's compiled program on the engine's backend.
type gpt2Prog struct {
	g     *gpt2Graph
	mc    *engine.Machine
	grads []engine.Buf // training programs: per weight, in parameter order
	bytes int64        // the machine's own buffers, weights not counted
	last  uint64
}

// gpt2ScoreChunk bounds the rows projected at once: the [rows, V] logits
// (51 MB for GPT-2's vocabulary). With 64 rows OpenBLAS ran the short and
// wide product 10% slower; 512 gained nothing.
const gpt2ScoreChunk = 256

// NewEngine puts m's weights on b. On the CPU backend, whose memory is
// the host's, the weight buffers are m's own tensors rather than copies
// (a copy would hold GPT-2 medium's 1.4 GB twice); every other step is
// the one a GPU runs.
func NewEngine(m *Model, b engine.Backend) (*Engine, error) {
	names, vals := m.p.Names, m.p.AllData()
	e := &Engine{m: m, b: b, progs: map[gpt2Key]*gpt2Prog{}}
	if _, ok := b.(*engine.CPU); ok {
		e.w, e.alias = &engine.Weights{B: b, Names: names}, true
		for _, v := range vals {
			e.w.Sizes = append(e.w.Sizes, len(v))
			e.w.Bufs = append(e.w.Bufs, v)
		}
	} else {
		var err error
		if e.w, err = engine.NewWeights(b, names, vals); err != nil {
			return nil, err
		}
	}
	wte, _ := m.p.Index("wte.weight")
	e.wte = e.w.Bufs[wte]
	return e, nil
}

// program returns the program of key k with its inputs set for seqs (and
// the targets from first on, for training), compiling it on first use. As
// for a Transformer's graphs, the programs kept are bounded by count
// (MaxGraphs) and bytes (GraphBudget), the least recently used dropped
// first; dropping one never changes a result.
func (e *Engine) program(k gpt2Key, seqs [][]int, first []int) (*gpt2Prog, error) {
	e.clock++
	p, ok := e.progs[k]
	if !ok {
		var err error
		if p, err = e.compile(k); err != nil {
			return nil, err
		}
	}
	p.last = e.clock
	p.g.fill(seqs, e.m.Cfg.VocabSize-1)
	if k.train {
		p.g.setTargets(seqs, first)
	}
	for _, n := range p.g.inputs() {
		if err := p.mc.Set(n, p.g.vals[n]); err != nil { // ids are range-checked here
			return nil, err
		}
	}
	return p, nil
}

func (e *Engine) compile(k gpt2Key) (*gpt2Prog, error) {
	g, err := e.m.graph(k)
	if err != nil {
		return nil, fmt.Errorf("build GPT-2 graph for batch %dx%d: %w", k.b, k.t, err)
	}
	roots := G.Nodes{g.hidden}
	if k.train {
		roots = append(G.Nodes{g.loss}, g.grads...)
	}
	prog, err := engine.Compile(roots, engine.Options{Inputs: g.inputs()})
	if err != nil {
		return nil, fmt.Errorf("engine program: %w", err)
	}
	size := prog.ArenaSize // float32 and int32 elements
	for i := range prog.Bufs {
		if c := prog.Bufs[i].Class; c != engine.Activation && c != engine.Param {
			size += prog.Bufs[i].Size
		}
	}
	p := &gpt2Prog{g: g, bytes: 4 * int64(size)}
	for len(e.progs) > 0 && (len(e.progs) >= max(1, e.m.MaxGraphs) ||
		e.m.GraphBudget > 0 && e.bytes+p.bytes > e.m.GraphBudget) {
		e.evictOldest()
	}
	if p.mc, err = engine.NewSharedMachine(prog, e.b, e.w.Shared()); err != nil {
		return nil, err
	}
	if k.train {
		// Every GPT-2 graph uses every weight; a weight without a gradient
		// would silently keep its moments behind.
		p.grads = make([]engine.Buf, len(e.w.Names))
		for j, gn := range g.grads {
			if p.grads[g.params[j]], err = p.mc.Buffer(gn); err != nil {
				p.mc.Close()
				return nil, err
			}
		}
		for i, gb := range p.grads {
			if gb == nil {
				p.mc.Close()
				return nil, fmt.Errorf("engine program: weight %s has no gradient", e.w.Names[i])
			}
		}
	}
	e.progs[k] = p
	e.bytes += p.bytes
	return p, nil
}

// evictOldest drops the least recently used program.
func (e *Engine) evictOldest() {
	var old gpt2Key
	var oldest *gpt2Prog
	for k, p := range e.progs {
		if oldest == nil || p.last < oldest.last {
			old, oldest = k, p
		}
	}
	oldest.mc.Close()
	e.bytes -= oldest.bytes
	delete(e.progs, old)
}

func (e *Engine) grow(n int) error {
	if n <= e.cap {
		return nil
	}
	e.free()
	E, V := e.m.Cfg.NEmbd, e.m.Cfg.VocabSize
	var err error
	alloc := func(f func(int) (engine.Buf, error), size int) engine.Buf {
		if err != nil {
			return nil
		}
		var b engine.Buf
		b, err = f(size)
		return b
	}
	e.rows, e.tgt = alloc(e.b.AllocInt, n), alloc(e.b.AllocInt, n)
	e.h, e.logits = alloc(e.b.Alloc, n*E), alloc(e.b.Alloc, n*V)
	e.out = alloc(e.b.AllocF64, n)
	if err != nil {
		e.free()
		return err
	}
	e.cap = n
	return nil
}

func (e *Engine) free() {
	for _, b := range []engine.Buf{e.rows, e.tgt, e.h, e.logits, e.out} {
		if b != nil {
			e.b.Free(b)
		}
	}
	e.rows, e.tgt, e.h, e.logits, e.out, e.cap = nil, nil, nil, nil, nil, 0
}

// TokenLogProbs returns, for each sequence s, log p(s[t] | s[:t]) for every
// t from first[i] (at least 1) to the end. The sequences run left-padded
// as one batch of width Width(longest); batch may be larger than
// len(seqs) to reuse a program (the spare rows are empty). Padding never
// changes a result: position ids count from each row's first token and the
// mask hides the padding.
func (e *Engine) TokenLogProbs(seqs [][]int, first []int, batch int) ([][]float64, error) {
	m := e.m
	T, err := m.checkBatch(seqs, first)
	if err == nil && batch < len(seqs) {
		err = fmt.Errorf("batch %d smaller than %d sequences", batch, len(seqs))
	}
	if err != nil {
		return nil, fmt.Errorf("token log-probs: %w", err)
	}
	p, err := e.program(gpt2Key{b: batch, t: T}, seqs, nil)
	if err != nil {
		return nil, err
	}
	if err := p.mc.Run(); err != nil {
		return nil, fmt.Errorf("GPT-2 forward: %w", err)
	}
	hidden, err := p.mc.Buffer(p.g.hidden)
	if err != nil {
		return nil, err
	}
	// Row t of sequence i (after its left padding) predicts s[t+1].
	var rows, targets []int32
	for i, s := range seqs {
		pad := T - len(s)
		for t := first[i]; t < len(s); t++ {
			rows = append(rows, int32(i*T+pad+t-1))
			targets = append(targets, int32(s[t]))
		}
	}
	lp := make([]float64, len(rows))
	E, V := m.Cfg.NEmbd, m.Cfg.VocabSize
	for start := 0; start < len(rows); start += gpt2ScoreChunk {
		n := min(gpt2ScoreChunk, len(rows)-start)
		if err := e.grow(n); err != nil {
			return nil, err
		}
		rb, tb := e.rows, e.tgt // the first n elements
		if err := e.b.UploadInt(rb, rows[start:start+n]); err != nil {
			return nil, err
		}
		if err := e.b.UploadInt(tb, targets[start:start+n]); err != nil {
			return nil, err
		}
		if err := e.b.Embed(n, E, hidden, rb, e.h); err != nil { // gather: [n, E]
			return nil, err
		}
		p := kernels.GemmParams{TransB: true, M: n, N: V, K: E, Alpha: 1, LdA: E, LdB: E, LdC: V}
		if err := e.b.Gemm(p, e.h, e.wte, e.logits); err != nil { // [n, V]
			return nil, err
		}
		if err := e.b.LogProbAt(n, V, e.logits, tb, e.out); err != nil {
			return nil, err
		}
		if err := e.b.DownloadF64(lp[start:start+n], e.out); err != nil {
			return nil, err
		}
	}
	out := make([][]float64, len(seqs))
	k := 0
	for i, s := range seqs {
		out[i] = lp[k : k+len(s)-first[i]]
		k += len(s) - first[i]
	}
	return out, nil
}

// Close frees the backend memory.
func (e *Engine) Close() {
	for _, p := range e.progs {
		p.mc.Close()
	}
	e.progs, e.bytes = map[gpt2Key]*gpt2Prog{}, 0
	e.free()
	if !e.alias {
		e.w.Free()
	}
}
