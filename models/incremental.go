package models

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"

	"compbench/attention"
	"compbench/ops"
)

// Incremental decoding: the decoder's forward pass one position at a time
// with cached self-attention keys and values and cross-attention keys and
// values computed once per batch, in plain loops and BLAS over the same
// weights as the graphs. Re-running the decoder graph over the whole prefix
// at every step costs O(T^2) positions per sequence; this costs O(T).
// TestIncrementalMatchesGraph checks it against the graph.

// Stepper is implemented by models that decode incrementally.
type Stepper interface {
	// StartDecode prepares decoding of mem's rows for up to maxLen steps.
	StartDecode(mem *Memory, maxLen int) (DecodeState, error)
}

// DecodeState advances a batch of decodes by one position.
type DecodeState interface {
	// Step feeds each row's token at the current position (StartID first)
	// and returns the next-token logits [B, V].
	Step(tokens []int) ([]float32, error)
	// Reorder makes row i continue the history of row from[i] (beam
	// search).
	Reorder(from []int)
}

type layerCache struct {
	k, v       []float32 // [B, maxLen, D] self-attention keys, values
	memK, memV []float32 // [B, S, D] cross-attention keys, values
}

type incState struct {
	m      *Transformer
	B, S   int
	maxLen int
	pos    int
	hist   []int // [B, maxLen] fed tokens
	srcLen []int
	layers []layerCache
	impl   blas.Float32
}

// StartDecode implements Stepper.
func (m *Transformer) StartDecode(mem *Memory, maxLen int) (DecodeState, error) {
	d := m.Cfg.Dim
	if len(mem.Data) != mem.B*mem.S*d {
		return nil, fmt.Errorf("decode: memory has %d values, want %d", len(mem.Data), mem.B*mem.S*d)
	}
	s := &incState{m: m, B: mem.B, S: mem.S, maxLen: maxLen, hist: make([]int, mem.B*maxLen),
		srcLen: mem.SrcLen, impl: G.WhichBLAS()}
	for i := range m.dec {
		l := &m.dec[i]
		c := layerCache{k: make([]float32, mem.B*maxLen*d), v: make([]float32, mem.B*maxLen*d)}
		c.memK = s.linear(mem.Data, mem.B*mem.S, l.cross.wk, l.cross.bk) // [B*S, D]
		c.memV = s.linear(mem.Data, mem.B*mem.S, l.cross.wv, l.cross.bv) // [B*S, D]
		s.layers = append(s.layers, c)
	}
	return s, nil
}

// linear returns x [n, in] · W + b.
func (s *incState) linear(x []float32, n, w, b int) []float32 {
	p := &s.m.p
	shape := p.Values[w].Shape()
	in, out := shape[0], shape[1]
	y := make([]float32, n*out) // [n, out]
	bias := p.Data(b)
	for r := 0; r < n; r++ {
		copy(y[r*out:(r+1)*out], bias)
	}
	s.impl.Sgemm(blas.NoTrans, blas.NoTrans, n, out, in, 1, x, in, p.Data(w), out, 1, y, out)
	return y
}

func (s *incState) layerNorm(x []float32, ids [2]int) []float32 {
	d := s.m.Cfg.Dim
	g, b := s.m.p.Data(ids[0]), s.m.p.Data(ids[1])
	y := make([]float32, len(x))
	for r := 0; r < len(x)/d; r++ {
		row := x[r*d : (r+1)*d]
		var mean, v float64
		for _, a := range row {
			mean += float64(a)
		}
		mean /= float64(d)
		for _, a := range row {
			v += (float64(a) - mean) * (float64(a) - mean)
		}
		inv := 1 / math.Sqrt(v/float64(d)+ops.LayerNormEps)
		for k, a := range row {
			y[r*d+k] = float32((float64(a)-mean)*inv)*g[k] + b[k]
		}
	}
	return y
}

// Reorder implements DecodeState.
func (s *incState) Reorder(from []int) {
	d := s.m.Cfg.Dim
	perm := func(buf []float32, stride int) {
		old := append([]float32(nil), buf...)
		for i, f := range from {
			copy(buf[i*stride:(i+1)*stride], old[f*stride:(f+1)*stride])
		}
	}
	for i := range s.layers {
		perm(s.layers[i].k, s.maxLen*d)
		perm(s.layers[i].v, s.maxLen*d)
	}
	old := append([]int(nil), s.hist...)
	for i, f := range from {
		copy(s.hist[i*s.maxLen:(i+1)*s.maxLen], old[f*s.maxLen:(f+1)*s.maxLen])
	}
}

// attend computes one query row per batch row over keys [B, stride, D]
// rows 0..n_b-1; allowed(b, j) filters keys, bias(h, j) adds a per-head
// logit bias (nil: none).
func (s *incState) attend(q, k, v []float32, stride int, n func(b int) int, allowed func(b, j int) bool, bias func(h, j int) float32) []float32 {
	c := s.m.Cfg
	d, h := c.Dim, c.Heads
	dh := d / h
	scale := float32(1 / math.Sqrt(float64(dh)))
	out := make([]float32, s.B*d) // [B, D]
	sc := make([]float32, stride)
	for b := 0; b < s.B; b++ {
		nb := n(b)
		for hd := 0; hd < h; hd++ {
			qh := q[b*d+hd*dh : b*d+(hd+1)*dh]
			mx := float32(math.Inf(-1))
			for j := 0; j < nb; j++ {
				if !allowed(b, j) {
					sc[j] = float32(math.Inf(-1))
					continue
				}
				kj := k[(b*stride+j)*d+hd*dh : (b*stride+j)*d+(hd+1)*dh]
				var dot float32
				for e := range qh {
					dot += qh[e] * kj[e]
				}
				dot *= scale
				if bias != nil {
					dot += bias(hd, j)
				}
				sc[j] = dot
				mx = max(mx, dot)
			}
			if math.IsInf(float64(mx), -1) {
				continue // nothing to attend to: zeros, as the graph's softmax
			}
			var sum float32
			for j := 0; j < nb; j++ {
				e := float32(0)
				if !math.IsInf(float64(sc[j]), -1) {
					e = float32(math.Exp(float64(sc[j] - mx)))
				}
				sc[j] = e
				sum += e
			}
			o := out[b*d+hd*dh : b*d+(hd+1)*dh]
			for j := 0; j < nb; j++ {
				if sc[j] == 0 {
					continue
				}
				p := sc[j] / sum
				vj := v[(b*stride+j)*d+hd*dh : (b*stride+j)*d+(hd+1)*dh]
				for e := range o {
					o[e] += p * vj[e]
				}
			}
		}
	}
	return out
}

// Step implements DecodeState.
func (s *incState) Step(tokens []int) ([]float32, error) {
	m, c := s.m, s.m.Cfg
	d, t := c.Dim, s.pos
	if t >= s.maxLen {
		return nil, fmt.Errorf("decode: step %d beyond the maximum length %d", t+1, s.maxLen)
	}
	if len(tokens) != s.B {
		return nil, fmt.Errorf("decode: %d tokens for %d rows", len(tokens), s.B)
	}
	emb := m.p.Data(m.tgtEmb)
	x := make([]float32, s.B*d) // [B, D]
	var pos []float32
	if !c.Relative {
		pos = make([]float32, (t+1)*d)
		fillPos(pos, 1, t+1, d)
		pos = pos[t*d:]
	}
	for b, tok := range tokens {
		if tok < 0 || tok*d >= len(emb) {
			return nil, fmt.Errorf("decode: token id %d outside the vocabulary", tok)
		}
		s.hist[b*s.maxLen+t] = tok
		copy(x[b*d:(b+1)*d], emb[tok*d:(tok+1)*d])
		for k := range pos {
			x[b*d+k] += pos[k]
		}
	}
	// Mask rows of the current position, from each row's history.
	allowedSelf := make([]bool, s.B*(t+1))
	for b := 0; b < s.B; b++ {
		row, err := decoderMaskRow(c.Mask, s.hist[b*s.maxLen:b*s.maxLen+t+1])
		if err != nil {
			return nil, err
		}
		copy(allowedSelf[b*(t+1):], row)
	}
	for i := range m.dec {
		l, cache := &m.dec[i], &s.layers[i]
		y := s.layerNorm(x, l.ln[0])
		q := s.linear(y, s.B, l.self.wq, l.self.bq)
		k := s.linear(y, s.B, l.self.wk, l.self.bk)
		v := s.linear(y, s.B, l.self.wv, l.self.bv)
		for b := 0; b < s.B; b++ {
			copy(cache.k[(b*s.maxLen+t)*d:(b*s.maxLen+t+1)*d], k[b*d:(b+1)*d])
			copy(cache.v[(b*s.maxLen+t)*d:(b*s.maxLen+t+1)*d], v[b*d:(b+1)*d])
		}
		var bias func(h, j int) float32
		if l.self.rel >= 0 {
			tab := m.p.Data(l.self.rel) // [buckets, H]
			bias = func(h, j int) float32 {
				return tab[attention.Bucket(t-j, false, c.RelBuckets, c.RelMaxDistance)*c.Heads+h]
			}
		}
		a := s.attend(q, cache.k, cache.v, s.maxLen, func(int) int { return t + 1 },
			func(b, j int) bool { return allowedSelf[b*(t+1)+j] }, bias)
		add(x, s.linear(a, s.B, l.self.wo, l.self.bo))

		y = s.layerNorm(x, l.ln[1])
		q = s.linear(y, s.B, l.cross.wq, l.cross.bq)
		a = s.attend(q, cache.memK, cache.memV, s.S, func(b int) int { return s.srcLen[b] },
			func(int, int) bool { return true }, nil)
		add(x, s.linear(a, s.B, l.cross.wo, l.cross.bo))

		y = s.layerNorm(x, l.ln[2])
		hid := s.linear(y, s.B, l.w1, l.b1)
		for k := range hid {
			hid[k] = max(hid[k], 0)
		}
		add(x, s.linear(hid, s.B, l.w2, l.b2))
	}
	s.pos++
	return s.linear(s.layerNorm(x, m.decLN), s.B, m.outW, m.outB), nil
}

func add(x, y []float32) {
	for i := range x {
		x[i] += y[i]
	}
}

// decoderMaskRow is the last row of the decoder mask over x.
func decoderMaskRow(kind string, x []int) ([]bool, error) {
	if kind == "causal" {
		row := make([]bool, len(x))
		for j := range row {
			row[j] = true
		}
		return row, nil
	}
	full, err := decoderAllowed(kind, x, len(x))
	if err != nil {
		return nil, err
	}
	return full[len(x)-1], nil
}
