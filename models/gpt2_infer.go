package models

import (
	"fmt"
	"sort"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/ops"
)

// gpt2Infer is the scoring forward pass run one block at a time. A
// whole-model graph holds all n_layer blocks' activations at once (about
// 1.2 GB for GPT-2 medium at 32 x 16 tokens). Here one block graph, whose
// weights are input nodes given each layer's tensors in turn, serves every
// layer, so activations exist for one block only, in buffers reused from
// run to run (gpt2Exec). The ops and their order are those of the
// whole-model graph, so the numbers are the same.
type gpt2Infer struct {
	B, T int
	// embedding stage: ids, pos -> x0
	ids, pos  *G.Node // int [B*T] each
	idsV      *tensor.Dense
	posV      *tensor.Dense
	embedOut  *G.Node // [B*T, E]
	embed     *gpt2Exec
	mask      *G.Node       // [B, 1, T, T]
	maskV     *tensor.Dense // shared by the block graph's mask input
	x         *G.Node       // block input [B*T, E]
	xV        *tensor.Dense // the residual stream between stages, [B*T, E]
	slots     map[string]*G.Node
	slotNames []string // sorted keys of slots
	blockOut  *G.Node  // [B*T, E]
	block     *gpt2Exec
	fx        *G.Node // final LayerNorm input [B*T, E]
	hidden    *G.Node // [B*T, E]
	final     *gpt2Exec
	lastUse   int
}

// maxInferGraphs bounds the compiled inference graphs kept (one per batch
// shape; the least recently used is dropped).
const maxInferGraphs = 4

func (m *GPT2) inferGraph(B, T int) (*gpt2Infer, error) {
	m.useClock++
	key := gpt2Key{b: B, t: T}
	if c, ok := m.infer[key]; ok {
		c.lastUse = m.useClock
		return c, nil
	}
	for len(m.infer) >= maxInferGraphs {
		var old gpt2Key
		oldest := -1
		for k, c := range m.infer {
			if oldest < 0 || c.lastUse < oldest {
				old, oldest = k, c.lastUse
			}
		}
		delete(m.infer, old)
	}
	c, err := m.buildInfer(B, T)
	if err != nil {
		return nil, fmt.Errorf("build GPT-2 inference graph for batch %dx%d: %w", B, T, err)
	}
	c.lastUse = m.useClock
	m.infer[key] = c
	return c, nil
}

func (m *GPT2) buildInfer(B, T int) (*gpt2Infer, error) {
	E := m.Cfg.NEmbd
	c := &gpt2Infer{B: B, T: T}
	c.idsV = tensor.New(tensor.WithShape(B*T), tensor.WithBacking(make([]int, B*T)))               // [B*T]
	c.posV = tensor.New(tensor.WithShape(B*T), tensor.WithBacking(make([]int, B*T)))               // [B*T]
	c.maskV = tensor.New(tensor.WithShape(B, 1, T, T), tensor.WithBacking(make([]float32, B*T*T))) // [B, 1, T, T]
	c.xV = tensor.New(tensor.WithShape(B*T, E), tensor.WithBacking(make([]float32, B*T*E)))        // [B*T, E]

	// Embedding: wte[ids] + wpe[pos].
	eb := &gpt2Builder{m: m, g: G.NewGraph(), nodes: map[int]*G.Node{}}
	c.ids = G.NewTensor(eb.g, tensor.Int, 1, G.WithShape(B*T), G.WithName("ids"), G.WithValue(c.idsV)) // [B*T]
	c.pos = G.NewTensor(eb.g, tensor.Int, 1, G.WithShape(B*T), G.WithName("pos"), G.WithValue(c.posV)) // [B*T]
	tok := eb.must(ops.Embed(eb.param("wte.weight"), c.ids))                                           // [B*T, E]
	pos := eb.must(ops.Embed(eb.param("wpe.weight"), c.pos))                                           // [B*T, E]
	c.embedOut = eb.add(tok, pos)                                                                      // [B*T, E]
	if eb.err != nil {
		return nil, eb.err
	}
	var err error
	if c.embed, err = newGPT2Exec(c.embedOut); err != nil {
		return nil, err
	}

	// One block with rebindable weights.
	bb := &gpt2Builder{m: m, g: G.NewGraph(), nodes: map[int]*G.Node{}, slots: map[string]*G.Node{}}
	c.x = G.NewTensor(bb.g, tensor.Float32, 2, G.WithShape(B*T, E), G.WithName("x"), G.WithValue(c.xV))              // [B*T, E]
	c.mask = G.NewTensor(bb.g, tensor.Float32, 4, G.WithShape(B, 1, T, T), G.WithName("mask"), G.WithValue(c.maskV)) // [B, 1, T, T]
	c.blockOut = bb.block(c.x, c.mask, 0, B, T)                                                                      // [B*T, E]
	if bb.err != nil {
		return nil, bb.err
	}
	c.slots = bb.slots
	for k := range c.slots {
		c.slotNames = append(c.slotNames, k)
	}
	sort.Strings(c.slotNames)
	if c.block, err = newGPT2Exec(c.blockOut); err != nil {
		return nil, err
	}

	// Final LayerNorm.
	fb := &gpt2Builder{m: m, g: G.NewGraph(), nodes: map[int]*G.Node{}}
	c.fx = G.NewTensor(fb.g, tensor.Float32, 2, G.WithShape(B*T, E), G.WithName("x"), G.WithValue(c.xV)) // [B*T, E]
	c.hidden = fb.layerNorm(c.fx, "ln_f")                                                                // [B*T, E]
	if fb.err != nil {
		return nil, fb.err
	}
	if c.final, err = newGPT2Exec(c.hidden); err != nil {
		return nil, err
	}
	return c, nil
}

// forwardInfer runs the model on left-padded sequences and returns the
// hidden states after the final LayerNorm, [B*T, E]; the slice belongs to
// the graph and is overwritten by the next call.
func (m *GPT2) forwardInfer(c *gpt2Infer, seqs [][]int, padID int) ([]float32, error) {
	fillInputs(c.B, c.T, c.idsV.Data().([]int), c.posV.Data().([]int), c.maskV.Data().([]float32), seqs, padID)
	x := c.xV.Data().([]float32)
	if err := c.embed.run(map[*G.Node]G.Value{c.ids: c.idsV, c.pos: c.posV}); err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	copy(x, c.embed.value(c.embedOut).Data().([]float32))
	in := map[*G.Node]G.Value{c.x: c.xV, c.mask: c.maskV}
	for i := 0; i < m.Cfg.NLayer; i++ {
		for _, rest := range c.slotNames {
			in[c.slots[rest]] = m.params[m.index[fmt.Sprintf("h.%d.%s", i, rest)]].val
		}
		if err := c.block.run(in); err != nil {
			return nil, fmt.Errorf("block %d: %w", i, err)
		}
		copy(x, c.block.value(c.blockOut).Data().([]float32))
	}
	if err := c.final.run(map[*G.Node]G.Value{c.fx: c.xV}); err != nil {
		return nil, fmt.Errorf("final LayerNorm: %w", err)
	}
	return c.final.value(c.hidden).Data().([]float32), nil
}

// cutLayer splits "h.<i>.<rest>" into i's text and rest.
func cutLayer(name string) (string, string, bool) {
	after, ok := strings.CutPrefix(name, "h.")
	if !ok {
		return "", "", false
	}
	return strings.Cut(after, ".")
}
