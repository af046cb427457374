package models

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"gorgonia.org/tensor"
)

// The LSTM models' optional Transformer encoder (Config.Encoder
// "transformer"): Bogin et al. (2022, §5.3) put their copying LSTM decoder
// on top of a (pretrained) Transformer encoder. The layers are the
// Transformer's own (transformer.go): sinusoidal positions added to the
// embeddings, pre-LN self-attention and ReLU feed-forward sublayers with
// residuals, a final LayerNorm, dropout on the embeddings, the sublayer
// outputs and the feed-forward hidden layer; the parameter names and shapes
// are the Transformer's too, so a Transformer run's encoder loads into it
// (InitEncoder).
//
// The engine runs it (engine_lstm_tenc.go);
// TestLSTMTransformerEncoderMatchesGraph checks that it computes the
// Transformer graph's memory from the same weights.

// tEncoder holds the parameter ids of the encoder layers.
type tEncoder struct {
	layers []tLayerIDs
	ln     [2]int // final LayerNorm [gain, bias]
	heads  int
	mlp    int
}

type tLayerIDs struct {
	wq, wk, wv, wo, bq, bk, bv, bo int
	ln0, ln1                       [2]int
	w1, b1, w2, b2                 int
}

// newTEncoder adds the encoder's parameters in the Transformer's order and
// with its initialisation.
func newTEncoder(p *Params, rng *rand.Rand, cfg Config) *tEncoder {
	d, mlp := cfg.Dim, cfg.MLPDim
	e := &tEncoder{heads: cfg.EncoderHeads, mlp: mlp}
	ln := func(name string) [2]int {
		return [2]int{p.Add(name+".g", tensor.Shape{d}, constant(1)), p.Add(name+".b", tensor.Shape{d}, constant(0))}
	}
	for i := 0; i < cfg.encoderLayers(); i++ {
		n := fmt.Sprintf("enc%d", i)
		var l tLayerIDs
		l.wq = p.Add(n+".self.wq", tensor.Shape{d, d}, xavier(rng, d, d))
		l.wk = p.Add(n+".self.wk", tensor.Shape{d, d}, xavier(rng, d, d))
		l.wv = p.Add(n+".self.wv", tensor.Shape{d, d}, xavier(rng, d, d))
		l.wo = p.Add(n+".self.wo", tensor.Shape{d, d}, xavier(rng, d, d))
		l.bq = p.Add(n+".self.bq", tensor.Shape{d}, constant(0))
		l.bk = p.Add(n+".self.bk", tensor.Shape{d}, constant(0))
		l.bv = p.Add(n+".self.bv", tensor.Shape{d}, constant(0))
		l.bo = p.Add(n+".self.bo", tensor.Shape{d}, constant(0))
		l.ln0, l.ln1 = ln(n+".ln0"), ln(n+".ln1")
		l.w1 = p.Add(n+".ffn.w1", tensor.Shape{d, mlp}, xavier(rng, d, mlp))
		l.b1 = p.Add(n+".ffn.b1", tensor.Shape{mlp}, constant(0))
		l.w2 = p.Add(n+".ffn.w2", tensor.Shape{mlp, d}, xavier(rng, mlp, d))
		l.b2 = p.Add(n+".ffn.b2", tensor.Shape{d}, constant(0))
		e.layers = append(e.layers, l)
	}
	e.ln = ln("enc.ln")
	return e
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
func (m *LSTM) InitEncoder(t *Transformer, tv, v *Vocab) (found int, err error) {
	c, tc := m.Cfg, t.Cfg
	switch {
	case m.tenc == nil:
		return 0, fmt.Errorf("init encoder: the model's encoder is %q; a pretrained encoder needs encoder %q", c.Encoder, EncoderTransformer)
	case tc.Relative:
		return 0, fmt.Errorf("init encoder: the run (%s) uses relative attention; the LSTM models' Transformer encoder uses sinusoidal positions", tc.Variant)
	case tc.DoubleIO():
		return 0, fmt.Errorf("init encoder: the run encodes I/O examples apart (io_encoder %q); the LSTM models' encoder reads the source as one sequence", tc.IOEncoder)
	case tc.Dim != c.Dim || tc.Layers != c.encoderLayers() || tc.Heads != c.EncoderHeads || tc.MLPDim != c.MLPDim:
		return 0, fmt.Errorf("init encoder: the run's encoder has dim %d, %d layers, %d heads, mlp_dim %d; the model dim %d, %d layers, %d heads, mlp_dim %d",
			tc.Dim, tc.Layers, tc.Heads, tc.MLPDim, c.Dim, c.encoderLayers(), c.EncoderHeads, c.MLPDim)
	case tv == nil || len(tv.Source) != tc.SrcVocab || tv.src == nil:
		return 0, fmt.Errorf("init encoder: the run's source vocabulary does not match its model")
	case v == nil || len(v.Source) != c.SrcVocab:
		return 0, fmt.Errorf("init encoder: the source vocabulary does not match the model")
	}
	for i, name := range m.p.Names {
		if !strings.HasPrefix(name, "enc") {
			continue
		}
		j, ok := t.p.Index(name)
		if !ok {
			return 0, fmt.Errorf("init encoder: the run's model lacks tensor %q", name)
		}
		if !sameShape(m.p.Values[i].Shape(), t.p.Values[j].Shape()) {
			return 0, fmt.Errorf("init encoder: tensor %q has shape %v in the run, %v in the model", name, t.p.Values[j].Shape(), m.p.Values[i].Shape())
		}
	}
	for i, name := range m.p.Names {
		if j, ok := t.p.Index(name); ok && strings.HasPrefix(name, "enc") {
			copy(m.p.Data(i), t.p.Data(j))
		}
	}
	D := c.Dim
	dst, src := m.p.Data(m.srcEmb), t.p.Data(t.srcEmb)
	for id, tok := range v.Source {
		tid, ok := tv.src[tok]
		if !ok {
			continue
		}
		copy(dst[id*D:(id+1)*D], src[tid*D:(tid+1)*D])
		found++
	}
	return found, nil
}
