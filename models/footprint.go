package models

import "compbench/data"

// The estimates below count the float32 arrays that dominate each share of
// a model's working set; they are within a small factor of the truth,
// which is all a refusal "larger than the machine" needs. Sizes are
// float64 so that absurd settings cannot overflow.

// ParamCount estimates the weights of c's model over vocabularies of
// srcVocab and tgtVocab tokens.
func ParamCount(c Config, srcVocab, tgtVocab int) float64 {
	d, m, l := float64(c.Dim), float64(c.MLPDim), float64(c.Layers)
	emb := d * float64(srcVocab+2*tgtVocab) // embeddings and the output layer
	if !IsLSTM(c.Variant) {
		return emb + l*(4*d*d+2*d*m) + l*(8*d*d+2*d*m)
	}
	enc := l * 16 * d * d // bidirectional LSTM, 4 gates over [input, state]
	if c.Encoder == EncoderTransformer {
		el := float64(c.EncoderLayers)
		if el == 0 {
			el = l
		}
		enc = el * (4*d*d + 2*d*m)
	}
	return emb + enc + l*8*d*d + 3*d*d
}

// ActivationBytes estimates one training step's activations and their
// gradients for rows examples of srcLen and tgtLen tokens.
func ActivationBytes(c Config, rows, srcLen, tgtLen, tgtVocab int) float64 {
	b, s, t := float64(rows), float64(srcLen), float64(tgtLen)
	d, m, l, h := float64(c.Dim), float64(c.MLPDim), float64(c.Layers), float64(c.Heads)
	per := (s+t)*l*(8*d+2*m) + 2*l*h*(s*s+t*t+s*t) + 2*t*float64(tgtVocab)
	return 2 * 4 * b * per
}

// DecodeBytes estimates decoding rows hypotheses up to maxLen tokens: the
// token buffers, the attention cache of each decoder layer, the logits.
func DecodeBytes(c Config, rows, srcLen, maxLen, tgtVocab int) float64 {
	r, s, n, d, l := float64(rows), float64(srcLen), float64(maxLen), float64(c.Dim), float64(c.Layers)
	bytes := r * n * 8
	if !IsLSTM(c.Variant) {
		bytes += 4 * r * 2 * l * d * (n + s)
	}
	return bytes + 4*2*r*float64(tgtVocab)
}

// DataLengths are the longest source and target of recs in model tokens,
// cut to c's limits (separators counted once per part).
func DataLengths(c Config, recs []data.Record) (src, tgt int) {
	for i := range recs {
		src = max(src, len(SourceTokens(&recs[i])))
		tgt = max(tgt, len(Tokens(recs[i].Output))+len(recs[i].Parts)+1)
	}
	return min(src, c.MaxSrcLen), min(tgt, c.MaxTgtLen)
}
