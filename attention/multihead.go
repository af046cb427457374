package attention

import (
	"fmt"
	"math"
	"math/rand/v2"

	"compbench/ops"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Config describes one multi-head attention block.
type Config struct {
	// DModel is the model width D (Shi et al.: 256).
	DModel int
	// Heads is the number of heads; it must divide DModel (Shi et al.: 4).
	Heads int
	// Dropout is the dropout probability on the attention probabilities.
	Dropout float32
	// Relative adds a learned bias per (relative-position bucket, head) to
	// the attention logits (self-attention only: queries and keys are the
	// same positions).
	Relative bool
	// Bidirectional selects the bucket scheme: true for encoder
	// self-attention, false (causal) for decoder self-attention.
	Bidirectional bool
	// Buckets is the number of relative-position buckets (32).
	Buckets int
	// MaxDistance is the distance from which all keys share the last bucket
	// (128).
	MaxDistance int
}

// DefaultConfig returns the sizes of Shi et al. (App. C): width 256, 4 heads,
// dropout 0.1, absolute positions; relative settings 32 buckets, distance 128.
func DefaultConfig() Config {
	return Config{DModel: 256, Heads: 4, Dropout: 0.1, Bidirectional: true, Buckets: 32, MaxDistance: 128}
}

// Validate reports an unusable configuration.
func (c Config) Validate() error {
	if c.DModel <= 0 || c.Heads <= 0 || c.DModel%c.Heads != 0 {
		return fmt.Errorf("attention: width %d does not split into %d heads", c.DModel, c.Heads)
	}
	if c.Dropout < 0 || c.Dropout >= 1 {
		return fmt.Errorf("attention: dropout %g not in [0,1)", c.Dropout)
	}
	if c.Relative {
		return checkBuckets(c.Buckets, c.MaxDistance, c.Bidirectional)
	}
	return nil
}

// MultiHead holds the parameters of one attention block. The tensors are
// shared by every graph the block is bound into, so a model can build one
// graph per batch shape and train the same weights.
type MultiHead struct {
	Config Config
	// Wq, Wk, Wv, Wo are the [D, D] projections (x W, heads side by side).
	Wq, Wk, Wv, Wo *tensor.Dense
	// Bq, Bk, Bv, Bo are the [D] projection biases.
	Bq, Bk, Bv, Bo *tensor.Dense
	// Rel is the [Buckets, Heads] relative-position bias table (nil unless
	// Config.Relative).
	Rel *tensor.Dense
}

// Named is one parameter tensor with its checkpoint name.
type Named struct {
	Name   string
	Tensor *tensor.Dense
}

// New initialises a block: projections Xavier/Glorot uniform (Glorot &
// Bengio 2010) drawn from r in the order q, k, v, o; biases zero; the
// relative table zero, so training starts position-agnostic and learns the
// biases (Shi et al. do not state an initialisation).
func New(cfg Config, r *rand.Rand) (*MultiHead, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := cfg.DModel
	m := &MultiHead{Config: cfg}
	for _, w := range []**tensor.Dense{&m.Wq, &m.Wk, &m.Wv, &m.Wo} {
		*w = Xavier(r, d, d)
	}
	for _, b := range []**tensor.Dense{&m.Bq, &m.Bk, &m.Bv, &m.Bo} {
		*b = tensor.New(tensor.WithShape(d), tensor.Of(tensor.Float32)) // [D]
	}
	if cfg.Relative {
		m.Rel = tensor.New(tensor.WithShape(cfg.Buckets, cfg.Heads), tensor.Of(tensor.Float32)) // [NB, H]
	}
	return m, nil
}

// Xavier returns a [fanIn, fanOut] matrix uniform in +-sqrt(6/(fanIn+fanOut)).
func Xavier(r *rand.Rand, fanIn, fanOut int) *tensor.Dense {
	lim := float32(math.Sqrt(6 / float64(fanIn+fanOut)))
	v := make([]float32, fanIn*fanOut)
	for i := range v {
		v[i] = (r.Float32()*2 - 1) * lim
	}
	return tensor.New(tensor.WithShape(fanIn, fanOut), tensor.WithBacking(v)) // [fanIn, fanOut]
}

// Params lists the parameters with names under prefix, in a fixed order.
func (m *MultiHead) Params(prefix string) []Named {
	p := []Named{
		{prefix + ".q.w", m.Wq}, {prefix + ".q.b", m.Bq},
		{prefix + ".k.w", m.Wk}, {prefix + ".k.b", m.Bk},
		{prefix + ".v.w", m.Wv}, {prefix + ".v.b", m.Bv},
		{prefix + ".o.w", m.Wo}, {prefix + ".o.b", m.Bo},
	}
	if m.Rel != nil {
		p = append(p, Named{prefix + ".rel", m.Rel})
	}
	return p
}

// Bound is a block whose parameters are nodes of one graph.
type Bound struct {
	m *MultiHead
	// Nodes are the parameter nodes in the order of MultiHead.Params.
	Nodes                               G.Nodes
	wq, bq, wk, bk, wv, bv, wo, bo, rel *G.Node
}

// Bind adds the block's parameters to g as nodes sharing the tensors.
func (m *MultiHead) Bind(g *G.ExprGraph, prefix string) *Bound {
	b := &Bound{m: m}
	for _, p := range m.Params(prefix) {
		n := G.NewTensor(g, tensor.Float32, p.Tensor.Dims(), G.WithShape(p.Tensor.Shape()...), G.WithValue(p.Tensor), G.WithName(p.Name))
		b.Nodes = append(b.Nodes, n)
	}
	b.wq, b.bq, b.wk, b.bk, b.wv, b.bv, b.wo, b.bo = b.Nodes[0], b.Nodes[1], b.Nodes[2], b.Nodes[3], b.Nodes[4], b.Nodes[5], b.Nodes[6], b.Nodes[7]
	if m.Rel != nil {
		b.rel = b.Nodes[8]
	}
	return b
}

// Forward computes multi-head attention of the queries x [B*Tq, D] over the
// keys and values kv [B*Tk, D] (kv = x for self-attention), rows grouped by
// batch element. mask is nil or an additive [B or 1, 1, Tq, Tk] tensor node
// (see Additive); drop supplies the dropout masks (nil: no dropout). The
// result is [B*Tq, D].
func (b *Bound) Forward(x, kv *G.Node, batch int, mask *G.Node, drop *ops.DropoutSource) (*G.Node, error) {
	cfg := b.m.Config
	q, err := ops.Linear(x, b.wq, b.bq) // [B*Tq, D]
	if err != nil {
		return nil, fmt.Errorf("attention query: %w", err)
	}
	k, err := ops.Linear(kv, b.wk, b.bk) // [B*Tk, D]
	if err != nil {
		return nil, fmt.Errorf("attention key: %w", err)
	}
	v, err := ops.Linear(kv, b.wv, b.bv) // [B*Tk, D]
	if err != nil {
		return nil, fmt.Errorf("attention value: %w", err)
	}
	scale := float32(1 / math.Sqrt(float64(cfg.DModel/cfg.Heads)))
	s, err := ops.AttnScores(q, k, batch, cfg.Heads, scale) // [B, H, Tq, Tk]
	if err != nil {
		return nil, err
	}
	var rel *G.Node
	if b.rel != nil {
		tq, tk := s.Shape()[2], s.Shape()[3]
		if rel, err = ops.RelativeBias(b.rel, Buckets(tq, tk, cfg.Bidirectional, cfg.Buckets, cfg.MaxDistance), tq, tk); err != nil { // [1, H, Tq, Tk]
			return nil, err
		}
	}
	p, err := ops.AttentionSoftmax(s, mask, rel) // [B, H, Tq, Tk]
	if err != nil {
		return nil, err
	}
	if drop != nil && cfg.Dropout > 0 {
		if p, err = ops.Dropout(p, cfg.Dropout, drop); err != nil { // [B, H, Tq, Tk]
			return nil, err
		}
	}
	o, err := ops.AttnValues(p, v, cfg.Heads) // [B*Tq, D]
	if err != nil {
		return nil, err
	}
	y, err := ops.Linear(o, b.wo, b.bo) // [B*Tq, D]
	if err != nil {
		return nil, fmt.Errorf("attention output: %w", err)
	}
	return y, nil
}
