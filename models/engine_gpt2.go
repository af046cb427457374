package models

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"compbench/engine"
	"compbench/kernels"
)

// GPT2Engine scores with GPT-2 on an engine backend (the GPU): the
// whole-model forward graph runs as one program per batch shape, then the
// scored rows are gathered, projected onto the tied embeddings and turned
// into log-probabilities on the backend; only the ids go in and one float64
// per scored token comes out.
type GPT2Engine struct {
	m     *GPT2
	b     engine.Backend
	w     *engine.Weights
	progs map[any]*engine.Machine
	wte   engine.Buf
	// scratch, grown as needed: row ids and targets [n], gathered hidden
	// states [n, E], logits [n, V], log-probabilities [n].
	rows, tgt, h, logits, out engine.Buf
	cap                       int
}

// gpt2ScoreChunk bounds the rows projected at once (the [rows, V] logits).
const gpt2ScoreChunk = 512

// NewGPT2Engine uploads m's weights to b.
func NewGPT2Engine(m *GPT2, b engine.Backend) (*GPT2Engine, error) {
	names := make([]string, len(m.params))
	vals := make([][]float32, len(m.params))
	for i, p := range m.params {
		names[i], vals[i] = p.name, p.val.Data().([]float32)
	}
	w, err := engine.NewWeights(b, names, vals)
	if err != nil {
		return nil, err
	}
	e := &GPT2Engine{m: m, b: b, w: w, progs: map[any]*engine.Machine{}}
	e.wte = w.Bufs[m.index["wte.weight"]]
	return e, nil
}

// scoreView returns the whole-model graph of batch B and width T with its
// inputs set for seqs; Out is the final hidden state [B*T, E].
func (m *GPT2) scoreView(seqs [][]int, B, T int) (*GraphView, error) {
	c, err := m.graph(gpt2Key{b: B, t: T, train: true})
	if err != nil {
		return nil, err
	}
	c.fill(seqs, m.Cfg.VocabSize-1)
	v := &GraphView{Out: c.hidden, Key: c}
	for _, n := range []*G.Node{c.ids, c.pos, c.mask} {
		v.Inputs = append(v.Inputs, n)
		v.Values = append(v.Values, c.vals[n])
	}
	return v, nil
}

func (e *GPT2Engine) grow(n int) error {
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

func (e *GPT2Engine) free() {
	for _, b := range []engine.Buf{e.rows, e.tgt, e.h, e.logits, e.out} {
		if b != nil {
			e.b.Free(b)
		}
	}
	e.rows, e.tgt, e.h, e.logits, e.out, e.cap = nil, nil, nil, nil, nil, 0
}

// TokenLogProbs is GPT2.TokenLogProbs on the backend.
func (e *GPT2Engine) TokenLogProbs(seqs [][]int, first []int, batch int) ([][]float64, error) {
	m := e.m
	if len(seqs) != len(first) || len(seqs) == 0 || batch < len(seqs) {
		return nil, fmt.Errorf("token log-probs: %d sequences, %d starts, batch %d", len(seqs), len(first), batch)
	}
	longest := 0
	for i, s := range seqs {
		if len(s) > m.Cfg.NPositions {
			return nil, fmt.Errorf("sequence %d has %d tokens, more than n_positions %d", i, len(s), m.Cfg.NPositions)
		}
		if first[i] < 1 || first[i] > len(s) {
			return nil, fmt.Errorf("sequence %d: first scored token %d not in [1, %d]", i, first[i], len(s))
		}
		longest = max(longest, len(s))
	}
	T := m.Width(longest)
	v, err := m.scoreView(seqs, batch, T)
	if err != nil {
		return nil, err
	}
	mc, ok := e.progs[v.Key]
	if !ok {
		prog, err := engine.Compile(G.Nodes{v.Out}, engine.Options{Inputs: v.Inputs})
		if err != nil {
			return nil, fmt.Errorf("engine program: %w", err)
		}
		if mc, err = engine.NewSharedMachine(prog, e.b, e.w.Shared()); err != nil {
			return nil, err
		}
		e.progs[v.Key] = mc
	}
	for k, n := range v.Inputs {
		if err := mc.Set(n, v.Values[k]); err != nil { // ids are range-checked here
			return nil, err
		}
	}
	if err := mc.Run(); err != nil {
		return nil, fmt.Errorf("GPT-2 forward: %w", err)
	}
	hidden, err := mc.Buffer(v.Out)
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
func (e *GPT2Engine) Close() {
	for _, mc := range e.progs {
		mc.Close()
	}
	e.free()
	e.w.Free()
}
