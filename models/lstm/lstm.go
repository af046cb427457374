// Package lstm is compbench's recurrent sequence-to-sequence baselines:
// the LSTM with attention of Keysers et al. (2020, §5.1 and App. E) and,
// with copying, the decoder Bogin et al. (2022, §5.3) pair with their
// encoders (lstm-attention and lstm-copy): the model's definition
// (lstm.go, lstm_copy.go), its optional Transformer encoder from package
// models/transformer (lstm_tenc.go), and its hand-written program on
// package engine's backends (engine_lstm*.go).
package lstm

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"gorgonia.org/tensor"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/ops"
)

// Model is the recurrent sequence-to-sequence baseline of Keysers et al.
// (2020, §5.1 and App. E): a bidirectional LSTM encoder and an LSTM decoder
// with additive attention (Bahdanau et al. 2015). With Copy it is the
// copying decoder Bogin et al. (2022, §5.3) pair with their encoders: the
// pointer-generator mixture of Gu et al. (2016) and See et al. (2017).
//
// Model is the model's definition: configuration, parameters and their
// initialisation. It computes nothing itself: Bind puts it on an engine
// backend (Engine, engine_lstm*.go), which runs the model as kernel
// calls on every device, the CPU included. From the source to the loss,
// with H = Config.Dim:
//
// Embeddings: source and target, [vocab, H] each (src_emb, tgt_emb).
//
// Encoder (Config.Encoder "lstm"): Config.Layers bidirectional layers of H
// units per direction (enc<l>.fwd, enc<l>.bwd). A layer's output at
// position j is [forward h_j; backward h_j], so the memory is W = 2H wide.
// With Config.Encoder "transformer" the encoder is Transformer layers of
// width H instead (lstm_tenc.go), and W = H.
//
// The LSTM cell (Hochreiter & Schmidhuber 1997, with forget gate, as in
// Keysers et al.'s tensor2tensor baseline) takes an input x and the
// previous state (h_prev, c_prev); W [In+H, 4H] holds W_ih then W_hh, and
// the gate order of W and b [4H] is i, f, g, o:
//
//	z = [x, h_prev]·W + b
//	i, f, o = σ(z_i), σ(z_f), σ(z_o);  g = tanh(z_g)
//	c = f⊙c_prev + i⊙g;  h = o⊙tanh(c)
//
// Every layer starts from zero state. A padded source position keeps the
// previous state, so the backward direction starts at each row's last
// token. The forget-gate biases start at 1 (Jozefowicz et al. 2015).
//
// Decoder: Config.Layers LSTM layers of H units over the embeddings of the
// decoder inputs (dec<l>), from zero states. A copied token (an extended
// id, below) enters the decoder as <unk>.
//
// Attention over the memory m_j of the real source positions, queried by
// the top decoder state h_t of the same step (attn.wq [H, H], attn.wk
// [W, H], attn.b [H], attn.v [H]):
//
//	e_j = v·tanh(W_q h_t + W_k m_j + b);  a = softmax(e);  c_t = Σ_j a_j m_j
//
// Output: logits = [h_t; c_t]·W_out + b_out over the target vocabulary
// (out.w [H+W, V], out.b [V]). lstm-attention's loss is their
// cross-entropy, with label smoothing.
//
// Copy (lstm-copy): a gate (copy.w [2H+W, 1], copy.b [1]) mixes generating
// and copying,
//
//	p_gen = σ([h_t; c_t; x_t]·w + b)   (x_t: the decoder input's embedding, See et al. §2.2)
//	P(y) = p_gen·P_vocab(y) + (1−p_gen)·Σ_{j: x_j = y} a_j,
//
// over an extended vocabulary: target ids, then one id per source position
// (TgtVocab + j), which stands for the source token at j and is how tokens
// outside the target vocabulary are produced (lstm_copy.go). The loss is
// −log P(y), without label smoothing.
//
// Dropout (Config.Dropout) falls on the source and target embeddings, the
// inputs of every LSTM layer above the first, and [h_t; c_t]. Each site's
// mask comes from the model's seed, the step and the site (the drop*
// constants), so a resumed run draws the same masks. lstm-copy also embeds
// copyUnkRate of the training source tokens as <unk> (word dropout), while
// its copy targets keep the real tokens.
//
// Decisions the papers leave open:
//   - The attention query is the top decoder state of the current step and
//     the output layer reads [h_t; c_t] (Luong et al. 2015's placement with
//     Bahdanau's additive score), without input feeding, so the decoder
//     LSTM runs as one sequence.
//   - The decoder starts from zero states; the attention gives it the source.
//   - Embedding size equals the hidden size (Config.Dim), as does the
//     attention size.
//   - Copy mass of a source token that is in the target vocabulary goes to
//     its target id; mass of positions sharing one (known) source token goes
//     to the first of them; unknown source tokens keep their own position.
type Model struct {
	// Cfg is the validated configuration.
	Cfg Config
	// Copy turns on the copy mechanism (lstm-copy).
	Copy bool
	p    models.Params
	seed uint64
	// srcToTgt maps a source id to the target id of the same token, -1
	// when the target vocabulary lacks it (copy only).
	srcToTgt       []int
	srcEmb, tgtEmb int
	enc            [][2]cellIDs // [layer][forward, backward]
	dec            []cellIDs
	tenc           *tEncoder // the Transformer encoder; nil: the BiLSTM
	memW           int       // memory width: 2·Dim (BiLSTM) or Dim
	wq, wk, ba, va int       // attention: query [H, H], key [W, H], bias [H], v [H]
	outW, outB     int       // [H+W, V], [V]
	gateW, gateB   int       // copy gate [2H+W, 1], [1]
}

// cellIDs are an LSTM cell's parameters: W [In+H, 4H] and b [4H].
type cellIDs struct{ w, b int }

// copyUnkRate is the share of source tokens lstm-copy embeds as <unk>
// while training (only when dropout is on).
const copyUnkRate = 0.1

// Dropout sites: each names one mask per training step, drawn by
// kernels.DropoutRef's streams (on every backend) from the model's seed,
// the site and the step. Masks over a sequence cover its time-major
// buffer [T*B, width] in one draw.
const (
	dropSrcEmb = 0    // source embeddings [S*B, H]
	dropEncIn  = 1000 // + l: inputs of encoder layer l > 0 [S*B, 2H]
	dropTgtEmb = 2000 // decoder input embeddings [T*B, H]
	dropDecIn  = 3000 // + l: inputs of decoder layer l > 0 [T*B, H]
	dropOut    = 4000 // [h; ctx] of every decoder position, time-major [T*B, H+W]
)

// The Transformer encoder's dropout ops are the Transformer graph's
// (builder.dropout): numbered 0, 1, ... in the order the graph makes them
// (the embeddings, then per layer the attention output, the feed-forward
// hidden layer and its output), with the same seed and step, over its
// batch-major buffers. They share numbers with the BiLSTM's sites, which
// such a model does not have.

// Config is the LSTM family's architecture: the fields of a run's
// models.Config (its config.json, whose field comments say more) that
// lstm-attention and lstm-copy read. ConfigOf takes them from a run's
// configuration.
type Config struct {
	// Variant is lstm-attention or lstm-copy.
	Variant string
	// Layers is the number of LSTM layers per stack; Dim the hidden size
	// (and the embedding size).
	Layers, Dim int
	// Dropout is the drop probability of the dropout sites (lstm.go).
	Dropout float64
	// MaxSrcLen, MaxTgtLen, SrcVocab and TgtVocab size the batches and
	// the embeddings.
	MaxSrcLen, MaxTgtLen, SrcVocab, TgtVocab int
	// Encoder is "lstm" (the bidirectional LSTM; also when empty) or
	// "transformer": Transformer encoder layers (EncoderLayers of them, 0:
	// Layers) with EncoderHeads heads and feed-forward size MLPDim.
	Encoder                     string
	EncoderLayers, EncoderHeads int
	MLPDim                      int
}

// ConfigOf is the family's part of a run's configuration.
func ConfigOf(c models.Config) Config {
	return Config{Variant: c.Variant, Layers: c.Layers, Dim: c.Dim, Dropout: c.Dropout, MaxSrcLen: c.MaxSrcLen,
		MaxTgtLen: c.MaxTgtLen, SrcVocab: c.SrcVocab, TgtVocab: c.TgtVocab, Encoder: c.Encoder,
		EncoderLayers: c.EncoderLayers, EncoderHeads: c.EncoderHeads, MLPDim: c.MLPDim}
}

// EncoderLayerCount is the number of Transformer encoder layers:
// EncoderLayers, or Layers when it is 0.
func (c *Config) EncoderLayerCount() int {
	if c.EncoderLayers == 0 {
		return c.Layers
	}
	return c.EncoderLayers
}

// Validate reports the first field whose value this family cannot build
// (models.Config.Validate checks the shared fields and that no field of
// another family is set).
func (c *Config) Validate() error {
	switch {
	case !models.IsLSTM(c.Variant):
		return fmt.Errorf("model: %q is not an LSTM model", c.Variant)
	case c.Layers < 1:
		return fmt.Errorf("model: layers %d < 1", c.Layers)
	case c.Dim < 1:
		return fmt.Errorf("model: dim %d < 1", c.Dim)
	case c.MLPDim < 1:
		return fmt.Errorf("model: mlp_dim %d < 1", c.MLPDim)
	}
	switch c.Encoder {
	case "", models.EncoderLSTM:
		return nil
	case models.EncoderTransformer:
	default:
		return fmt.Errorf("model: unknown encoder %q (known: %s, %s)", c.Encoder, models.EncoderLSTM, models.EncoderTransformer)
	}
	switch {
	case c.EncoderLayers < 0:
		return fmt.Errorf("model: encoder_layers %d < 0", c.EncoderLayers)
	case c.EncoderHeads < 1 || c.Dim%c.EncoderHeads != 0:
		return fmt.Errorf("model: dim %d must be a positive multiple of encoder_heads %d", c.Dim, c.EncoderHeads)
	}
	return nil
}

// DefaultConfig is a run's configuration in Keysers et al.'s LSTM+attention
// setting (App. E): hidden size 512, 2 layers, dropout 0.4, the
// bidirectional LSTM encoder. Should the encoder be switched to
// "transformer", it has as many layers and 8 heads of 64 dimensions
// (Vaswani et al.'s head size).
func DefaultConfig(variant string) models.Config {
	c := models.DefaultConfig()
	c.Variant, c.Dim, c.Layers, c.Dropout = variant, 512, 2, 0.4
	c.Encoder, c.EncoderHeads = "lstm", 8
	return c
}

// New makes an lstm-attention or lstm-copy model with weights drawn
// from seed. The copy model needs the vocabulary to tell which source
// tokens are target tokens.
func New(run models.Config, seed uint64, v *models.Vocab) (*Model, error) {
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
	m := &Model{Cfg: cfg, Copy: cfg.Variant == "lstm-copy", seed: seed}
	if m.Copy {
		if v == nil || len(v.Source) != cfg.SrcVocab || len(v.Target) != cfg.TgtVocab {
			return nil, fmt.Errorf("model: lstm-copy needs the run's vocabulary")
		}
		m.srcToTgt = make([]int, cfg.SrcVocab)
		for i, tok := range v.Source {
			m.srcToTgt[i] = -1
			if id, unk := v.TargetIDs([]string{tok}); unk == 0 && i > models.UnkID {
				m.srcToTgt[i] = id[0]
			}
		}
	}
	rng := data.SubRand(seed, "init")
	H, p := cfg.Dim, &m.p
	m.memW = 2 * H
	// Decision: with the Transformer encoder too the source embeddings
	// start at N(0, 0.01), not the Transformer's N(0, 1): next to the
	// sinusoidal positions small embeddings leave position to dominate,
	// and the copy decoder then copies tokens whose embeddings training
	// never touched (copy task with dropout 0.1: 100% held-out exact
	// match, against 10% with N(0, 1)).
	m.srcEmb = p.Add("src_emb", tensor.Shape{cfg.SrcVocab, H}, models.Normal(rng, 0.1))
	if cfg.Encoder == models.EncoderTransformer {
		m.memW = H
	}
	m.tgtEmb = p.Add("tgt_emb", tensor.Shape{cfg.TgtVocab, H}, models.Normal(rng, 0.1))
	cell := func(name string, in int) cellIDs {
		return cellIDs{
			w: p.Add(name+".w", tensor.Shape{in + H, 4 * H}, models.Xavier(rng, in+H, H)),
			b: p.Add(name+".b", tensor.Shape{4 * H}, forgetBias(H)),
		}
	}
	for l := 0; l < cfg.Layers && m.memW == 2*H; l++ {
		in := 2 * H
		if l == 0 {
			in = H
		}
		n := "enc" + strconv.Itoa(l)
		m.enc = append(m.enc, [2]cellIDs{cell(n+".fwd", in), cell(n+".bwd", in)})
	}
	if m.memW == H {
		m.tenc = newTEncoder(p, rng, cfg, m.srcEmb)
	}
	W := m.memW
	for l := 0; l < cfg.Layers; l++ {
		m.dec = append(m.dec, cell("dec"+strconv.Itoa(l), H))
	}
	m.wq = p.Add("attn.wq", tensor.Shape{H, H}, models.Xavier(rng, H, H))
	m.wk = p.Add("attn.wk", tensor.Shape{W, H}, models.Xavier(rng, W, H))
	m.ba = p.Add("attn.b", tensor.Shape{H}, models.Constant(0))
	m.va = p.Add("attn.v", tensor.Shape{H}, models.Xavier(rng, H, 1))
	m.outW = p.Add("out.w", tensor.Shape{H + W, cfg.TgtVocab}, models.Xavier(rng, H+W, cfg.TgtVocab))
	m.outB = p.Add("out.b", tensor.Shape{cfg.TgtVocab}, models.Constant(0))
	if m.Copy {
		m.gateW = p.Add("copy.w", tensor.Shape{2*H + W, 1}, models.Xavier(rng, 2*H+W, 1))
		m.gateB = p.Add("copy.b", tensor.Shape{1}, models.Constant(0))
	}
	return m, nil
}

// wordDropRand is the random source of lstm-copy's word dropout at step.
func wordDropRand(seed uint64, step int) *rand.Rand {
	return data.SubRand(seed, "dropout/"+strconv.Itoa(step))
}

// forgetBias starts the forget gates at 1 (Jozefowicz et al. 2015) so
// that early gradients flow through time.
func forgetBias(H int) func([]float32) {
	return func(w []float32) {
		for k := H; k < 2*H; k++ {
			w[k] = 1
		}
	}
}

// Params returns the weights (the Model's host copy).
func (m *Model) Params() *models.Params { return &m.p }

// checkIDs refuses ids outside the vocabularies (a corrupt batch).
func (m *Model) checkIDs(src, dec []int) error {
	for _, id := range src {
		if id < 0 || id >= m.Cfg.SrcVocab {
			return fmt.Errorf("source id %d outside the vocabulary of %d", id, m.Cfg.SrcVocab)
		}
	}
	for _, id := range dec {
		if id < 0 {
			return fmt.Errorf("target id %d < 0", id)
		}
	}
	return nil
}

func rowLengths(src []int, B, S int) []int {
	out := make([]int, B)
	for b := 0; b < B; b++ {
		for j := 0; j < S && src[b*S+j] != models.PadID; j++ {
			out[b] = j + 1
		}
	}
	return out
}

// Bind implements models.Model.
func (m *Model) Bind(be engine.Backend, opt *ops.AdamConfig) (models.Runner, error) {
	return newEngine(m, be, opt)
}
