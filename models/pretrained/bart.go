package pretrained

import (
	"fmt"
	"math"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/data"
	"compbench/models"
	"compbench/ops"
)

// BART (Lewis et al. 2020), which Bogin et al. (2022, §5) fine-tune, as
// Hugging Face's BartForConditionalGeneration computes it:
//
//   - embeddings: the shared table (times sqrt(d_model) with
//     scale_embedding), plus learned positions whose row for position t is
//     t+2, then LayerNorm (layernorm_embedding);
//   - post-norm layers: x = LN(x + attention(x)), [decoder: x = LN(x +
//     cross-attention(x, memory))], x = LN(x + fc2(GELU(fc1(x)))), with the
//     exact (erf) GELU and LayerNorm eps 1e-5;
//   - attention with biases on every projection and queries scaled by
//     head_dim^-0.5; the decoder's self-attention is causal;
//   - logits x·sharedᵀ + final_logits_bias (the output layer is the shared
//     table).
//
// The weights keep Hugging Face's names; linear weights are held
// transposed, [in, out], as ops.Linear takes them, and final_logits_bias as
// a [V] vector.
type BART struct {
	// Cfg is the folder's config.json.
	Cfg Config
	// P are the weights.
	P   models.Params
	src *Folder
}

// bartEps is BART's LayerNorm epsilon, PyTorch's nn.LayerNorm default,
// which is also the Transformers' (ops.LayerNormEps).
const bartEps = ops.LayerNormEps

// LoadBART reads the weights of a checked BART folder (Open).
func LoadBART(f *Folder) (*BART, error) {
	if f.Config.ModelType != TypeBART {
		return nil, fmt.Errorf("%s: model_type %q is not bart", f.Dir, f.Config.ModelType)
	}
	p, err := loadWeights(f, func(name string, w []float32, s []int) ([]float32, tensor.Shape) {
		switch {
		case name == "final_logits_bias":
			return w, tensor.Shape{s[1]}
		case bartLinear(name):
			return transpose(w, s[0], s[1]), tensor.Shape{s[1], s[0]}
		}
		return w, tensor.Shape(s)
	})
	if err != nil {
		return nil, err
	}
	return &BART{Cfg: f.Config, P: p, src: f}, nil
}

// bartLinear reports whether a BART tensor is a linear layer's weight.
func bartLinear(name string) bool {
	return strings.HasSuffix(name, "_proj.weight") || strings.HasSuffix(name, ".fc1.weight") || strings.HasSuffix(name, ".fc2.weight")
}

// Save writes the model as a Hugging Face folder dir through out (the
// source folder's config.json and tokenizer files, the weights in its
// layout), which LoadBART and Hugging Face's BartForConditionalGeneration
// read.
func (m *BART) Save(out *data.OutputSet, dir string) error {
	return save(&m.P, m.src, out, dir, func(name string, w []float32, s []int) ([]float32, []int) {
		switch {
		case name == "final_logits_bias":
			return w, []int{1, s[0]}
		case bartLinear(name):
			return transpose(w, s[0], s[1]), []int{s[1], s[0]}
		}
		return w, s
	})
}

// Graph builds the forward pass for B rows of S source and T target
// tokens; with labels it adds the cross-entropy (label smoothing eps).
func (m *BART) Graph(B, S, T int, labels bool, eps float32) (*Graph, error) {
	return m.build(B, S, T, Whole, labels, eps, nil)
}

// build is Graph for one part of the model (labels: Whole and Decoder).
func (m *BART) build(B, S, T int, part Part, labels bool, eps float32, drop *ops.DropoutSource) (*Graph, error) {
	c := m.Cfg
	if S > c.MaxPositions || T > c.MaxPositions {
		return nil, fmt.Errorf("bart: lengths %d and %d exceed max_position_embeddings %d", S, T, c.MaxPositions)
	}
	b := &bartBuilder{builder{p: &m.P, g: newGraph(B, S, T, c.DModel, part), drop: drop, attnDrop: c.AttentionDropout}, c}
	g := b.g
	if part == CrossKV {
		for i := 0; i < c.DecoderLayers; i++ {
			p := fmt.Sprintf("model.decoder.layers.%d.encoder_attn.", i)
			g.Step.CrossKOut = append(g.Step.CrossKOut, b.lin(g.Mem, p+"k_proj")) // [B*S, D]
			g.Step.CrossVOut = append(g.Step.CrossVOut, b.lin(g.Mem, p+"v_proj")) // [B*S, D]
		}
		return b.finish(false, c.PadID, eps)
	}
	if part == Step {
		g.Step.Pos = G.NewTensor(g.G, tensor.Int, 1, G.WithShape(B), G.WithName("pos")) // [B]
	}
	mem, done := encoderOr(g, part, func() *G.Node { return b.stack("encoder", g.Src, S, nil) }) // [B*S, D]
	if done {
		return b.finish(false, c.PadID, eps)
	}
	y := b.stack("decoder", g.DecIn, T, mem) // [B*T, D]
	if b.err == nil {
		logits := b.tiedOutput(y, "model.shared.weight") // [B*T, V]
		if b.err == nil {
			g.Logits = b.must(ops.AddBias(logits, b.param("final_logits_bias"))) // [B*T, V]
		}
	}
	return b.finish(labels, c.PadID, eps)
}

type bartBuilder struct {
	builder
	cfg Config
}

func (b *bartBuilder) norm(x *G.Node, name string) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(ops.LayerNorm(x, b.param(name+".weight"), b.param(name+".bias"), bartEps)) // [N, D]
}

func (b *bartBuilder) lin(x *G.Node, name string) *G.Node {
	return b.linear(x, name+".weight", name+".bias") // [N, out]
}

// stack is the encoder (mem nil) or the decoder over ids [B*L]; in a Step
// graph the decoder over one id per row at position Step.Pos, its
// self-attention over the cache and its cross-attention over the CrossKV
// keys.
func (b *bartBuilder) stack(name string, ids *G.Node, L int, mem *G.Node) *G.Node {
	c, g := b.cfg, b.g
	decoder := name == "decoder"
	pre := "model." + name + "."
	x := b.embed("model.shared.weight", ids) // [B*L, D]; Step: [B, D]
	if c.ScaleEmbedding && b.err == nil {
		x = b.must(G.HadamardProd(G.NewConstant(float32(math.Sqrt(float64(c.DModel)))), x)) // [B*L, D]
	}
	pos := g.Step.pos()
	if pos == nil {
		posIDs := make([]int, g.B*L)
		for i := range posIDs {
			posIDs[i] = i%L + 2 // Hugging Face's learned positions start at row 2
		}
		pos = G.NewTensor(g.G, tensor.Int, 1, G.WithShape(g.B*L), G.WithName(name+".pos_ids"),
			G.WithValue(tensor.New(tensor.WithShape(g.B*L), tensor.WithBacking(posIDs))))
	}
	x = b.add(x, b.embed(pre+"embed_positions.weight", pos))       // [B*L, D]
	x = b.dropout(b.norm(x, pre+"layernorm_embedding"), c.Dropout) // [B*L, D]
	layers, heads := c.EncoderLayers, c.EncoderHeads
	if decoder {
		layers, heads = c.DecoderLayers, c.DecoderHeads
	}
	for i := 0; i < layers; i++ {
		p := fmt.Sprintf("%slayers.%d.", pre, i)
		if !decoder {
			x = b.norm(b.add(x, b.dropout(b.attention(x, x, p+"self_attn", heads, g.EncBias), c.Dropout)), p+"self_attn_layer_norm") // [B*L, D]
		} else {
			x = b.norm(b.add(x, b.dropout(b.attention(x, x, p+"self_attn", heads, g.DecBias), c.Dropout)), p+"self_attn_layer_norm")           // [B*L, D]
			x = b.norm(b.add(x, b.dropout(b.attention(x, mem, p+"encoder_attn", heads, g.CrossBias), c.Dropout)), p+"encoder_attn_layer_norm") // [B*L, D]
		}
		h := b.lin(x, p+"fc1") // [B*L, FFN]
		if b.err == nil {
			h = b.must(ops.GELUExact(h)) // [B*L, FFN]
		}
		h = b.dropout(h, c.ActivationDropout)                                               // [B*L, FFN]
		x = b.norm(b.add(x, b.dropout(b.lin(h, p+"fc2"), c.Dropout)), p+"final_layer_norm") // [B*L, D]
	}
	return x
}

// attention is BART's multi-head attention of queries xq over keys and
// values xkv under the additive mask. In a Step graph self-attention runs
// over the cache (attendCached) and cross-attention (xkv nil) over the
// CrossKV part's keys and values.
func (b *bartBuilder) attention(xq, xkv *G.Node, name string, heads int, mask *G.Node) *G.Node {
	scale := float32(1 / math.Sqrt(float64(b.cfg.DModel/heads)))
	q := b.lin(xq, name+".q_proj") // [B*tq, D]
	var o *G.Node
	switch {
	case xkv == nil:
		k, v := b.crossKV(b.cfg.DModel)                // [B*S, D]
		o = b.attend(q, k, v, heads, scale, mask, nil) // [B, D]
	case b.g.Step != nil:
		k, v := b.lin(xkv, name+".k_proj"), b.lin(xkv, name+".v_proj") // [B, D]
		o = b.attendCached(q, k, v, heads, scale, nil)                 // [B, D]
	default:
		k := b.lin(xkv, name+".k_proj")                // [B*tk, D]
		v := b.lin(xkv, name+".v_proj")                // [B*tk, D]
		o = b.attend(q, k, v, heads, scale, mask, nil) // [B*tq, D]
	}
	return b.lin(o, name+".out_proj") // [B*tq, D]
}
