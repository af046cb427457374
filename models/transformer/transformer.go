// Package transformer is the encoder-decoder Transformer of Vaswani et al.
// as configured by Shi et al. (2023, §4-5 and App. C) and Keysers et al.
// (2020, App. E), with the relative attention, separator and
// decompositional-mask variants of Shi et al. §4 (masks.go) and the double
// I/O encoder (ioencoder.go): the model and its parameters
// (transformer.go), its Gorgonia graphs (graph.go; tape_test.go runs them
// on Gorgonia's TapeMachine, the tests' oracle), and its training and
// incremental decoding on package engine's executor (engine_model.go;
// decode*.go runs the step graphs of step.go). Its encoder stack is also the LSTM models'
// Transformer encoder (encoder.go).
package transformer

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/ops"
)

// Config is the Transformer family's architecture: the fields of a run's
// models.Config (its config.json, whose field comments say more) that this
// family reads. ConfigOf takes them from a run's configuration.
type Config struct {
	// Variant is the --model name (transformer, relative, the separator
	// and mask variants, universal).
	Variant string
	// Layers is the number of encoder and of decoder layers (the
	// Universal Transformer has one of each, applied UTSteps times).
	Layers int
	// Heads, Dim and MLPDim are the attention heads, the width and the
	// feed-forward inner size.
	Heads, Dim, MLPDim int
	// Dropout is the drop probability on embeddings, sublayer outputs and
	// the feed-forward hidden layer.
	Dropout float64
	// Relative replaces sinusoidal positions with learned relative biases
	// over RelBuckets buckets up to RelMaxDistance (Shi et al. §4).
	Relative                   bool
	RelBuckets, RelMaxDistance int
	// Separators ends every program part with a separator; Mask is the
	// decoder self-attention mask (causal or decompositional, §4).
	Separators bool
	Mask       string
	// MaxSrcLen, MaxTgtLen, SrcVocab and TgtVocab size the embeddings and
	// the positions.
	MaxSrcLen, MaxTgtLen, SrcVocab, TgtVocab int
	// IOEncoder is "flat" (or empty) or "double" (ioencoder.go).
	IOEncoder string
	// UTSteps and ACT are the Universal Transformer's recurrent steps and
	// adaptive computation time (universal.go); 0 and false otherwise.
	UTSteps int
	ACT     bool
}

// DefaultConfig is the paper-size model (Shi et al. App. C).
func DefaultConfig() Config { return ConfigOf(models.DefaultConfig()) }

// ConfigOf is the family's part of a run's configuration.
func ConfigOf(c models.Config) Config {
	return Config{Variant: c.Variant, Layers: c.Layers, Heads: c.Heads, Dim: c.Dim, MLPDim: c.MLPDim, Dropout: c.Dropout,
		Relative: c.Relative, RelBuckets: c.RelBuckets, RelMaxDistance: c.RelMaxDistance, Separators: c.Separators,
		Mask: c.Mask, MaxSrcLen: c.MaxSrcLen, MaxTgtLen: c.MaxTgtLen, SrcVocab: c.SrcVocab, TgtVocab: c.TgtVocab,
		IOEncoder: c.IOEncoder, UTSteps: c.UTSteps, ACT: c.ACT}
}

// DoubleIO reports whether the model encodes I/O examples with double
// attention.
func (c *Config) DoubleIO() bool { return c.IOEncoder == models.IODouble }

// Validate reports the first field whose value this family cannot build
// (models.Config.Validate checks the fields every family shares, the mask
// among them, and that no field of another family is set).
func (c *Config) Validate() error {
	switch {
	case c.Layers < 1:
		return fmt.Errorf("model: layers %d < 1", c.Layers)
	case c.Heads < 1 || c.Dim < 1 || c.Dim%c.Heads != 0:
		return fmt.Errorf("model: dim %d must be a positive multiple of heads %d", c.Dim, c.Heads)
	case c.MLPDim < 1:
		return fmt.Errorf("model: mlp_dim %d < 1", c.MLPDim)
	case c.Relative && (c.RelBuckets < 2 || c.RelMaxDistance < c.RelBuckets):
		return fmt.Errorf("model: rel_buckets %d / rel_max_distance %d: need 2 <= buckets <= max distance", c.RelBuckets, c.RelMaxDistance)
	case c.Variant == models.Universal && c.UTSteps < 1:
		return fmt.Errorf("model: ut_steps %d < 1", c.UTSteps)
	case c.Variant == models.Universal && c.DoubleIO():
		return fmt.Errorf("model: io_encoder %q is not available for the universal model", c.IOEncoder)
	}
	switch c.IOEncoder {
	case "", models.IOFlat, models.IODouble:
	default:
		return fmt.Errorf("model: unknown io_encoder %q (want %q or %q)", c.IOEncoder, models.IOFlat, models.IODouble)
	}
	return nil
}

// Model is the encoder-decoder of Vaswani et al. (2017) in the
// configuration of Shi et al. (§4, App. C). Decision (the paper does not
// say): LayerNorm before each sublayer with a final LayerNorm per stack
// (pre-LN, as the Flax Transformer their code builds on), ReLU
// feed-forward, untied output projection, and no attention-weight dropout.
type Model struct {
	// Cfg is the validated configuration.
	Cfg Config
	p   models.Params
	// ids of the parameters, per layer.
	srcEmb, tgtEmb, outW, outB int
	enc, dec                   []layerIDs
	encLN, decLN               [2]int
	// encStep and decStep are the Universal Transformer's step
	// embeddings, one [D] parameter per recurrent step, and enc and dec
	// then hold one layer repeated (universal.go); nil otherwise.
	encStep, decStep []int
	// encHalt and decHalt are the halting units' weight [D, 1] and bias
	// [1] with adaptive computation time; {-1, -1} otherwise.
	encHalt, decHalt [2]int
	// The output encoder of the double I/O encoder (ioencoder.go); empty
	// unless Cfg.DoubleIO().
	io   []layerIDs
	ioLN [2]int
	// ioArrow and ioSep are the source ids of "->" and "|" (ioSep -1 when
	// the vocabulary has no "|"), set by SetIOVocab.
	ioArrow, ioSep int
	// MaxGraphs bounds the number of compiled graphs kept (least recently
	// used ones are dropped and rebuilt when needed); default 8.
	MaxGraphs int
	// GraphBudget bounds the estimated bytes of the compiled graphs kept
	// (activations and gradients, see graphBytes); <= 0 means no byte
	// bound. Default DefaultGraphBudget, or what SetGraphBudget set.
	GraphBudget int64

	graphs      map[graphKey]*compiled
	cachedBytes int64 // sum of the cached graphs' bytes
	clock       uint64
	seed        uint64 // dropout masks derive from it
}

type attnIDs struct{ wq, wk, wv, wo, bq, bk, bv, bo, rel int }

type layerIDs struct {
	self, cross attnIDs
	ln          [3][2]int // [sublayer][gain, bias]
	w1, b1      int
	w2, b2      int
}

// New makes a model with weights drawn from seed (compbench's
// generator, never Gorgonia's clock-seeded initialisers).
func New(run models.Config, seed uint64) (*Model, error) {
	if err := run.Validate(); err != nil {
		return nil, err
	}
	cfg := ConfigOf(run)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.SrcVocab <= models.UnkID || cfg.TgtVocab <= models.UnkID {
		return nil, fmt.Errorf("model: vocabulary sizes %d / %d not set", cfg.SrcVocab, cfg.TgtVocab)
	}
	rng := data.SubRand(seed, "init")
	m := &Model{Cfg: cfg, MaxGraphs: 8, GraphBudget: models.GraphBudget(), graphs: map[graphKey]*compiled{}, seed: seed,
		encHalt: [2]int{-1, -1}, decHalt: [2]int{-1, -1}}
	d, p := cfg.Dim, &m.p
	// Embeddings N(0, 1) without the sqrt(d) factor: the same forward pass
	// as Vaswani's N(0, 1/d) scaled by sqrt(d).
	m.srcEmb = p.Add("src_emb", tensor.Shape{cfg.SrcVocab, d}, models.Normal(rng, 1))
	m.tgtEmb = p.Add("tgt_emb", tensor.Shape{cfg.TgtVocab, d}, models.Normal(rng, 1))
	pm := paramMaker{p: p, rng: rng, cfg: cfg}
	layers := cfg.Layers
	if cfg.UTSteps > 0 {
		layers = 1 // shared across the recurrent steps (universal.go)
	}
	m.enc, m.encLN = pm.encoder(layers, cfg.Relative)
	for i := 0; i < layers; i++ {
		m.dec = append(m.dec, pm.crossLayer(fmt.Sprintf("dec%d", i)))
	}
	m.decLN = pm.ln("dec.ln")
	m.outW = p.Add("out.w", tensor.Shape{d, cfg.TgtVocab}, models.Xavier(rng, d, cfg.TgtVocab))
	m.outB = p.Add("out.b", tensor.Shape{cfg.TgtVocab}, models.Constant(0))
	if cfg.UTSteps > 0 {
		// Created after the 1-layer Transformer's weights, which are then
		// the same for a seed.
		m.recur(pm)
	}
	if cfg.DoubleIO() {
		// Created last, so the flat model's weights (and their initial
		// values for a seed) are a prefix of the double model's.
		for i := 0; i < cfg.Layers; i++ {
			m.io = append(m.io, pm.crossLayer(fmt.Sprintf("io%d", i)))
		}
		m.ioLN = pm.ln("io.ln")
	}
	m.ioArrow, m.ioSep = -1, -1
	return m, nil
}

// paramMaker adds a Transformer's parameters to p, drawing their initial
// values from rng in the order of the calls (Transformer.p and the LSTM
// models' Transformer encoder make theirs with it).
type paramMaker struct {
	p   *models.Params
	rng *rand.Rand
	cfg Config // Dim, MLPDim; RelBuckets and Heads with relative attention
}

// ln adds a LayerNorm's gain (ones) and bias (zeros).
func (pm paramMaker) ln(name string) [2]int {
	d := pm.cfg.Dim
	return [2]int{pm.p.Add(name+".g", tensor.Shape{d}, models.Constant(1)), pm.p.Add(name+".b", tensor.Shape{d}, models.Constant(0))}
}

// attn adds an attention sublayer's projections and, with rel, its
// relative-position table.
func (pm paramMaker) attn(name string, rel bool) attnIDs {
	p, rng, d := pm.p, pm.rng, pm.cfg.Dim
	a := attnIDs{rel: -1}
	a.wq = p.Add(name+".wq", tensor.Shape{d, d}, models.Xavier(rng, d, d))
	a.wk = p.Add(name+".wk", tensor.Shape{d, d}, models.Xavier(rng, d, d))
	a.wv = p.Add(name+".wv", tensor.Shape{d, d}, models.Xavier(rng, d, d))
	a.wo = p.Add(name+".wo", tensor.Shape{d, d}, models.Xavier(rng, d, d))
	a.bq = p.Add(name+".bq", tensor.Shape{d}, models.Constant(0))
	a.bk = p.Add(name+".bk", tensor.Shape{d}, models.Constant(0))
	a.bv = p.Add(name+".bv", tensor.Shape{d}, models.Constant(0))
	a.bo = p.Add(name+".bo", tensor.Shape{d}, models.Constant(0))
	if rel {
		// One bias per bucket and head, per layer (Shaw et al.).
		a.rel = p.Add(name+".rel", tensor.Shape{pm.cfg.RelBuckets, pm.cfg.Heads}, models.Normal(rng, 0.02))
	}
	return a
}

// ffn adds l's feed-forward block.
func (pm paramMaker) ffn(name string, l *layerIDs) {
	p, rng, d, f := pm.p, pm.rng, pm.cfg.Dim, pm.cfg.MLPDim
	l.w1 = p.Add(name+".w1", tensor.Shape{d, f}, models.Xavier(rng, d, f))
	l.b1 = p.Add(name+".b1", tensor.Shape{f}, models.Constant(0))
	l.w2 = p.Add(name+".w2", tensor.Shape{f, d}, models.Xavier(rng, f, d))
	l.b2 = p.Add(name+".b2", tensor.Shape{d}, models.Constant(0))
}

// encoder adds n encoder layers (enc<i>) and the final LayerNorm (enc.ln).
func (pm paramMaker) encoder(n int, rel bool) ([]layerIDs, [2]int) {
	var layers []layerIDs
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("enc%d", i)
		l := layerIDs{self: pm.attn(name+".self", rel)}
		l.ln[0], l.ln[1] = pm.ln(name+".ln0"), pm.ln(name+".ln1")
		pm.ffn(name+".ffn", &l)
		layers = append(layers, l)
	}
	return layers, pm.ln("enc.ln")
}

// crossLayer adds a layer with self- and cross-attention (the decoder's,
// the double I/O encoder's output layers).
func (pm paramMaker) crossLayer(name string) layerIDs {
	rel := pm.cfg.Relative
	l := layerIDs{self: pm.attn(name+".self", rel), cross: pm.attn(name+".cross", false)}
	l.ln[0], l.ln[1], l.ln[2] = pm.ln(name+".ln0"), pm.ln(name+".ln1"), pm.ln(name+".ln2")
	pm.ffn(name+".ffn", &l)
	return l
}

// Params are the model's weights.
func (m *Model) Params() *models.Params { return &m.p }

// encoderIDs are the parameters of an encoder stack: the source
// embeddings, the layers and the final LayerNorm.
type encoderIDs struct {
	srcEmb int
	layers []layerIDs
	ln     [2]int
	// step is the Universal Transformer's step embedding per layer (nil
	// for other stacks): positions are then added at every step.
	step []int
	// halt is its halting unit with adaptive computation time, else {-1, -1}.
	halt [2]int
}

// builder builds one graph; parameter nodes are made on first use.
type builder struct {
	// m is the Transformer whose graph this is; nil for an encoder-only
	// graph over another model's parameters (the LSTM models' Transformer
	// encoder), which uses p, cfg and enc only.
	m     *Model
	p     *models.Params
	cfg   Config     // Dim, Heads, Dropout and the relative attention settings
	enc   encoderIDs // what encodeStack reads
	g     *G.ExprGraph
	nodes map[int]*G.Node
	train bool
	drop  *ops.DropoutSource // nil unless training
	err   error
	// ponder is each recurrent stack's ponder time per position [N, 1]
	// (steps taken plus the remainder) with adaptive computation time, in
	// the order the stacks were built.
	ponder []*G.Node
	// step holds a step graph's own inputs and outputs (step.go); nil for
	// the other graphs.
	step *stepIO
}

// newBuilder starts a graph of m; with train its dropout ops draw from a
// source of its own, seeded by the model's seed.
func (m *Model) newBuilder(train bool) *builder {
	b := &builder{m: m, p: &m.p, cfg: m.Cfg, enc: encoderIDs{m.srcEmb, m.enc, m.encLN, m.encStep, m.encHalt},
		g: G.NewGraph(), nodes: map[int]*G.Node{}, train: train}
	if train {
		// One source per graph: op numbers then do not depend on the
		// order in which graphs of different shapes were built.
		b.drop = ops.NewDropoutSource(m.seed)
	}
	return b
}

func (b *builder) param(i int) *G.Node {
	if n, ok := b.nodes[i]; ok {
		return n
	}
	v := b.p.Values[i]
	n := G.NewTensor(b.g, tensor.Float32, v.Dims(), G.WithShape(v.Shape()...), G.WithName(b.p.Names[i]), G.WithValue(v))
	b.nodes[i] = n
	return n
}

// must records the first error and passes n on; after an error the
// remaining calls are skipped by the callers checking b.err.
func (b *builder) must(n *G.Node, err error) *G.Node {
	if err != nil && b.err == nil {
		b.err = err
	}
	return n
}

func (b *builder) input(name string, dt tensor.Dtype, shape ...int) *G.Node {
	return G.NewTensor(b.g, dt, len(shape), G.WithShape(shape...), G.WithName(name))
}

// linear computes x·W + bias for x [N, in] as one op: the bias seeds the
// product's output rows, the backward products take BLAS transpose flags
// and the bias gradient is a column sum, so no repeated bias matrix, no
// transposed copies and no per-step allocations.
func (b *builder) linear(x *G.Node, w, bias int) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(ops.Linear(x, b.param(w), b.param(bias))) // [N, out]
}

// dropout draws its masks from the graph's own source, a function of
// (seed, op number, step), so a resumed run sees the same masks.
func (b *builder) dropout(x *G.Node) *G.Node {
	if !b.train || b.cfg.Dropout == 0 || b.err != nil {
		return x
	}
	return b.must(ops.Dropout(x, float32(b.cfg.Dropout), b.drop))
}

func (b *builder) layerNorm(x *G.Node, ids [2]int) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(ops.LayerNorm(x, b.param(ids[0]), b.param(ids[1]), ops.LayerNormEps)) // [N, D]
}

// attention is multi-head attention of queries xq [B*Tq, D] over keys and
// values xkv [B*Tk, D]; bias [B, 1, Tq, Tk] is the additive mask (0 or
// -Inf). In a step graph (step.go) self-attention reads the cached keys and
// values too, and cross-attention (xkv nil) the memory's, projected once
// per decoding.
func (b *builder) attention(xq, xkv *G.Node, a attnIDs, bsz, tq, tk int, bias *G.Node, bidirectional bool) *G.Node {
	if b.err != nil {
		return xq
	}
	q := b.linear(xq, a.wq, a.bq) // [B*Tq, D]
	var o *G.Node
	if b.step != nil {
		o = b.attendStep(q, xkv, a, bias) // [B, D]
	} else {
		k := b.linear(xkv, a.wk, a.bk)                                 // [B*Tk, D]
		v := b.linear(xkv, a.wv, a.bv)                                 // [B*Tk, D]
		o = b.attend(q, k, v, a.rel, bsz, tq, tk, bias, bidirectional) // [B*Tq, D]
	}
	if b.err != nil {
		return xq
	}
	return b.linear(o, a.wo, a.bo) // [B*Tq, D]
}

// attend is the heads' attention of projected queries q [B*Tq, D] over keys
// and values k, v [B*Tk, D], before the output projection. With a relative
// table (rel >= 0) it adds the table's learned bias per head over buckets
// (attention.Bucket; bidirectional in the encoder, causal in the decoder).
func (b *builder) attend(q, k, v *G.Node, rel, bsz, tq, tk int, bias *G.Node, bidirectional bool) *G.Node {
	if b.err != nil {
		return q
	}
	c := b.cfg
	s := b.must(ops.AttnScores(q, k, bsz, c.Heads, b.scale())) // [B, H, Tq, Tk]
	var rb *G.Node
	if rel >= 0 && b.err == nil {
		buckets := make([]int, tq*tk)
		fillRel(buckets, tq, tk, bidirectional, c)
		rb = b.must(ops.RelativeBias(b.param(rel), buckets, tq, tk)) // [1, H, Tq, Tk]
	}
	if b.err != nil {
		return q
	}
	p := b.must(ops.AttentionSoftmax(s, bias, rb)) // [B, H, Tq, Tk]
	if b.err != nil {
		return q
	}
	return b.must(ops.AttnValues(p, v, c.Heads)) // [B*Tq, D]
}

// scale is the attention scores' 1/sqrt(D/H).
func (b *builder) scale() float32 {
	return float32(1 / math.Sqrt(float64(b.cfg.Dim/b.cfg.Heads)))
}

func (b *builder) ffn(x *G.Node, l *layerIDs) *G.Node {
	hid := b.linear(x, l.w1, l.b1) // [N, MLP]
	if b.err != nil {
		return x
	}
	hid = b.dropout(b.must(ops.ReLU(hid))) // [N, MLP]
	return b.linear(hid, l.w2, l.b2)       // [N, D]
}

// residual adds dropout(f(LN(x))) to x.
func (b *builder) residual(x *G.Node, ln [2]int, f func(*G.Node) *G.Node) *G.Node {
	y := b.dropout(f(b.layerNorm(x, ln)))
	if b.err != nil {
		return x
	}
	return b.must(ops.Add(x, y)) // [N, D]
}

// embed looks up ids [B*T] and adds sinusoidal positions pos [B*T, D]
// (nil with relative attention).
func (b *builder) embed(table int, ids, pos *G.Node) *G.Node {
	x := b.must(ops.Embed(b.param(table), ids)) // [B*T, D]
	if pos != nil && b.err == nil {
		x = b.must(ops.Add(x, pos)) // [B*T, D]
	}
	return b.dropout(x)
}

// encoder returns the memory [B*S, D].
func (b *builder) encoder(in *graphInputs) *G.Node {
	return b.encodeStack(in.src, in.srcPos, in.B, in.S, in.encBias) // [B*S, D]
}

// encodeStack runs the encoder layers over ids [N*L] (N sequences of L
// tokens, positions pos [N*L, D] or nil) under the padding bias [N, 1, L, L]
// and returns [N*L, D].
func (b *builder) encodeStack(ids, pos *G.Node, n, l int, bias *G.Node) *G.Node {
	layer := func(i int, x *G.Node) *G.Node {
		ly := &b.enc.layers[i]
		x = b.residual(x, ly.ln[0], func(y *G.Node) *G.Node {
			return b.attention(y, y, ly.self, n, l, l, bias, true)
		})
		return b.residual(x, ly.ln[1], func(y *G.Node) *G.Node { return b.ffn(y, ly) })
	}
	var x *G.Node
	if b.enc.step != nil {
		x = b.embed(b.enc.srcEmb, ids, nil)                     // [N*L, D]
		x = b.recurrence(x, pos, b.enc.step, b.enc.halt, layer) // [N*L, D]
	} else {
		x = b.embed(b.enc.srcEmb, ids, pos) // [N*L, D]
		for i := range b.enc.layers {
			x = layer(i, x) // [N*L, D]
		}
	}
	return b.layerNorm(x, b.enc.ln) // [N*L, D]
}

// decoder returns the logits [B*T, V] given the memory [B*S, D]; in a step
// graph mem is nil and the logits are [B, V], of one position per row.
func (b *builder) decoder(in *graphInputs, mem *G.Node) *G.Node {
	layer := func(i int, x *G.Node) *G.Node {
		l := &b.m.dec[i]
		x = b.residual(x, l.ln[0], func(y *G.Node) *G.Node {
			return b.attention(y, y, l.self, in.B, in.T, in.T, in.decBias, false)
		})
		x = b.residual(x, l.ln[1], func(y *G.Node) *G.Node {
			return b.attention(y, mem, l.cross, in.B, in.T, in.S, in.crossBias, false)
		})
		return b.residual(x, l.ln[2], func(y *G.Node) *G.Node { return b.ffn(y, l) })
	}
	var x *G.Node
	if b.m.decStep != nil {
		x = b.embed(b.m.tgtEmb, in.decIn, nil)                          // [B*T, D]
		x = b.recurrence(x, in.tgtPos, b.m.decStep, b.m.decHalt, layer) // [B*T, D]
	} else {
		x = b.embed(b.m.tgtEmb, in.decIn, in.tgtPos) // [B*T, D]
		for i := range b.m.dec {
			x = layer(i, x) // [B*T, D]
		}
	}
	x = b.layerNorm(x, b.m.decLN)          // [B*T, D]
	return b.linear(x, b.m.outW, b.m.outB) // [B*T, V]
}

// Bind implements models.Model.
func (m *Model) Bind(be engine.Backend, opt *ops.AdamConfig) (models.Runner, error) {
	if opt == nil {
		return NewEngine(m, be)
	}
	return NewTrainer(m, be, *opt)
}
