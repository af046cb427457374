package pretrained

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/data"
	"compbench/models"
	"compbench/ops"
	"compbench/safetensors"
)

// Graph is one forward pass of a pretrained encoder-decoder over B
// sources of S tokens and B decoder inputs of T tokens, on a Gorgonia graph
// that the engine compiles (the TapeMachine runs it in tests).
type Graph struct {
	G *G.ExprGraph
	// Src, DecIn and Labels are the int inputs [B*S], [B*T] and [B*T];
	// EncBias, DecBias and CrossBias the additive masks [B,1,S,S],
	// [B,1,T,T] and [B,1,T,S] (0 or -Inf; FillMasks).
	Src, DecIn, Labels          *G.Node
	EncBias, DecBias, CrossBias *G.Node
	// Mem is the input of the Decoder and CrossKV parts, the encoder
	// output [B*S, D]; Memory the Encoder part's output, the same.
	Mem, Memory *G.Node
	// Step holds a Step graph's own inputs and outputs, and a CrossKV
	// graph's outputs.
	Step *StepIO
	// Logits are [B*T, V]; Loss the mean cross-entropy of Labels (pad
	// ignored), when built with labels.
	Logits, Loss *G.Node
	B, S, T      int
	// Params are the weight nodes, by index in the model's Params.
	Params map[int]*G.Node
}

// FillMasks returns g's masks for rows with srcLen[b] source and decLen[b]
// decoder tokens (the rest padding): the encoder sees real source tokens,
// the decoder real earlier-or-equal positions and real source tokens.
func (g *Graph) FillMasks(srcLen, decLen []int) (enc, dec, cross *tensor.Dense) {
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

// Part says which part of the encoder-decoder a graph computes: decoding
// runs the encoder once and the decoder at every step.
type Part int

const (
	// Whole is the encoder and the decoder (training, loss).
	Whole Part = iota
	// Encoder ends at the encoder output (Graph.Memory).
	Encoder
	// Decoder starts from the encoder output as an input (Graph.Mem).
	Decoder
	// CrossKV projects the encoder output (Mem) into every decoder
	// layer's cross-attention keys and values (StepIO.CrossKOut, CrossVOut).
	CrossKV
	// Step is one decoding position per row (T is the cache length): its
	// self-attention reads the earlier positions' keys and values from a
	// cache, its cross-attention the CrossKV part's (StepIO).
	Step
)

// StepIO are the inputs and outputs particular to the Step and CrossKV
// parts, for B rows, a cache of L positions and hd-wide keys.
type StepIO struct {
	// SelfMask [B, 1, 1, L] is 0 up to and including the new position t
	// and -Inf after it; OneHot [1, L] is 1 at t.
	SelfMask, OneHot *G.Node
	// Buckets [L] (T5) are the relative-position buckets of t - j; Pos
	// [B] (BART) is the position row of t. Made by the model that reads
	// them.
	Buckets, Pos *G.Node
	// CacheK, CacheV [B*L, hd] per layer hold the keys and values of the
	// positions before t (rows t and after zero); CrossK, CrossV [B*S, hd]
	// the cross-attention's.
	CacheK, CacheV, CrossK, CrossV []*G.Node
	// NewK, NewV [B, hd] per layer are the new position's key and value,
	// which the decoder writes into the cache at row t.
	NewK, NewV []*G.Node
	// CrossKOut, CrossVOut [B*S, hd] per layer are the CrossKV part's
	// outputs.
	CrossKOut, CrossVOut []*G.Node
	// EmbedT [D, V] is the tied output layer's table transposed, filled
	// once per decoding rather than transposed at every step; nil for an
	// untied output layer.
	EmbedT *G.Node
	// EmbedName is the weight EmbedT transposes.
	EmbedName string
}

// tiedOutput is y·tableᵀ, the output layer tied to the embeddings table:
// in a Step graph through Step.EmbedT.
func (b *builder) tiedOutput(y *G.Node, table string) *G.Node {
	if b.err != nil {
		return y
	}
	st := b.g.Step
	if st == nil {
		return b.must(G.Mul(y, b.must(G.Transpose(b.param(table))))) // [N, V]
	}
	w := b.param(table) // [V, D]
	st.EmbedName = table
	st.EmbedT = G.NewTensor(b.g.G, tensor.Float32, 2, G.WithShape(w.Shape()[1], w.Shape()[0]), G.WithName(table+".T")) // [D, V]
	return b.must(G.Mul(y, st.EmbedT))                                                                                 // [B, V]
}

// newGraph starts a Graph with the inputs of part; d is the model width.
func newGraph(B, S, T, d int, part Part) *Graph {
	g := &Graph{G: G.NewGraph(), B: B, S: S, T: T, Params: map[int]*G.Node{}}
	in := func(name string, dt tensor.Dtype, shape ...int) *G.Node {
		return G.NewTensor(g.G, dt, len(shape), G.WithShape(shape...), G.WithName(name))
	}
	if part != Decoder {
		g.Src = in("src", tensor.Int, B*S)                     // [B*S]
		g.EncBias = in("enc_bias", tensor.Float32, B, 1, S, S) // [B, 1, S, S]
	}
	switch part {
	case Encoder:
		return g
	case CrossKV:
		g.Mem, g.Step = in("mem", tensor.Float32, B*S, d), &StepIO{} // [B*S, D]
		return g
	case Step:
		g.DecIn = in("dec_in", tensor.Int, B)                      // [B]
		g.CrossBias = in("cross_bias", tensor.Float32, B, 1, 1, S) // [B, 1, 1, S]
		g.Step = &StepIO{
			SelfMask: in("self_mask", tensor.Float32, B, 1, 1, T), // [B, 1, 1, L]
			OneHot:   in("one_hot", tensor.Float32, 1, T),         // [1, L]
		}
		return g
	}
	g.DecIn = in("dec_in", tensor.Int, B*T)                    // [B*T]
	g.DecBias = in("dec_bias", tensor.Float32, B, 1, T, T)     // [B, 1, T, T]
	g.CrossBias = in("cross_bias", tensor.Float32, B, 1, T, S) // [B, 1, T, S]
	if part == Decoder {
		g.Mem = in("mem", tensor.Float32, B*S, d) // [B*S, D]
	}
	return g
}

// pos is a Step graph's position input; nil outside Step graphs.
func (st *StepIO) pos() *G.Node {
	if st == nil {
		return nil
	}
	return st.Pos
}

// stepInput appends a new per-layer float input [rows, cols] to list.
func (b *builder) stepInput(list *[]*G.Node, name string, rows, cols int) *G.Node {
	n := G.NewTensor(b.g.G, tensor.Float32, 2, G.WithShape(rows, cols), G.WithName(fmt.Sprintf("%s.%d", name, len(*list))))
	*list = append(*list, n)
	return n // [rows, cols]
}

// crossKV is the next layer's precomputed cross-attention keys and values
// of a Step graph.
func (b *builder) crossKV(hd int) (k, v *G.Node) {
	st, g := b.g.Step, b.g
	return b.stepInput(&st.CrossK, "cross_k", g.B*g.S, hd), b.stepInput(&st.CrossV, "cross_v", g.B*g.S, hd) // [B*S, hd]
}

// attendCached is self-attention in a Step graph: the new position's
// queries q over the cached keys and values of the positions before it
// and its own key k and value v ([B, hd] each), which become the layer's
// NewK and NewV. Cache row t is zero, so its score is the bias added
// there, q·k, and its value term the new position's weight times v:
//
//	scores = q·cacheᵀ + (q·k) e_t,  out = p·cacheV + p_t v.
func (b *builder) attendCached(q, k, v *G.Node, heads int, scale float32, rel *G.Node) *G.Node {
	if b.err != nil {
		return q
	}
	st, g := b.g.Step, b.g
	B, L, hd := g.B, g.T, q.Shape()[1]
	ck := b.stepInput(&st.CacheK, "cache_k", B*L, hd) // [B*L, hd]
	cv := b.stepInput(&st.CacheV, "cache_v", B*L, hd) // [B*L, hd]
	st.NewK, st.NewV = append(st.NewK, k), append(st.NewV, v)
	s := b.must(ops.AttnScores(q, ck, B, heads, scale))                          // [B, H, 1, L]
	own := b.must(ops.AttnScores(q, k, B, heads, scale))                         // [B, H, 1, 1]
	own = b.must(G.Reshape(own, tensor.Shape{B * heads, 1}))                     // [B*H, 1]
	own = b.must(G.Mul(own, st.OneHot))                                          // [B*H, L]
	own = b.must(G.Reshape(own, tensor.Shape{B, heads, 1, L}))                   // [B, H, 1, L]
	p := b.must(ops.AttentionSoftmax(b.must(ops.Add(s, own)), st.SelfMask, rel)) // [B, H, 1, L]
	if b.err != nil {
		return q
	}
	pt := b.must(G.Mul(b.must(G.Reshape(p, tensor.Shape{B * heads, L})), b.must(G.Transpose(st.OneHot)))) // [B*H, 1]
	pt = b.must(G.Reshape(pt, tensor.Shape{B, heads, 1, 1}))                                              // [B, H, 1, 1]
	past := b.must(ops.AttnValues(p, cv, heads))                                                          // [B, hd]
	return b.must(ops.Add(past, b.must(ops.AttnValues(pt, v, heads))))                                    // [B, hd]
}

// encoderOr runs the encoder stack for the Whole and Encoder parts and
// returns the memory the decoder reads (the Mem input for Decoder); done
// reports that the graph ends there (Encoder).
func encoderOr(g *Graph, part Part, encode func() *G.Node) (mem *G.Node, done bool) {
	switch part {
	case Decoder, CrossKV, Step:
		return g.Mem, false
	case Encoder:
		g.Memory = encode()
		return g.Memory, true
	}
	return encode(), false
}

// finish adds the loss over Labels to a graph whose logits are built.
func (b *builder) finish(labels bool, pad int, eps float32) (*Graph, error) {
	g := b.g
	if labels && b.err == nil {
		g.Labels = G.NewTensor(g.G, tensor.Int, 1, G.WithShape(g.B*g.T), G.WithName("labels"))
		g.Loss = b.must(ops.SoftmaxCrossEntropy(g.Logits, g.Labels, pad, eps)) // scalar
	}
	if b.err != nil {
		return nil, b.err
	}
	return g, nil
}

// builder builds a Graph over a model's weights; after the first error
// the calls pass their input through and b.err holds it.
type builder struct {
	p   *models.Params
	g   *Graph
	err error
	// drop draws the dropout masks of a training graph; nil otherwise.
	// attnDrop is the attention weights' dropout probability.
	drop     *ops.DropoutSource
	attnDrop float64
}

// dropout drops elements of x with probability p in a training graph.
func (b *builder) dropout(x *G.Node, p float64) *G.Node {
	if b.drop == nil || p == 0 || b.err != nil {
		return x
	}
	return b.must(ops.Dropout(x, float32(p), b.drop)) // same shape as x
}

func (b *builder) must(n *G.Node, err error) *G.Node {
	if err != nil && b.err == nil {
		b.err = err
	}
	return n
}

// param is the node of the weight called name, made on first use.
func (b *builder) param(name string) *G.Node {
	i, ok := b.p.Index(name)
	if !ok {
		b.must(nil, fmt.Errorf("no weight %q", name))
		return nil
	}
	if n, ok := b.g.Params[i]; ok {
		return n
	}
	v := b.p.Values[i]
	n := G.NewTensor(b.g.G, tensor.Float32, v.Dims(), G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
	b.g.Params[i] = n
	return n
}

// linear is x·W + bias with W [in, out] and bias [out] (ops.Linear).
func (b *builder) linear(x *G.Node, w, bias string) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(ops.Linear(x, b.param(w), b.param(bias))) // [N, out]
}

// matmul is x·W with W [in, out], no bias.
func (b *builder) matmul(x *G.Node, w string) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(G.Mul(x, b.param(w))) // [N, out]
}

func (b *builder) add(x, y *G.Node) *G.Node {
	if b.err != nil {
		return x
	}
	return b.must(ops.Add(x, y)) // [N, D]
}

// embed looks up ids in the table called name.
func (b *builder) embed(name string, ids *G.Node) *G.Node {
	if b.err != nil {
		return ids
	}
	return b.must(ops.Embed(b.param(name), ids)) // [N, D]
}

// attend is multi-head attention of the projected queries q [B*tq, H*dk]
// over keys and values k, v [B*tk, H*dk] under the additive mask [B, 1, tq,
// tk] and the relative bias rel [1, H, tq, tk] (nil: none); it returns
// [B*tq, H*dk] before the output projection.
func (b *builder) attend(q, k, v *G.Node, heads int, scale float32, mask, rel *G.Node) *G.Node {
	if b.err != nil {
		return q
	}
	s := b.must(ops.AttnScores(q, k, b.g.B, heads, scale)) // [B, H, tq, tk]
	if b.err != nil {
		return q
	}
	p := b.dropout(b.must(ops.AttentionSoftmax(s, mask, rel)), b.attnDrop) // [B, H, tq, tk]
	if b.err != nil {
		return q
	}
	return b.must(ops.AttnValues(p, v, heads)) // [B*tq, H*dk]
}

// loadWeights reads every tensor Shapes lists from a checked folder into
// Params under Hugging Face's names; reshape gives the shape and values
// the model holds a tensor in (linear weights transposed to [in, out]).
func loadWeights(f *Folder, reshape func(name string, w []float32, shape []int) ([]float32, tensor.Shape)) (models.Params, error) {
	var p models.Params
	r, err := safetensors.Open(f.Weights)
	if err != nil {
		return p, err
	}
	defer r.Close()
	need, _ := Shapes(f.Config)
	names := make([]string, 0, len(need))
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, info, err := r.Float32s(n)
		if err != nil {
			return p, err
		}
		if bad := safetensors.NonFinite(w); bad != "" {
			return p, fmt.Errorf("%s: tensor %s holds %s", f.Weights, n, bad)
		}
		w, shape := reshape(n, w, info.Shape)
		p.Add(n, shape, func(dst []float32) { copy(dst, w) })
	}
	return p, nil
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

// save writes a model back as a Hugging Face folder dir through out:
// src's config.json and tokenizer files unchanged, and model.safetensors
// (F32) with every tensor under its name, restore giving each held tensor's
// stored values and shape (linear weights transposed back to [out, in]).
func save(p *models.Params, src *Folder, out *data.OutputSet, dir string,
	restore func(name string, w []float32, shape []int) ([]float32, []int)) error {
	files := map[string][]byte{"config.json": src.RawConfig}
	for _, name := range src.TokenizerFiles {
		b, err := data.ReadFileLimit(filepath.Join(src.Dir, name), data.VocabFile)
		if err != nil {
			return fmt.Errorf("save: %w", err)
		}
		files[name] = b
	}
	for name, b := range files {
		w, err := out.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	ts := make([]safetensors.Tensor, 0, len(p.Names))
	for i, name := range p.Names {
		w, shape := restore(name, p.Data(i), p.Values[i].Shape())
		t, err := safetensors.FromFloat32s(name, shape, w)
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	w, err := out.Create(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return err
	}
	return safetensors.Write(w, ts, map[string]string{"format": "pt"})
}
