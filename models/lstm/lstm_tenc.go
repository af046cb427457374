package lstm

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"compbench/models"
	"compbench/models/transformer"
)

// The LSTM models' optional Transformer encoder (Config.Encoder
// "transformer"): Bogin et al. (2022, §5.3) put their copying LSTM decoder
// on top of a (pretrained) Transformer encoder. It is the Transformer's own
// encoder: its parameters are made by the Transformer's paramMaker (same
// names, shapes, order and initialisation as a Transformer's encoder
// layers), and it computes the memory with the Transformer's graph code
// (builder.encodeStack: sinusoidal positions added to the embeddings,
// pre-LN self-attention and ReLU feed-forward sublayers with residuals, a
// final LayerNorm, dropout on the embeddings, the sublayer outputs and the
// feed-forward hidden layer), compiled by package engine
// (engine_lstm_tenc.go). A Transformer run's encoder loads into it
// (InitEncoder).

// tEncoder is the encoder's parameters and the configuration its graphs
// are built with.
type tEncoder struct {
	enc transformer.Encoder
	// cfg is the encoder's Transformer configuration: the LSTM's width,
	// feed-forward size and dropout, the encoder's heads and layers,
	// sinusoidal positions.
	cfg transformer.Config
}

// newTEncoder adds the encoder's layers to p, in the Transformer's order
// and with its initialisation, over the source embeddings srcEmb.
func newTEncoder(p *models.Params, rng *rand.Rand, cfg Config, srcEmb int) *tEncoder {
	tc := transformer.Config{Variant: cfg.Variant, Layers: cfg.EncoderLayerCount(), Heads: cfg.EncoderHeads, Dim: cfg.Dim,
		MLPDim: cfg.MLPDim, Dropout: cfg.Dropout, Mask: "causal", MaxSrcLen: cfg.MaxSrcLen, MaxTgtLen: cfg.MaxTgtLen,
		SrcVocab: cfg.SrcVocab, TgtVocab: cfg.TgtVocab}
	return &tEncoder{enc: transformer.AddEncoder(p, rng, tc, tc.Layers, false, srcEmb), cfg: tc}
}

// InitEncoder copies the encoder of a trained Transformer t (vocabulary
// tv) into m's Transformer encoder (vocabulary v): the pretrained encoder Bogin et al.
// (2022, §5.3) put under the copying decoder. The layer weights are copied
// by name; the source embeddings by token, so the two runs' vocabularies
// need not agree: rows of tokens t does not know keep their
// initialisation. It returns how many of m's source tokens (specials
// included) were found. The sizes (width, layers, heads, feed-forward) must
// match; relative attention is refused, since this encoder uses sinusoidal
// positions, and so is an encoder of I/O examples one by one.
func (m *Model) InitEncoder(t *transformer.Model, tv, v *models.Vocab) (found int, err error) {
	c, tc := m.Cfg, t.Cfg
	switch {
	case m.tenc == nil:
		return 0, fmt.Errorf("init encoder: the model's encoder is %q; a pretrained encoder needs encoder %q", c.Encoder, models.EncoderTransformer)
	case tc.Relative:
		return 0, fmt.Errorf("init encoder: the run (%s) uses relative attention; the LSTM models' Transformer encoder uses sinusoidal positions", tc.Variant)
	case tc.DoubleIO():
		return 0, fmt.Errorf("init encoder: the run encodes I/O examples apart (io_encoder %q); the LSTM models' encoder reads the source as one sequence", tc.IOEncoder)
	case tc.Dim != c.Dim || tc.Layers != c.EncoderLayerCount() || tc.Heads != c.EncoderHeads || tc.MLPDim != c.MLPDim:
		return 0, fmt.Errorf("init encoder: the run's encoder has dim %d, %d layers, %d heads, mlp_dim %d; the model dim %d, %d layers, %d heads, mlp_dim %d",
			tc.Dim, tc.Layers, tc.Heads, tc.MLPDim, c.Dim, c.EncoderLayerCount(), c.EncoderHeads, c.MLPDim)
	case tv == nil || len(tv.Source) != tc.SrcVocab || !tv.Indexed():
		return 0, fmt.Errorf("init encoder: the run's source vocabulary does not match its model")
	case v == nil || len(v.Source) != c.SrcVocab:
		return 0, fmt.Errorf("init encoder: the source vocabulary does not match the model")
	}
	for i, name := range m.p.Names {
		if !strings.HasPrefix(name, "enc") {
			continue
		}
		j, ok := t.Params().Index(name)
		if !ok {
			return 0, fmt.Errorf("init encoder: the run's model lacks tensor %q", name)
		}
		if !models.SameShape(m.p.Values[i].Shape(), t.Params().Values[j].Shape()) {
			return 0, fmt.Errorf("init encoder: tensor %q has shape %v in the run, %v in the model", name, t.Params().Values[j].Shape(), m.p.Values[i].Shape())
		}
	}
	for i, name := range m.p.Names {
		if j, ok := t.Params().Index(name); ok && strings.HasPrefix(name, "enc") {
			copy(m.p.Data(i), t.Params().Data(j))
		}
	}
	D := c.Dim
	dst, src := m.p.Data(m.srcEmb), t.Params().Data(t.SourceEmbedding())
	for id, tok := range v.Source {
		tid, ok := tv.SourceID(tok)
		if !ok {
			continue
		}
		copy(dst[id*D:(id+1)*D], src[tid*D:(tid+1)*D])
		found++
	}
	return found, nil
}
