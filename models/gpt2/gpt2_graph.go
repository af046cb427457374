package gpt2

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/data"
	"compbench/models"
	"compbench/ops"
)

// gpt2Key identifies a graph: shapes are fixed once built, so one graph
// (and one engine program) serves each (batch, width, purpose).
type gpt2Key struct {
	b, t  int
	train bool
}

// gpt2Graph is GPT-2's forward pass (and, for training, the loss and its
// gradients) for one batch shape, as a Gorgonia graph. Package engine
// compiles it into the program every device runs (Engine,
// Trainer); the tests also run it on Gorgonia's TapeMachine, as the
// oracle the engine is checked against.
type gpt2Graph struct {
	B, T   int
	ids    *G.Node // int [B*T]
	pos    *G.Node // int [B*T]
	mask   *G.Node // [B, 1, T, T]: 0 where attention is allowed, -Inf where not
	tgt    *G.Node // int [B*T], training only: next token or gpt2Ignore
	vals   map[*G.Node]*tensor.Dense
	hidden *G.Node // [B*T, E] after the final LayerNorm
	loss   *G.Node // scalar mean cross-entropy, training only
	grads  G.Nodes // gradient of loss per parameter, training only
	params []int   // parameter index of each gradient
}

// gpt2Ignore marks target positions that do not count in the loss.
const gpt2Ignore = -1

// Width is the batch width for sequences of at most n tokens: n rounded
// up to a multiple of 8 (so that few programs are compiled), at most
// n_positions.
func (m *Model) Width(n int) int {
	return min(models.RoundUp(n, 8), m.Cfg.NPositions)
}

// checkBatch validates sequences and their first scored tokens and returns
// the batch width.
func (m *Model) checkBatch(seqs [][]int, first []int) (int, error) {
	if len(seqs) == 0 || len(seqs) != len(first) {
		return 0, fmt.Errorf("%d sequences, %d starts", len(seqs), len(first))
	}
	longest := 0
	for i, s := range seqs {
		if len(s) > m.Cfg.NPositions {
			return 0, fmt.Errorf("sequence %d has %d tokens, more than n_positions %d", i, len(s), m.Cfg.NPositions)
		}
		if first[i] < 1 || first[i] > len(s) {
			return 0, fmt.Errorf("sequence %d: first scored token %d not in [1, %d]", i, first[i], len(s))
		}
		longest = max(longest, len(s))
	}
	return m.Width(longest), nil
}

// gpt2Builder threads the first error through graph construction.
type gpt2Builder struct {
	m     *Model
	g     *G.ExprGraph
	nodes map[int]*G.Node
	err   error
}

func (b *gpt2Builder) param(name string) *G.Node {
	i, _ := b.m.p.Index(name)
	if n, ok := b.nodes[i]; ok {
		return n
	}
	v := b.m.p.Values[i]
	n := G.NewTensor(b.g, tensor.Float32, v.Dims(), G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
	b.nodes[i] = n
	return n
}

func (b *gpt2Builder) must(n *G.Node, err error) *G.Node {
	if err != nil && b.err == nil {
		b.err = err
	}
	return n
}

// linear computes x·W + bias for x [N, in] and Conv1D weights W [in, out].
func (b *gpt2Builder) linear(x *G.Node, w, bias string) *G.Node {
	if b.err != nil {
		return x
	}
	y := b.must(G.Mul(x, b.param(w)))                               // [N, out]
	return b.must(G.BroadcastAdd(y, b.param(bias), nil, []byte{0})) // [N, out]
}

func (b *gpt2Builder) layerNorm(x *G.Node, prefix string) *G.Node {
	if b.err != nil {
		return x
	}
	eps := float32(b.m.Cfg.LayerNormEpsilon)
	return b.must(ops.LayerNorm(x, b.param(prefix+".weight"), b.param(prefix+".bias"), eps)) // [N, E]
}

func (b *gpt2Builder) add(x, y *G.Node) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(G.Add(x, y)) // [N, E]
}

// block is one pre-LN Transformer block (Radford et al. 2019, §2.3):
// x + attn(ln_1(x)), then x + mlp(ln_2(x)).
func (b *gpt2Builder) block(x, mask *G.Node, i, B, T int) *G.Node {
	cfg := b.m.Cfg
	p := fmt.Sprintf("h.%d.", i)
	h := b.layerNorm(x, p+"ln_1") // [B*T, E]
	q := b.linear(h, p+"attn.c_attn.weight.q", p+"attn.c_attn.bias.q")
	k := b.linear(h, p+"attn.c_attn.weight.k", p+"attn.c_attn.bias.k")
	v := b.linear(h, p+"attn.c_attn.weight.v", p+"attn.c_attn.bias.v") // [B*T, E] each
	if b.err != nil {
		return x
	}
	scale := float32(1 / math.Sqrt(float64(cfg.NEmbd/cfg.NHead)))
	s := b.must(ops.AttnScores(q, k, B, cfg.NHead, scale)) // [B, H, T, T]
	if b.err != nil {
		return x
	}
	a := b.must(ops.AttentionSoftmax(s, mask, nil)) // [B, H, T, T]
	if b.err != nil {
		return x
	}
	o := b.must(ops.AttnValues(a, v, cfg.NHead)) // [B*T, E]
	x = b.add(x, b.linear(o, p+"attn.c_proj.weight", p+"attn.c_proj.bias"))
	h = b.layerNorm(x, p+"ln_2")
	f := b.linear(h, p+"mlp.c_fc.weight", p+"mlp.c_fc.bias") // [B*T, 4E]
	if b.err != nil {
		return x
	}
	f = b.must(ops.GELU(f))
	return b.add(x, b.linear(f, p+"mlp.c_proj.weight", p+"mlp.c_proj.bias")) // [B*T, E]
}

// graph builds the graph of key k.
func (m *Model) graph(k gpt2Key) (*gpt2Graph, error) {
	B, T := k.b, k.t
	b := &gpt2Builder{m: m, g: G.NewGraph(), nodes: map[int]*G.Node{}}
	c := &gpt2Graph{B: B, T: T, vals: map[*G.Node]*tensor.Dense{}}
	intIn := func(name string) *G.Node {
		n := G.NewTensor(b.g, tensor.Int, 1, G.WithShape(B*T), G.WithName(name))
		c.vals[n] = tensor.New(tensor.WithShape(B*T), tensor.WithBacking(make([]int, B*T)))
		return n
	}
	c.ids, c.pos = intIn("ids"), intIn("pos") // [B*T] each
	c.mask = G.NewTensor(b.g, tensor.Float32, 4, G.WithShape(B, 1, T, T), G.WithName("mask"))
	c.vals[c.mask] = tensor.New(tensor.WithShape(B, 1, T, T), tensor.WithBacking(make([]float32, B*T*T)))

	tok := b.must(ops.Embed(b.param("wte.weight"), c.ids)) // [B*T, E]
	pos := b.must(ops.Embed(b.param("wpe.weight"), c.pos)) // [B*T, E]
	x := b.add(tok, pos)
	for i := 0; i < m.Cfg.NLayer; i++ {
		x = b.block(x, c.mask, i, B, T)
	}
	c.hidden = b.layerNorm(x, "ln_f") // [B*T, E]
	if k.train && b.err == nil {
		c.tgt = intIn("tgt")
		wteT := b.must(G.Transpose(b.param("wte.weight")))                     // [E, V]
		logits := b.must(G.Mul(c.hidden, wteT))                                // [B*T, V]
		c.loss = b.must(ops.SoftmaxCrossEntropy(logits, c.tgt, gpt2Ignore, 0)) // scalar
	}
	if b.err != nil {
		return nil, b.err
	}
	if k.train {
		for i := range m.p.Names {
			if n, ok := b.nodes[i]; ok {
				c.grads = append(c.grads, n)
				c.params = append(c.params, i)
			}
		}
		gs, err := G.Grad(c.loss, c.grads...)
		if err != nil {
			return nil, fmt.Errorf("gradient: %w", err)
		}
		c.grads = gs
	}
	for n, v := range c.vals {
		if err := G.Let(n, v); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// fill writes a batch of left-padded sequences into the graph's inputs.
// Row r holds its len(seqs[r]) tokens at the right end; position ids count
// from the first real token and the mask lets a query see only real keys at
// or before it, so padding cannot change any result.
func (c *gpt2Graph) fill(seqs [][]int, padID int) {
	fillInputs(c.B, c.T, c.vals[c.ids].Data().([]int), c.vals[c.pos].Data().([]int), c.vals[c.mask].Data().([]float32), seqs, padID)
}

// setTargets marks the tokens from first[i] on as the targets of the
// loss (row t-1 predicts token t); prefix and padding rows do not count.
func (c *gpt2Graph) setTargets(seqs [][]int, first []int) {
	tgt := c.vals[c.tgt].Data().([]int)
	for i := range tgt {
		tgt[i] = gpt2Ignore
	}
	for i, s := range seqs {
		pad := c.T - len(s)
		for t := first[i]; t < len(s); t++ {
			tgt[i*c.T+pad+t-1] = s[t]
		}
	}
}

// inputs returns the per-batch input nodes (tgt only in training graphs).
func (c *gpt2Graph) inputs() []*G.Node {
	if c.tgt == nil {
		return []*G.Node{c.ids, c.pos, c.mask}
	}
	return []*G.Node{c.ids, c.pos, c.mask, c.tgt}
}

// fillInputs writes token ids and positions ([B*T] each) and the attention
// mask ([B, 1, T, T]) of left-padded sequences.
func fillInputs(B, T int, ids, pos []int, mask []float32, seqs [][]int, padID int) {
	negInf := float32(math.Inf(-1))
	for r := 0; r < B; r++ {
		var s []int
		if r < len(seqs) {
			s = seqs[r]
		}
		pad := T - len(s)
		for t := 0; t < T; t++ {
			if t < pad {
				ids[r*T+t], pos[r*T+t] = padID, 0
			} else {
				ids[r*T+t], pos[r*T+t] = s[t-pad], t-pad
			}
			row := mask[(r*T+t)*T : (r*T+t+1)*T]
			for u := range row {
				if u >= pad && u <= t {
					row[u] = 0
				} else {
					row[u] = negInf
				}
			}
		}
	}
}

// TrainView returns the training graph Trainer.TrainStep(seqs, first,
// lr) compiles, built afresh with its inputs set for seqs.
func (m *Model) TrainView(seqs [][]int, first []int) (*models.GraphView, error) {
	longest := 0
	for i, s := range seqs {
		if len(s) > m.Cfg.NPositions || first[i] < 1 || first[i] > len(s) {
			return nil, fmt.Errorf("train view: sequence %d of %d tokens, first %d, n_positions %d", i, len(s), first[i], m.Cfg.NPositions)
		}
		longest = max(longest, len(s))
	}
	T := m.Width(longest)
	c, err := m.graph(gpt2Key{b: len(seqs), t: T, train: true})
	if err != nil {
		return nil, err
	}
	c.fill(seqs, m.Cfg.VocabSize-1)
	tgt := c.vals[c.tgt].Data().([]int)
	for i := range tgt {
		tgt[i] = gpt2Ignore
	}
	for i, s := range seqs {
		pad := T - len(s)
		for t := first[i]; t < len(s); t++ {
			tgt[i*T+pad+t-1] = s[t]
		}
	}
	v := &models.GraphView{Out: c.loss, Grads: c.grads, ParamIdx: c.params, Key: c}
	for _, n := range []*G.Node{c.ids, c.pos, c.mask, c.tgt} {
		v.Inputs = append(v.Inputs, n)
		v.Values = append(v.Values, c.vals[n])
	}
	return v, nil
}

// SyntheticSequences is the GPT-2 benchmark batch: n sequences of t token
// ids drawn from [0, vocab) by data.NewRand(1), each scored from its second
// token on (first[i] = 1), so the CPU and GPU benchmarks and PyTorch's see
// the same shape.
func SyntheticSequences(n, t, vocab int) (seqs [][]int, first []int) {
	rng := data.NewRand(1)
	seqs, first = make([][]int, n), make([]int, n)
	for i := range seqs {
		seqs[i] = make([]int, t)
		for k := range seqs[i] {
			seqs[i][k] = rng.IntN(vocab)
		}
		first[i] = 1
	}
	return seqs, first
}
