package models

import (
	"fmt"
	"math"
	"runtime"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/ops"
)

// gpt2Key identifies a compiled graph: shapes are fixed once built, so one
// graph is built per (batch, width, purpose) and reused.
type gpt2Key struct {
	b, t  int
	train bool
}

// gpt2Graph is one compiled forward (and for training, backward) pass.
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
	vm     G.VM
	// lastUse orders the cached graphs by use (GPT2.useClock).
	lastUse int
	// bytes estimates the memory the graph holds once run (graphBytes).
	bytes int64
}

// gpt2Ignore marks target positions that do not count in the loss.
const gpt2Ignore = -1

// graph returns the compiled graph for k, building it when it is not
// cached. The cache is bounded as a Transformer's (Transformer.graph): by
// count (MaxGraphs) and estimated bytes (GraphBudget), least recently used
// graphs dropped first, a graph over the budget on its own still built and
// then kept alone. Eviction never changes results: a graph is a pure
// function of the weights and its inputs.
func (m *GPT2) graph(k gpt2Key) (*gpt2Graph, error) {
	m.useClock++
	if c, ok := m.graphs[k]; ok {
		c.lastUse = m.useClock
		return c, nil
	}
	// Built before evicting, so a failed build drops nothing and the new
	// graph's size is known.
	c, err := m.build(k)
	if err != nil {
		return nil, fmt.Errorf("build GPT-2 graph for batch %dx%d: %w", k.b, k.t, err)
	}
	for len(m.graphs) > 0 && (len(m.graphs) >= max(1, m.MaxGraphs) ||
		(m.GraphBudget > 0 && m.cachedBytes+c.bytes > m.GraphBudget)) {
		m.evictOldest()
	}
	c.lastUse = m.useClock
	m.graphs[k] = c
	m.cachedBytes += c.bytes
	return c, nil
}

// evictOldest drops the least recently used graph (uses are numbered
// apart, so the choice does not depend on map order).
func (m *GPT2) evictOldest() {
	var old gpt2Key
	oldest := -1
	for k, c := range m.graphs {
		if oldest < 0 || c.lastUse < oldest {
			old, oldest = k, c.lastUse
		}
	}
	c := m.graphs[old]
	c.vm.Close()
	// As for the Transformer (evictOldest in graph.go): the tape machine's
	// finalizer would keep the machine, graph and values alive until the
	// collection after next.
	runtime.SetFinalizer(c.vm, nil)
	m.cachedBytes -= c.bytes
	delete(m.graphs, old)
}

// gpt2Builder threads the first error through graph construction.
type gpt2Builder struct {
	m     *GPT2
	g     *G.ExprGraph
	nodes map[int]*G.Node
	// slots, when set, makes every block weight "h.<i>.<rest>" one input
	// node per <rest>, rebound to each layer's weights in turn.
	slots map[string]*G.Node
	err   error
}

func (b *gpt2Builder) param(name string) *G.Node {
	if b.slots != nil {
		if _, rest, ok := cutLayer(name); ok {
			if n, ok := b.slots[rest]; ok {
				return n
			}
			v := b.m.params[b.m.index[name]].val
			n := G.NewTensor(b.g, tensor.Float32, v.Dims(), G.WithShape(v.Shape()...), G.WithName(rest), G.WithValue(v))
			b.slots[rest] = n
			return n
		}
	}
	i := b.m.index[name]
	if n, ok := b.nodes[i]; ok {
		return n
	}
	v := b.m.params[i].val
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

func (m *GPT2) build(k gpt2Key) (*gpt2Graph, error) {
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
		for i := range m.params {
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
	c.vm = G.NewTapeMachine(b.g)
	c.bytes = graphBytes(b.g, b.nodes)
	return c, nil
}

// fill writes a batch of left-padded sequences into the graph's inputs.
// Row r holds its len(seqs[r]) tokens at the right end; position ids count
// from the first real token and the mask lets a query see only real keys at
// or before it, so padding cannot change any result.
func (c *gpt2Graph) fill(seqs [][]int, padID int) {
	fillInputs(c.B, c.T, c.vals[c.ids].Data().([]int), c.vals[c.pos].Data().([]int), c.vals[c.mask].Data().([]float32), seqs, padID)
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

func (c *gpt2Graph) run() error {
	for n, v := range c.vals {
		if err := G.Let(n, v); err != nil {
			return err
		}
	}
	defer c.vm.Reset()
	return c.vm.RunAll()
}
