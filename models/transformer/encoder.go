package transformer

import (
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/models"
	"compbench/ops"
)

// Encoder is an encoder stack whose parameters live in another model's
// Params: the LSTM models' Transformer encoder (Bogin et al. 2022, §5.3),
// which is this package's encoder (AddEncoder, EncoderGraph).
type Encoder struct{ ids encoderIDs }

// AddEncoder adds n encoder layers and their final LayerNorm to p, with
// the names, shapes, order and initialisation of a Transformer's encoder
// layers (cfg's Dim and MLPDim; rel: relative attention tables), over the
// source embeddings srcEmb, drawing the weights from rng.
func AddEncoder(p *models.Params, rng *rand.Rand, cfg Config, n int, rel bool, srcEmb int) Encoder {
	layers, ln := paramMaker{p: p, rng: rng, cfg: cfg}.encoder(n, rel)
	return Encoder{encoderIDs{srcEmb: srcEmb, layers: layers, ln: ln, halt: [2]int{-1, -1}}}
}

// EncoderGraph builds the graph of an encoder stack alone.
type EncoderGraph struct{ b *builder }

// NewEncoderGraph starts the graph of enc over the parameters p, built
// with cfg's Dim, Heads, Dropout and relative-attention settings. With
// train its dropout ops draw from drop (nil: no dropout).
func NewEncoderGraph(p *models.Params, cfg Config, enc Encoder, train bool, drop *ops.DropoutSource) *EncoderGraph {
	b := &builder{p: p, cfg: cfg, enc: enc.ids, g: G.NewGraph(), nodes: map[int]*G.Node{}, train: train}
	b.drop = drop
	return &EncoderGraph{b}
}

// EncoderGraph starts a graph of m's own encoder; with train its dropout
// ops draw from a source of its own, seeded by the model's seed, as in the
// model's training graphs.
func (m *Model) EncoderGraph(train bool) *EncoderGraph { return &EncoderGraph{m.newBuilder(train)} }

// Graph is the graph being built.
func (e *EncoderGraph) Graph() *G.ExprGraph { return e.b.g }

// Dropout is the graph's dropout source (nil without dropout).
func (e *EncoderGraph) Dropout() *ops.DropoutSource { return e.b.drop }

// Input adds an input node.
func (e *EncoderGraph) Input(name string, dt tensor.Dtype, shape ...int) *G.Node {
	return e.b.input(name, dt, shape...)
}

// Encode adds the encoder layers over ids [N*L] (N sequences of L tokens)
// with positions pos [N*L, D] and the additive padding mask bias
// [N, 1, L, L]; it returns the memory [N*L, D].
func (e *EncoderGraph) Encode(ids, pos *G.Node, n, l int, bias *G.Node) (*G.Node, error) {
	out := e.b.encodeStack(ids, pos, n, l, bias)
	return out, e.b.err
}

// Param is the node of parameter i, if the graph uses it.
func (e *EncoderGraph) Param(i int) (*G.Node, bool) {
	n, ok := e.b.nodes[i]
	return n, ok
}

// SourceEmbedding is the index in Params of the source embedding table
// [SrcVocab, Dim].
func (m *Model) SourceEmbedding() int { return m.srcEmb }
