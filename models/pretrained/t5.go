package pretrained

import (
	"fmt"
	"math"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/attention"
	"compbench/data"
	"compbench/models"
	"compbench/ops"
)

// T5 (Raffel et al. 2020), which Bogin et al. (2022, §5) and Godbole & Jia
// (2023, §4) fine-tune, as Hugging Face's T5ForConditionalGeneration
// computes it:
//
//   - pre-norm blocks with the RMS norm (ops.RMSNorm, eps
//     layer_norm_epsilon): x = x + attention(norm(x)), [decoder: x = x +
//     cross-attention(norm(x), memory)], x = x + feed-forward(norm(x)),
//     and a final norm per stack;
//   - attention without biases and without the 1/sqrt(d_kv) scaling (T5
//     folds it into its initialisation), NumHeads heads of DKV each (their
//     width need not be DModel);
//   - relative-position biases: T5's buckets (attention.Bucket), one
//     [buckets, heads] table per stack, held by its first block and added
//     in every block; bidirectional in the encoder, causal in the decoder;
//     none in cross-attention;
//   - feed-forward wo(relu(wi x)) (v1.0) or wo(gelu_tanh(wi_0 x) ⊙ wi_1 x)
//     (v1.1, "gated-gelu");
//   - logits: with tied embeddings (v1.0) the decoder output times
//     DModel^-0.5 times sharedᵀ, else lm_head.
//
// The weights keep Hugging Face's names; linear weights are held
// transposed, [in, out].
type T5 struct {
	// Cfg is the folder's config.json.
	Cfg Config
	// P are the weights.
	P   models.Params
	src *Folder
}

// t5Linear reports whether a T5 tensor is a linear layer's weight (2-D,
// not an embedding or the relative-position table).
func t5Linear(name string, s []int) bool {
	return len(s) == 2 && name != "shared.weight" && !strings.HasSuffix(name, "embed_tokens.weight") &&
		!strings.HasSuffix(name, "relative_attention_bias.weight")
}

// Save writes the model as a Hugging Face folder dir through out, which
// LoadT5 and Hugging Face's T5ForConditionalGeneration read.
func (m *T5) Save(out *data.OutputSet, dir string) error {
	return save(&m.P, m.src, out, dir, func(name string, w []float32, s []int) ([]float32, []int) {
		if t5Linear(name, s) {
			return transpose(w, s[0], s[1]), []int{s[1], s[0]}
		}
		return w, s
	})
}

// LoadT5 reads the weights of a checked T5 folder (Open).
func LoadT5(f *Folder) (*T5, error) {
	if f.Config.ModelType != TypeT5 {
		return nil, fmt.Errorf("%s: model_type %q is not t5", f.Dir, f.Config.ModelType)
	}
	p, err := loadWeights(f, func(name string, w []float32, s []int) ([]float32, tensor.Shape) {
		if t5Linear(name, s) {
			return transpose(w, s[0], s[1]), tensor.Shape{s[1], s[0]}
		}
		return w, tensor.Shape(s)
	})
	if err != nil {
		return nil, err
	}
	return &T5{Cfg: f.Config, P: p, src: f}, nil
}

// Graph builds the forward pass for B rows of S source and T target
// tokens; with labels it adds the cross-entropy (label smoothing eps).
func (m *T5) Graph(B, S, T int, labels bool, eps float32) (*Graph, error) {
	return m.build(B, S, T, Whole, labels, eps, nil)
}

// build is Graph for one part of the model (labels: Whole and Decoder).
func (m *T5) build(B, S, T int, part Part, labels bool, eps float32, drop *ops.DropoutSource) (*Graph, error) {
	c := m.Cfg
	b := &t5Builder{builder{p: &m.P, g: newGraph(B, S, T, c.DModel, part), drop: drop, attnDrop: c.DropoutRate}, c}
	g := b.g
	if part == CrossKV {
		for i := 0; i < c.NumDecoderLayers; i++ {
			p := fmt.Sprintf("decoder.block.%d.layer.1.EncDecAttention.", i)
			g.Step.CrossKOut = append(g.Step.CrossKOut, b.matmul(g.Mem, p+"k.weight")) // [B*S, H*dk]
			g.Step.CrossVOut = append(g.Step.CrossVOut, b.matmul(g.Mem, p+"v.weight")) // [B*S, H*dk]
		}
		return b.finish(false, c.PadID, eps)
	}
	if part == Step {
		g.Step.Buckets = G.NewTensor(g.G, tensor.Int, 1, G.WithShape(T), G.WithName("buckets")) // [L]
	}
	mem, done := encoderOr(g, part, func() *G.Node { return b.stack("encoder", g.Src, S, nil) }) // [B*S, D]
	if done {
		return b.finish(false, c.PadID, eps)
	}
	y := b.stack("decoder", g.DecIn, T, mem) // [B*T, D]; Step: [B, D]
	if b.err == nil {
		if c.TieEmbeddings {
			y = b.must(G.HadamardProd(G.NewConstant(float32(1/math.Sqrt(float64(c.DModel)))), y)) // [B*T, D]
			g.Logits = b.tiedOutput(y, "shared.weight")                                           // [B*T, V]
		} else {
			g.Logits = b.matmul(y, "lm_head.weight") // [B*T, V]
		}
	}
	return b.finish(labels, c.PadID, eps)
}

type t5Builder struct {
	builder
	cfg Config
}

func (b *t5Builder) norm(x *G.Node, name string) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(ops.RMSNorm(x, b.param(name), float32(b.cfg.LayerNormEps))) // [N, D]
}

// stack is the encoder (mem nil) or the decoder over ids [B*L]; in a Step
// graph the decoder over one id per row, its self-attention over the
// cache of L positions and its cross-attention over the CrossKV keys.
func (b *t5Builder) stack(name string, ids *G.Node, L int, mem *G.Node) *G.Node {
	c, g := b.cfg, b.g
	decoder := name == "decoder"
	x := b.dropout(b.embed("shared.weight", ids), c.DropoutRate) // [B*L, D]; Step: [B, D]
	layers, mask, selfFF := c.NumLayers, g.EncBias, "1"
	if decoder {
		layers, mask, selfFF = c.NumDecoderLayers, g.DecBias, "2"
	}
	// The position bias of the first block's table, shared by every block.
	table := name + ".block.0.layer.0.SelfAttention.relative_attention_bias.weight"
	var rel *G.Node
	switch {
	case b.err != nil:
	case g.Step != nil: // row t of the bias, from the step's buckets
		rel = b.must(ops.Embed(b.param(table), g.Step.Buckets))         // [L, H]
		rel = b.must(G.Transpose(rel))                                  // [H, L]
		rel = b.must(G.Reshape(rel, tensor.Shape{1, c.NumHeads, 1, L})) // [1, H, 1, L]
	default:
		buckets := make([]int, 0, L*L)
		for i := 0; i < L; i++ {
			for j := 0; j < L; j++ {
				buckets = append(buckets, attention.Bucket(i-j, !decoder, c.RelBuckets, c.RelMaxDistance))
			}
		}
		rel = b.must(ops.RelativeBias(b.param(table), buckets, L, L)) // [1, H, L, L]
	}
	for i := 0; i < layers; i++ {
		p := fmt.Sprintf("%s.block.%d.layer.", name, i)
		h := b.norm(x, p+"0.layer_norm.weight")                                                    // [B*L, D]
		x = b.add(x, b.dropout(b.attention(h, h, p+"0.SelfAttention.", mask, rel), c.DropoutRate)) // [B*L, D]
		if decoder {
			h = b.norm(x, p+"1.layer_norm.weight")                                                                // [B*L, D]
			x = b.add(x, b.dropout(b.attention(h, mem, p+"1.EncDecAttention.", g.CrossBias, nil), c.DropoutRate)) // [B*L, D]
		}
		h = b.norm(x, p+selfFF+".layer_norm.weight")                                          // [B*L, D]
		x = b.add(x, b.dropout(b.feedForward(h, p+selfFF+".DenseReluDense."), c.DropoutRate)) // [B*L, D]
	}
	return b.dropout(b.norm(x, name+".final_layer_norm.weight"), c.DropoutRate) // [B*L, D]
}

// attention is T5's multi-head attention (no biases, no scaling) of
// queries xq over keys and values xkv. In a Step graph self-attention runs
// over the cache (attendCached) and cross-attention (xkv nil) over the
// CrossKV part's keys and values.
func (b *t5Builder) attention(xq, xkv *G.Node, pre string, mask, rel *G.Node) *G.Node {
	hd := b.cfg.NumHeads * b.cfg.DKV
	q := b.matmul(xq, pre+"q.weight") // [B*tq, H*dk]
	var o *G.Node
	switch {
	case xkv == nil:
		k, v := b.crossKV(hd)                               // [B*S, H*dk]
		o = b.attend(q, k, v, b.cfg.NumHeads, 1, mask, rel) // [B, H*dk]
	case b.g.Step != nil:
		k, v := b.matmul(xkv, pre+"k.weight"), b.matmul(xkv, pre+"v.weight") // [B, H*dk]
		o = b.attendCached(q, k, v, b.cfg.NumHeads, 1, rel)                  // [B, H*dk]
	default:
		k := b.matmul(xkv, pre+"k.weight")                  // [B*tk, H*dk]
		v := b.matmul(xkv, pre+"v.weight")                  // [B*tk, H*dk]
		o = b.attend(q, k, v, b.cfg.NumHeads, 1, mask, rel) // [B*tq, H*dk]
	}
	return b.matmul(o, pre+"o.weight") // [B*tq, D]
}

func (b *t5Builder) feedForward(x *G.Node, pre string) *G.Node {
	if b.cfg.FeedForward == "gated-gelu" {
		a := b.matmul(x, pre+"wi_0.weight") // [N, FF]
		if b.err == nil {
			a = b.must(ops.GELU(a)) // [N, FF] tanh form (Hugging Face's gelu_new)
		}
		lin := b.matmul(x, pre+"wi_1.weight") // [N, FF]
		if b.err == nil {
			a = b.must(G.HadamardProd(a, lin)) // [N, FF]
		}
		return b.matmul(b.dropout(a, b.cfg.DropoutRate), pre+"wo.weight") // [N, D]
	}
	h := b.matmul(x, pre+"wi.weight") // [N, FF]
	if b.err == nil {
		h = b.must(ops.ReLU(h)) // [N, FF]
	}
	return b.matmul(b.dropout(h, b.cfg.DropoutRate), pre+"wo.weight") // [N, D]
}
