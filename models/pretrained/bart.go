package pretrained

import (
	"fmt"
	"math"
	"sort"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/models"
	"compbench/ops"
	"compbench/safetensors"
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
	P models.Params
}

// bartEps is BART's LayerNorm epsilon (Hugging Face's nn.LayerNorm default).
const bartEps = 1e-5

// LoadBART reads the weights of a checked BART folder (Open).
func LoadBART(f *Folder) (*BART, error) {
	if f.Config.ModelType != TypeBART {
		return nil, fmt.Errorf("%s: model_type %q is not bart", f.Dir, f.Config.ModelType)
	}
	r, err := safetensors.Open(f.Weights)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	need, _ := Shapes(f.Config)
	names := make([]string, 0, len(need))
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	m := &BART{Cfg: f.Config}
	for _, n := range names {
		w, info, err := r.Float32s(n)
		if err != nil {
			return nil, err
		}
		if bad := safetensors.NonFinite(w); bad != "" {
			return nil, fmt.Errorf("%s: tensor %s holds %s", f.Weights, n, bad)
		}
		shape := tensor.Shape(info.Shape)
		switch {
		case n == "final_logits_bias":
			shape = tensor.Shape{info.Shape[1]}
		case isLinear(n):
			w, shape = transpose(w, info.Shape[0], info.Shape[1]), tensor.Shape{info.Shape[1], info.Shape[0]}
		}
		m.P.Add(n, shape, func(dst []float32) { copy(dst, w) })
	}
	return m, nil
}

// isLinear reports whether a BART tensor is a linear layer's weight
// (stored [out, in]).
func isLinear(name string) bool {
	if !strings.HasSuffix(name, ".weight") {
		return false
	}
	for _, s := range []string{"_proj.weight", ".fc1.weight", ".fc2.weight"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// transpose turns w [rows, cols] into [cols, rows].
func transpose(w []float32, rows, cols int) []float32 {
	out := make([]float32, len(w))
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			out[j*rows+i] = w[i*cols+j]
		}
	}
	return out
}

// BARTGraph is one forward pass of a BART over a batch of B sources of S
// tokens and B decoder inputs of T tokens, on a Gorgonia graph the engine
// compiles (the TapeMachine runs it in tests).
type BARTGraph struct {
	G *G.ExprGraph
	// Src, DecIn and Labels are the int inputs [B*S], [B*T] and [B*T];
	// EncBias, DecBias and CrossBias the additive masks [B,1,S,S],
	// [B,1,T,T] and [B,1,T,S] (0 or -Inf; FillMasks).
	Src, DecIn, Labels          *G.Node
	EncBias, DecBias, CrossBias *G.Node
	// Logits are [B*T, V]; Loss the mean cross-entropy of Labels (pad
	// ignored), when built with labels.
	Logits, Loss *G.Node
	B, S, T      int
	nodes        map[int]*G.Node
}

// Graph builds the forward pass for B rows of S source and T target
// tokens; with labels it adds the cross-entropy (label smoothing eps).
func (m *BART) Graph(B, S, T int, labels bool, eps float32) (*BARTGraph, error) {
	c := m.Cfg
	if S+2 > c.MaxPositions+2 || T+2 > c.MaxPositions+2 {
		return nil, fmt.Errorf("bart: lengths %d and %d exceed max_position_embeddings %d", S, T, c.MaxPositions)
	}
	g := &BARTGraph{G: G.NewGraph(), B: B, S: S, T: T, nodes: map[int]*G.Node{}}
	b := &bartBuilder{m: m, g: g}
	in := func(name string, dt tensor.Dtype, shape ...int) *G.Node {
		return G.NewTensor(g.G, dt, len(shape), G.WithShape(shape...), G.WithName(name))
	}
	g.Src, g.DecIn = in("src", tensor.Int, B*S), in("dec_in", tensor.Int, B*T)
	g.EncBias = in("enc_bias", tensor.Float32, B, 1, S, S)
	g.DecBias = in("dec_bias", tensor.Float32, B, 1, T, T)
	g.CrossBias = in("cross_bias", tensor.Float32, B, 1, T, S)
	mem := b.stack("encoder", g.Src, S, nil)                // [B*S, D]
	y := b.stack("decoder", g.DecIn, T, mem)                // [B*T, D]
	shared := b.param("model.shared.weight")                // [V, D]
	logits := b.must(G.Mul(y, b.must(G.Transpose(shared)))) // [B*T, V]
	if b.err == nil {
		g.Logits = b.must(ops.AddBias(logits, b.param("final_logits_bias"))) // [B*T, V]
	}
	if labels && b.err == nil {
		g.Labels = in("labels", tensor.Int, B*T)
		g.Loss = b.must(ops.SoftmaxCrossEntropy(g.Logits, g.Labels, c.PadID, eps)) // scalar
	}
	return g, b.err
}

type bartBuilder struct {
	m   *BART
	g   *BARTGraph
	err error
}

func (b *bartBuilder) must(n *G.Node, err error) *G.Node {
	if err != nil && b.err == nil {
		b.err = err
	}
	return n
}

// param is the node of the weight called name, made on first use.
func (b *bartBuilder) param(name string) *G.Node {
	i, ok := b.m.P.Index(name)
	if !ok {
		b.must(nil, fmt.Errorf("bart: no weight %q", name))
		return nil
	}
	if n, ok := b.g.nodes[i]; ok {
		return n
	}
	v := b.m.P.Values[i]
	n := G.NewTensor(b.g.G, tensor.Float32, v.Dims(), G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
	b.g.nodes[i] = n
	return n
}

func (b *bartBuilder) linear(x *G.Node, name string) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(ops.Linear(x, b.param(name+".weight"), b.param(name+".bias"))) // [N, out]
}

func (b *bartBuilder) norm(x *G.Node, name string) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(ops.LayerNorm(x, b.param(name+".weight"), b.param(name+".bias"), bartEps)) // [N, D]
}

func (b *bartBuilder) add(x, y *G.Node) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(ops.Add(x, y)) // [N, D]
}

// stack is the encoder (mem nil) or the decoder over ids [B*L].
func (b *bartBuilder) stack(name string, ids *G.Node, L int, mem *G.Node) *G.Node {
	c, g := b.m.Cfg, b.g
	pre := "model." + name + "."
	x := b.must(ops.Embed(b.param("model.shared.weight"), ids)) // [B*L, D]
	if c.ScaleEmbedding && b.err == nil {
		x = b.must(G.HadamardProd(G.NewConstant(float32(math.Sqrt(float64(c.DModel)))), x)) // [B*L, D]
	}
	posIDs := make([]int, g.B*L)
	for i := range posIDs {
		posIDs[i] = i%L + 2 // Hugging Face's learned positions start at row 2
	}
	pos := G.NewTensor(g.G, tensor.Int, 1, G.WithShape(g.B*L), G.WithName(name+".pos_ids"),
		G.WithValue(tensor.New(tensor.WithShape(g.B*L), tensor.WithBacking(posIDs))))
	if b.err != nil {
		return x
	}
	x = b.add(x, b.must(ops.Embed(b.param(pre+"embed_positions.weight"), pos))) // [B*L, D]
	x = b.norm(x, pre+"layernorm_embedding")                                    // [B*L, D]
	layers, heads := c.EncoderLayers, c.EncoderHeads
	if mem != nil {
		layers, heads = c.DecoderLayers, c.DecoderHeads
	}
	for i := 0; i < layers; i++ {
		p := fmt.Sprintf("%slayers.%d.", pre, i)
		if mem == nil {
			x = b.norm(b.add(x, b.attention(x, x, p+"self_attn", heads, L, L, g.EncBias)), p+"self_attn_layer_norm") // [B*L, D]
		} else {
			x = b.norm(b.add(x, b.attention(x, x, p+"self_attn", heads, L, L, g.DecBias)), p+"self_attn_layer_norm")             // [B*L, D]
			x = b.norm(b.add(x, b.attention(x, mem, p+"encoder_attn", heads, L, g.S, g.CrossBias)), p+"encoder_attn_layer_norm") // [B*L, D]
		}
		h := b.linear(x, p+"fc1") // [B*L, FFN]
		if b.err == nil {
			h = b.must(ops.GELUExact(h)) // [B*L, FFN]
		}
		x = b.norm(b.add(x, b.linear(h, p+"fc2")), p+"final_layer_norm") // [B*L, D]
	}
	return x
}

// attention is multi-head attention of queries xq [B*tq, D] over keys and
// values xkv [B*tk, D] under the additive mask bias [B, 1, tq, tk].
func (b *bartBuilder) attention(xq, xkv *G.Node, name string, heads, tq, tk int, bias *G.Node) *G.Node {
	q := b.linear(xq, name+".q_proj")  // [B*tq, D]
	k := b.linear(xkv, name+".k_proj") // [B*tk, D]
	v := b.linear(xkv, name+".v_proj") // [B*tk, D]
	if b.err != nil {
		return xq
	}
	scale := float32(1 / math.Sqrt(float64(b.m.Cfg.DModel/heads)))
	s := b.must(ops.AttnScores(q, k, b.g.B, heads, scale)) // [B, H, tq, tk]
	if b.err != nil {
		return xq
	}
	p := b.must(ops.AttentionSoftmax(s, bias, nil)) // [B, H, tq, tk]
	if b.err != nil {
		return xq
	}
	o := b.must(ops.AttnValues(p, v, heads)) // [B*tq, D]
	return b.linear(o, name+".out_proj")     // [B*tq, D]
}

// FillMasks writes g's masks for rows with srcLen[b] source and decLen[b]
// decoder tokens (the rest padding): the encoder sees real source tokens,
// the decoder real earlier-or-equal positions and real source tokens.
func (g *BARTGraph) FillMasks(srcLen, decLen []int) (enc, dec, cross *tensor.Dense) {
	B, S, T := g.B, g.S, g.T
	inf := float32(math.Inf(-1))
	mask := func(tq, tk int, ok func(b, i, j int) bool) *tensor.Dense {
		v := make([]float32, B*tq*tk)
		for b := 0; b < B; b++ {
			for i := 0; i < tq; i++ {
				for j := 0; j < tk; j++ {
					if !ok(b, i, j) {
						v[(b*tq+i)*tk+j] = inf
					}
				}
			}
		}
		return tensor.New(tensor.WithShape(B, 1, tq, tk), tensor.WithBacking(v))
	}
	enc = mask(S, S, func(b, i, j int) bool { return i < srcLen[b] && j < srcLen[b] })
	dec = mask(T, T, func(b, i, j int) bool { return i < decLen[b] && j <= i })
	cross = mask(T, S, func(b, i, j int) bool { return i < decLen[b] && j < srcLen[b] })
	return enc, dec, cross
}
