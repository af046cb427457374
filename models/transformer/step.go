package transformer

import (
	"fmt"
	"math/bits"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/ops"
)

// Step graphs: the decoder of the training graph (decoder, recurrence and
// the residual blocks, built by the same code) for one new position t per
// row, with its attention switched to a cache (attendStep). Self-attention
// reads the keys and values of positions 0..t-1 from a cache of L
// positions, held position-major ([L*B, D], the B rows of position j at
// rows j*B..): a position's keys are one contiguous write, and a graph
// over L positions reads the first L*B rows of a cache sized for the
// whole decoding, so graphs of several L share one cache. Cross-attention
// reads the memory's keys and values, which a CrossKV graph projects once
// per decoding. Positions after t are masked; L is t+1 rounded up
// (cacheLen), so a decoding compiles a few graphs rather than one per
// position.

// Names of the step graphs' inputs bound to the decoding buffers
// (decodeBufs) rather than made per graph.
const (
	cacheKName, cacheVName = "cache_k", "cache_v"
	crossKName, crossVName = "cross_k", "cross_v"
	crossBiasName          = "cross_bias"
)

// stepIO are a step graph's own inputs and outputs, for B rows, S memory
// positions and L cached positions.
type stepIO struct {
	B, S, L int
	// posIDs [B] (t on every row) index posTab [L, D], the sinusoidal
	// positions; nil with relative attention.
	posIDs, posTab *G.Node
	// buckets [L] are the relative-position buckets of t - j; nil without
	// relative attention. rel caches each table's bias [1, H, 1, L].
	buckets *G.Node
	rel     map[int]*G.Node
	// oneHot [1, L] is 1 at t, picks [B, H*L] that row per row and head;
	// mask [1 or B, 1, 1, L] is 0 where position t attends and -Inf
	// elsewhere (every key after t).
	oneHot, picks, mask *G.Node
	// cacheK and cacheV [L*B, D] per self-attention hold the keys and
	// values of positions 0..t-1 (rows t*B.. zero); newK and newV [B, D]
	// are position t's, which the decoder writes into rows t*B.. after
	// the step.
	cacheK, cacheV, newK, newV []*G.Node
	// crossK and crossV [B*S, D] are the memory's keys and values per
	// distinct cross-attention weights (the Universal Transformer's steps
	// share one), crossOf its index by the key weight.
	crossK, crossV []*G.Node
	crossOf        map[int]int
}

// stepGraph is a built step graph: its inputs (graphInputs: decIn [B],
// crossBias [B, 1, 1, S]), its own (stepIO) and its logits [B, V].
type stepGraph struct {
	in     graphInputs
	io     *stepIO
	logits *G.Node
}

// cacheLen is the cache length of the step graph for position t of at most
// maxLen: t+1 rounded up to a multiple of 4, or past 32 of a quarter of
// the largest power of two below it (40, 48, 56, 64, 80, ...). A decoding
// then compiles a few graphs (8 up to 32 positions, 4 more per doubling),
// and attends over at most a quarter more keys than it has past 32.
func cacheLen(t, maxLen int) int {
	n := t + 1
	q := 4
	if n > 32 {
		q = 1 << (bits.Len(uint(n-1)) - 3)
	}
	return min(maxLen, (n+q-1)/q*q)
}

// buildStep builds the step graph of B rows over S memory positions with
// L cached positions.
func (m *Model) buildStep(B, S, L int) (*stepGraph, error) {
	c := m.Cfg
	b := m.newBuilder(false)
	io := &stepIO{B: B, S: S, L: L, rel: map[int]*G.Node{}, crossOf: map[int]int{}}
	b.step = io
	in := graphInputs{B: B, S: S, T: 1}
	in.decIn = b.input("dec_in", tensor.Int, B)                          // [B]
	in.crossBias = b.input(crossBiasName, tensor.Float32, B, 1, 1, S)    // [B, 1, 1, S]
	io.oneHot = b.input("one_hot", tensor.Float32, 1, L)                 // [1, L]
	col := b.constant("ones", ones(B*c.Heads), B*c.Heads, 1)             // [B*H, 1]
	io.picks = b.must(G.Mul(col, io.oneHot))                             // [B*H, L]
	io.picks = b.must(G.Reshape(io.picks, tensor.Shape{B, c.Heads * L})) // [B, H*L]
	// The causal mask has one row for all; the decompositional masks
	// differ per row.
	rows := B
	if c.Mask == "causal" {
		rows = 1
	}
	io.mask = b.input("self_mask", tensor.Float32, rows, 1, 1, L) // [1 or B, 1, 1, L]
	in.decBias = io.mask
	if c.Relative {
		io.buckets = b.input("buckets", tensor.Int, L) // [L]
	} else {
		tab := make([]float32, L*c.Dim)
		FillPos(tab, 1, L, c.Dim)
		io.posTab = b.constant("pos_tab", tab, L, c.Dim)    // [L, D]
		io.posIDs = b.input("pos_ids", tensor.Int, B)       // [B]
		in.tgtPos = b.must(ops.Embed(io.posTab, io.posIDs)) // [B, D]
	}
	logits := b.decoder(&in, nil) // [B, V]
	if b.err != nil {
		return nil, fmt.Errorf("step graph: %w", b.err)
	}
	return &stepGraph{in: in, io: io, logits: logits}, nil
}

// crossGraph is a built CrossKV graph: the memory mem [B*S, D] in, each
// distinct cross-attention's keys and values k, v [B*S, D] out, in the
// order of a step graph's crossK and crossV.
type crossGraph struct {
	mem  *G.Node
	k, v []*G.Node
}

// buildCross builds the CrossKV graph of B rows over S memory positions.
func (m *Model) buildCross(B, S int) (*crossGraph, error) {
	b := m.newBuilder(false)
	cg := &crossGraph{mem: b.input("mem", tensor.Float32, B*S, m.Cfg.Dim)} // [B*S, D]
	for _, i := range m.crossLayers() {
		a := m.dec[i].cross
		cg.k = append(cg.k, b.linear(cg.mem, a.wk, a.bk)) // [B*S, D]
		cg.v = append(cg.v, b.linear(cg.mem, a.wv, a.bv)) // [B*S, D]
	}
	if b.err != nil {
		return nil, fmt.Errorf("cross-attention keys graph: %w", b.err)
	}
	return cg, nil
}

// crossLayers are the decoder layers with distinct cross-attention
// weights, in order: every layer, or the Universal Transformer's one.
func (m *Model) crossLayers() []int {
	var out []int
	seen := map[int]bool{}
	for i, l := range m.dec {
		if !seen[l.cross.wk] {
			seen[l.cross.wk] = true
			out = append(out, i)
		}
	}
	return out
}

// attendStep is attention in a step graph, on the projected queries q
// [B, D]: cross-attention (xkv nil) over the memory's keys and values,
// self-attention over the cache and position t's own key and value.
func (b *builder) attendStep(q, xkv *G.Node, a attnIDs, mask *G.Node) *G.Node {
	io := b.step
	if xkv == nil {
		k, v := b.crossKV(a)                                     // [B*S, D]
		return b.attend(q, k, v, -1, io.B, 1, io.S, mask, false) // [B, D]
	}
	k := b.linear(xkv, a.wk, a.bk) // [B, D]
	v := b.linear(xkv, a.wv, a.bv) // [B, D]
	return b.attendCached(q, k, v, a.rel, mask)
}

// crossKV are the step graph's inputs holding the memory's keys and values
// for the cross-attention weights a, made on first use.
func (b *builder) crossKV(a attnIDs) (k, v *G.Node) {
	io := b.step
	i, ok := io.crossOf[a.wk]
	if !ok {
		i = len(io.crossK)
		io.crossOf[a.wk] = i
		io.crossK = append(io.crossK, b.input(fmt.Sprintf("%s.%d", crossKName, i), tensor.Float32, io.B*io.S, b.cfg.Dim)) // [B*S, D]
		io.crossV = append(io.crossV, b.input(fmt.Sprintf("%s.%d", crossVName, i), tensor.Float32, io.B*io.S, b.cfg.Dim)) // [B*S, D]
	}
	return io.crossK[i], io.crossV[i]
}

// attendCached is self-attention of position t over the cache and its own
// key k and value v [B, D], which become the step's newK and newV. Cache
// rows t*B.. are zero, so their score is the bias added there, q·k, and
// their value term position t's weight times v:
//
//	scores = q·cacheᵀ + (q·k) e_t,  out = p·cacheV + p_t v.
//
// The sums are then those of attention over the keys 0..t in order, the
// masked keys after t adding zeros.
func (b *builder) attendCached(q, k, v *G.Node, rel int, mask *G.Node) *G.Node {
	if b.err != nil {
		return q
	}
	io, c := b.step, b.cfg
	B, L, H := io.B, io.L, c.Heads
	n := len(io.cacheK)
	ck := b.input(fmt.Sprintf("%s.%d", cacheKName, n), tensor.Float32, L*B, c.Dim) // [L*B, D]
	cv := b.input(fmt.Sprintf("%s.%d", cacheVName, n), tensor.Float32, L*B, c.Dim) // [L*B, D]
	io.cacheK, io.cacheV = append(io.cacheK, ck), append(io.cacheV, cv)
	io.newK, io.newV = append(io.newK, k), append(io.newV, v)
	s := b.must(ops.CacheScores(q, ck, B, H, b.scale()))                            // [B, H, 1, L]
	own := b.must(ops.AttnScores(q, k, B, H, b.scale()))                            // [B, H, 1, 1]
	own = b.must(G.Reshape(own, tensor.Shape{B * H, 1}))                            // [B*H, 1]
	own = b.must(G.Mul(own, io.oneHot))                                             // [B*H, L]
	own = b.must(G.Reshape(own, tensor.Shape{B, H, 1, L}))                          // [B, H, 1, L]
	p := b.must(ops.AttentionSoftmax(b.must(ops.Add(s, own)), mask, b.relRow(rel))) // [B, H, 1, L]
	if b.err != nil {
		return q
	}
	// p_t per row and head, as the heads' product of p with the one-hot
	// row: one batched product, exact (one term is not zero).
	pt := b.must(ops.AttnScores(b.must(G.Reshape(p, tensor.Shape{B, H * L})), io.picks, B, H, 1)) // [B, H, 1, 1]
	past := b.must(ops.CacheValues(p, cv, H))                                                     // [B, D]
	if b.err != nil {
		return q
	}
	return b.must(ops.Add(past, b.must(ops.AttnValues(pt, v, H)))) // [B, D]
}

// relRow is the relative bias of position t over the L keys for the table
// rel, from the step's buckets; nil without a table.
func (b *builder) relRow(rel int) *G.Node {
	io := b.step
	if rel < 0 || b.err != nil {
		return nil
	}
	if r, ok := io.rel[rel]; ok {
		return r
	}
	r := b.must(ops.Embed(b.param(rel), io.buckets))                // [L, H]
	r = b.must(G.Transpose(r))                                      // [H, L]
	r = b.must(G.Reshape(r, tensor.Shape{1, b.cfg.Heads, 1, io.L})) // [1, H, 1, L]
	io.rel[rel] = r
	return r
}
